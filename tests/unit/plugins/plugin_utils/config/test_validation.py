# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ValidateKubeSchedulerConfiguration, ported from upstream
pkg/scheduler/apis/config/validation/validation_test.go (TestValidateKubeSchedulerConfiguration: the case
names below are upstream's), with messages as field.Error.Error() prints them (validation.go, component-base
config/validation), and end-to-end through process() where defaulting matters.
"""

from __future__ import annotations

import copy

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _validation as validation
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import SUPPORTED_MINORS

V1 = "kubescheduler.config.k8s.io/v1"
FEATURES = validation.Features(34, False, True, False)
TYPED = {"DefaultPreemption", "InterPodAffinity", "NodeAffinity", "NodeResourcesBalancedAllocation",
         "NodeResourcesFit", "PodTopologySpread", "VolumeBinding", "DynamicResources"}

# upstream validConfig, in v1 field names
VALID = {
    "parallelism": 8,
    "clientConnection": {"acceptContentTypes": "application/json", "contentType": "application/json", "qps": 10,
                         "burst": 10},
    "leaderElection": {"resourceLock": "leases", "leaderElect": True, "leaseDuration": "30s", "renewDeadline": "15s",
                       "retryPeriod": "5s", "resourceNamespace": "name", "resourceName": "name"},
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 1,
    "percentageOfNodesToScore": 35,
    "profiles": [
        {"schedulerName": "me",
         "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}, "score": {"disabled": [{"name": "*"}]}},
         "pluginConfig": [{"name": "DefaultPreemption",
                           "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}}]},
        {"schedulerName": "other",
         "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}, "bind": {"enabled": [{"name": "CustomBind"}]}}},
    ],
    "extenders": [{"prioritizeVerb": "prioritize", "weight": 1}],
}


def _set(config, path, value):
    node = config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _validate(changes, version="1.33"):
    # 1.33: the last minor whose messages print values in Go syntax, as upstream's table of those releases.
    config = copy.deepcopy(VALID)
    for path, value in changes:
        _set(config, path, value)
    return [e.message for e in validation.validate_configuration(config, version, FEATURES, TYPED)]


SORT = 'config.PluginSet{Enabled:[]config.Plugin{config.Plugin{Name:"%s", Weight:0}}, Disabled:[]config.Plugin(nil)}'

CASES = [
    ("good", [], []),
    ("bad-parallelism-invalid-value", [(("parallelism",), 0)],
     ["parallelism: Invalid value: 0: should be an integer value greater than zero"]),
    ("parallelism 1 is the lowest valid value", [(("parallelism",), 1)], []),
    ("bad-resource-name-not-set", [(("leaderElection", "resourceName"), "")],
     ['leaderElection.resourceName: Invalid value: "": resourceName is required']),
    ("bad-resource-namespace-not-set", [(("leaderElection", "resourceNamespace"), "")],
     ['leaderElection.resourceNamespace: Invalid value: "": resourceNamespace is required']),
    ("resource lock must be leases", [(("leaderElection", "resourceLock"), "configmaps")],
     ['leaderElection.resourceLock: Invalid value: "configmaps": resourceLock value must be "leases"']),
    ("leader election rules apply only with leaderElect",
     [(("leaderElection", "leaderElect"), False), (("leaderElection", "resourceLock"), "configmaps"),
      (("leaderElection", "leaseDuration"), "-1s")], []),
    ("negative lease duration", [(("leaderElection", "leaseDuration"), "-1s")],
     ["leaderElection.leaseDuration: Invalid value: v1.Duration{Duration:-1000000000}: must be greater than zero",
      "leaderElection.leaseDuration: Invalid value: v1.Duration{Duration:15000000000}: LeaseDuration must be "
      "greater than RenewDeadline"]),
    ("lease duration equal to renew deadline", [(("leaderElection", "leaseDuration"), "15s")],
     ["leaderElection.leaseDuration: Invalid value: v1.Duration{Duration:15000000000}: LeaseDuration must be "
      "greater than RenewDeadline"]),
    ("lease duration just above renew deadline", [(("leaderElection", "leaseDuration"), "15000000001ns")], []),
    ("negative retry period", [(("leaderElection", "retryPeriod"), "-1ns")],
     ["leaderElection.retryPeriod: Invalid value: v1.Duration{Duration:-1}: must be greater than zero"]),
    ("negative burst", [(("clientConnection", "burst"), -1)],
     ["clientConnection.burst: Invalid value: -1: must be non-negative"]),
    ("zero burst", [(("clientConnection", "burst"), 0)], []),
    ("bad-percentage-of-nodes-to-score", [(("percentageOfNodesToScore",), 101)],
     ["percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"]),
    ("percentage 100 and 0", [(("percentageOfNodesToScore",), 100), (("profiles", 0, "percentageOfNodesToScore"), 0)],
     []),
    ("negative percentage", [(("percentageOfNodesToScore",), -1)],
     ["percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"]),
    ("bad-percentage-of-nodes-to-score-for-profile", [(("profiles", 1, "percentageOfNodesToScore"), 101)],
     ["profiles[1].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"]),
    ("scheduler-name-not-set", [(("profiles", 1, "schedulerName"), "")],
     ["profiles[1].schedulerName: Required value"]),
    ("repeated-scheduler-name", [(("profiles", 0, "schedulerName"), "other")],
     ["profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName"]),
    ("different-queue-sort", [(("profiles", 1, "plugins", "queueSort", "enabled", 0, "name"), "AnotherSort")],
     ["profiles[1].plugins.queueSort: Invalid value: %s: queueSort must be the same for all profiles"
      % (SORT % "AnotherSort")]),
    ("one-empty-queue-sort", [(("profiles", 0, "plugins"), {})],
     ["profiles[1].plugins.queueSort: Invalid value: %s: queueSort must be the same for all profiles"
      % (SORT % "CustomSort")]),
    ("two queue sort plugins", [(("profiles", 0, "plugins", "queueSort", "enabled"), [{"name": "A"}, {"name": "B"}]),
                                (("profiles", 1, "plugins", "queueSort", "enabled"), [{"name": "A"}, {"name": "B"}])],
     ["profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled"]),
    ("mismatch-queue-sort args", [(("profiles", 0, "plugins", "queueSort", "enabled"), [{"name": "CustomSort"}]),
                                  (("profiles", 1, "pluginConfig"), [{"name": "CustomSort", "args": {"a": 1}}])],
     ['profiles[1].pluginConfig.args: Invalid value: &Unknown{TypeMeta:TypeMeta{APIVersion:,Kind:,},Raw:{"a":1},'
      'ContentEncoding:,ContentType:application/json,}: queueSort must be the same for all profiles']),
    ("extender-negative-weight", [(("extenders", 0, "weight"), -1)],
     ["extenders[0].weight: Invalid value: -1: must have a positive weight applied to it"]),
    ("extender-zero-weight", [(("extenders", 0, "weight"), 0)],
     ["extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"]),
    ("extender without prioritize verb needs no weight", [(("extenders", 0), {"filterVerb": "filter"})], []),
    ("extender-duplicate-managed-resources",
     [(("extenders", 0, "managedResources"), [{"name": "foo"}, {"name": "foo"}])],
     ['extenders[0].managedResources[0].name: Invalid value: "foo": is an invalid extended resource name',
      'extenders[0].managedResources[1].name: Invalid value: "foo": is an invalid extended resource name',
      'extenders[0].managedResources[1].name: Invalid value: "foo": duplicate extender managed resource name']),
    ("invalid duplicate extender resource name (TestValidatePolicy)",
     [(("extenders",), [{"managedResources": [{"name": "foo.com/bar"}]},
                        {"bindVerb": "bind", "managedResources": [{"name": "foo.com/bar"}]}])],
     ['extenders[1].managedResources[0].name: Invalid value: "foo.com/bar": duplicate extender managed resource '
      'name']),
    ("invalid extended resource name (TestValidatePolicy)",
     [(("extenders",), [{"managedResources": [{"name": "kubernetes.io/foo"}]}])],
     ['extenders[0].managedResources[0].name: Invalid value: "kubernetes.io/foo": is an invalid extended resource '
      'name']),
    ("extender-duplicate-bind", [(("extenders",), [{"bindVerb": "foo"}, {"bindVerb": "bar"}])],
     ['extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind']),
    ("invalid-node-percentage", [(("profiles", 0, "pluginConfig", 0, "args", "minCandidateNodesPercentage"), 200)],
     ["profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 200: not in valid range [0, 100]"]),
    ("duplicated-plugin-config", [(("profiles", 0, "pluginConfig"), [{"name": "config"}, {"name": "config"}])],
     ['profiles[0].pluginConfig[1]: Duplicate value: "config"']),
    ("NodeResourcesFit args are not checked here (map key NodeResourcesFitArgs)",
     [(("profiles", 0, "pluginConfig"), [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "X"}}}])],
     []),
    ("a pluginConfig named NodeResourcesFitArgs has to match plugin args",
     [(("profiles", 0, "pluginConfig"), [{"name": "NodeResourcesFitArgs"}])],
     ["profiles[0].pluginConfig[0].args: Invalid value: null: has to match plugin args"]),
    ("backoff: initial 0", [(("podInitialBackoffSeconds",), 0)],
     ["podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"]),
    ("backoff: max below initial", [(("podInitialBackoffSeconds",), 2)],
     ["podMaxBackoffSeconds: Invalid value: 1: must be greater than or equal to PodInitialBackoffSeconds"]),
    ("errors are aggregated in upstream order",
     [(("parallelism",), 0), (("clientConnection", "burst"), -1), (("percentageOfNodesToScore",), 101),
      (("profiles", 1, "schedulerName"), "")],
     ["clientConnection.burst: Invalid value: -1: must be non-negative",
      "parallelism: Invalid value: 0: should be an integer value greater than zero",
      "profiles[1].schedulerName: Required value",
      "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"]),
]


@pytest.mark.parametrize("name, changes, expected", CASES, ids=[c[0] for c in CASES])
def test_validate_kube_scheduler_configuration(name, changes, expected):
    assert _validate(changes) == expected


REMOVED = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
@pytest.mark.parametrize("plugin", REMOVED)
def test_removed_volume_limit_plugins_per_version(version, plugin):
    # invalidPluginsByVersion: empty for v1 in 1.30; kube-scheduler v1.31.8 already refuses the four in-tree
    # volume-limit plugins (although CHANGELOG-1.31 #124500 says they were only deprecated there).
    changes = [(("profiles", 0, "plugins", "filter"), {"enabled": [{"name": plugin}]}),
               (("profiles", 0, "pluginConfig"), [{"name": plugin}])]
    detail = 'was invalid in version "v1" (KubeSchedulerConfiguration is version "%s")' % V1
    expected = [] if version == "1.30" else [
        'profiles[0].plugins.filter.enabled[0]: Invalid value: "%s": %s' % (plugin, detail),
        'profiles[0].pluginConfig[0]: Invalid value: "%s": %s' % (plugin, detail)]
    assert _validate(changes, version) == expected


# -- end to end: defaulting happens before validation ----------------------------------------------------------

def test_zero_leader_election_values_are_defaulted_before_validation(run):
    result = run("leaderElection:\n  leaseDuration: 0s\n  renewDeadline: 0s\n  resourceName: ''\n")
    assert result.ok, result.errors
    assert result.effective["leaderElection"]["resourceName"] == "kube-scheduler"


@pytest.mark.parametrize("version, value", [("1.33", "profiles[0].schedulerName"), ("1.34", "{}")])
def test_two_profiles_without_names(run, messages, version, value):
    # The name is defaulted only for a single profile. The duplicate's value is a field.Path: up to 1.33 printed
    # with a pointer address (not reproducible, the path is shown instead), from 1.34 as JSON, "{}".
    result = run("profiles:\n- {}\n- {}\n", version=version)
    assert messages(result) == ["profiles[0].schedulerName: Required value",
                                "profiles[1].schedulerName: Required value",
                                "profiles[1].schedulerName: Duplicate value: %s" % value]


def test_queue_sort_written_in_one_profile_only(run, messages):
    result = run("""
        profiles:
        - schedulerName: a
          plugins:
            queueSort:
              enabled: [{name: PrioritySort}]
        - schedulerName: b
        """, version="1.34")
    # kube-scheduler v1.34.7 prints the PluginSet as JSON
    assert messages(result) == [
        'profiles[1].plugins.queueSort: Invalid value: {"Enabled":null,"Disabled":null}: must be the same for all '
        'profiles']
    assert messages(run("profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n"
                        "      enabled: [{name: PrioritySort}]\n- schedulerName: b\n", version="1.33")) == [
        "profiles[1].plugins.queueSort: Invalid value: config.PluginSet{Enabled:[]config.Plugin(nil), "
        "Disabled:[]config.Plugin(nil)}: queueSort must be the same for all profiles"]


def test_plugin_args_paths_keep_the_users_pluginconfig_index(run, messages):
    result = run("""
        profiles:
        - pluginConfig:
          - name: ImageLocality
          - name: InterPodAffinity
            args: {hardPodAffinityWeight: 101}
          - name: NodeResourcesBalancedAllocation
            args:
              resources: [{name: cpu, weight: 1}, {name: cpu, weight: 2}]
        """)
    assert messages(result) == [
        "profiles[0].pluginConfig[1].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
        'profiles[0].pluginConfig[2].args.resources[1].name: Duplicate value: "cpu"',
        "profiles[0].pluginConfig[2].args.resources[1].weight: Invalid value: 2: must be 1"]


def test_args_of_a_plugin_that_is_not_enabled_are_validated(run, fields):
    result = run("""
        profiles:
        - plugins:
            multiPoint:
              disabled: [{name: DefaultPreemption}]
          pluginConfig:
          - name: DefaultPreemption
            args: {minCandidateNodesAbsolute: -1}
        """)
    assert fields(result) == ["profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute"]


@pytest.mark.parametrize("version", [v for v in SUPPORTED_MINORS if v < "1.37"])
def test_volume_binding_shape_needs_the_capacity_scoring_gate(run, messages, version):
    # VolumeCapacityPriority (renamed StorageCapacityScoring in 1.33) is off by default in these versions.
    result = run("""
        profiles:
        - pluginConfig:
          - name: VolumeBinding
            args:
              shape: [{utilization: 0, score: 10}]
        """, version=version)
    gate = "StorageCapacityScoring" if version >= "1.33" else "VolumeCapacityPriority"
    # Up to 1.33 the value is printed with %#v, from 1.34 as JSON (as v1.33.3 and v1.34.7 print it).
    value = ('[{"Utilization":0,"Score":10}]' if version >= "1.34" else
             "[]config.UtilizationShapePoint{config.UtilizationShapePoint{Utilization:0, Score:10}}")
    assert messages(result) == [
        "profiles[0].pluginConfig[0].args.shape: Invalid value: %s: unexpected field `shape`, remove it or turn on "
        "the feature gate %s" % (value, gate)]


@pytest.mark.parametrize("shape, problem", [
    ("[{utilization: 0, score: 10}]", None),
    ("[]", None),  # len(shape) == 0: defaulted before validation
    ("[{utilization: 50, score: 1}, {utilization: 10, score: 2}]",
     "profiles[0].pluginConfig[0].args.shape[1].utilization: Invalid value: 10: values must be sorted in increasing "
     "order"),
    ("[{utilization: 0, score: 11}]",
     "profiles[0].pluginConfig[0].args.shape[0].score: Invalid value: 11: not in valid range [0, 10]"),
])
def test_volume_binding_shape_from_1_37(run, messages, shape, problem):
    """StorageCapacityScoring is beta and on in 1.37: a shape is allowed and validated by validateFunctionShape."""
    result = run("""
        profiles:
        - pluginConfig:
          - name: VolumeBinding
            args:
              shape: %s
        """ % shape, version="1.37")
    assert messages(result) == ([problem] if problem else [])


@pytest.mark.parametrize("version", [v for v in SUPPORTED_MINORS if v >= "1.34"])
@pytest.mark.parametrize("timeout, ok", [("-1ns", False), ("0s", True), ("1s", True)])
def test_dynamic_resources_filter_timeout(run, messages, version, timeout, ok):
    result = run("profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {filterTimeout: %s}\n" % timeout,
                 version=version)
    # From 1.34 a metav1.Duration is printed as its JSON (kube-scheduler v1.34.7: Invalid value: "-1s").
    expected = [] if ok else [
        'profiles[0].pluginConfig[0].args.filterTimeout: Invalid value: "-1ns": must be zero or positive']
    assert messages(result) == expected
