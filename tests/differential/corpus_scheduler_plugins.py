# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The corpus of a scheduler-plugins target (family ``scheduler_plugins``): its plugins at every extension point,
every args kind's fields (valid, wrong type, out of range, unknown), its constructors' checks and typical configs.

Left out, measured: a plugin whose constructor needs more than the config offline. CapacityScheduling asks the API
server for its groups ("failed to get server groups"), the Trimaran plugins without a watcherAddress build an
in-cluster metrics client ("no configuration has been provided"), Peaks opens its power model file, and
NodeResourceTopologyMatch with cacheResyncPeriodSeconds above 0 waits for its informers to sync; so those appear
here only where construction is not reached (decoding errors, args of a plugin not enabled) or, for Trimaran, with a
watcherAddress. The e2e proves them on a cluster.
"""

from __future__ import annotations

import json

import yaml

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "clientConnection": {"kubeconfig": "@KUBECONFIG@"}, "leaderElection": {"leaderElect": False}}
POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit",
          "preBind", "bind", "postBind")
WATCHER = {"watcherAddress": "http://127.0.0.1:2020"}
# Plugins whose constructor runs offline with these args (see the module docstring).
CONSTRUCTIBLE = {
    "Coscheduling": None, "LoadVariationRiskBalancing": WATCHER, "NetworkOverhead": None, "TopologicalSort": None,
    "NodeResourcesAllocatable": None, "NodeResourceTopologyMatch": None, "PreemptionToleration": None,
    "TargetLoadPacking": WATCHER, "LowRiskOverCommitment": WATCHER, "SySched": None, "PodState": None,
    "QOSSort": None,
}
PLUGIN_NAMES = sorted(CONSTRUCTIBLE) + ["CapacityScheduling", "Peaks", "Cosheduling", "coscheduling"]


def _text(config: dict, **header) -> str:
    return yaml.safe_dump(dict(HEADER, **dict(header, **config)), sort_keys=False, default_flow_style=False)


def _profile(plugins=None, plugin_config=None, name="sp"):
    profile = {"schedulerName": name}
    if plugins:
        profile["plugins"] = plugins
    if plugin_config:
        profile["pluginConfig"] = plugin_config
    return profile


def _one(plugins=None, plugin_config=None):
    return _text({"profiles": [_profile(plugins, plugin_config)]})


def _args_of(name):
    args = CONSTRUCTIBLE.get(name)
    return [{"name": name, "args": dict(args)}] if args else None


def plugin_cases():
    """Every plugin at every extension point, enabled (a queue sort replacing the default one) and disabled; the
    plugins that cannot be built offline only disabled (their constructor runs before the point is checked)."""
    for name in PLUGIN_NAMES:
        for point in POINTS + ("multiPoint",):
            yield "disable %s at %s" % (name, point), _one({point: {"disabled": [{"name": name}]}})
            if name in ("CapacityScheduling", "Peaks"):
                continue
            plugins = {point: {"enabled": [{"name": name}]}}
            if point == "queueSort":
                plugins[point]["disabled"] = [{"name": "*"}]
            if point == "multiPoint":
                plugins["queueSort"] = {"disabled": [{"name": "*"}]}
            yield "enable %s at %s" % (name, point), _one(plugins, _args_of(name))
    # Two profiles: a scheduler-plugins queue sort must be every profile's.
    for name in ("Coscheduling", "TopologicalSort", "QOSSort"):
        sort = {"queueSort": {"enabled": [{"name": name}], "disabled": [{"name": "*"}]}}
        yield "%s in one profile of two" % name, _text({"profiles": [_profile(sort), _profile(name="default")]})
        yield "%s in both profiles" % name, _text({"profiles": [_profile(sort), _profile(sort, name="two")]})


# Args kinds: for each, field -> (valid values, invalid values). The plugin is enabled where it can be built offline,
# so its constructor's checks are reached; the others' args are only decoded and defaulted.
_ARGS = {
    "Coscheduling": {
        "permitWaitingTimeSeconds": ([0, 1, 60, 9223372036854775807], [-1, -60, "10", 1.5, True, None]),
        "podGroupBackoffSeconds": ([0, 5, 3600], [-1, "0", [], None]),
        # 0.34 on (an unknown field before).
        "podGroupRejectPercentage": ([0, 10, 100], [-1, 101, "10"]),
    },
    "NodeResourcesAllocatable": {
        "mode": (["Least", "Most"], ["least", "", "Max", 1]),
        "resources": ([[{"name": "cpu", "weight": 1}], [{"name": "cpu", "weight": 1 << 20}, {"name": "memory", "weight": 1}],
                       [{"name": "nvidia.com/gpu", "weight": 5}]],
                      [[{"name": "cpu", "weight": 0}], [{"name": "cpu", "weight": -1}], [{"name": "cpu"}],
                       [{"name": "cpu", "weight": "1"}], [{"name": "cpu", "weight": 1, "extra": 1}], {"cpu": 1}, []]),
    },
    "NodeResourceTopologyMatch": {
        "scoringStrategy": ([{"type": "LeastAllocated"}, {"type": "MostAllocated"}, {"type": "BalancedAllocation"},
                             {"type": "LeastNUMANodes"}, {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 2}]},
                             {"type": "LeastAllocated", "resources": [{"name": "cpu"}, {"name": "memory", "weight": 3}]}],
                            [{"type": "Least"}, {"type": ""}, {}, {"type": "MostAllocated", "resources": {"cpu": 1}},
                             {"type": "LeastAllocated", "requestedToCapacityRatio": {}}, "LeastAllocated"]),
        # A period above 0 makes the constructor wait for its informers' sync with the API server (measured: it
        # hangs offline), so only 0 and below here.
        "cacheResyncPeriodSeconds": ([0, -1], ["5s"]),
        "discardReservedNodes": ([True, False], ["yes"]),
        "cache": ([{"foreignPodsDetect": "None"}, {"foreignPodsDetect": "OnlyExclusiveResources"},
                   {"resyncMethod": "All"}, {"informerMode": "Shared"}, {"resyncScope": "OnlyResources"}, {}],
                  [{"foreignPodsDetect": 1}, {"unknown": "x"}]),
    },
    "PreemptionToleration": {
        "minCandidateNodesPercentage": ([0, 1, 100], [-1, 101, "10"]),
        "minCandidateNodesAbsolute": ([0, 1, 100], [-1, "1"]),
    },
    "TopologicalSort": {"namespaces": ([["default"], ["a", "b"], []], ["default", [1]])},
    "NetworkOverhead": {
        "namespaces": ([["default", "x"]], ["x"]),
        "weightsName": (["UserDefined", ""], [1]),
        "networkTopologyName": (["nt-default", "other"], [True]),
    },
    "SySched": {
        "defaultProfileNamespace": (["default", "kube-system"], [1]),
        "defaultProfileName": (["all-syscalls", "x"], [[]]),
    },
    "TargetLoadPacking": {
        "targetUtilization": ([40, 1, 0, -5, 100], ["40"]),
        "defaultRequestsMultiplier": (["1.5", "2", "1e3", ".5"], ["abc", "", "1,5", 1.5]),
        "defaultRequests": ([{"cpu": "1"}, {"cpu": "2", "memory": "1Gi"}, {}], [["cpu"], {"cpu": True}]),
        "metricProvider": ([{"type": "Prometheus", "address": "http://p:9090"}, {"type": "SignalFx"}],
                           [{"type": 1}, {"kind": "Prometheus"}, "Prometheus"]),
        "watcherAddress": (["http://127.0.0.1:2020"], [2020]),
    },
    "LoadVariationRiskBalancing": {
        "safeVarianceMargin": ([0, 1, 2.5, -1], ["1"]),
        "safeVarianceSensitivity": ([0, 1, 0.5, -3], [False]),
    },
    "LowRiskOverCommitment": {
        "smoothingWindowSize": ([1, 5, 0, -2], ["5"]),
        "riskLimitWeights": ([{"cpu": 0.5}, {"cpu": 0, "memory": 1}, {"cpu": 2, "memory": -1}, {}],
                             [{"cpu": "0.5"}, ["cpu"]]),
    },
    "Peaks": {
        "WatcherAddress": (["http://127.0.0.1:2020"], [1]),
        "NodePowerModel": ([{"node-1": {"k0": 1, "k1": 2, "k2": 0.5}}], [{"node-1": {"k3": 1}}, {"node-1": []}]),
    },
}


def args_cases():
    """Each args kind: empty, every field's valid and invalid values, an unknown field, a wrong kind; enabled where
    the plugin can be built offline."""
    for name, fields in sorted(_ARGS.items()):
        enabled = name in CONSTRUCTIBLE
        base = dict(CONSTRUCTIBLE.get(name) or {})
        point = {"TopologicalSort": "queueSort", "PreemptionToleration": "postFilter",
                 "NodeResourceTopologyMatch": "filter", "NetworkOverhead": "filter"}.get(name, "score")
        plugins = None
        if enabled:
            plugins = {point: {"enabled": [{"name": name}]}}
            if point == "queueSort":
                plugins[point]["disabled"] = [{"name": "*"}]

        def case(args, plugins=plugins):
            return _one(plugins, [{"name": name, "args": args}])

        yield "%s: empty args" % name, case(dict(base))
        yield "%s: null args" % name, _one(plugins, [{"name": name}]) if not base else case(dict(base))
        yield "%s: unknown field" % name, case(dict(base, notAField=1))
        other = "CoschedulingArgs" if name != "Coscheduling" else "SySchedArgs"
        yield "%s: kind of another plugin" % name, case(dict(base, kind=other))
        yield "%s: its own kind" % name, case(dict(base, kind=name + "Args", apiVersion="kubescheduler.config.k8s.io/v1"))
        yield "%s: args not enabled" % name, _one(None, [{"name": name, "args": dict(base, notAField=1)}])
        for field, (valid, invalid) in sorted(fields.items()):
            for value in valid:
                yield "%s: %s=%s" % (name, field, json.dumps(value)), case(dict(base, **{field: value}))
            for value in invalid:
                yield "%s: bad %s=%s" % (name, field, json.dumps(value)), case(dict(base, **{field: value}))
    # Two constructors refusing at once would be named in Go's map order: never two refusals in one profile here.


# Each kind's optional fields with their empty value (the JSON zero of its Go type): defaulting writes what the round
# trip through the internal types makes of an unset or empty field, measured for every combination of them. A
# Trimaran plugin is enabled with a Prometheus metric provider (its client is built offline) or a watcher.
_EMPTY = {
    "Coscheduling": {"permitWaitingTimeSeconds": 0, "podGroupBackoffSeconds": 0, "podGroupRejectPercentage": 0},
    "NodeResourcesAllocatable": {"resources": [], "mode": ""},
    "NodeResourceTopologyMatch": {"scoringStrategy": {}, "cacheResyncPeriodSeconds": 0, "discardReservedNodes": False,
                                  "cache": {}},
    "PreemptionToleration": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
    "TopologicalSort": {"namespaces": []},
    "NetworkOverhead": {"namespaces": [], "weightsName": "", "networkTopologyName": ""},
    "SySched": {"defaultProfileNamespace": "", "defaultProfileName": ""},
    "TargetLoadPacking": {"watcherAddress": "", "defaultRequests": {}, "defaultRequestsMultiplier": "",
                          "targetUtilization": 0},
    "LoadVariationRiskBalancing": {"watcherAddress": "", "safeVarianceMargin": 0, "safeVarianceSensitivity": 0},
    "LowRiskOverCommitment": {"watcherAddress": "", "smoothingWindowSize": 0, "riskLimitWeights": {}},
}
# What else a kind's empty fields are measured with: the metric providers a Trimaran plugin is built with offline,
# and the sub-fields of NodeResourceTopologyMatch's structs. Measured: TargetLoadPacking with a Prometheus provider
# without an address never returns from its constructor offline (the binary ran past 60 s), so it has an address.
_PROMETHEUS = {"type": "Prometheus", "address": "http://127.0.0.1:9090"}
_WITH = {
    "TargetLoadPacking": [{"metricProvider": _PROMETHEUS}, {"metricProvider": dict(_PROMETHEUS, token="")}, WATCHER],
    "LoadVariationRiskBalancing": [{"metricProvider": _PROMETHEUS}, {"metricProvider": {"type": "Prometheus"}}, WATCHER],
    "LowRiskOverCommitment": [{"metricProvider": _PROMETHEUS}, {"metricProvider": {"type": "Prometheus"}}, WATCHER],
    "NodeResourceTopologyMatch": [{}, {"scoringStrategy": {"type": "", "resources": []}},
                                  {"cache": {"foreignPodsDetect": "", "resyncMethod": "", "informerMode": "",
                                             "resyncScope": ""}}],
}


def empty_field_cases():
    """Every kind, enabled, with every combination of its optional fields absent or empty (and each one null)."""
    for name, fields in sorted(_EMPTY.items()):
        point = {"TopologicalSort": "queueSort", "PreemptionToleration": "postFilter",
                 "NodeResourceTopologyMatch": "filter", "NetworkOverhead": "filter"}.get(name, "score")
        plugins = {point: {"enabled": [{"name": name}]}}
        if point in ("queueSort", "postFilter"):
            plugins[point]["disabled"] = [{"name": "*"}]
        names = sorted(fields)
        for base in _WITH.get(name, [{}]):
            for mask in range(1 << len(names)):
                args = dict(base, **dict((field, fields[field]) for bit, field in enumerate(names) if mask >> bit & 1))
                yield "%s with %s: empty %s" % (name, json.dumps(base, sort_keys=True), ",".join(
                    field for bit, field in enumerate(names) if mask >> bit & 1) or "nothing"), \
                    _one(plugins, [{"name": name, "args": args}])
            for field in names:
                if field == "watcherAddress" and "metricProvider" not in base:
                    continue  # no watcher and no provider: the in-cluster metrics client, not offline (see above)
                yield "%s with %s: null %s" % (name, json.dumps(base, sort_keys=True), field), \
                    _one(plugins, [{"name": name, "args": dict(base, **{field: None})}])


def queue_sort_args_cases():
    """Two profiles whose queue sort has different args: the binary prints the second profile's args in its error
    (a registered kind's as the typed object, not as runtime.Unknown)."""
    for name, args in (("Coscheduling", [{"permitWaitingTimeSeconds": 10}, {"permitWaitingTimeSeconds": 20}]),
                       ("Coscheduling", [{}, {"podGroupBackoffSeconds": 5}]),
                       ("TopologicalSort", [{"namespaces": ["a"]}, {"namespaces": ["b"]}])):
        sort = {"queueSort": {"enabled": [{"name": name}], "disabled": [{"name": "*"}]}}
        yield "%s queue sort args differ: %s" % (name, json.dumps(args, sort_keys=True)), _text({"profiles": [
            _profile(sort, [{"name": name, "args": args[0]}]), _profile(sort, [{"name": name, "args": args[1]}], "two")]})


# strconv.ParseFloat of TargetLoadPacking's defaultRequestsMultiplier (plugin_utils/core/go_strconv.py).
MULTIPLIERS = ("0x1p-2", "0x1.8p1", "0x1", "1_000", "1__0", "_1", "1e400", "-1e309", "1e-400", "inf", "+Inf",
               "-infinity", "nan", "NaN", "+nan", "infinit", " 1", "1 ", ".", "1e", "9" * 400, "9" * 120000 + "x")


def multiplier_cases():
    plugins = {"score": {"enabled": [{"name": "TargetLoadPacking"}]}}
    for multiplier in MULTIPLIERS:
        yield "TargetLoadPacking: defaultRequestsMultiplier=%s" % json.dumps(multiplier)[:60], _one(
            plugins, [{"name": "TargetLoadPacking", "args": dict(WATCHER, defaultRequestsMultiplier=multiplier)}])


def example_cases():
    """Configs as operators write them (scheduler-plugins' manifests/<plugin>/scheduler-config.yaml shapes)."""
    gang = {"multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}}
    yield "coscheduling as a second scheduler", _one(gang, [{"name": "Coscheduling", "args": {
        "permitWaitingTimeSeconds": 10}}])
    yield "coscheduling with a leader election of its own", _text(
        {"profiles": [_profile(gang)]},
        leaderElection={"leaderElect": True, "resourceName": "sp-scheduler", "resourceNamespace": "scheduler-plugins"})
    yield "coscheduling and the default profile", _text({"profiles": [
        _profile(gang), _profile({"queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}},
                                 name="default-scheduler")]})
    yield "coscheduling without replacing the queue sort", _one({"multiPoint": {"enabled": [{"name": "Coscheduling"}]}})
    yield "noderesourcetopology", _one({"multiPoint": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}}, [
        {"name": "NodeResourceTopologyMatch", "args": {"scoringStrategy": {"type": "LeastNUMANodes"}}}])
    yield "allocatable most", _one({"score": {"enabled": [{"name": "NodeResourcesAllocatable", "weight": 3}],
                                              "disabled": [{"name": "*"}]}},
                                   [{"name": "NodeResourcesAllocatable", "args": {"mode": "Most"}}])
    yield "trimaran with a load watcher", _one({"score": {"enabled": [{"name": "TargetLoadPacking"},
                                                                      {"name": "LoadVariationRiskBalancing"}],
                                                          "disabled": [{"name": "*"}]}}, [
        {"name": "TargetLoadPacking", "args": dict(WATCHER, targetUtilization=70)},
        {"name": "LoadVariationRiskBalancing", "args": dict(WATCHER, safeVarianceMargin=1.5)}])
    yield "network-aware", _one({"multiPoint": {"enabled": [{"name": "TopologicalSort"}, {"name": "NetworkOverhead"}]},
                                 "queueSort": {"enabled": [{"name": "TopologicalSort"}], "disabled": [{"name": "*"}]}},
                                [{"name": "TopologicalSort", "args": {"namespaces": ["default", "apps"]}},
                                 {"name": "NetworkOverhead", "args": {"namespaces": ["apps"], "weightsName": "UserDefined"}}])
    yield "preemption toleration instead of default preemption", _one(
        {"postFilter": {"enabled": [{"name": "PreemptionToleration"}], "disabled": [{"name": "*"}]}},
        [{"name": "PreemptionToleration", "args": {"minCandidateNodesAbsolute": 50}}])
    yield "qos sort and pod state", _one({"queueSort": {"enabled": [{"name": "QOSSort"}], "disabled": [{"name": "*"}]},
                                          "score": {"enabled": [{"name": "PodState", "weight": 2}]}})
    yield "sysched", _one({"score": {"enabled": [{"name": "SySched"}]}},
                          [{"name": "SySched", "args": {"defaultProfileNamespace": "kube-system"}}])
    yield "a misspelled plugin", _one({"multiPoint": {"enabled": [{"name": "Cosheduling"}]}})
    yield "an in-tree config is still valid", _one()


# The releases whose binary answered the cases of these generators (recorded/scheduler-plugins-<release>.jsonl):
# 0.33.5's binary was not built when they were added; once it is, add it here and record it
# (tests/differential/run.py --minors scheduler-plugins-0.33.5 --families scheduler_plugins).
MEASURED_ON = {"empty_field_cases": ("0.34.7",), "queue_sort_args_cases": ("0.34.7",), "multiplier_cases": ("0.34.7",)}


def cases(release=None):
    """(family, name, text) of the scheduler_plugins family, in a fixed order (of ``release``: every generator
    measured on its binary; None: all)."""
    from harness import materialise  # pylint: disable=import-outside-toplevel
    seen = set()
    for generator in (plugin_cases, args_cases, example_cases, empty_field_cases, queue_sort_args_cases,
                      multiplier_cases):
        if release is not None and release not in MEASURED_ON.get(generator.__name__, (release,)):
            continue
        for name, text in generator():
            if text in seen:
                continue
            seen.add(text)
            yield "scheduler_plugins", name, materialise(text)
