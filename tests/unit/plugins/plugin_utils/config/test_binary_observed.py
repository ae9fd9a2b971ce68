# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Behaviour the real kube-scheduler binaries showed in the differential harness (tests/differential): v1.30.12-v1.35.4
and OpenShift's fork's v1.36.3 when first written; the recordings are now of upstream v1.30.14, v1.34.12, v1.35.8,
v1.36.5, v1.37.2 and the pre-release v1.38.0-beta.0 (1.38, a preview) built from upstream's Go modules
(tests/binaries), which answer the same, pinned here so the library keeps it without the binaries. Each expectation is what
``kube-scheduler --config F --write-config-to OUT`` printed or wrote for that input, on every minor unless said.
"""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import go_yaml_scalar

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
BINARY_MINORS = ("1.30", "1.31", "1.32", "1.33", "1.34", "1.35")


# -- YAML: only the first document, go-yaml v2 scalars ------------------------------------------------------------

@pytest.mark.parametrize("version", BINARY_MINORS)
def test_only_the_first_yaml_document_is_read(run, version):
    # "---" then anything, even text that is not YAML, is never parsed; the first document's values win.
    result = run("parallelism: 3\n---\nparallelism: -4\nfoo: 1\n---\n: : :\n", version=version)
    assert result.ok and result.effective["parallelism"] == 3


def test_an_invalid_first_document_is_reported_with_its_field(run, messages, fields):
    result = run("parallelism: 0\n---\nparallelism: 4\n")
    assert messages(result) == ["parallelism: Invalid value: 0: should be an integer value greater than zero"]
    assert fields(result) == ["parallelism"]


@pytest.mark.parametrize("text, value", [
    ("1e1", 10.0), ("1E1", 10.0), ("1.0e1", 10.0), ("1e+1", 10.0), ("1.5e1", 15.0), ("1e-3", 0.001),
    ("0o10", 8), ("010", 8), ("0x10", 16), ("0b11", 3), ("1_0", 10), ("+10", 10), ("09", 9.0),
    ("y", True), ("n", False), ("~", None), (".5", 0.5), ("1e400", "1e400"), ("1:30", "1:30"),
    ("2001-12-14", "2001-12-14"), ("9223372036854775808", 9223372036854775808),
])
def test_plain_scalars_are_typed_like_go_yaml_v2(text, value):
    assert go_yaml_scalar(text) == value and type(go_yaml_scalar(text)) is type(value)


def test_an_anchor_may_be_defined_again_and_aliases_take_the_newest(run):
    # go-yaml v2 accepts a second &x; PyYAML alone refuses it ("found duplicate anchor").
    result = run("parallelism: &x 4\npodInitialBackoffSeconds: *x\npercentageOfNodesToScore: &x 20\n"
                 "podMaxBackoffSeconds: *x\n")
    assert result.ok
    assert [result.effective[key] for key in ("parallelism", "podInitialBackoffSeconds", "percentageOfNodesToScore",
                                              "podMaxBackoffSeconds")] == [4, 4, 20, 20]


@pytest.mark.parametrize("body, message", [
    ("parallelism: 'x\n", "yaml: line 4: found unexpected end of stream"),
    ("parallelism: a: b\n", "yaml: line 3: mapping values are not allowed in this context"),
    ("profiles:\n  - schedulerName: a\n schedulerName: b\n", "yaml: line 4: did not find expected key"),
    ("x:\n\ty: 1\n", "yaml: line 4: found character that cannot start any token"),
    ("x: *nope\n", "yaml: unknown anchor 'nope' referenced"),
    ("profiles: [a, b\n", "yaml: line 3: did not find expected ',' or ']'"),
    ("leaderElection: {a: 1\n", "yaml: line 3: did not find expected ',' or '}'"),
    ("profiles:\n- a\n  - b\nx\n", "yaml: line 7: could not find expected ':'"),
    ('x: "\\q"\n', "yaml: line 3: found unknown escape character"),
    ("profiles:\n  - schedulerName: a\n    plugins:\n   foo: 1\n", "yaml: line 5: did not find expected '-' indicator"),
    ("profiles: &a\n- *a\n", "yaml: anchor 'a' value contains itself"),
])
def test_syntax_errors_are_worded_as_go_yaml_v2_words_them(run, messages, body, message):
    # No "error converting YAML to JSON" prefix; scanner errors count lines from 1, parser errors from libyaml's
    # 0-based mark (one less than the line of PyYAML's mark).
    assert messages(run(body)) == [message]


@pytest.mark.parametrize("text, name", [
    ("!!binary YWJj", "abc"), ("!!timestamp 2024-01-01T10:00:00.5+02:00", "2024-01-01T10:00:00.5+02:00"),
    ("!foo abc", "abc"), ("!!map abc", "abc"), ("!!str 123", "123"),
])
def test_tags_decode_as_go_yaml_v2_decodes_them(run, text, name):
    result = run("profiles:\n- schedulerName: %s\n" % text)
    assert result.ok and result.effective["profiles"][0]["schedulerName"] == name


@pytest.mark.parametrize("body, message", [
    ("parallelism: !!int abc\n", "yaml: cannot decode !!str `abc` as a !!int"),
    ("parallelism: !!null abc\n", "yaml: cannot decode !!str `abc` as a !!null"),
    ("parallelism: !!int 1.5\n", "yaml: cannot decode !!float `1.5` as a !!int"),
    ("profiles:\n- schedulerName: !!timestamp foo\n", "yaml: cannot decode !!str `foo` as a !!timestamp"),
    ("profiles:\n- schedulerName: !!binary '!!'\n", "yaml: !!binary value contains invalid base64 data"),
    ("parallelism: !foo 3\n", "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.parallelism"
                              " of type int32"),
    ('x: "\\ud83d\\ude00"\n', "yaml: line 3: found invalid Unicode character escape code"),
])
def test_values_go_yaml_v2_refuses(run, messages, body, message):
    assert messages(run(body)) == [message]


@pytest.mark.parametrize("version, word", [("1.30", "Unsupported"), ("1.31", "unsupported"), ("1.35", "unsupported")])
def test_a_null_map_key_is_refused_anywhere(run, messages, version, word):
    # sigs.k8s.io/yaml's convertToJSONableObject, even inside the args of a plugin that does not exist.
    assert messages(run("profiles:\n- pluginConfig:\n  - name: X\n    args:\n      ~: {a: 1}\n", version=version)) == [
        "%s map key of type: %%!s(<nil>), key: <nil>, value: map[interface {}]interface {}{\"a\":1}" % word]


@pytest.mark.parametrize("keys, duplicate", [("1: a\n      01: b", "1"), ("y: a\n      true: b", "true"),
                                             ("1e1: a\n      10.0: b", "10"), ("1: a\n      '1': b", None),
                                             ("1: a\n      1.0: b", None)])
def test_duplicate_keys_are_the_decoded_keys(run, messages, keys, duplicate):
    result = run("profiles:\n- pluginConfig:\n  - name: X\n    args:\n      %s\n" % keys)
    if duplicate is None:
        assert result.ok
    else:
        assert messages(result) == ["strict decoding error: yaml: unmarshal errors:\n  line 8: key %s already set in map"
                                    % duplicate]


@pytest.mark.parametrize("text, message", [
    ("%YAML 1.2\n---\n", "yaml: found incompatible YAML document"),
    ("# c\n%YAML 1.2\n---\n", "yaml: line 1: found incompatible YAML document"),
    ("%FOO bar\n---\n", "yaml: found unknown directive name"),
])
def test_directives_other_than_yaml_1_1_and_tag_are_refused(text, message):
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
    assert [e["message"] for e in process(content=text + HEADER).errors] == [message]


def test_api_version_and_kind_are_found_case_insensitively_then_refused_as_unknown(messages):
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
    result = process(content=HEADER.replace("apiVersion", "ApiVersion"))
    assert messages(result) == ['strict decoding error: unknown field "ApiVersion"']


def test_a_control_character_is_refused_in_json_too():
    # A JSON file goes through go-yaml's reader first, which refuses non-printable characters such as DEL.
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
    result = process(content='{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", '
                             '"profiles": [{"schedulerName": "a\x7fb"}]}')
    assert [e["message"] for e in result.errors] == ["yaml: control characters are not allowed"]


def test_a_json_lone_surrogate_becomes_the_replacement_character():
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
    result = process(content='{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", '
                             '"profiles": [{"schedulerName": "\\ud800"}]}')
    assert result.ok and result.effective["profiles"][0]["schedulerName"] == "\ufffd"


def test_a_syntax_error_on_the_first_line_names_no_line():
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
    assert [e["message"] for e in process(content="a: b: c\n").errors] == [
        "yaml: mapping values are not allowed in this context"]
    assert [e["message"] for e in process(content="\tapiVersion: v1\n").errors] == [
        "yaml: found character that cannot start any token"]


@pytest.mark.parametrize("body, path, value", [
    ("parallelism: 1e1\n", ("parallelism",), 10),
    ("parallelism: 2.147483647e9\n", ("parallelism",), 2147483647),
    ("parallelism: 0o10\n", ("parallelism",), 8),
    ("podMaxBackoffSeconds: 2e9\n", ("podMaxBackoffSeconds",), 2000000000),
    ("clientConnection:\n  qps: 5e1\n", ("clientConnection", "qps"), 50),
    ("clientConnection:\n  qps: 1e-3\n", ("clientConnection", "qps"), 0.001),
])
def test_exponent_notation_numbers_are_accepted(run, body, path, value):
    result = run(body)
    assert result.ok
    node = result.effective
    for key in path:
        node = node[key]
    assert node == value


def test_exponent_number_with_a_fraction_is_refused_for_an_int(run, messages):
    assert messages(run("parallelism: 1.05e1\n")) == [
        "json: cannot unmarshal number 10.5 into Go struct field KubeSchedulerConfiguration.parallelism of type int32"]


@pytest.mark.parametrize("text, word", [(".inf", "+Inf"), ("-.inf", "-Inf"), (".nan", "NaN"), (".Inf", "+Inf")])
def test_non_finite_numbers_are_refused_anywhere(run, messages, fields, text, word):
    # sigs.k8s.io/yaml converts YAML to JSON with json.Marshal, which refuses NaN and infinities.
    result = run("clientConnection:\n  qps: %s\n" % text)
    assert messages(result) == ["json: unsupported value: %s" % word]
    assert fields(result) == ["clientConnection.qps"]
    # even in a field that is otherwise unknown
    assert messages(run("foo: [1, %s]\n" % text)) == ["json: unsupported value: %s" % word]


# -- float32 qps ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, number", [("3.5e38", "3.5e+38"), ("1e39", "1e+39"), ("3.4028236e38", "3.4028236e+38")])
def test_qps_beyond_float32_is_refused(run, messages, text, number):
    assert messages(run("clientConnection:\n  qps: %s\n" % text)) == [
        "json: cannot unmarshal number %s into Go struct field ClientConnectionConfiguration.clientConnection.qps of "
        "type float32" % number]


@pytest.mark.parametrize("text, written", [("3.4028235e38", 3.4028235e38), ("16777217", 16777216), ("0.1", 0.1),
                                           ("1e-46", 50), ("0", 50)])
def test_qps_is_written_as_its_float32(run, text, written):
    # 1e-46 rounds to a float32 zero, which defaulting replaces with 50.
    result = run("clientConnection:\n  qps: %s\n" % text)
    assert result.ok and result.effective["clientConnection"]["qps"] == written


# -- duplicate keys name their field --------------------------------------------------------------------------

def test_duplicate_keys_name_the_field(run, messages, fields):
    result = run("leaderElection:\n  leaderElect: true\n  leaderElect: false\n")
    assert messages(result) == ['strict decoding error: yaml: unmarshal errors:\n  line 5: key "leaderElect" '
                                'already set in map']
    assert fields(result) == ["leaderElection.leaderElect"]
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
    result = process(content='{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
                             ' "parallelism": 4, "parallelism": 5}')
    assert [e["field"] for e in result.errors] == ["parallelism"]


# -- plugin args: their own apiVersion/kind, gated fields -----------------------------------------------------

@pytest.mark.parametrize("version, line", [("1.30", 100), ("1.31", 100), ("1.32", 100), ("1.33", 110), ("1.34", 110),
                                           ("1.35", 111)])
@pytest.mark.parametrize("args, kind, api_version, field", [
    ("{apiVersion: v1, kind: DefaultPreemptionArgs}", "DefaultPreemptionArgs", "v1", "apiVersion"),
    ("{apiVersion: v1}", "DefaultPreemptionArgs", "v1", "apiVersion"),
    ("{kind: Foo}", "Foo", "kubescheduler.config.k8s.io/v1", "kind"),
])
def test_args_of_an_unregistered_kind(run, messages, fields, version, line, args, kind, api_version, field):
    result = run("profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: %s\n" % args, version=version)
    assert messages(result) == [
        'decoding .profiles[0].pluginConfig[0]: decoding args for plugin DefaultPreemption: no kind "%s" is '
        'registered for version "%s" in scheme "pkg/runtime/scheme.go:%d"' % (kind, api_version, line)]
    assert fields(result) == ["profiles[0].pluginConfig[0].args." + field]


def test_args_of_another_registered_kind(run, messages):
    result = run("profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n"
                 "    args: {apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration}\n")
    assert messages(result) == [
        "decoding .profiles[0].pluginConfig[0]: args for plugin DefaultPreemption were not of type "
        "DefaultPreemptionArgs.kubescheduler.config.k8s.io, got KubeSchedulerConfiguration.kubescheduler.config.k8s.io"]
    assert run("profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n"
               "    args: {apiVersion: '', kind: DefaultPreemptionArgs}\n").ok


@pytest.mark.parametrize("version, gate", [("1.30", "VolumeCapacityPriority"), ("1.32", "VolumeCapacityPriority"),
                                           ("1.33", "StorageCapacityScoring"), ("1.35", "StorageCapacityScoring")])
def test_an_empty_shape_is_a_set_field(run, fields, messages, version, gate):
    result = run("profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args:\n      shape: []\n", version=version)
    assert fields(result) == ["profiles[0].pluginConfig[0].args.shape"]
    assert messages(result)[0].endswith("unexpected field `shape`, remove it or turn on the feature gate " + gate)
    assert run("profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args:\n      shape: null\n",
               version=version).ok


# -- NodeResourcesFit args ------------------------------------------------------------------------------------

FIT = "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n%s"


@pytest.mark.parametrize("version", BINARY_MINORS)
def test_fit_shape_with_another_type_is_accepted_and_written(run, version):
    result = run(FIT % "        type: MostAllocated\n        requestedToCapacityRatio:\n"
                       "          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]\n", version=version)
    assert result.ok
    fit = [c for c in result.effective["profiles"][0]["pluginConfig"] if c["name"] == "NodeResourcesFit"][0]
    assert fit["args"]["scoringStrategy"]["requestedToCapacityRatio"] == {
        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}


@pytest.mark.parametrize("version", BINARY_MINORS)
def test_fit_shape_errors_name_upstreams_path_in_the_message(run, messages, fields, version):
    result = run(FIT % "        type: LeastAllocated\n        requestedToCapacityRatio:\n"
                       "          shape: [{utilization: 101, score: 5}]\n", version=version)
    assert messages(result) == [
        'initializing profiles: creating profile for scheduler name default-scheduler: initializing plugin '
        '"NodeResourcesFit": scoringStrategy.shape[0].utilization: Invalid value: 101: not in valid range [0, 100]']
    assert fields(result) == [
        "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[0].utilization"]


@pytest.mark.parametrize("version", BINARY_MINORS)
def test_fit_ratio_type_without_param_is_refused_not_a_panic(run, fields, version):
    result = run(FIT % "        type: RequestedToCapacityRatio\n", version=version)
    assert fields(result) == ["profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio"]


# kube-scheduler v1.36.3: requestedToCapacityRatio belongs to its type (validated when NodeResourcesFit is built).
FIT_INIT = ('initializing profiles: creating profile for scheduler name default-scheduler: initializing plugin '
            '"NodeResourcesFit": ')
FORBIDDEN_RATIO = "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio"
RATIO_FIELD = "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio"


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
@pytest.mark.parametrize("ratio", ["{}", "{shape: []}", "{shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}",
                                   "{shape: [{utilization: 101, score: 5}]}"])
def test_fit_ratio_with_another_type_is_forbidden_from_1_36(run, messages, fields, strategy, ratio):
    text = FIT % ("        type: %s\n        requestedToCapacityRatio: %s\n" % (strategy, ratio))
    result = run(text, version="1.36")
    # Only the Forbidden error: the shape of a ratio that must not be there is not checked.
    assert messages(result) == [FIT_INIT + FORBIDDEN_RATIO]
    assert fields(result) == [RATIO_FIELD]


def test_fit_ratio_with_an_unsupported_type_is_forbidden_too_from_1_36(run, messages, fields):
    result = run(FIT % "        type: Foo\n        requestedToCapacityRatio: {}\n", version="1.36")
    assert messages(result) == [FIT_INIT + '[scoringStrategy.type: Unsupported value: "Foo": supported values: '
                                '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio", ' + FORBIDDEN_RATIO + "]"]
    assert fields(result) == ["profiles[0].pluginConfig[0].args.scoringStrategy.type"]


def test_fit_ratio_type_without_param_is_required_from_1_36(run, messages, fields):
    # 1.30-1.35 panic on it (exit 2); 1.36 says so, after the resources' errors.
    result = run(FIT % "        type: RequestedToCapacityRatio\n", version="1.36")
    assert messages(result) == [FIT_INIT + "scoringStrategy.requestedToCapacityRatio: Required value: must be "
                                "specified when type is RequestedToCapacityRatio"]
    assert fields(result) == [RATIO_FIELD]
    result = run(FIT % "        type: RequestedToCapacityRatio\n        resources: [{name: cpu, weight: 101}]\n",
                 version="1.36")
    assert messages(result) == [FIT_INIT + "[scoringStrategy.resources[0].weight: Invalid value: 101: resource weight "
                                "of cpu not in valid range (0, 100], scoringStrategy.requestedToCapacityRatio: Required "
                                "value: must be specified when type is RequestedToCapacityRatio]"]


def test_fit_shape_errors_name_the_ratio_from_1_36(run, messages, fields):
    result = run(FIT % "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
                       "          shape: [{utilization: 101, score: 5}]\n", version="1.36")
    assert messages(result) == [FIT_INIT + "scoringStrategy.requestedToCapacityRatio.shape[0].utilization: Invalid "
                                "value: 101: not in valid range [0, 100]"]
    assert fields(result) == [RATIO_FIELD + ".shape[0].utilization"]


@pytest.mark.parametrize("body", [
    "        type: LeastAllocated\n        requestedToCapacityRatio: null\n",
    "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
    "          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]\n",
    # Args of a NodeResourcesFit that is not built are never checked.
    "        type: LeastAllocated\n        requestedToCapacityRatio: {}\n  plugins:\n    multiPoint:\n"
    "      disabled: [{name: NodeResourcesFit}]\n",
])
def test_fit_ratio_accepted_on_1_36(run, body):
    assert run(FIT % body, version="1.36").ok


# -- 1.36 placement extension points (kube-scheduler v1.36.3) ------------------------------------------------------

PLACEMENT = "profiles:\n- plugins:\n    %s:\n      enabled: [{name: %s}]\n"
PROFILE_INIT = "initializing profiles: creating profile for scheduler name default-scheduler: "


@pytest.mark.parametrize("point, plugin", [("placementScore", "NodeResourcesFit"),
                                           ("placementScore", "PodGroupPodsCount"),
                                           ("placementGenerate", "TopologyPlacementGenerator")])
def test_placement_plugins_accepted_on_1_36(run, point, plugin):
    assert run(PLACEMENT % (point, plugin), version="1.36").ok


@pytest.mark.parametrize("point, plugin, message", [
    ("placementGenerate", "NodeResourcesFit", 'plugin "NodeResourcesFit" does not extend PlacementGeneratePlugin plugin'),
    ("placementScore", "TopologyPlacementGenerator",
     'plugin "TopologyPlacementGenerator" does not extend PlacementScorePlugin plugin'),
    ("placementGenerate", "TopologyPlacement", 'PlacementGeneratePlugin "TopologyPlacement" does not exist'),
])
def test_placement_plugins_refused_on_1_36(run, messages, point, plugin, message):
    assert messages(run(PLACEMENT % (point, plugin), version="1.36")) == [PROFILE_INIT + message]


# -- extenders ------------------------------------------------------------------------------------------------

EXT = "extenders:\n- urlPrefix: http://127.0.0.1:1/ext\n"


@pytest.mark.parametrize("timeout, written", [(None, "5s"), ("0s", "5s"), ("30s", "30s"), ("-5s", "-5s")])
def test_extender_http_timeout_default(run, timeout, written):
    result = run(EXT + ("  httpTimeout: %s\n" % timeout if timeout else ""))
    assert result.ok and result.effective["extenders"][0]["httpTimeout"] == written


def _fit_args(result, profile=0):
    return [c for c in result.effective["profiles"][profile]["pluginConfig"] if c["name"] == "NodeResourcesFit"][0]


def test_ignored_by_scheduler_replaces_fit_ignored_resources(run):
    result = run(EXT + "  managedResources:\n  - {name: example.com/foo, ignoredByScheduler: true}\n"
                 "  - {name: example.com/bar}\nprofiles:\n- schedulerName: a\n  pluginConfig:\n"
                 "  - name: NodeResourcesFit\n    args:\n      ignoredResources: [example.com/baz]\n- schedulerName: b\n")
    assert result.ok
    assert _fit_args(result, 0)["args"]["ignoredResources"] == ["example.com/foo"]
    assert _fit_args(result, 1)["args"]["ignoredResources"] == ["example.com/foo"]


def test_ignored_by_scheduler_needs_fit_args_in_every_profile(run, messages, fields):
    result = run(EXT + "  managedResources:\n  - {name: example.com/foo, ignoredByScheduler: true}\n"
                 "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: NodeResourcesFit}]\n")
    assert messages(result) == ["couldn't build extenders: can't find NodeResourcesFitArgs in plugin config"]
    assert fields(result) == ["profiles[0].pluginConfig"]


def test_extender_ca_data_must_be_pem(run, messages, fields):
    result = run(EXT + "  tlsConfig:\n    serverName: x\n    caData: YWJj\n")
    assert messages(result) == [
        "couldn't build extenders: unable to load root certificates: unable to parse bytes as PEM block"]
    assert fields(result) == ["extenders[0].tlsConfig.caData"]


# -- the plugins view -----------------------------------------------------------------------------------------

def test_plugins_view_orders_and_weighs_after_the_merge(run):
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n      disabled: [{name: ImageLocality}]\n"
                 "    score:\n      enabled: [{name: TaintToleration, weight: 9}]\n    filter:\n"
                 "      disabled: [{name: '*'}]\n      enabled: [{name: NodeName}]\n", version="1.33")
    view = result.plugins["a"]
    assert view["queueSort"] == [{"name": "PrioritySort"}]
    assert view["filter"] == [{"name": "NodeName"}]
    assert view["bind"] == [{"name": "DefaultBinder"}]
    scores = dict((p["name"], p["weight"]) for p in view["score"])
    assert scores["TaintToleration"] == 9 and "ImageLocality" not in scores and scores["NodeResourcesFit"] == 1
    # a plugin listed at an extension point runs before the multiPoint ones there
    assert view["score"][0] == {"name": "TaintToleration", "weight": 9}
    assert "postBind" not in view


def test_plugins_view_only_for_valid_configs(run):
    assert run("parallelism: 0\n").plugins is None


@pytest.mark.parametrize("key, name", [("1e1", "10"), ("1.5", "1.5"), ("1e6", "1e+06"), ("0.1", "0.1")])
def test_float_keys_are_named_as_sigs_yaml_writes_them(run, messages, key, name):
    # strconv.FormatFloat(key, 'g', -1, 32)
    assert messages(run("%s: x\n" % key)) == ['strict decoding error: unknown field "%s"' % name]


def test_extender_ca_data_with_a_malformed_certificate(run, messages):
    import base64
    pem = b"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUeTb0\n-----END CERTIFICATE-----\n"
    result = run(EXT + "  tlsConfig:\n    caData: %s\n" % base64.b64encode(pem).decode())
    assert messages(result) == ["couldn't build extenders: unable to load root certificates: failed to parse "
                                "certificate: x509: malformed certificate"]


def test_extender_insecure_with_a_ca(run, messages):
    import base64
    pem = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    result = run(EXT + "  tlsConfig:\n    insecure: true\n    caData: %s\n" % base64.b64encode(pem).decode())
    assert messages(result) == [
        "couldn't build extenders: specifying a root certificates file with the insecure flag is not allowed"]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_json_has_no_nan_or_infinity(literal):
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
    result = process(content='{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", '
                             '"profiles": [{"pluginConfig": [{"name": "Custom", "args": {"x": %s}}]}]}' % literal)
    assert not result.ok and "invalid character" in result.errors[0]["message"]


@pytest.mark.parametrize("text", ["", "# nothing\n", "---\n---\napiVersion: kubescheduler.config.k8s.io/v1\n"])
def test_an_empty_first_document_misses_its_kind(text):
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
    result = process(content=text)
    assert [e["message"] for e in result.errors] == ["Object 'Kind' is missing in '%s'" % text]
    assert [e["field"] for e in result.errors] == ["kind"]


@pytest.mark.parametrize("version, prefix", [("1.30", "queueSort "), ("1.33", "queueSort "), ("1.34", ""), ("1.35", "")])
def test_queue_sort_message_per_minor(run, messages, version, prefix):
    result = run("profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n"
                 "      disabled: [{name: '*'}]\n      enabled: [{name: PrioritySort}]\n", version=version)
    assert messages(result)[0].endswith(": %smust be the same for all profiles" % prefix)


def test_removed_plugin_message_names_the_version_alone(run, messages):
    assert messages(run("profiles:\n- plugins:\n    filter:\n      enabled: [{name: EBSLimits}]\n", version="1.31")) == [
        'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version "v1" '
        '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")']


@pytest.mark.parametrize("version, prefix", [("1.30", "utilization "), ("1.33", "utilization "), ("1.34", ""),
                                             ("1.35", "")])
def test_shape_sort_message_per_minor(run, messages, version, prefix):
    result = run(FIT % "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
                       "          shape: [{utilization: 50, score: 5}, {utilization: 40, score: 5}]\n", version=version)
    assert messages(result)[0].endswith("scoringStrategy.shape[1].utilization: Invalid value: 40: %svalues must be "
                                        "sorted in increasing order" % prefix)


@pytest.mark.parametrize("body, field", [
    ("leaderElection:\n  retryPeriod: null\n", "leaderElection.retryPeriod"),
    ("leaderElection:\n  leaderElect: false\n  renewDeadline: ~\n", "leaderElection.renewDeadline"),
    ("extenders:\n- urlPrefix: http://x\n  httpTimeout: null\n", "extenders[0].httpTimeout"),
])
def test_a_null_duration_is_an_empty_duration(run, messages, fields, body, field):
    # metav1.Duration.UnmarshalJSON gets the null and parses "": every binary refuses.
    result = run(body)
    assert messages(result) == ['time: invalid duration ""']
    assert fields(result) == [field]


@pytest.mark.parametrize("version", ["1.34", "1.35"])
def test_a_null_pointer_duration_is_unset(run, version):
    # DynamicResourcesArgs.filterTimeout is a *metav1.Duration: null leaves it nil, defaulted to 10s.
    result = run("profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args:\n      filterTimeout: null\n",
                 version=version)
    assert result.ok
    dra = [c for c in result.effective["profiles"][0]["pluginConfig"] if c["name"] == "DynamicResources"][0]
    assert dra["args"]["filterTimeout"] == "10s"


@pytest.mark.parametrize("version, message", [
    ("1.33", "leaderElection.leaseDuration: Invalid value: v1.Duration{Duration:15000000000}: LeaseDuration must be "
             "greater than RenewDeadline"),
    ("1.34", 'leaderElection.leaseDuration: Invalid value: "15s": must be greater than `RenewDeadline`'),
])
def test_lease_not_longer_than_renew_per_minor(run, messages, version, message):
    assert messages(run("leaderElection:\n  leaseDuration: 15s\n  renewDeadline: 15s\n", version=version)) == [message]


@pytest.mark.parametrize("version, name", [("1.34", "KubeSchedulerConfiguration.enableProfiling"),
                                           ("1.35", "KubeSchedulerConfiguration.DebuggingConfiguration.enableProfiling")])
def test_embedded_debugging_fields_in_type_errors(run, messages, version, name):
    assert messages(run("enableProfiling: 'true'\n", version=version)) == [
        "json: cannot unmarshal string into Go struct field %s of type bool" % name]


def test_args_that_are_not_an_object(run, messages, fields):
    result = run("profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: not-an-object\n")
    assert messages(result) == [
        'decoding .profiles[0].pluginConfig[0]: decoding args for plugin DefaultPreemption: couldn\'t get version/kind; '
        'json parse error: json: cannot unmarshal string into Go value of type struct { APIVersion string '
        '"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }']
    assert fields(result) == ["profiles[0].pluginConfig[0].args"]


# -- 1.37: podGroupPostFilter and the 1.37 registry (kube-scheduler v1.37.2, built from upstream Go modules) --------

@pytest.mark.parametrize("point, plugin", [("podGroupPostFilter", "DefaultPreemption"),
                                           ("podGroupPostFilter", "DynamicResources"),
                                           ("preFilter", "NodeName"), ("preFilter", "NodeUnschedulable"),
                                           ("preFilter", "TaintToleration"),
                                           ("multiPoint", "DeferredPodScheduling"),
                                           ("multiPoint", "GangScheduling")])
def test_plugins_accepted_on_1_37(run, point, plugin):
    assert run(PLACEMENT % (point, plugin), version="1.37").ok


@pytest.mark.parametrize("point, plugin, message", [
    ("podGroupPostFilter", "NodeResourcesFit",
     'plugin "NodeResourcesFit" does not extend PodGroupPostFilterPlugin plugin'),
    ("podGroupPostFilter", "NoSuch", 'PodGroupPostFilterPlugin "NoSuch" does not exist'),
    ("score", "DeferredPodScheduling", 'plugin "DeferredPodScheduling" does not extend ScorePlugin plugin'),
    ("placementScore", "PlacementBinPacking", 'PlacementScorePlugin "PlacementBinPacking" does not exist'),
])
def test_plugins_refused_on_1_37(run, messages, point, plugin, message):
    assert messages(run(PLACEMENT % (point, plugin), version="1.37")) == [PROFILE_INIT + message]


def test_pod_group_post_filter_duplicate_on_1_37(run, messages):
    text = PLACEMENT % ("podGroupPostFilter", "DefaultPreemption}, {name: DefaultPreemption")
    assert messages(run(text, version="1.37")) == [
        PROFILE_INIT + 'plugin "DefaultPreemption" already registered as "PodGroupPostFilterPlugin"']


def test_removed_plugin_in_pod_group_post_filter_on_1_37(run, messages):
    # validatePluginConfig's stagesToPluginSet has podGroupPostFilter from 1.37.
    assert messages(run(PLACEMENT % ("podGroupPostFilter", "EBSLimits"), version="1.37")) == [
        'profiles[0].plugins.podGroupPostFilter.enabled[0]: Invalid value: "EBSLimits": was invalid in version "v1" '
        '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")']


@pytest.mark.parametrize("version", ["1.30", "1.35", "1.36"])
def test_pod_group_post_filter_is_an_unknown_field_before_1_37(run, messages, version):
    # v1.35.4 (and v1.30.14): strict decoding refuses the field, as every minor before 1.37 has no such field.
    assert messages(run(PLACEMENT % ("podGroupPostFilter", "DefaultPreemption"), version=version)) == [
        'strict decoding error: unknown field "profiles[0].plugins.podGroupPostFilter"']


def test_placement_bin_packing_args_not_registered_on_1_37(run, messages):
    text = "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {kind: PlacementBinPackingArgs}\n"
    assert messages(run(text, version="1.37")) == [
        'decoding .profiles[0].pluginConfig[0]: decoding args for plugin NodeResourcesFit: no kind '
        '"PlacementBinPackingArgs" is registered for version "kubescheduler.config.k8s.io/v1" in scheme '
        '"pkg/runtime/scheme.go:111"']


@pytest.mark.parametrize("shape", ["[]", "null"])
def test_volume_binding_empty_shape_is_defaulted_on_1_37(run, shape):
    text = "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: {shape: %s}\n" % shape
    result = run(text, version="1.37")
    args = [c["args"] for c in result.effective["profiles"][0]["pluginConfig"] if c["name"] == "VolumeBinding"][0]
    assert args["shape"] == [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]


# -- 1.38 (a preview): kube-scheduler v1.38.0-beta.0, built from upstream Go modules --------------------------------

@pytest.mark.parametrize("point, plugin", [("placementFeasible", "GangScheduling"), ("reserve", "DefaultPreemption"),
                                           ("podGroupPostFilter", "DefaultPreemption"),
                                           ("multiPoint", "GangScheduling")])
def test_plugins_accepted_on_1_38(run, point, plugin):
    assert run(PLACEMENT % (point, plugin), version="1.38").ok


@pytest.mark.parametrize("point, plugin, message", [
    ("permit", "GangScheduling", 'plugin "GangScheduling" does not extend PermitPlugin plugin'),
    ("placementFeasible", "DefaultPreemption",
     'plugin "DefaultPreemption" does not extend PlacementFeasiblePlugin plugin'),
    ("placementFeasible", "NodeResourcesFit", 'plugin "NodeResourcesFit" does not extend PlacementFeasiblePlugin plugin'),
    ("placementFeasible", "NoSuch", 'PlacementFeasiblePlugin "NoSuch" does not exist'),
    ("placementFeasible", "GangScheduling}, {name: GangScheduling",
     'plugin "GangScheduling" already registered as "PlacementFeasiblePlugin"'),
])
def test_plugins_refused_on_1_38(run, messages, point, plugin, message):
    assert messages(run(PLACEMENT % (point, plugin), version="1.38")) == [PROFILE_INIT + message]


@pytest.mark.parametrize("point, plugin", [("placementGenerate", "EBSLimits"), ("placementScore", "AzureDiskLimits"),
                                           ("placementFeasible", "EBSLimits")])
def test_removed_plugins_in_placement_points_are_refused_by_validation_on_1_38(run, messages, point, plugin):
    # v1.38.0-beta.0's stagesToPluginSet lists the placement points (v1.37.2 said 'PlacementGeneratePlugin
    # "EBSLimits" does not exist' when it built the profile).
    assert messages(run(PLACEMENT % (point, plugin), version="1.38")) == [
        'profiles[0].plugins.%s.enabled[0]: Invalid value: "%s": was invalid in version "v1" '
        '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")' % (point, plugin)]


@pytest.mark.parametrize("version", ["1.36", "1.37"])
def test_placement_feasible_is_an_unknown_field_before_1_38(run, messages, version):
    assert messages(run(PLACEMENT % ("placementFeasible", "GangScheduling"), version=version)) == [
        'strict decoding error: unknown field "profiles[0].plugins.placementFeasible"']


def test_default_plugins_on_1_38(run):
    # DynamicResources (weight 2) before DefaultPreemption without a gate; without GenericWorkload DefaultPreemption's
    # Reserve is disabled, and placementFeasible is written empty.
    plugins = run("", version="1.38").effective["profiles"][0]["plugins"]
    names = [(p["name"], p["weight"]) for p in plugins["multiPoint"]["enabled"]]
    assert names[names.index(("DefaultPreemption", 0)) - 1] == ("DynamicResources", 2)
    assert plugins["reserve"] == {"disabled": [{"name": "DefaultPreemption", "weight": 0}]}
    assert plugins["placementFeasible"] == {}
    with_gate = run("", version="1.38", feature_gates="GenericWorkload=true")
    assert with_gate.effective["profiles"][0]["plugins"]["reserve"] == {}
    assert with_gate.plugins["default-scheduler"]["reserve"] == [
        {"name": "VolumeBinding"}, {"name": "DynamicResources"}, {"name": "DefaultPreemption"}]
    assert with_gate.plugins["default-scheduler"]["placementFeasible"] == [{"name": "GangScheduling"}]


def test_default_preemption_enabled_at_reserve_on_1_38(run):
    result = run(PLACEMENT % ("reserve", "DefaultPreemption"), version="1.38")
    assert result.effective["profiles"][0]["plugins"]["reserve"] == {
        "enabled": [{"name": "DefaultPreemption", "weight": 0}], "disabled": [{"name": "DefaultPreemption", "weight": 0}]}
    assert result.plugins["default-scheduler"]["reserve"] == [
        {"name": "VolumeBinding"}, {"name": "DynamicResources"}, {"name": "DefaultPreemption"}]


@pytest.mark.parametrize("body, field", [("percentageOfPlacementsToScore: 5\n", "percentageOfPlacementsToScore"),
                                         ("profiles:\n- percentageOfPlacementsToScore: 5\n",
                                          "profiles[0].percentageOfPlacementsToScore")])
def test_percentage_of_placements_to_score_needs_its_gate_on_1_38(run, messages, body, field):
    assert messages(run(body, version="1.38")) == [
        field + ": Forbidden: percentageOfPlacementsToScore requires TopologyAwareWorkloadScheduling feature gate to be "
        "enabled"]


def test_percentage_of_placements_to_score_with_its_gate_on_1_38(run, messages):
    gates = "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"
    assert run("", version="1.38", feature_gates=gates).effective["percentageOfPlacementsToScore"] == 0
    assert "percentageOfPlacementsToScore" not in run("", version="1.38").effective
    kept = run("profiles:\n- percentageOfPlacementsToScore: 5\n", version="1.38", feature_gates=gates).effective
    assert kept["percentageOfPlacementsToScore"] == 0 and kept["profiles"][0]["percentageOfPlacementsToScore"] == 5
    assert messages(run("percentageOfPlacementsToScore: -1\nprofiles:\n- percentageOfPlacementsToScore: 200\n",
                        version="1.38", feature_gates=gates)) == [
        "profiles[0].percentageOfPlacementsToScore: Invalid value: 200: not in valid range [0-100]",
        "percentageOfPlacementsToScore: Invalid value: -1: not in valid range [0-100]"]
