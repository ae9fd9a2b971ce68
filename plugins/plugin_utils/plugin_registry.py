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

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.versions import minor_number

# The one list of extension points. staging/src/k8s.io/kube-scheduler/config/v1/types.go, struct Plugins: field
# order without multiPoint (validatePluginConfig's stagesToPluginSet walks them in this order).
EXTENSION_POINTS = (
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
    "reserve", "permit", "preBind", "bind", "postBind",
)
# 1.36 adds the workload-aware placement extension points (TopologyAwareWorkloadScheduling, KEP-5732):
# plugins implement fwk.PlacementGeneratePlugin / fwk.PlacementScorePlugin. Their position in the
# Plugins struct was not readable in the index; they are listed after postBind.
PLACEMENT_EXTENSION_POINTS = ("placementGenerate", "placementScore")
# frameworkImpl.getExtensionPoints walks them in another order (errors name the first one a plugin fails).
FRAMEWORK_ORDER = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind", "postBind",
                   "permit", "preEnqueue", "queueSort") + PLACEMENT_EXTENSION_POINTS


def extension_points(version):
    """The profile ``plugins`` field names of that version in upstream order, multiPoint excluded."""
    if minor_number(version) >= 36:
        return EXTENSION_POINTS + PLACEMENT_EXTENSION_POINTS
    return EXTENSION_POINTS


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


# pkg/scheduler/apis/config/v1/default_plugins.go, getDefaultPlugins() of 1.31-1.33: the multiPoint
# enabled list with score weights (0 where upstream sets none).
_BASE_MULTIPOINT = (
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
)


def default_multipoint(version):
    """The default multiPoint enabled list [(name, weight)] of that version, in upstream order."""
    minor = minor_number(version)
    plugins = list(_BASE_MULTIPOINT)
    if minor == 30:
        # 1.30 default_plugins.go: EBSLimits, GCEPDLimits before and AzureDiskLimits after NodeVolumeLimits.
        at = plugins.index(("NodeVolumeLimits", 0))
        plugins[at:at + 1] = [("EBSLimits", 0), ("GCEPDLimits", 0), ("NodeVolumeLimits", 0), ("AzureDiskLimits", 0)]
    if minor >= 36:
        # NodeDeclaredFeatures gate is beta and on from 1.36 (pkg/features/kube_features.go); applyFeatureGates
        # adds the plugin. Its position could not be read in the index: appended, like earlier gated plugins.
        plugins.append(("NodeDeclaredFeatures", 0))
    if minor >= 34:
        # DynamicResourceAllocation is GA and on from 1.34; applyFeatureGates inserts DynamicResources
        # before DefaultPreemption. From 1.35 it is a score plugin with weight 2.
        at = [name for name, _w in plugins].index("DefaultPreemption")
        plugins.insert(at, ("DynamicResources", 2 if minor >= 35 else 0))
    return plugins
