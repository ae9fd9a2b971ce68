# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The in-tree kube-scheduler plugins of each supported minor version, with default feature gates.

Pure Python: no Ansible imports. Every table is a base (the newest shape common to most versions)
plus the differences per version, each noted with the upstream file it comes from
(kubernetes/kubernetes at the release of that minor version). docs/upstream-facts.md tells which of these
facts were read upstream (with the source) and which are still inferred.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _feature_gates as feature_gates
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import minor_number

# The one list of extension points. staging/src/k8s.io/kube-scheduler/config/v1/types.go, struct Plugins: field
# order without multiPoint (validatePluginConfig's stagesToPluginSet walks them in this order).
EXTENSION_POINTS = (
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
    "reserve", "permit", "preBind", "bind", "postBind",
)
# Extension points later releases add to the Plugins struct (types.go, after multiPoint), in the struct's order, each
# with the release that adds it: 1.36 the workload-aware placement points (TopologyAwareWorkloadScheduling,
# KEP-5732), 1.37 podGroupPostFilter (PostFilter for a PodGroup that cannot be scheduled, kube-scheduler@v0.37.2
# types.go), 1.38 placementFeasible (whether a placement suits a pod group, kube-scheduler@v0.38.0-beta.0 types.go:
# before podGroupPostFilter).
EXTENSION_POINTS_ADDED = (
    ("placementGenerate", 36), ("placementScore", 36), ("placementFeasible", 38), ("podGroupPostFilter", 37),
)
# frameworkImpl.getExtensionPoints walks them in another order (errors name the first one a plugin fails); the
# added points come last, in the struct's order (v1.38.0-beta.0 framework.go).
FRAMEWORK_ORDER = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind", "postBind",
                   "permit", "preEnqueue", "queueSort") + tuple(point for point, _since in EXTENSION_POINTS_ADDED)
# validatePluginConfig's stagesToPluginSet (validation.go) checks the points of 1.30, podGroupPostFilter from 1.37,
# and the placement points from 1.38 (v1.38.0-beta.0's validation.go lists them).
_VALIDATED_SINCE = {"podGroupPostFilter": 37, "placementGenerate": 38, "placementScore": 38, "placementFeasible": 38}


def _added_points(version):
    minor = minor_number(version)
    return tuple(point for point, since in EXTENSION_POINTS_ADDED if since <= minor)


def extension_points(version):
    """The profile ``plugins`` field names of that version in upstream order, multiPoint excluded."""
    return EXTENSION_POINTS + _added_points(version)


def validation_stages(version):
    """validatePluginConfig's stagesToPluginSet of that version, in the Plugins struct order: the 12 points of 1.30,
    podGroupPostFilter from 1.37, the placement points from 1.38."""
    minor = minor_number(version)
    return EXTENSION_POINTS + tuple(point for point in _added_points(version) if _VALIDATED_SINCE[point] <= minor)


def interface_name(point):
    """The Go interface a plugin implements for that point, as framework errors quote it: PreFilterPlugin."""
    return point[0].upper() + point[1:] + "Plugin"


class Plugin(object):
    """One registered plugin: its name, the extension points it implements and its args kind."""

    __slots__ = ("name", "extension_points", "args_kind")

    def __init__(self, name, extension_points, args_kind=None):
        self.name = name
        self.extension_points = frozenset(extension_points)
        self.args_kind = args_kind

    def __eq__(self, other):
        return (isinstance(other, Plugin) and (self.name, self.extension_points, self.args_kind)
                == (other.name, other.extension_points, other.args_kind))

    def __hash__(self):
        return hash((self.name, self.extension_points, self.args_kind))

    def __repr__(self):
        return "Plugin(%r, %r, %r)" % (self.name, sorted(self.extension_points), self.args_kind)


# pkg/scheduler/framework/plugins/registry.go (NewInTreeRegistry) and, per plugin, the
# `var _ framework.XPlugin = &T{}` assertions in pkg/scheduler/framework/plugins/<plugin>/*.go.
# Values: (extension points, args kind). Valid for every supported version unless changed below.
_BASE_PLUGINS = {
    "PrioritySort": (("queueSort",), None),
    "SchedulingGates": (("preEnqueue",), None),
    "NodeUnschedulable": (("filter",), None),
    "NodeName": (("filter",), None),
    "TaintToleration": (("filter", "preScore", "score"), None),
    "NodeAffinity": (("preFilter", "filter", "preScore", "score"), "NodeAffinityArgs"),
    "NodePorts": (("preFilter", "filter"), None),
    "NodeResourcesFit": (("preFilter", "filter", "preScore", "score"), "NodeResourcesFitArgs"),
    "VolumeRestrictions": (("preFilter", "filter"), None),
    "NodeVolumeLimits": (("preFilter", "filter"), None),
    "VolumeBinding": (("preFilter", "filter", "reserve", "preBind", "preScore", "score"),
                      "VolumeBindingArgs"),
    "VolumeZone": (("preFilter", "filter"), None),
    "PodTopologySpread": (("preFilter", "filter", "preScore", "score"), "PodTopologySpreadArgs"),
    "InterPodAffinity": (("preFilter", "filter", "preScore", "score"), "InterPodAffinityArgs"),
    "DefaultPreemption": (("postFilter",), "DefaultPreemptionArgs"),
    "NodeResourcesBalancedAllocation": (("preScore", "score"), "NodeResourcesBalancedAllocationArgs"),
    "ImageLocality": (("score",), None),
    "DefaultBinder": (("bind",), None),
    # dynamicresources.go from 1.32 (structured parameters only): no PreScore/PostBind any more.
    "DynamicResources": (("preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"), None),
}

# Differences per version: minor -> {name: (extension points, args kind) or None to unregister}.
# Applied cumulatively from 1.30 upwards, so each entry holds from its version on.
_PLUGIN_CHANGES = {
    30: {
        # 1.30 registry.go still registers the in-tree volume-limit plugins (nodevolumelimits/non_csi.go).
        "AzureDiskLimits": (("preFilter", "filter"), None),
        "CinderLimits": (("preFilter", "filter"), None),
        "EBSLimits": (("preFilter", "filter"), None),
        "GCEPDLimits": (("preFilter", "filter"), None),
        # 1.30/1.31 dynamicresources.go (classic DRA with PodSchedulingContext) also had PreScore and PostBind.
        "DynamicResources": (("preEnqueue", "preFilter", "filter", "postFilter", "preScore", "reserve",
                              "preBind", "postBind"), None),
    },
    32: {
        # CHANGELOG-1.31 (#124500): 1.31 only deprecated the in-tree volume-limit plugins and dropped them
        # from the default set ("Those plugins will be removed in the release 1.32"); 1.32 unregisters them.
        "AzureDiskLimits": None, "CinderLimits": None, "EBSLimits": None, "GCEPDLimits": None,
        "DynamicResources": _BASE_PLUGINS["DynamicResources"],
        # defaultpreemption.go implements fwk.PreEnqueuePlugin (async preemption): v1.32.5 and v1.33.3 accept
        # DefaultPreemption in preEnqueue.enabled, v1.31.8 refuses it.
        "DefaultPreemption": (("preEnqueue", "postFilter"), "DefaultPreemptionArgs"),
    },
    34: {
        # types_pluginargs.go gains DynamicResourcesArgs (filterTimeout, DRASchedulerFilterTimeout beta).
        "DynamicResources": (_BASE_PLUGINS["DynamicResources"][0], "DynamicResourcesArgs"),
    },
    35: {
        # dynamicresources.go implements fwk.ScorePlugin; new alpha plugins are registered
        # (their feature gates GenericWorkload/GangScheduling and NodeDeclaredFeatures are off).
        "DynamicResources": (_BASE_PLUGINS["DynamicResources"][0] + ("score",), "DynamicResourcesArgs"),
        "GangScheduling": (("preEnqueue", "reserve", "permit"), None),
        "NodeDeclaredFeatures": (("preFilter", "filter"), None),
    },
    36: {
        # gangscheduling.go drops Reserve; topologyaware/topology_placement.go and
        # podgrouppodscount/podgroup_pods_count.go are registered (TopologyAwareWorkloadScheduling alpha).
        "GangScheduling": (("preEnqueue", "permit"), None),
        "TopologyPlacementGenerator": (("placementGenerate",), None),
        "PodGroupPodsCount": (("placementScore",), None),
        # noderesources/placement_bin_packing.go: NodeResourcesFit scores placements too (#136652); kube-scheduler
        # v1.36.3 accepts it in placementScore.enabled.
        "NodeResourcesFit": (_BASE_PLUGINS["NodeResourcesFit"][0] + ("placementScore",), "NodeResourcesFitArgs"),
    },
    37: {
        # v1.37.2: node_name.go, node_unschedulable.go and taint_toleration.go implement fwk.PreFilterPlugin;
        # default_preemption.go and dynamicresources.go implement fwk.PodGroupPostFilterPlugin; registry.go
        # registers deferredpodscheduling (PreFilter, Filter, Permit; its gate only decides the default plugins).
        "NodeName": (("preFilter", "filter"), None),
        "NodeUnschedulable": (("preFilter", "filter"), None),
        "TaintToleration": (("preFilter", "filter", "preScore", "score"), None),
        "DefaultPreemption": (("preEnqueue", "postFilter", "podGroupPostFilter"), "DefaultPreemptionArgs"),
        "DynamicResources": (_BASE_PLUGINS["DynamicResources"][0] + ("score", "podGroupPostFilter"),
                             "DynamicResourcesArgs"),
        "DeferredPodScheduling": (("preFilter", "filter", "permit"), None),
    },
    38: {
        # v1.38.0-beta.0: default_preemption.go implements fwk.ReservePlugin (for PodGroup preemption; the default
        # plugins disable it at reserve while GenericWorkload is off); gangscheduling.go implements
        # fwk.PlacementFeasiblePlugin and no longer PermitPlugin.
        "DefaultPreemption": (("preEnqueue", "postFilter", "reserve", "podGroupPostFilter"), "DefaultPreemptionArgs"),
        "GangScheduling": (("preEnqueue", "placementFeasible"), None),
    },
}


def _plugin_table(version):
    minor = minor_number(version)
    table = dict(_BASE_PLUGINS)
    for since in sorted(_PLUGIN_CHANGES):
        if since > minor:
            break
        for name, spec in _PLUGIN_CHANGES[since].items():
            if spec is None:
                table.pop(name, None)
            else:
                table[name] = spec
    return table


def in_tree_plugins(version):
    """The in-tree registry of that version: plugin name -> Plugin."""
    return dict((name, Plugin(name, points, kind)) for name, (points, kind) in _plugin_table(version).items())


def args_kind_plugins(version):
    """Args kind -> plugin name, for the args kinds registered in that version."""
    return dict((kind, name) for name, (_points, kind) in _plugin_table(version).items() if kind)


# pkg/scheduler/apis/config/v1/default_plugins.go, getDefaultPlugins(): the multiPoint enabled list with score
# weights (0 where upstream sets none), by the release from which it holds.
_BASE_MULTIPOINT = (
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
)
_BASE_MULTIPOINTS = {
    # 1.30: EBSLimits, GCEPDLimits before and AzureDiskLimits after NodeVolumeLimits.
    30: _BASE_MULTIPOINT[:9] + (("EBSLimits", 0), ("GCEPDLimits", 0), ("NodeVolumeLimits", 0),
                                ("AzureDiskLimits", 0)) + _BASE_MULTIPOINT[10:],
    31: _BASE_MULTIPOINT,
    # v1.37.2: NodeName before NodeUnschedulable.
    37: _BASE_MULTIPOINT[:2] + (("NodeName", 0), ("NodeUnschedulable", 0)) + _BASE_MULTIPOINT[4:],
    # v1.38.0-beta.0: DynamicResources (weight 2) is a default plugin before DefaultPreemption, its gate gone.
    38: _BASE_MULTIPOINT[:2] + (("NodeName", 0), ("NodeUnschedulable", 0)) + _BASE_MULTIPOINT[4:14]
    + (("DynamicResources", 2),) + _BASE_MULTIPOINT[14:],
}

# applyFeatureGates of each release, in its order: (gate, plugin, weight, the plugin it is inserted before, or None
# to append). A gate that is off (or absent in that release) adds nothing. Holds from its release until the next.
APPEND = None
_GATED_DEFAULTS = {
    30: (("DynamicResourceAllocation", "DynamicResources", 0, "DefaultPreemption"),),
    35: (("NodeDeclaredFeatures", "NodeDeclaredFeatures", 0, APPEND),
         ("DynamicResourceAllocation", "DynamicResources", 2, "DefaultPreemption"),
         ("GangScheduling", "GangScheduling", 0, APPEND)),
    36: (("NodeDeclaredFeatures", "NodeDeclaredFeatures", 0, APPEND),
         ("DynamicResourceAllocation", "DynamicResources", 2, "DefaultPreemption"),
         ("GangScheduling", "GangScheduling", 0, APPEND),
         ("TopologyAwareWorkloadScheduling", "TopologyPlacementGenerator", 0, APPEND),
         ("TopologyAwareWorkloadScheduling", "PodGroupPodsCount", 1, APPEND)),
    37: (("NodeDeclaredFeatures", "NodeDeclaredFeatures", 0, APPEND),
         ("InPlacePodVerticalScalingSchedulerPreemption", "DeferredPodScheduling", 0, "NodeResourcesFit"),
         ("DynamicResourceAllocation", "DynamicResources", 2, "DefaultPreemption"),
         ("GenericWorkload", "GangScheduling", 0, APPEND),
         ("TopologyAwareWorkloadScheduling", "TopologyPlacementGenerator", 0, APPEND),
         ("TopologyAwareWorkloadScheduling", "PodGroupPodsCount", 1, APPEND)),
    38: (("NodeDeclaredFeatures", "NodeDeclaredFeatures", 0, APPEND),
         ("InPlacePodVerticalScalingSchedulerPreemption", "DeferredPodScheduling", 0, "NodeResourcesFit"),
         ("GenericWorkload", "GangScheduling", 0, APPEND),
         ("TopologyAwareWorkloadScheduling", "TopologyPlacementGenerator", 0, APPEND),
         ("TopologyAwareWorkloadScheduling", "PodGroupPodsCount", 1, APPEND)),
}
# What applyFeatureGates does while a gate is off, by release: (gate, extension point, plugin put on that point's
# disabled list). v1.38.0-beta.0: DefaultPreemption reserves only for PodGroup preemption, so without
# GenericWorkload its Reserve is disabled (the multiPoint entry then skips reserve).
_DISABLED_WITHOUT_GATE = {
    30: (),
    38: (("GenericWorkload", "reserve", "DefaultPreemption"),),
}


def _of_release(table, minor):
    """The entry of ``table`` (keyed by release) that holds for ``minor``."""
    return table[max(since for since in table if since <= minor)]


def default_multipoint(version, gates=None):
    """The default multiPoint enabled list [(name, weight)] of that version, in upstream order, with the feature
    gates in force (``gates``: feature_gates.parse of --feature-gates; the version's defaults for the others)."""
    minor = minor_number(version)
    plugins = list(_of_release(_BASE_MULTIPOINTS, minor))
    for gate, name, weight, before in _of_release(_GATED_DEFAULTS, minor):
        if not feature_gates.enabled(gate, version, gates):
            continue
        names = [plugin for plugin, _weight in plugins]
        # The plugin an insertion is placed before is in every base list (upstream's fallbacks never apply).
        at = len(plugins) if before is APPEND else names.index(before)
        plugins.insert(at, (name, weight))
    return plugins


def default_disabled(version, gates=None):
    """The default disabled lists of that version {extension point: [name]}, with the feature gates in force."""
    disabled = {}
    for gate, point, name in _of_release(_DISABLED_WITHOUT_GATE, minor_number(version)):
        if not feature_gates.enabled(gate, version, gates):
            disabled.setdefault(point, []).append(name)
    return disabled
