# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Go types of kubescheduler.config.k8s.io/v1 per version, as far as strict decoding needs them.

Sources: staging/src/k8s.io/kube-scheduler/config/v1/types.go and types_pluginargs.go,
k8s.io/component-base/config/v1alpha1 (LeaderElection, ClientConnection, Debugging) and k8s.io/api core/v1.
Each node knows its JSON field names and its Go type name, which json error messages quote.
"""

from __future__ import annotations

import functools

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import minor_number

GROUP = "kubescheduler.config.k8s.io"
API_VERSION = GROUP + "/v1"
KIND = "KubeSchedulerConfiguration"


class Scalar(object):
    """kind: string, int32, int64, float32, bool, duration (metav1.Duration), bytes ([]byte, base64)."""

    def __init__(self, kind: str, go_type: str = "", nullable: bool = False):
        self.kind = kind
        self.go_type = go_type or {"bytes": "[]uint8", "duration": "v1.Duration"}.get(kind, kind)
        # A Go pointer: JSON null leaves it nil (a plain metav1.Duration would parse "" and fail).
        self.nullable = nullable


class Struct(object):
    def __init__(self, go_type: str, fields: dict):
        self.go_type = go_type
        self.fields = fields

    @property
    def name(self) -> str:
        """reflect.Type.Name(): the type name without its package."""
        return self.go_type.split(".", 1)[-1]


class List(object):
    def __init__(self, item):
        self.item = item
        self.go_type = "[]" + item.go_type


class Map(object):
    def __init__(self, value, go_type: str):
        self.value = value
        self.go_type = go_type


class Raw(object):
    """runtime.RawExtension: any JSON, decoded later as <Plugin>Args when that kind is registered."""
    go_type = "runtime.RawExtension"


STRING = Scalar("string")
INT32 = Scalar("int32")
INT64 = Scalar("int64")
BOOL = Scalar("bool")
DURATION = Scalar("duration")
DURATION_POINTER = Scalar("duration", nullable=True)  # *metav1.Duration
TYPE_META = {"apiVersion": STRING, "kind": STRING}

_LABEL_SELECTOR = Struct("v1.LabelSelector", {
    "matchLabels": Map(STRING, "map[string]string"),
    "matchExpressions": List(Struct("v1.LabelSelectorRequirement", {
        "key": STRING, "operator": Scalar("string", "v1.LabelSelectorOperator"), "values": List(STRING)})),
})
_NODE_SELECTOR_REQUIREMENT = Struct("v1.NodeSelectorRequirement", {
    "key": STRING, "operator": Scalar("string", "v1.NodeSelectorOperator"), "values": List(STRING)})
_NODE_SELECTOR_TERM = Struct("v1.NodeSelectorTerm", {
    "matchExpressions": List(_NODE_SELECTOR_REQUIREMENT), "matchFields": List(_NODE_SELECTOR_REQUIREMENT)})
_NODE_AFFINITY = Struct("v1.NodeAffinity", {
    "requiredDuringSchedulingIgnoredDuringExecution": Struct("v1.NodeSelector", {
        "nodeSelectorTerms": List(_NODE_SELECTOR_TERM)}),
    "preferredDuringSchedulingIgnoredDuringExecution": List(Struct("v1.PreferredSchedulingTerm", {
        "weight": INT32, "preference": _NODE_SELECTOR_TERM})),
})
_TOPOLOGY_SPREAD_CONSTRAINT = Struct("v1.TopologySpreadConstraint", {
    "maxSkew": INT32,
    "topologyKey": STRING,
    "whenUnsatisfiable": Scalar("string", "v1.UnsatisfiableConstraintAction"),
    "labelSelector": _LABEL_SELECTOR,
    "minDomains": INT32,
    "nodeAffinityPolicy": Scalar("string", "v1.NodeInclusionPolicy"),
    "nodeTaintsPolicy": Scalar("string", "v1.NodeInclusionPolicy"),
    "matchLabelKeys": List(STRING),
})
_RESOURCE_SPEC = Struct("v1.ResourceSpec", {"name": STRING, "weight": INT64})
_SHAPE = List(Struct("v1.UtilizationShapePoint", {"utilization": INT32, "score": INT32}))
_SCORING_STRATEGY = Struct("v1.ScoringStrategy", {
    "type": Scalar("string", "v1.ScoringStrategyType"),
    "resources": List(_RESOURCE_SPEC),
    "requestedToCapacityRatio": Struct("v1.RequestedToCapacityRatioParam", {"shape": _SHAPE}),
})


def _args(kind: str, fields: dict) -> Struct:
    merged = dict(TYPE_META)
    merged.update(fields)
    return Struct("v1." + kind, merged)


# Args kinds (or their new fields) by the release that adds them to types_pluginargs.go / types.go of
# k8s.io/kube-scheduler config/v1; each entry holds from its release on. DynamicResourcesArgs (filterTimeout)
# arrived in 1.34, bindingTimeout in 1.35; PlacementBinPackingArgs is in the 1.36 binary recorded so far (OpenShift's
# fork), not in upstream's v0.36.3 nor v0.37.2 (kube-scheduler v1.37.2 refuses the kind), hence the 37 entry.
_ARGS_KINDS_ADDED = {
    34: {"DynamicResourcesArgs": {"filterTimeout": DURATION_POINTER}},
    35: {"DynamicResourcesArgs": {"filterTimeout": DURATION_POINTER, "bindingTimeout": DURATION_POINTER}},
    36: {"PlacementBinPackingArgs": {"scoringStrategy": _SCORING_STRATEGY}},
}
_ARGS_KINDS_REMOVED = {37: ("PlacementBinPackingArgs",)}


@functools.lru_cache(maxsize=None)
def plugin_args_types(version: str) -> dict:
    """Args kind -> Struct for every args kind the v1 types define in that version."""
    minor = minor_number(version)
    kinds = {
        "DefaultPreemptionArgs": _args("DefaultPreemptionArgs", {
            "minCandidateNodesPercentage": INT32, "minCandidateNodesAbsolute": INT32}),
        "InterPodAffinityArgs": _args("InterPodAffinityArgs", {
            "hardPodAffinityWeight": INT32, "ignorePreferredTermsOfExistingPods": BOOL}),
        "NodeResourcesFitArgs": _args("NodeResourcesFitArgs", {
            "ignoredResources": List(STRING), "ignoredResourceGroups": List(STRING),
            "scoringStrategy": _SCORING_STRATEGY}),
        "PodTopologySpreadArgs": _args("PodTopologySpreadArgs", {
            "defaultConstraints": List(_TOPOLOGY_SPREAD_CONSTRAINT),
            "defaultingType": Scalar("string", "v1.PodTopologySpreadConstraintsDefaulting")}),
        "NodeResourcesBalancedAllocationArgs": _args("NodeResourcesBalancedAllocationArgs", {
            "resources": List(_RESOURCE_SPEC)}),
        "VolumeBindingArgs": _args("VolumeBindingArgs", {"bindTimeoutSeconds": INT64, "shape": _SHAPE}),
        "NodeAffinityArgs": _args("NodeAffinityArgs", {"addedAffinity": _NODE_AFFINITY}),
    }
    for since in sorted(_ARGS_KINDS_ADDED):
        if since <= minor:
            kinds.update((kind, _args(kind, fields)) for kind, fields in _ARGS_KINDS_ADDED[since].items())
    for since in sorted(_ARGS_KINDS_REMOVED):
        if since <= minor:
            for kind in _ARGS_KINDS_REMOVED[since]:
                kinds.pop(kind, None)
    return kinds


# Fields later releases add to KubeSchedulerConfiguration ("top") and KubeSchedulerProfile ("profile") of
# config/v1/types.go, each placed after the field named, by the release that adds them: percentageOfPlacementsToScore
# at both levels in 1.38 (kube-scheduler@v0.38.0-beta.0; kubernetes/kubernetes#139859; not in v1.36.3 nor v1.37.2).
_FIELDS_ADDED = {
    38: {"top": (("percentageOfPlacementsToScore", INT32, "percentageOfNodesToScore"),),
         "profile": (("percentageOfPlacementsToScore", INT32, "percentageOfNodesToScore"),)},
}


def _with_added(fields: dict, level: str, minor: int) -> dict:
    """``fields`` with the fields releases up to ``minor`` add to that struct, each in its place."""
    for since in sorted(_FIELDS_ADDED):
        if since > minor:
            continue
        for name, kind, after in _FIELDS_ADDED[since].get(level, ()):
            items = list(fields.items())
            at = [key for key, _value in items].index(after) + 1
            fields = dict(items[:at] + [(name, kind)] + items[at:])
    return fields


@functools.lru_cache(maxsize=None)
def configuration_type(version: str, extension_points: tuple) -> Struct:
    """The KubeSchedulerConfiguration struct of that version (profile ``plugins`` fields from the registry)."""
    minor = minor_number(version)
    plugin = Struct("v1.Plugin", {"name": STRING, "weight": INT32})
    plugin_set = Struct("v1.PluginSet", {"enabled": List(plugin), "disabled": List(plugin)})
    plugins = Struct("v1.Plugins", dict((point, plugin_set) for point in tuple(extension_points) + ("multiPoint",)))
    profile_fields = {
        "schedulerName": STRING,
        "percentageOfNodesToScore": INT32,
        "plugins": plugins,
        "pluginConfig": List(Struct("v1.PluginConfig", {"name": STRING, "args": Raw()})),
    }
    profile_fields = _with_added(profile_fields, "profile", minor)
    top_fields = dict(TYPE_META)
    top_fields.update({
        "parallelism": INT32,
        "leaderElection": Struct("v1alpha1.LeaderElectionConfiguration", {
            "leaderElect": BOOL, "leaseDuration": DURATION, "renewDeadline": DURATION, "retryPeriod": DURATION,
            "resourceLock": STRING, "resourceName": STRING, "resourceNamespace": STRING}),
        "clientConnection": Struct("v1alpha1.ClientConnectionConfiguration", {
            "kubeconfig": STRING, "acceptContentTypes": STRING, "contentType": STRING,
            "qps": Scalar("float32"), "burst": INT32}),
        # DebuggingConfiguration is embedded inline.
        "enableProfiling": BOOL,
        "enableContentionProfiling": BOOL,
        "percentageOfNodesToScore": INT32,
        "podInitialBackoffSeconds": INT64,
        "podMaxBackoffSeconds": INT64,
        "profiles": List(Struct("v1.KubeSchedulerProfile", profile_fields)),
        "extenders": List(Struct("v1.Extender", {
            "urlPrefix": STRING, "filterVerb": STRING, "preemptVerb": STRING, "prioritizeVerb": STRING,
            "weight": INT64, "bindVerb": STRING, "enableHTTPS": BOOL,
            "tlsConfig": Struct("v1.ExtenderTLSConfig", {
                "insecure": BOOL, "serverName": STRING, "certFile": STRING, "keyFile": STRING, "caFile": STRING,
                "certData": Scalar("bytes"), "keyData": Scalar("bytes"), "caData": Scalar("bytes")}),
            "httpTimeout": DURATION, "nodeCacheCapable": BOOL,
            "managedResources": List(Struct("v1.ExtenderManagedResource", {
                "name": STRING, "ignoredByScheduler": BOOL})),
            "ignorable": BOOL})),
        "delayCacheUntilActive": BOOL,
    })
    return Struct("v1.KubeSchedulerConfiguration", _with_added(top_fields, "top", minor))
