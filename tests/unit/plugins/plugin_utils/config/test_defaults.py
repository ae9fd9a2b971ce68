# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""set_defaults / default_plugin_args / mergePluginSet against upstream test vectors.

Sources (kubernetes/kubernetes): pkg/scheduler/apis/config/v1/defaults_test.go (TestSchedulerDefaults,
TestPluginArgsDefaults, 1.31-1.33 version), default_plugins_test.go (TestMergePlugins),
pkg/scheduler/apis/config/scheme/scheme_test.go (TestCodecsEncodePluginConfig: how the internal config is
written as v1 JSON), pkg/scheduler/framework/runtime/framework.go (NewFramework captures only args of
needed, registered plugins, sorted by name) and Go's time package tests for duration strings.
The Go structs are transcribed into their JSON form: a Plugin without weight is written "weight: 0",
empty PluginSets as {}, plain internal fields always (scheme_test.go "v1 ... from internal").
"""

from __future__ import annotations

import copy

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._defaults import (
    default_plugin_args, format_duration, merge_plugin_set, parse_duration, set_defaults)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import SUPPORTED_MINORS

from upstream_vectors import MULTIPOINT_1_31_TO_1_33

API = "kubescheduler.config.k8s.io/v1"
EMPTY_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
                "reserve", "permit", "preBind", "bind", "postBind")


def _args(kind, **fields):
    fields.update(apiVersion=API, kind=kind)
    return fields


# defaults_test.go `pluginConfigs` (ignorePreferredTermsOfExistingPods is a plain bool: always written).
PLUGIN_CONFIGS = [
    {"name": "DefaultPreemption", "args": _args("DefaultPreemptionArgs", minCandidateNodesPercentage=10,
                                                minCandidateNodesAbsolute=100)},
    {"name": "InterPodAffinity", "args": _args("InterPodAffinityArgs", hardPodAffinityWeight=1,
                                               ignorePreferredTermsOfExistingPods=False)},
    {"name": "NodeAffinity", "args": _args("NodeAffinityArgs")},
    {"name": "NodeResourcesBalancedAllocation", "args": _args(
        "NodeResourcesBalancedAllocationArgs", resources=[{"name": "cpu", "weight": 1},
                                                          {"name": "memory", "weight": 1}])},
    {"name": "NodeResourcesFit", "args": _args("NodeResourcesFitArgs", scoringStrategy={
        "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]})},
    {"name": "PodTopologySpread", "args": _args("PodTopologySpreadArgs", defaultingType="System")},
    {"name": "VolumeBinding", "args": _args("VolumeBindingArgs", bindTimeoutSeconds=600)},
]


def _plugins(multipoint=None, **points):
    multipoint = MULTIPOINT_1_31_TO_1_33 if multipoint is None else multipoint
    plugins = dict((point, {}) for point in EMPTY_POINTS)
    plugins["multiPoint"] = {"enabled": [{"name": name, "weight": weight} for name, weight in multipoint]}
    plugins.update(points)
    return plugins


def _expected(profiles, **top):
    """TestSchedulerDefaults' common expectation, in JSON form."""
    config = {
        "apiVersion": API, "kind": "KubeSchedulerConfiguration",
        "parallelism": 16,
        "enableProfiling": True, "enableContentionProfiling": True,
        "leaderElection": {"leaderElect": True, "leaseDuration": "15s", "renewDeadline": "10s",
                           "retryPeriod": "2s", "resourceLock": "leases", "resourceNamespace": "kube-system",
                           "resourceName": "kube-scheduler"},
        "clientConnection": {"qps": 50, "burst": 100, "contentType": "application/vnd.kubernetes.protobuf",
                             "kubeconfig": "", "acceptContentTypes": ""},
        "percentageOfNodesToScore": 0,
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 10,
        "profiles": profiles,
    }
    config.update(top)
    return config


def _default_profile(**fields):
    profile = {"schedulerName": "default-scheduler", "plugins": _plugins(),
               "pluginConfig": copy.deepcopy(PLUGIN_CONFIGS)}
    profile.update(fields)
    return profile


# TestSchedulerDefaults cases (defaults_test.go), checked on every version whose defaults they describe.
SCHEDULER_DEFAULTS = [
    ("empty config", {}, _expected([_default_profile()])),
    ("no scheduler name", {"profiles": [{}]}, _expected([_default_profile()])),
    ("Prallelism with no port", {"parallelism": 16}, _expected([_default_profile()])),
    ("set non default parallelism", {"parallelism": 8}, _expected([_default_profile()], parallelism=8)),
    ("set non default delayCacheUntilActive", {"delayCacheUntilActive": True},
     _expected([_default_profile()], delayCacheUntilActive=True)),
    ("set non default global percentageOfNodesToScore", {"percentageOfNodesToScore": 50},
     _expected([_default_profile()], percentageOfNodesToScore=50)),
    ("set non default profile percentageOfNodesToScore", {"profiles": [{"percentageOfNodesToScore": 50}]},
     _expected([_default_profile(percentageOfNodesToScore=50)])),
    ("set non default global and profile percentageOfNodesToScore",
     {"percentageOfNodesToScore": 10, "profiles": [{"percentageOfNodesToScore": 50}]},
     _expected([_default_profile(percentageOfNodesToScore=50)], percentageOfNodesToScore=10)),
    # "two profiles": the FooPlugin entry (no args, no such plugin) is not captured by NewFramework.
    ("two profiles",
     {"parallelism": 16, "profiles": [
         {"pluginConfig": [{"name": "FooPlugin"}]},
         {"schedulerName": "custom-scheduler", "plugins": {"bind": {
             "enabled": [{"name": "BarPlugin"}], "disabled": [{"name": "DefaultBinder"}]}}}]},
     _expected([
         _default_profile(schedulerName=""),
         _default_profile(schedulerName="custom-scheduler", plugins=_plugins(bind={
             "enabled": [{"name": "BarPlugin", "weight": 0}],
             "disabled": [{"name": "DefaultBinder", "weight": 0}]})),
     ])),
]


@pytest.mark.parametrize("version", ["1.31", "1.32", "1.33"])
@pytest.mark.parametrize("name,config,expected", SCHEDULER_DEFAULTS, ids=[case[0] for case in SCHEDULER_DEFAULTS])
def test_scheduler_defaults(version, name, config, expected):
    assert set_defaults(config, version) == expected


def test_set_defaults_does_not_modify_its_input():
    config = {"profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 5}]}}}]}
    before = copy.deepcopy(config)
    set_defaults(config, "1.33")
    assert config == before


def test_1_30_default_profile_has_volume_limit_plugins():
    plugins = set_defaults({}, "1.30")["profiles"][0]["plugins"]["multiPoint"]["enabled"]
    names = [entry["name"] for entry in plugins]
    assert names[8:13] == ["VolumeRestrictions", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits"]


@pytest.mark.parametrize("version,expected", [
    ("1.33", None),
    ("1.34", _args("DynamicResourcesArgs", filterTimeout="10s")),
    ("1.35", _args("DynamicResourcesArgs", filterTimeout="10s")),
    # types_pluginargs.go: bindingTimeout defaults to 10 minutes while DRADeviceBindingConditions is on
    # (beta, on from 1.36 in kube_features.go).
    ("1.36", _args("DynamicResourcesArgs", filterTimeout="10s", bindingTimeout="10m0s")),
])
def test_dynamic_resources_plugin_config(version, expected):
    configs = dict((entry["name"], entry["args"]) for entry in set_defaults({}, version)["profiles"][0]["pluginConfig"])
    assert configs.get("DynamicResources") == expected
    # sets.List order: DynamicResources sorts right after DefaultPreemption.
    assert list(configs)[:2] == (["DefaultPreemption", "DynamicResources"] if expected else
                                 ["DefaultPreemption", "InterPodAffinity"])


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
def test_placement_extension_points_written_from_1_36(version):
    plugins = set_defaults({}, version)["profiles"][0]["plugins"]
    assert ("placementGenerate" in plugins and plugins.get("placementScore") == {}) is (version >= "1.36")


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
def test_pod_group_post_filter_written_from_1_37(version):
    """kube-scheduler@v0.37.2 types.go adds Plugins.PodGroupPostFilter (mergePlugins merges it like the others)."""
    plugins = set_defaults({}, version)["profiles"][0]["plugins"]
    assert (plugins.get("podGroupPostFilter") == {}) is (version >= "1.37")


# SetDefaults_VolumeBindingArgs of v1.37.2: StorageCapacityScoring is beta and on, so an empty or missing shape
# gets the default {0, 10}, {100, 0} (config.MaxCustomPriorityScore is 10).
@pytest.mark.parametrize("args", [{}, {"shape": []}, {"shape": None}])
def test_volume_binding_default_shape_from_1_37(args):
    out = default_plugin_args("VolumeBindingArgs", args, "1.37")
    assert out["shape"] == [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
    given = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
    assert default_plugin_args("VolumeBindingArgs", {"shape": given}, "1.37")["shape"] == given


# TestPluginArgsDefaults (defaults_test.go); apiVersion/kind added as the encoder writes them, and the
# plain internal fields written as scheme_test.go shows (ignorePreferredTermsOfExistingPods: false).
PLUGIN_ARGS = [
    ("DefaultPreemptionArgs empty", "DefaultPreemptionArgs", {},
     {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}),
    ("DefaultPreemptionArgs with value", "DefaultPreemptionArgs", {"minCandidateNodesPercentage": 50},
     {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 100}),
    ("InterPodAffinityArgs empty", "InterPodAffinityArgs", {},
     {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}),
    ("InterPodAffinityArgs explicit 0", "InterPodAffinityArgs", {"hardPodAffinityWeight": 0},
     {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": False}),
    ("InterPodAffinityArgs with value", "InterPodAffinityArgs", {"hardPodAffinityWeight": 5},
     {"hardPodAffinityWeight": 5, "ignorePreferredTermsOfExistingPods": False}),
    ("NodeResourcesBalancedAllocationArgs resources empty", "NodeResourcesBalancedAllocationArgs", {},
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}),
    ("NodeResourcesBalancedAllocationArgs with scalar resource", "NodeResourcesBalancedAllocationArgs",
     {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
     {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]}),
    ("NodeResourcesBalancedAllocationArgs with mixed resources", "NodeResourcesBalancedAllocationArgs",
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar1", "weight": 1}]},
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar1", "weight": 1}]}),
    ("NodeResourcesBalancedAllocationArgs have resource no weight", "NodeResourcesBalancedAllocationArgs",
     {"resources": [{"name": "cpu"}, {"name": "scalar.io/scalar0"}, {"name": "scalar.io/scalar1", "weight": 1}]},
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar0", "weight": 1},
                    {"name": "scalar.io/scalar1", "weight": 1}]}),
    ("PodTopologySpreadArgs resources empty", "PodTopologySpreadArgs", {}, {"defaultingType": "System"}),
    ("PodTopologySpreadArgs resources with value", "PodTopologySpreadArgs",
     {"defaultConstraints": [{"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}]},
     {"defaultConstraints": [{"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}],
      "defaultingType": "System"}),
    ("NodeResourcesFitArgs not set", "NodeResourcesFitArgs", {},
     {"scoringStrategy": {"type": "LeastAllocated",
                          "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}),
    ("NodeResourcesFitArgs Resources empty", "NodeResourcesFitArgs", {"scoringStrategy": {"type": "MostAllocated"}},
     {"scoringStrategy": {"type": "MostAllocated",
                          "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}),
    ("VolumeBindingArgs empty, StorageCapacityScoring disabled", "VolumeBindingArgs", {},
     {"bindTimeoutSeconds": 600}),
]


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
@pytest.mark.parametrize("name,kind,args,expected", PLUGIN_ARGS, ids=[case[0] for case in PLUGIN_ARGS])
def test_plugin_args_defaults(version, name, kind, args, expected):
    if "StorageCapacityScoring disabled" in name and version >= "1.37":
        # StorageCapacityScoring is beta and on from 1.37 (kube_features.go): defaults_test.go's
        # "[StorageCapacityScoring=on]" case, test_volume_binding_default_shape_from_1_37.
        expected = dict(expected, shape=[{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}])
    assert default_plugin_args(kind, args, version) == _args(kind, **expected)


def test_plugin_args_kind_must_be_registered():
    with pytest.raises(ValueError):
        default_plugin_args("DynamicResourcesArgs", {}, "1.33")


def test_fit_args_requested_to_capacity_ratio_written_like_upstream_encoder():
    """scheme_test.go TestCodecsEncodePluginConfig "v1 in-tree and out-of-tree plugins"."""
    args = {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 1}],
                                "requestedToCapacityRatio": {"shape": [{"utilization": 1, "score": 2}]}}}
    assert default_plugin_args("NodeResourcesFitArgs", args, "1.33") == _args("NodeResourcesFitArgs", **args)


# TestMergePlugins (default_plugins_test.go); a Plugin without weight is written with weight 0.
def _set(enabled=None, disabled=None):
    plugin_set = {}
    if enabled:
        plugin_set["enabled"] = [{"name": name, "weight": weight} for name, weight in enabled]
    if disabled:
        plugin_set["disabled"] = [{"name": name, "weight": 0} for name in disabled]
    return plugin_set


def _custom(enabled=None, disabled=None):
    """Custom entries as a user writes them: no weight key when Go has none."""
    plugin_set = {}
    if enabled is not None:
        plugin_set["enabled"] = [dict({"name": name}, **({"weight": weight} if weight else {}))
                                 for name, weight in enabled]
    if disabled is not None:
        plugin_set["disabled"] = [{"name": name} for name in disabled]
    return plugin_set


D12 = [("DefaultPlugin1", 0), ("DefaultPlugin2", 0)]
P123 = [("Plugin1", 0), ("Plugin2", 0), ("Plugin3", 0)]
MERGE_PLUGIN_SET = [
    ("AppendCustomPlugin", _custom([("CustomPlugin", 0)]), _set(D12),
     _set(D12 + [("CustomPlugin", 0)])),
    ("InsertAfterDefaultPlugins2", _custom([("CustomPlugin", 0), ("DefaultPlugin2", 0)], ["DefaultPlugin2"]),
     _set(D12), _set([("DefaultPlugin1", 0), ("CustomPlugin", 0), ("DefaultPlugin2", 0)], ["DefaultPlugin2"])),
    ("InsertBeforeAllPlugins", _custom([("CustomPlugin", 0)] + D12, ["*"]), _set(D12),
     _set([("CustomPlugin", 0)] + D12, ["*"])),
    ("ReorderDefaultPlugins", _custom([("DefaultPlugin2", 0), ("DefaultPlugin1", 0)], ["*"]), _set(D12),
     _set([("DefaultPlugin2", 0), ("DefaultPlugin1", 0)], ["*"])),
    ("ApplyNilCustomPlugin", None, _set(D12), _set(D12)),
    ("CustomPluginOverrideDefaultPlugin", _custom([("Plugin1", 2), ("Plugin3", 3)]), _set(P123),
     _set([("Plugin1", 2), ("Plugin2", 0), ("Plugin3", 3)])),
    ("OrderPreserveAfterOverride", _custom([("Plugin2", 2), ("Plugin1", 1)]), _set(P123),
     _set([("Plugin1", 1), ("Plugin2", 2), ("Plugin3", 0)])),
    ("RepeatedCustomPlugin", _custom([("Plugin1", 0), ("Plugin2", 2), ("Plugin3", 0), ("Plugin2", 4)]),
     _set(P123), _set([("Plugin1", 0), ("Plugin2", 4), ("Plugin3", 0), ("Plugin2", 2)])),
    ("Append custom MultiPoint plugin", _custom([("CustomPlugin", 0)]), _set(D12),
     _set(D12 + [("CustomPlugin", 0)])),
    ("Append disabled Multipoint plugins (multiPoint)",
     _custom([("CustomPlugin", 0), ("CustomPlugin2", 0)], ["DefaultPlugin2"]), _set(D12),
     _set([("DefaultPlugin1", 0), ("CustomPlugin", 0), ("CustomPlugin2", 0)], ["DefaultPlugin2"])),
    ("Append disabled Multipoint plugins (score)", _custom(disabled=["CustomPlugin2"]), _set(),
     _set(disabled=["CustomPlugin2"])),
    ("override default MultiPoint plugins with custom value", _custom([("DefaultPlugin", 5)]),
     _set([("DefaultPlugin", 0)]), _set([("DefaultPlugin", 5)])),
    ("disabled MultiPoint plugin in default set", _custom([("CustomPlugin", 0)]),
     _set([("DefaultPlugin", 0)], ["DefaultPlugin2"]),
     _set([("DefaultPlugin", 0), ("CustomPlugin", 0)], ["DefaultPlugin2"])),
    ("disabled MultiPoint plugin in default set for specific extension point (score)", None,
     _set(disabled=["DefaultPlugin2"]), _set(disabled=["DefaultPlugin2"])),
    ("multipoint with only disabled gets merged", _custom(disabled=["DefaultPlugin"]),
     _set([("DefaultPlugin", 0)]), _set(disabled=["DefaultPlugin"])),
]


@pytest.mark.parametrize("name,custom,default,expected", MERGE_PLUGIN_SET, ids=[case[0] for case in MERGE_PLUGIN_SET])
def test_merge_plugin_set(name, custom, default, expected):
    assert merge_plugin_set(default, custom) == expected


def test_user_plugins_merge_into_the_version_defaults():
    """The no-scoring profile of the scheduler configuration docs: every score plugin disabled with '*'."""
    config = {"profiles": [{"schedulerName": "no-scoring-scheduler", "plugins": {
        "preScore": {"disabled": [{"name": "*"}]}, "score": {"disabled": [{"name": "*"}]}}}]}
    plugins = set_defaults(config, "1.31")["profiles"][0]["plugins"]
    assert plugins["score"] == {"disabled": [{"name": "*", "weight": 0}]}
    assert plugins["preScore"] == {"disabled": [{"name": "*", "weight": 0}]}
    assert plugins["multiPoint"] == _plugins()["multiPoint"]


def test_multipoint_override_in_place_and_disable():
    config = {"profiles": [{"plugins": {"multiPoint": {
        "enabled": [{"name": "ImageLocality", "weight": 5}, {"name": "MyPlugin"}],
        "disabled": [{"name": "NodePorts"}]}}}]}
    enabled = set_defaults(config, "1.31", extra_plugins=["MyPlugin"])["profiles"][0]["plugins"]["multiPoint"]
    names = [(entry["name"], entry["weight"]) for entry in enabled["enabled"]]
    expected = [entry for entry in MULTIPOINT_1_31_TO_1_33 if entry[0] != "NodePorts"]
    expected[expected.index(("ImageLocality", 1))] = ("ImageLocality", 5)
    assert names == expected + [("MyPlugin", 0)]
    assert enabled["disabled"] == [{"name": "NodePorts", "weight": 0}]


# framework.go NewFramework: the written pluginConfig holds the args of plugins the profile needs
# (enabled at any extension point) that the registry knows, with non-nil args, sorted by name.
def test_plugin_config_capture():
    multipoint = {"disabled": [{"name": "VolumeBinding"}], "enabled": [{"name": "Coscheduling"}]}
    config = {"profiles": [{
        "plugins": {"multiPoint": multipoint},
        "pluginConfig": [
            {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 30}},
            {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}},
            {"name": "NotEnabled", "args": {"x": 1}},
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
        ]}]}
    configs = set_defaults(config, "1.32", extra_plugins=[{"name": "Coscheduling"}])["profiles"][0]["pluginConfig"]
    names = [entry["name"] for entry in configs]
    assert names == ["Coscheduling", "DefaultPreemption", "InterPodAffinity", "NodeAffinity",
                     "NodeResourcesBalancedAllocation", "NodeResourcesFit", "PodTopologySpread"]
    assert configs[0]["args"] == {"permitWaitingTimeSeconds": 10}
    assert configs[5]["args"]["scoringStrategy"]["type"] == "MostAllocated"
    # Without the out-of-tree registration its args are not captured.
    configs = set_defaults(config, "1.32")["profiles"][0]["pluginConfig"]
    assert "Coscheduling" not in [entry["name"] for entry in configs]


def test_absent_args_of_a_registered_kind_are_defaulted():
    """decodeNestedObjects decodes an empty args of a registered kind as that kind, then defaults it."""
    config = {"profiles": [{"pluginConfig": [{"name": "InterPodAffinity"}, {"name": "VolumeBinding", "args": None}]}]}
    configs = dict((entry["name"], entry["args"]) for entry in set_defaults(config, "1.30")["profiles"][0]["pluginConfig"])
    assert configs["InterPodAffinity"] == PLUGIN_CONFIGS[1]["args"]
    assert configs["VolumeBinding"] == PLUGIN_CONFIGS[6]["args"]


def test_leader_election_zero_values_defaulted_and_negatives_kept():
    """RecommendedDefaultLeaderElectionConfiguration defaults zero durations, whatever leaderElect is."""
    config = {"leaderElection": {"leaderElect": False, "leaseDuration": "0s", "renewDeadline": "-1s",
                                 "retryPeriod": "1500ms", "resourceLock": "", "resourceName": "my-scheduler"}}
    assert set_defaults(config, "1.35")["leaderElection"] == {
        "leaderElect": False, "leaseDuration": "15s", "renewDeadline": "-1s", "retryPeriod": "1.5s",
        "resourceLock": "leases", "resourceName": "my-scheduler", "resourceNamespace": "kube-system"}


def test_profiling_disabled_leaves_contention_profiling_false():
    """Contention profiling is defaulted only when profiling is on; scheme_test writes false for it."""
    out = set_defaults({"enableProfiling": False}, "1.34")
    assert (out["enableProfiling"], out["enableContentionProfiling"]) == (False, False)


def test_two_unnamed_profiles_are_not_named():
    out = set_defaults({"profiles": [{}, {}]}, "1.34")
    assert [profile["schedulerName"] for profile in out["profiles"]] == ["", ""]


def test_client_connection_and_extenders():
    config = {"clientConnection": {"kubeconfig": "/etc/kubernetes/scheduler.conf", "qps": 20.5, "burst": 0},
              "extenders": [{"urlPrefix": "http://127.0.0.1:8888", "filterVerb": "filter", "weight": 0,
                             "enableHTTPS": False, "managedResources": [{"name": "example.com/foo"}]}]}
    out = set_defaults(config, "1.36")
    assert out["clientConnection"] == {"kubeconfig": "/etc/kubernetes/scheduler.conf", "acceptContentTypes": "",
                                       "contentType": "application/vnd.kubernetes.protobuf", "qps": 20.5,
                                       "burst": 100}
    # NewHTTPExtender sets a zero httpTimeout to 5s; v1.30.12-v1.35.4 --write-config-to writes "5s".
    assert out["extenders"] == [{"urlPrefix": "http://127.0.0.1:8888", "filterVerb": "filter",
                                 "httpTimeout": "5s", "managedResources": [{"name": "example.com/foo"}]}]
    assert "delayCacheUntilActive" not in out


# Go src/time/time_test.go durationTests and parseDurationTests.
@pytest.mark.parametrize("text,nanos", [
    ("0s", 0), ("1ns", 1), ("1.1\u00b5s", 1100), ("2.2ms", 2200000), ("3.3s", 3300000000),
    ("4m5s", (4 * 60 + 5) * 10 ** 9), ("4m5.001s", 4 * 60 * 10 ** 9 + 5001 * 10 ** 6),
    ("5h6m7.001s", (5 * 3600 + 6 * 60 + 7) * 10 ** 9 + 10 ** 6), ("8m0.000000001s", 8 * 60 * 10 ** 9 + 1),
    ("2562047h47m16.854775807s", (1 << 63) - 1), ("-2562047h47m16.854775808s", -1 << 63),
])
def test_format_duration(text, nanos):
    assert format_duration(nanos) == text
    assert parse_duration(text) == nanos


@pytest.mark.parametrize("text,nanos", [
    ("0", 0), ("5s", 5 * 10 ** 9), ("+5s", 5 * 10 ** 9), ("-5s", -5 * 10 ** 9), ("1.5h", 5400 * 10 ** 9),
    (".5s", 5 * 10 ** 8), ("1h2m3s4ms5us6ns", 3723004005006), ("39h9m14.425s", 140954425 * 10 ** 6),
])
def test_parse_duration(text, nanos):
    assert parse_duration(text) == nanos


@pytest.mark.parametrize("text", ["", "3", "-", "s", ".", ".s", "1d", "1.2.3s"])
def test_parse_duration_rejects(text):
    with pytest.raises(ValueError):
        parse_duration(text)
