# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Strict decoding like kube-scheduler's loadConfig (options/configfile.go, scheme.Codecs strict).

Expected texts: apimachinery runtime.strictDecodingError ("strict decoding error: "), sigs.k8s.io/json
(unknown field "a.b[0].c", duplicate field "x"), go-yaml v2 strict mode ("line N: key \"x\" already set in map"),
encoding/json UnmarshalTypeError ("json: cannot unmarshal T into Go struct field S.path of type G"),
runtime.notRegisteredErr, metav1.Duration.UnmarshalJSON and Go's time.ParseDuration tests.
"""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.durations import parse_duration

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import SUPPORTED_MINORS as SUPPORTED

UNKNOWN = 'strict decoding error: unknown field "%s"'


@pytest.mark.parametrize("body, path", [
    ("foo: 1\n", "foo"),
    ("profiles:\n- schedulerNme: x\n", "profiles[0].schedulerNme"),
    ("profiles:\n- schedulerName: a\n- schedulerName: b\n  plugin: {}\n", "profiles[1].plugin"),
    ("profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocality\n        wieght: 2\n",
     "profiles[0].plugins.score.enabled[0].wieght"),
    ("profiles:\n- plugins:\n    multipoint: {}\n", "profiles[0].plugins.multipoint"),
    ("leaderElection:\n  leaderElection: true\n", "leaderElection.leaderElection"),
    ("clientConnection:\n  kubeConfig: /x\n", "clientConnection.kubeConfig"),
    ("extenders:\n- urlPrefix: http://x\n  tlsConfig:\n    insecureSkipVerify: true\n",
     "extenders[0].tlsConfig.insecureSkipVerify"),
])
def test_unknown_field_at_any_depth(run, messages, fields, body, path):
    result = run(body)
    assert messages(result) == [UNKNOWN % path]
    assert fields(result) == [path]
    assert result.effective is None and result.rendered is None


@pytest.mark.parametrize("body, path", [
    ("percentageOfPlacementsToScore: 50\n", "percentageOfPlacementsToScore"),
    ("profiles:\n- percentageOfPlacementsToScore: 50\n", "profiles[0].percentageOfPlacementsToScore"),
])
def test_percentage_of_placements_to_score_is_a_field_from_1_38(run, messages, body, path):
    # The field arrives with the topology-aware scheduling beta (kubernetes/kubernetes#139859): no 1.30-1.37
    # KubeSchedulerConfiguration has it; kube-scheduler v1.38.0-beta.0 decodes it and, with
    # TopologyAwareWorkloadScheduling off (its default), forbids it.
    for version in SUPPORTED:
        if version < "1.38":
            assert messages(run(body, version=version)) == [UNKNOWN % path]
        else:
            assert messages(run(body, version=version)) == [
                path + ": Forbidden: percentageOfPlacementsToScore requires TopologyAwareWorkloadScheduling feature "
                "gate to be enabled"]


def test_all_unknown_fields_are_reported_in_sorted_key_order(run, messages):
    # YAML reaches the JSON decoder as a Go map marshalled with sorted keys: kube-scheduler v1.30.12-v1.35.4 say
    # 'unknown field "baz", unknown field "foo", unknown field "profiles[0].bar"'.
    result = run("foo: 1\nprofiles:\n- bar: 2\nbaz: 3\n")
    assert messages(result) == [UNKNOWN % "baz", UNKNOWN % "foo", UNKNOWN % "profiles[0].bar"]


def test_json_unknown_fields_keep_document_order():
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
    result = process(content='{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", '
                             '"foo": 1, "baz": 2}')
    assert [e["message"] for e in result.errors] == [UNKNOWN % "foo", UNKNOWN % "baz"]


def test_plugin_args_are_decoded_strictly_as_their_kind(run, messages, fields):
    # types.go DecodeNestedObjects/decodeNestedObjects wrap the args error twice.
    result = run("""
        profiles:
        - pluginConfig:
          - name: DefaultPreemption
            args: {minCandidateNodesPercentage: 10}
          - name: NodeResourcesFit
            args:
              scoringStrategy:
                type: MostAllocated
                resource: []
        """)
    assert messages(result) == [
        'strict decoding error: decoding .profiles[0].pluginConfig[1]: strict decoding error: decoding args for '
        'plugin NodeResourcesFit: strict decoding error: unknown field "scoringStrategy.resource"']
    assert fields(result) == ["profiles[0].pluginConfig[1].args.scoringStrategy.resource"]


def test_args_of_out_of_tree_plugins_are_not_decoded(run):
    # decodeNestedObjects skips kinds that are not registered.
    result = run("""
        profiles:
        - pluginConfig:
          - name: Coscheduling
            args: {permitWaitingTimeSeconds: 10, anything: [1, 2]}
        """, extra_plugins=["Coscheduling"])
    assert result.ok, result.errors


@pytest.mark.parametrize("version, ok", [(v, v >= "1.34") for v in SUPPORTED])
def test_dynamic_resources_args_kind_exists_from_1_34(run, version, ok):
    # DynamicResourcesArgs joined types_pluginargs.go in 1.34; before that its args are not decoded at all.
    result = run("""
        profiles:
        - pluginConfig:
          - name: DynamicResources
            args: {filterTimeout: 5s, bogus: 1}
        """, version=version)
    if ok:
        assert [e["field"] for e in result.errors] == ["profiles[0].pluginConfig[0].args.bogus"]
    else:
        assert result.ok, result.errors


def test_duplicate_yaml_keys_at_any_depth(run, messages):
    result = run("parallelism: 2\nparallelism: 3\nprofiles:\n- schedulerName: a\n  schedulerName: b\n")
    assert messages(result) == [
        'strict decoding error: yaml: unmarshal errors:\n'
        '  line 4: key "parallelism" already set in map\n'
        '  line 7: key "schedulerName" already set in map']


def test_duplicate_json_keys(messages):
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
    result = process(content='{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
                             ' "parallelism": 2, "parallelism": 3}')
    assert messages(result) == ['strict decoding error: duplicate field "parallelism"']


@pytest.mark.parametrize("body, message", [
    ('parallelism: "5"\n',
     "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.parallelism of type int32"),
    ("parallelism: 1.5\n",
     "json: cannot unmarshal number 1.5 into Go struct field KubeSchedulerConfiguration.parallelism of type int32"),
    ("parallelism: 2147483648\n",
     "json: cannot unmarshal number 2147483648 into Go struct field KubeSchedulerConfiguration.parallelism of type "
     "int32"),
    ("profiles: {}\n",
     "json: cannot unmarshal object into Go struct field KubeSchedulerConfiguration.profiles of type "
     "[]v1.KubeSchedulerProfile"),
    ("profiles:\n- schedulerName: 5\n",
     "json: cannot unmarshal number into Go struct field KubeSchedulerProfile.profiles.schedulerName of type string"),
    ("profiles:\n- plugins:\n    score:\n      enabled:\n      - {name: ImageLocality, weight: x}\n",
     "json: cannot unmarshal string into Go struct field Plugin.profiles.plugins.score.enabled.weight of type int32"),
    ("leaderElection:\n  leaderElect: 'true'\n",
     "json: cannot unmarshal string into Go struct field LeaderElectionConfiguration.leaderElection.leaderElect of "
     "type bool"),
    ("clientConnection:\n  qps: fast\n",
     "json: cannot unmarshal string into Go struct field ClientConnectionConfiguration.clientConnection.qps of type "
     "float32"),
    # v1.30.12-v1.35.4 give the nested Unmarshal's error the outer field's context.
    ("leaderElection:\n  leaseDuration: 15\n",
     "json: cannot unmarshal number into Go struct field LeaderElectionConfiguration.leaderElection.leaseDuration of "
     "type string"),
    ("leaderElection:\n  leaseDuration: '15'\n", 'time: missing unit in duration "15"'),
    ("leaderElection:\n  leaseDuration: 1d\n", 'time: unknown unit "d" in duration "1d"'),
])
def test_wrong_types(run, messages, body, message):
    assert messages(run(body)) == [message]


def test_only_the_first_type_error_is_reported_and_strict_errors_are_dropped(run, messages):
    # encoding/json keeps the first UnmarshalTypeError; the serializer returns it instead of the strict errors.
    result = run("foo: 1\nparallelism: x\npodInitialBackoffSeconds: y\n")
    assert messages(result) == [
        "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.parallelism of type int32"]


def test_type_error_in_args(run, messages):
    result = run("profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: {bindTimeoutSeconds: soon}\n")
    assert messages(result) == [
        "decoding .profiles[0].pluginConfig[0]: decoding args for plugin VolumeBinding: json: cannot unmarshal string "
        "into Go struct field VolumeBindingArgs.bindTimeoutSeconds of type int64"]


@pytest.mark.parametrize("api_version", ["kubescheduler.config.k8s.io/v1beta2", "kubescheduler.config.k8s.io/v1beta3"])
def test_removed_beta_versions_are_not_registered(api_version):
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
    result = process(content="apiVersion: %s\nkind: KubeSchedulerConfiguration\n" % api_version)
    message = result.errors[0]["message"]
    assert message.startswith('no kind "KubeSchedulerConfiguration" is registered for version "%s" in scheme '
                              % api_version)
    assert "apiVersion: kubescheduler.config.k8s.io/v1" in message  # the migration hint
    assert result.errors[0]["field"] == "apiVersion"


def test_wrong_kind_and_missing_kind():
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
    wrong = process(content="apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeProxyConfiguration\n")
    assert wrong.errors[0]["message"].startswith(
        'no kind "KubeProxyConfiguration" is registered for version "kubescheduler.config.k8s.io/v1"')
    missing = process(content="apiVersion: kubescheduler.config.k8s.io/v1\n")
    assert missing.errors[0]["message"].startswith("Object 'Kind' is missing in ")


def test_yaml_timestamps_stay_strings(run):
    # go-yaml v2 into interface{} keeps 2024-01-01 a string; a string field accepts it.
    assert run("profiles:\n- schedulerName: 2024-01-01\n").ok


def test_integral_yaml_float_is_an_int(run):
    # sigs.k8s.io/yaml writes 8.0 as the JSON number 8, which an int32 accepts.
    assert run("parallelism: 8.0\n").effective["parallelism"] == 8


@pytest.mark.parametrize("text, nanoseconds", [
    # Go src/time/time_test.go parseDurationTests
    ("0", 0), ("5s", 5 * 10 ** 9), ("-5s", -5 * 10 ** 9), ("+5s", 5 * 10 ** 9), ("-0", 0), ("5.6s", 5600000000),
    ("5.s", 5 * 10 ** 9), (".5s", 500000000), ("1.004s", 1004000000), ("12\u00b5s", 12000), ("12\u03bcs", 12000),
    ("10.5s4m", 250500000000), ("-2m3.4s", -123400000000), ("1h2m3s4ms5us6ns", 3723004005006),
    ("0.3333333333333333333h", 20 * 60 * 10 ** 9), ("9223372036854775807ns", 2 ** 63 - 1),
    ("-9223372036854775808ns", -2 ** 63),
])
def test_parse_duration(text, nanoseconds):
    assert parse_duration(text) == nanoseconds


@pytest.mark.parametrize("text, message", [
    ("", 'time: invalid duration ""'), ("3", 'time: missing unit in duration "3"'),
    ("-", 'time: invalid duration "-"'), (".s", 'time: invalid duration ".s"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
])
def test_parse_duration_errors(text, message):
    with pytest.raises(ValueError) as exc:
        parse_duration(text)
    assert str(exc.value) == message
