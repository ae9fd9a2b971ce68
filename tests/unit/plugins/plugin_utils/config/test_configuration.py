# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The process() facade: usage errors, rendering, effective config, error fields, extra_plugins, warnings."""

from __future__ import annotations

import hashlib
import os

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import versions
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process

# The Kubernetes docs' examples as the differential corpus keeps them (each file names its source on its first
# line), which the real kube-scheduler of every minor answered too.
DOCS_EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "differential", "corpus",
                             "docs")


def _docs_example(name):
    with open(os.path.join(DOCS_EXAMPLES, name), encoding="utf-8") as handle:
        return handle.read()


# Bin-packing profile from the Kubernetes docs (Resource Bin Packing, MostAllocated).
BIN_PACKING = _docs_example("bin-packing-most-allocated.yaml")


@pytest.mark.parametrize("kwargs", [{}, {"content": "a: 1", "config": {}}])
def test_exactly_one_input(kwargs):
    with pytest.raises(ValueError):
        process(**kwargs)


@pytest.mark.parametrize("version", ["1.29", "2.0", "latest", "1.39.0"])
def test_bad_version_is_a_usage_error(version):
    with pytest.raises(ValueError):
        process(config={}, kubernetes_version=version)


def test_a_minor_newer_than_the_newest_known_names_it_and_the_way_on():
    newest = versions.SUPPORTED_MINORS[-1]
    newer = "1.%d.0" % (int(newest.split(".")[1]) + 1)
    with pytest.raises(ValueError) as raised:
        process(config={}, kubernetes_version=newer)
    message = str(raised.value)
    assert "newer than %s, the newest minor this collection knows" % newest in message
    assert "use a kubesched.schedulers release that supports %s" % newer.rsplit(".", 1)[0] in message
    if newest in versions.PREVIEW_MINORS:
        assert "(a preview; %s is the newest released one)" % versions.NEWEST_MINOR in message
        assert "%s (preview)" % newest in message
    with pytest.raises(versions.UnsupportedVersion, match="older than 1.30, the oldest minor this collection"):
        versions.normalise("1.29.3")


@pytest.mark.parametrize("version, minor", [(None, "1.37"), ("1.30", "1.30"), ("1.34.2", "1.34"), ("v1.35.1", "1.35")])
def test_version_forms(version, minor):
    assert process(config={}, kubernetes_version=version).version == minor


def test_valid_config_result():
    result = process(content=BIN_PACKING, kubernetes_version="1.33")
    assert result.ok and result.errors == []
    assert result.profiles == ["default-scheduler"]
    assert result.effective["kind"] == "KubeSchedulerConfiguration"
    assert result.checksum == hashlib.sha256(result.rendered.encode("utf-8")).hexdigest()
    rendered = yaml.safe_load(result.rendered)
    assert rendered["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert "!!python" not in result.rendered and result.rendered.endswith("\n")


def test_rendered_is_canonical_and_round_trips():
    first = process(content=BIN_PACKING)
    shuffled = process(config=yaml.safe_load(BIN_PACKING.replace("kind: KubeSchedulerConfiguration\n", "")))
    assert first.rendered == shuffled.rendered
    again = process(content=first.rendered)
    assert again.rendered == first.rendered and again.checksum == first.checksum
    assert again.effective == first.effective


def test_rendered_keeps_strings_that_look_like_other_types():
    result = process(config={"profiles": [{"schedulerName": "yes"}]})
    assert yaml.safe_load(result.rendered)["profiles"][0]["schedulerName"] == "yes"
    assert process(content=result.rendered).ok


def test_dict_input_may_omit_api_version_and_kind():
    assert process(config={"parallelism": 4}).effective["parallelism"] == 4


def test_errors_have_upstream_fields_and_nothing_is_rendered():
    result = process(config={"profiles": [{"schedulerName": "a", "percentageOfNodesToScore": 101}]})
    assert result.errors == [{"field": "profiles[0].percentageOfNodesToScore", "type": "Invalid value",
                              "message": "profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid "
                                         "range [0-100]"}]
    assert result.effective is None and result.rendered is None and result.checksum is None and not result.ok


def test_json_content():
    result = process(content='{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
                             ' "parallelism": 4}')
    assert result.ok and result.effective["parallelism"] == 4


def test_out_of_tree_plugin_must_be_declared(run, messages):
    body = "profiles:\n- schedulerName: a\n  plugins:\n    permit:\n      enabled: [{name: Coscheduling}]\n"
    assert messages(run(body)) == [
        'initializing profiles: creating profile for scheduler name a: PermitPlugin "Coscheduling" does not exist']
    assert run(body, extra_plugins=["Coscheduling"]).ok
    assert run(body, extra_plugins=[{"name": "Coscheduling", "extension_points": ["permit"]}]).ok
    wrong_point = run(body, extra_plugins=[{"name": "Coscheduling", "extension_points": ["queueSort"]}])
    assert messages(wrong_point) == ['initializing profiles: creating profile for scheduler name a: plugin '
                                     '"Coscheduling" does not extend PermitPlugin plugin']


@pytest.mark.parametrize("extra", [[{"name": "ImageLocality"}], [{"name": "X", "extension_points": ["nope"]}],
                                   [{"name": "X", "weight": 1}], [3]])
def test_bad_extra_plugins_are_usage_errors(extra):
    with pytest.raises(ValueError):
        process(config={}, extra_plugins=extra)


def test_warnings(run):
    result = run("""
        profiles:
        - schedulerName: a
          plugins:
            multiPoint:
              disabled: [{name: InterPodAffinity}]
            score:
              enabled: [{name: ImageLocality, weight: 0}]
            filter:
              enabled: [{name: NodeName, weight: 2}]
              disabled: [{name: NodeName}]
          pluginConfig:
          - name: InterPodAffinity
            args: {hardPodAffinityWeight: 5}
          - name: NotAPlugin
            args: {x: 1}
        """)
    assert result.ok, result.errors
    assert result.warnings == [
        "profiles[0].pluginConfig[0]: plugin InterPodAffinity is not enabled in profile a; its args are ignored",
        "profiles[0].pluginConfig[1]: NotAPlugin is not a plugin of this kube-scheduler; its args are ignored",
        "profiles[0].plugins.filter.enabled[0].weight: weight is used only for score plugins; it is ignored here",
        "profiles[0].plugins.score.enabled[0].weight: a score weight of 0 is treated as 1 by kube-scheduler; "
        "disable the plugin to turn it off",
    ]


# -- End to end: configurations from the Kubernetes docs (kubernetes/website content/en/docs) ---------------------
# Each example must be accepted; each documented mistake rejected with the field the docs name.
DOCS_MINORS = ("1.30", "1.32", "1.34", "1.36")

# reference/scheduling/config.md: the minimal configuration, the score-disabling example with custom
# plugins, the two-profile example and the multiPoint example.
DOCS_MINIMAL = "clientConnection:\n  kubeconfig: /etc/srv/kubernetes/kube-scheduler/kubeconfig\n"
DOCS_CUSTOM_SCORE = """
profiles:
  - plugins:
      score:
        disabled:
        - name: PodTopologySpread
        enabled:
        - name: MyCustomPluginA
          weight: 2
        - name: MyCustomPluginB
          weight: 1
"""
DOCS_TWO_PROFILES = _docs_example("config-multiple-profiles.yaml").split("kind: KubeSchedulerConfiguration\n", 1)[1]
DOCS_MULTIPOINT = """
profiles:
  - schedulerName: multipoint-scheduler
    plugins:
      multiPoint:
        enabled:
        - name: MyPlugin
"""
# concepts/scheduling-eviction/resource-bin-packing.md: RequestedToCapacityRatio.
DOCS_REQUESTED_TO_CAPACITY = """
profiles:
- pluginConfig:
  - args:
      scoringStrategy:
        resources:
        - name: intel.com/foo
          weight: 3
        - name: intel.com/bar
          weight: 3
        requestedToCapacityRatio:
          shape:
          - utilization: 0
            score: 0
          - utilization: 100
            score: 10
        type: RequestedToCapacityRatio
    name: NodeResourcesFit
"""
# concepts/scheduling-eviction/topology-spread-constraints.md: cluster-level default constraints.
DOCS_SPREAD_DEFAULTS = """
profiles:
  - schedulerName: default-scheduler
    pluginConfig:
      - name: PodTopologySpread
        args:
          defaultConstraints:
            - maxSkew: 1
              topologyKey: topology.kubernetes.io/zone
              whenUnsatisfiable: ScheduleAnyway
          defaultingType: List
"""
# concepts/scheduling-eviction/assign-pod-node.md: node affinity per scheduling profile.
DOCS_ADDED_AFFINITY = """
profiles:
  - schedulerName: default-scheduler
  - schedulerName: foo-scheduler
    pluginConfig:
      - name: NodeAffinity
        args:
          addedAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions:
                - key: scheduler-profile
                  operator: In
                  values:
                  - foo
"""
# tasks/extend-kubernetes/configure-multiple-schedulers.md: a second scheduler without leader election.
DOCS_SECOND_SCHEDULER = """
profiles:
  - schedulerName: my-scheduler
leaderElection:
  leaderElect: false
"""


@pytest.mark.parametrize("version", DOCS_MINORS)
@pytest.mark.parametrize("body, extra, names", [
    (DOCS_MINIMAL, None, ["default-scheduler"]),
    (DOCS_CUSTOM_SCORE, [{"name": "MyCustomPluginA", "extension_points": ["score"]},
                         {"name": "MyCustomPluginB", "extension_points": ["score"]}], ["default-scheduler"]),
    (DOCS_TWO_PROFILES, None, ["default-scheduler", "no-scoring-scheduler"]),
    (DOCS_MULTIPOINT, [{"name": "MyPlugin", "extension_points": ["preScore", "score", "preFilter", "filter"]}],
     ["multipoint-scheduler"]),
    (BIN_PACKING.split("kind: KubeSchedulerConfiguration\n", 1)[1], None, ["default-scheduler"]),
    (DOCS_REQUESTED_TO_CAPACITY, None, ["default-scheduler"]),
    (DOCS_SPREAD_DEFAULTS, None, ["default-scheduler"]),
    (DOCS_ADDED_AFFINITY, None, ["default-scheduler", "foo-scheduler"]),
    (DOCS_SECOND_SCHEDULER, None, ["my-scheduler"]),
], ids=["minimal", "custom-score", "two-profiles", "multipoint", "most-allocated", "requested-to-capacity",
        "spread-defaults", "added-affinity", "second-scheduler"])
def test_docs_examples_are_accepted(run, version, body, extra, names):
    result = run(body, version=version, extra_plugins=extra)
    assert result.errors == []
    assert result.profiles == names


def test_docs_custom_plugins_are_unknown_without_a_custom_build(run):
    # config.md's MyCustomPluginA is not an in-tree plugin: a stock kube-scheduler does not start.
    assert not run(DOCS_CUSTOM_SCORE, version="1.34").ok


def test_docs_two_profiles_disable_every_score_plugin(run):
    # config.md: "one with the default plugins and one with all scoring plugins disabled".
    plugins = run(DOCS_TWO_PROFILES, version="1.33").effective["profiles"][1]["plugins"]
    assert plugins["score"] == {"disabled": [{"name": "*", "weight": 0}]}
    assert plugins["preScore"] == {"disabled": [{"name": "*", "weight": 0}]}


@pytest.mark.parametrize("version", DOCS_MINORS)
@pytest.mark.parametrize("body, field", [
    # config.md: "When declaring more than one profile, a unique scheduler name for each of them is required."
    ("profiles:\n- schedulerName: a\n- schedulerName: a\n", "profiles[1].schedulerName"),
    ("profiles:\n- schedulerName: a\n- {}\n", "profiles[1].schedulerName"),
    # config.md: "All profiles must use the same plugin in the queueSort extension point".
    ("profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n"
     "      disabled: [{name: '*'}]\n      enabled: [{name: PrioritySort}]\n", "profiles[1].plugins.queueSort"),
    # resource-bin-packing.md: weights and shape scores are bounded (weight (0,100], score [0,10]).
    ("profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
     "        type: RequestedToCapacityRatio\n        resources: [{name: intel.com/foo, weight: 3}]\n"
     "        requestedToCapacityRatio:\n          shape: [{utilization: 0, score: 11}]\n",
     "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[0].score"),
], ids=["duplicate-name", "missing-name", "queue-sort-differs", "shape-score"])
def test_docs_mistakes_are_rejected_with_the_field(run, version, body, field):
    result = run(body, version=version)
    assert result.errors and result.errors[0]["field"] == field


@pytest.mark.parametrize("version, field", [
    # content/en/docs/concepts/scheduling-eviction/dynamic-resource-allocation.md (device binding conditions):
    # bindingTimeout only exists from 1.35 and is Forbidden unless DRADeviceBindingConditions (beta, on from
    # 1.36) and DRAResourceClaimDeviceStatus are on (validation_pluginargs.go ValidateDynamicResourcesArgs).
    ("1.34", "profiles[0].pluginConfig[0].args.bindingTimeout"),
    ("1.35", "profiles[0].pluginConfig[0].args.bindingTimeout"),
    ("1.36", None),
])
def test_docs_dra_binding_timeout(run, version, field):
    result = run("""
        profiles:
        - schedulerName: default-scheduler
          pluginConfig:
          - name: DynamicResources
            args:
              apiVersion: kubescheduler.config.k8s.io/v1
              kind: DynamicResourcesArgs
              bindingTimeout: 60s
        """, version=version)
    assert [error["field"] for error in result.errors][:1] == ([field] if field else [])
