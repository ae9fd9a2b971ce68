# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubernetes-sigs/scheduler-plugins releases as targets of the config library.

A release's kube-scheduler (its cmd/scheduler) is the Kubernetes release it is built on, with its out-of-tree plugins
registered and their args kinds added to the kubescheduler.config.k8s.io/v1 scheme: the config is decoded, defaulted
and validated as that Kubernetes minor does, plus what this module knows of the release's plugins. Pure Python: no
Ansible imports. Every fact is read in the release's own files (named beside it) and measured on its binary, built
from its Go module by tests/binaries (make differential; tests/differential/corpus_scheduler_plugins.py).
"""

from __future__ import annotations

import re

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import schema
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._plugin_registry import Plugin
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._validation_pluginargs import (
    validate_default_preemption_args)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import errors
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.go_strconv import ParseFloatError, parse_float
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.messages import shown
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import minor_of

# scheduler-plugins release -> the k8s.io/kubernetes release its go.mod builds on (and so its in-tree behaviour).
RELEASES = {
    "0.33.5": "1.33.5",
    "0.34.7": "1.34.7",
}

# cmd/scheduler/main.go's app.WithPlugin list, and the methods each plugin's type has (pkg/<plugin>/*.go):
# (extension points, args kind). Measured: each at every point, tests/differential/corpus_scheduler_plugins.py.
_PLUGINS = {
    "CapacityScheduling": (("preFilter", "postFilter", "reserve"), None),
    "Coscheduling": (("queueSort", "preFilter", "postFilter", "reserve", "permit"), "CoschedulingArgs"),
    "LoadVariationRiskBalancing": (("score",), "LoadVariationRiskBalancingArgs"),
    "NetworkOverhead": (("preFilter", "filter", "score"), "NetworkOverheadArgs"),
    "TopologicalSort": (("queueSort",), "TopologicalSortArgs"),
    "NodeResourcesAllocatable": (("score",), "NodeResourcesAllocatableArgs"),
    "NodeResourceTopologyMatch": (("filter", "reserve", "score", "postBind"), "NodeResourceTopologyMatchArgs"),
    "PreemptionToleration": (("postFilter",), "PreemptionTolerationArgs"),
    "TargetLoadPacking": (("score",), "TargetLoadPackingArgs"),
    "LowRiskOverCommitment": (("preScore", "score"), "LowRiskOverCommitmentArgs"),
    "SySched": (("score",), "SySchedArgs"),
    "Peaks": (("score",), "PeaksArgs"),
    "PodState": (("score",), None),
    "QOSSort": (("queueSort",), None),
}

# apis/config/v1/types.go. The Go type names are those json errors quote (package v1 of scheduler-plugins).
_STRING_P = schema.Scalar("string", "string", nullable=True)
_INT64_P = schema.Scalar("int64", "int64", nullable=True)
_FLOAT64 = schema.Scalar("float64")
_RESOURCE_SPEC = schema.Struct("v1.ResourceSpec", {"name": schema.STRING, "weight": schema.INT64})
_TRIMARAN = {
    "metricProvider": schema.Struct("v1.MetricProviderSpec", {
        "type": schema.Scalar("string", "v1.MetricProviderType"), "address": _STRING_P, "token": _STRING_P,
        "insecureSkipVerify": schema.Scalar("bool", "bool", nullable=True)}),
    "watcherAddress": _STRING_P,
}


def _args(kind, fields):
    merged = dict(schema.TYPE_META)
    merged.update(fields)
    return schema.Struct("v1." + kind, merged)


_COSCHEDULING_FIELDS = {"permitWaitingTimeSeconds": _INT64_P, "podGroupBackoffSeconds": _INT64_P}
_ARGS_TYPES = {
    "CoschedulingArgs": _args("CoschedulingArgs", _COSCHEDULING_FIELDS),
    "NodeResourcesAllocatableArgs": _args("NodeResourcesAllocatableArgs", {
        "resources": schema.List(_RESOURCE_SPEC), "mode": schema.Scalar("string", "v1.ModeType")}),
    "TargetLoadPackingArgs": _args("TargetLoadPackingArgs", dict(_TRIMARAN, **{
        "defaultRequests": schema.Map(schema.Scalar("quantity", "resource.Quantity"), "v1.ResourceList"),
        "defaultRequestsMultiplier": _STRING_P, "targetUtilization": _INT64_P})),
    "LoadVariationRiskBalancingArgs": _args("LoadVariationRiskBalancingArgs", dict(_TRIMARAN, **{
        "safeVarianceMargin": schema.Scalar("float64", nullable=True),
        "safeVarianceSensitivity": schema.Scalar("float64", nullable=True)})),
    "LowRiskOverCommitmentArgs": _args("LowRiskOverCommitmentArgs", dict(_TRIMARAN, **{
        "smoothingWindowSize": _INT64_P, "riskLimitWeights": schema.Map(_FLOAT64, "map[v1.ResourceName]float64")})),
    "NodeResourceTopologyMatchArgs": _args("NodeResourceTopologyMatchArgs", {
        "scoringStrategy": schema.Struct("v1.ScoringStrategy", {
            "type": schema.Scalar("string", "v1.ScoringStrategyType"), "resources": schema.List(_RESOURCE_SPEC)}),
        "cacheResyncPeriodSeconds": _INT64_P, "discardReservedNodes": schema.BOOL,
        "cache": schema.Struct("v1.NodeResourceTopologyCache", {
            "foreignPodsDetect": schema.Scalar("string", "v1.ForeignPodsDetectMode", nullable=True),
            "resyncMethod": schema.Scalar("string", "v1.CacheResyncMethod", nullable=True),
            "informerMode": schema.Scalar("string", "v1.CacheInformerMode", nullable=True),
            "resyncScope": schema.Scalar("string", "v1.CacheResyncScope", nullable=True)})}),
    # type PreemptionTolerationArgs schedulerconfigv1.DefaultPreemptionArgs
    "PreemptionTolerationArgs": _args("PreemptionTolerationArgs", {
        "minCandidateNodesPercentage": schema.Scalar("int32", "int32", nullable=True),
        "minCandidateNodesAbsolute": schema.Scalar("int32", "int32", nullable=True)}),
    "TopologicalSortArgs": _args("TopologicalSortArgs", {"namespaces": schema.List(schema.STRING)}),
    "NetworkOverheadArgs": _args("NetworkOverheadArgs", {
        "namespaces": schema.List(schema.STRING), "weightsName": _STRING_P, "networkTopologyName": _STRING_P}),
    "SySchedArgs": _args("SySchedArgs", {"defaultProfileNamespace": _STRING_P, "defaultProfileName": _STRING_P}),
    # PeaksArgs' json tags are malformed (`json:watcherAddress",inline"`), so encoding/json and the strict decoder
    # know its fields by their Go names.
    "PeaksArgs": _args("PeaksArgs", {
        "WatcherAddress": schema.STRING,
        "NodePowerModel": schema.Map(schema.Struct("v1.PowerModel", {"k0": _FLOAT64, "k1": _FLOAT64, "k2": _FLOAT64}),
                                     "map[string]v1.PowerModel")}),
}


# What later releases change, by the release from which it holds (each entry replaces the base's).
_ARGS_TYPES_CHANGED = {
    # 0.34: CoschedulingArgs.podGroupRejectPercentage (PostFilter rejects a PodGroup only above that share).
    "0.34.7": {"CoschedulingArgs": _args("CoschedulingArgs", dict(
        _COSCHEDULING_FIELDS, podGroupRejectPercentage=schema.Scalar("int32", "int32", nullable=True)))},
}


def _of_release(base, changes, release):
    table = dict(base)
    for since in sorted(changes, key=_release_key):
        if _release_key(since) <= _release_key(release):
            table.update(changes[since])
    return table


def _release_key(release):
    return tuple(int(part) for part in release.split("."))


# apis/config/v1/defaults.go: SetDefaults_<kind>, on the args as written (None where unset), then what the round trip
# through the internal types (plain fields where v1 has pointers, apis/config/types.go) makes of the effective config
# the binary writes: such a field is written even when it was unset (address: "", cacheResyncPeriodSeconds: 0).
def _set(args, name, value, when_unset=lambda v: v is None):
    if when_unset(args.get(name)):
        args[name] = value


def _trimaran(args):
    provider = dict(args.get("metricProvider") or {})
    if args.get("watcherAddress") is None and not provider.get("type"):
        provider["type"] = "KubernetesMetricsServer"
    if provider.get("type") == "Prometheus" and provider.get("insecureSkipVerify") is None:
        provider["insecureSkipVerify"] = True
    for name, zero in (("address", ""), ("token", ""), ("insecureSkipVerify", False)):
        _set(provider, name, zero)
    args["metricProvider"] = provider
    # TrimaranSpec.WatcherAddress is a plain string inside: an unset watcher is written back as "".
    _set(args, "watcherAddress", "")
    return args


def _coscheduling(args):
    _set(args, "permitWaitingTimeSeconds", 60)
    _set(args, "podGroupBackoffSeconds", 0)
    return args


def _coscheduling_034(args):
    _coscheduling(args)
    _set(args, "podGroupRejectPercentage", 10)
    return args


def _allocatable(args):
    _set(args, "resources", [{"name": "cpu", "weight": 1 << 20}, {"name": "memory", "weight": 1}], lambda v: not v)
    _set(args, "mode", "Least", lambda v: not v)
    return args


def _target_load_packing(args):
    _trimaran(args)
    _set(args, "defaultRequests", {"cpu": "1"})
    if not args["defaultRequests"]:
        del args["defaultRequests"]  # an empty map is not nil (not defaulted), and omitempty leaves it out
    _set(args, "defaultRequestsMultiplier", "1.5")
    _set(args, "targetUtilization", 40, lambda v: v is None or v <= 0)
    return args


def _load_variation(args):
    _trimaran(args)
    _set(args, "safeVarianceMargin", 1, lambda v: v is None or v < 0)
    _set(args, "safeVarianceSensitivity", 1, lambda v: v is None or v < 0)
    return args


def _low_risk(args):
    _trimaran(args)
    _set(args, "smoothingWindowSize", 5, lambda v: v is None or v <= 0)
    weights = args.get("riskLimitWeights")
    if not weights:
        args["riskLimitWeights"] = {"cpu": 0.5, "memory": 0.5}
    else:
        args["riskLimitWeights"] = dict((r, 0.5 if w < 0 or w > 1 else w) for r, w in weights.items())
    return args


def _topology_match(args):
    strategy = dict(args["scoringStrategy"] if args.get("scoringStrategy") is not None else {"type": "LeastAllocated"})
    resources = [dict(r) for r in strategy.get("resources") or []]
    resources = resources or [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
    for resource in resources:
        if not resource.get("weight"):
            resource["weight"] = 1
    strategy["resources"] = resources
    args["scoringStrategy"] = strategy
    cache = dict(args.get("cache") or {})
    _set(cache, "foreignPodsDetect", "All")
    _set(cache, "resyncMethod", "Autodetect")
    _set(cache, "informerMode", "Dedicated")
    args["cache"] = cache
    _set(args, "cacheResyncPeriodSeconds", 0)
    if not args.get("discardReservedNodes"):
        args.pop("discardReservedNodes", None)  # a plain bool with omitempty
    return args


def _preemption_toleration(args):
    # k8s SetDefaults_DefaultPreemptionArgs.
    _set(args, "minCandidateNodesPercentage", 10)
    _set(args, "minCandidateNodesAbsolute", 100)
    return args


def _namespaces(args):
    _set(args, "namespaces", ["default"], lambda v: not v)
    return args


def _network_overhead(args):
    _namespaces(args)
    _set(args, "weightsName", "UserDefined")
    _set(args, "networkTopologyName", "nt-default")
    return args


def _sysched(args):
    _set(args, "defaultProfileNamespace", "default")
    _set(args, "defaultProfileName", "all-syscalls")
    return args


_DEFAULTERS = {
    "CoschedulingArgs": _coscheduling,
    "NodeResourcesAllocatableArgs": _allocatable,
    "TargetLoadPackingArgs": _target_load_packing,
    "LoadVariationRiskBalancingArgs": _load_variation,
    "LowRiskOverCommitmentArgs": _low_risk,
    "NodeResourceTopologyMatchArgs": _topology_match,
    "PreemptionTolerationArgs": _preemption_toleration,
    "TopologicalSortArgs": _namespaces,
    "NetworkOverheadArgs": _network_overhead,
    "SySchedArgs": _sysched,
    "PeaksArgs": lambda args: args,
}
_DEFAULTERS_CHANGED = {"0.34.7": {"CoschedulingArgs": _coscheduling_034}}


# What each plugin's New checks of its args (apis/config/validation/validation_pluginargs.go and the plugins'
# constructors): [(field, message)] in the order of the aggregate kube-scheduler prints, or [].
def _coscheduling_new(args):
    errs = [(name, "%s: Invalid value: %d: must be greater than 0" % (name, args[name]))
            for name in ("permitWaitingTimeSeconds", "podGroupBackoffSeconds") if (args.get(name) or 0) < 0]
    reject = args.get("podGroupRejectPercentage")
    if reject is not None and not 0 <= reject <= 100:  # 0.34 on: the field exists only there
        errs.append(("podGroupRejectPercentage", "podGroupRejectPercentage: Invalid value: %d: must be between 0 "
                     "and 100" % reject))
    return errs


def _allocatable_new(args):
    errs = [("resources[%d].weight" % i, "resources[%d].weight: Invalid value: %d: resource weight of %s should be a "
             "positive value, got :%d" % (i, r.get("weight", 0), r.get("name", ""), r.get("weight", 0)))
            for i, r in enumerate(args.get("resources") or []) if r.get("weight", 0) <= 0]
    if args.get("mode") not in ("Least", "Most"):
        errs.append(("mode", "mode: Invalid value: %s: invalid support ModeType" % errors.go_quote(args.get("mode", ""))))
    return errs


_SCORING_STRATEGIES = ("MostAllocated", "BalancedAllocation", "LeastAllocated", "LeastNUMANodes")


def _topology_match_new(args):
    kind = (args.get("scoringStrategy") or {}).get("type", "")
    if kind not in _SCORING_STRATEGIES:
        return [("scoringStrategy.type", "scoringStrategy.type: Invalid value: %s: invalid ScoringStrategyType"
                 % errors.go_quote(kind))]
    return []


def _preemption_toleration_new(args):
    # k8s ValidateDefaultPreemptionArgs with field.NewPath(""): the binary names the fields "[].minCandidate...".
    return [(e.field[len("[]."):], e.message) for e in validate_default_preemption_args("[]", args)]


def _trimaran_new(args):
    if not args.get("watcherAddress"):
        kind = (args.get("metricProvider") or {}).get("type", "")
        if kind not in ("KubernetesMetricsServer", "Prometheus", "SignalFx"):
            return [("metricProvider.type", "invalid MetricProvider.Type, got %s" % kind)]
    return []


def _target_load_packing_new(args):
    errs = _trimaran_new(args)
    if not errs:
        try:
            parse_float(args.get("defaultRequestsMultiplier", ""))
        except ParseFloatError as exc:
            errs = [("defaultRequestsMultiplier", "unable to parse DefaultRequestsMultiplier: %s" % exc)]
    return errs


_CONSTRUCTORS = {
    "Coscheduling": _coscheduling_new,
    "NodeResourcesAllocatable": _allocatable_new,
    "NodeResourceTopologyMatch": _topology_match_new,
    "PreemptionToleration": _preemption_toleration_new,
    "TargetLoadPacking": _target_load_packing_new,
    "LoadVariationRiskBalancing": _trimaran_new,
    "LowRiskOverCommitment": _trimaran_new,
}


# What an enabled plugin needs in the cluster (its informers, the objects it reads and writes): the CRDs of
# scheduler-plugins itself (applied by the deployment role, roles/deployment/files/scheduler-plugins), the CRDs of
# other projects (checked to exist), the RBAC rules of its scheduler (manifests/install/charts/as-a-second-scheduler
# templates/rbac.yaml beyond the cluster's system:kube-scheduler role) and whether the scheduler-plugins controller
# must run (it keeps PodGroup and ElasticQuota status).
_SCHEDULING_X = {"apiGroups": ["scheduling.x-k8s.io"],
                 "resources": ["podgroups", "podgroups/status", "elasticquotas", "elasticquotas/status"],
                 "verbs": ["get", "list", "watch", "update", "patch"]}
_NEEDS = {
    "Coscheduling": {"crds": ["podgroups.scheduling.x-k8s.io"], "rules": [_SCHEDULING_X], "controller": True},
    "CapacityScheduling": {"crds": ["elasticquotas.scheduling.x-k8s.io"], "rules": [_SCHEDULING_X],
                           "controller": True},
    "NodeResourceTopologyMatch": {"external_crds": ["noderesourcetopologies.topology.node.k8s.io"], "rules": [
        {"apiGroups": ["topology.node.k8s.io"], "resources": ["noderesourcetopologies"],
         "verbs": ["get", "list", "watch"]}]},
    "NetworkOverhead": {"external_crds": ["appgroups.appgroup.diktyo.x-k8s.io",
                                          "networktopologies.networktopology.diktyo.x-k8s.io"], "rules": [
        {"apiGroups": ["appgroup.diktyo.x-k8s.io"], "resources": ["appgroups"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["networktopology.diktyo.x-k8s.io"], "resources": ["networktopologies"],
         "verbs": ["get", "list", "watch"]}]},
    "TopologicalSort": {"external_crds": ["appgroups.appgroup.diktyo.x-k8s.io"], "rules": [
        {"apiGroups": ["appgroup.diktyo.x-k8s.io"], "resources": ["appgroups"], "verbs": ["get", "list", "watch"]}]},
    "SySched": {"external_crds": ["seccompprofiles.security-profiles-operator.x-k8s.io"], "rules": [
        {"apiGroups": ["security-profiles-operator.x-k8s.io"], "resources": ["seccompprofiles", "profilebindings"],
         "verbs": ["get", "list", "watch"]}]},
    "PreemptionToleration": {"rules": [{"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"],
                                        "verbs": ["get", "list", "watch"]}]},
}


class SchedulerPluginsError(ValueError):
    """A scheduler-plugins release the library does not know, or that does not go with the Kubernetes version."""


class OutOfTree(object):
    """What a scheduler-plugins release adds to the kube-scheduler it is built on: plugins, their args kinds (Go
    types, defaults) and what each plugin's constructor checks."""

    def __init__(self, release: str):
        self.release = release
        self.kubernetes = RELEASES[release]
        self.plugins = dict((name, Plugin(name, points, kind)) for name, (points, kind) in _PLUGINS.items())
        self.args_types = _of_release(_ARGS_TYPES, _ARGS_TYPES_CHANGED, release)
        self.defaulters = _of_release(_DEFAULTERS, _DEFAULTERS_CHANGED, release)
        self.args_kinds = dict((kind, name) for name, (_points, kind) in _PLUGINS.items() if kind)

    def default_args(self, kind: str, args: dict) -> dict:
        out = self.defaulters[kind](dict(args or {}))
        out["apiVersion"] = schema.API_VERSION
        out["kind"] = kind
        return out

    def needs(self, enabled) -> dict:
        """What the enabled plugins (names) need in the cluster: {"plugins", "crds", "external_crds", "rules",
        "controller"}, each list sorted and without duplicates (the rules in a fixed order)."""
        used = sorted(name for name in set(enabled) if name in self.plugins)
        found = {"plugins": used, "crds": [], "external_crds": [], "rules": [], "controller": False}
        for name in used:
            need = _NEEDS.get(name, {})
            for key in ("crds", "external_crds", "rules"):
                found[key].extend(item for item in need.get(key, ()) if item not in found[key])
            found["controller"] = found["controller"] or bool(need.get("controller"))
        found["crds"].sort()
        found["external_crds"].sort()
        return found

    def construct(self, name: str, args: dict) -> list:
        """The (field, message) list the plugin's New refuses its args with, [] when it accepts them."""
        check = _CONSTRUCTORS.get(name)
        return check(args or {}) if check else []


def releases_with(plugin):
    """The releases that register ``plugin`` (cmd/scheduler's app.WithPlugin), newest first, each with the Kubernetes
    release it is built on: [(release, kubernetes)]."""
    return [(known, RELEASES[known]) for known in sorted(RELEASES, key=_release_key, reverse=True)
            if plugin in OutOfTree(known).plugins]


# The version rule of kube_scheduler_version (versions.py): one optional v, then the release's three numbers. fullmatch,
# so a trailing newline is no match.
_RELEASE = re.compile(r"v?([0-9]+)\.([0-9]+)\.([0-9]+)", re.ASCII)


def normalise(value, variable="scheduler_plugins_version") -> str:
    """A scheduler-plugins release as written ("0.34.7" or "v0.34.7") as this module keys it ("0.34.7"); anything
    else (two v's, a minor, a YAML number) is refused naming ``variable`` and the releases this module knows."""
    match = _RELEASE.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None:
        raise SchedulerPluginsError(
            "%s: Invalid value: %s: not a scheduler-plugins release like 0.34.7 or v0.34.7 (at most one v, then the "
            "release's three numbers); this collection knows %s" % (
                variable, shown(value),
                ", ".join(sorted(RELEASES, key=_release_key))))
    return ".".join(match.groups())


def release(version, kubernetes_version) -> OutOfTree:
    """The scheduler-plugins release ``version`` for a config of ``kubernetes_version`` (its minor must be the one
    the release is built on)."""
    version = normalise(version)
    if version not in RELEASES:
        raise SchedulerPluginsError(
            "scheduler_plugins_version: %s is not a scheduler-plugins release this collection knows; it knows %s "
            "(each measured on its own kube-scheduler)" % (version, ", ".join(sorted(RELEASES))))
    built_on, wanted = minor_of(RELEASES[version]), minor_of(kubernetes_version)
    if wanted != built_on:
        matching = [known for known, kubernetes in sorted(RELEASES.items()) if minor_of(kubernetes) == wanted]
        raise SchedulerPluginsError(
            "scheduler_plugins_version: scheduler-plugins %s is built on Kubernetes %s, not %s: set kubernetes_version "
            "to %s, or pick the scheduler-plugins release built on %s%s" % (
                version, RELEASES[version], wanted, built_on, wanted,
                " (%s)" % ", ".join(matching) if matching else " (none is known to this collection yet)"))
    return OutOfTree(version)
