# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-version plugin registry and default plugin set, checked against upstream sources.

Expectations are transcribed from kubernetes/kubernetes: default_plugins.go / default_plugins_test.go of
the release named in each case, registry.go, and pkg/features/kube_features.go (versioned gate defaults).
"""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._plugin_registry import (
    Plugin, args_kind_plugins, default_multipoint, extension_points, in_tree_plugins)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import SUPPORTED_MINORS

from upstream_vectors import recorded_default_multipoint

VOLUME_LIMIT_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")

# 1.30 pkg/scheduler/apis/config/v1/default_plugins.go, getDefaultPlugins() (DynamicResourceAllocation off).
UPSTREAM_1_30 = [
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0), ("EBSLimits", 0), ("GCEPDLimits", 0), ("NodeVolumeLimits", 0),
    ("AzureDiskLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0), ("PodTopologySpread", 2),
    ("InterPodAffinity", 2), ("DefaultPreemption", 0), ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1), ("DefaultBinder", 0),
]


def _names(version):
    return [name for name, _weight in default_multipoint(version)]


def test_default_multipoint_1_30_matches_upstream_get_default_plugins():
    assert default_multipoint("1.30") == UPSTREAM_1_30


@pytest.mark.parametrize("version", ["1.31", "1.32", "1.33"])
def test_default_multipoint_1_31_to_1_33_is_what_the_real_binary_wrote(version):
    assert default_multipoint(version) == list(recorded_default_multipoint(version))


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
def test_volume_limit_plugins_default_in_1_30_registered_until_1_31(version):
    """CHANGELOG-1.31 (#124500): 1.31 deprecated the in-tree volume-limit plugins and removed them from the
    default plugins; "Those plugins will be removed in the release 1.32"."""
    for name in VOLUME_LIMIT_PLUGINS:
        assert (name in in_tree_plugins(version)) is (version in ("1.30", "1.31"))
    assert ("EBSLimits" in _names(version)) is (version == "1.30")
    # CinderLimits was registered but never in the default set.
    assert "CinderLimits" not in _names(version)


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
def test_dynamic_resources_default_from_1_34(version):
    """DynamicResourceAllocation: beta off in 1.32-1.33, GA on from 1.34 (kube_features.go); the
    plugin is inserted right before DefaultPreemption (applyFeatureGates)."""
    names = _names(version)
    minor = int(version.split(".")[1])
    assert ("DynamicResources" in names) is (minor >= 34)
    assert "DynamicResources" in in_tree_plugins(version)
    if minor >= 34:
        assert names[names.index("DynamicResources") + 1] == "DefaultPreemption"
        weight = dict(default_multipoint(version))["DynamicResources"]
        assert weight == (2 if minor >= 35 else 0)


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
def test_alpha_plugins_not_in_default_set(version):
    """GenericWorkload/GangScheduling and TopologyAwareWorkloadScheduling are alpha (off) through 1.36; in 1.37
    GenericWorkload is beta and still off, InPlacePodVerticalScalingSchedulerPreemption (DeferredPodScheduling)
    alpha and off."""
    for name in ("GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount", "DeferredPodScheduling"):
        assert name not in _names(version)


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
def test_node_declared_features_default_only_from_1_36(version):
    """NodeDeclaredFeatures: alpha off in 1.35, beta on in 1.36, GA and locked on in 1.37 (kube_features.go)."""
    assert ("NodeDeclaredFeatures" in _names(version)) is (version >= "1.36")
    assert ("NodeDeclaredFeatures" in in_tree_plugins(version)) is (version >= "1.35")


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
def test_every_default_plugin_is_registered(version):
    registry = in_tree_plugins(version)
    assert all(name in registry for name in _names(version))
    assert len(set(_names(version))) == len(_names(version))


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
def test_extension_points(version):
    """types.go struct Plugins field order; 1.36 adds the placement extension points, 1.37 podGroupPostFilter, 1.38
    placementFeasible (before podGroupPostFilter)."""
    base = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
            "reserve", "permit", "preBind", "bind", "postBind")
    points = extension_points(version)
    assert points[:12] == base
    assert "multiPoint" not in points
    assert points[12:] == {"1.36": ("placementGenerate", "placementScore"),
                           "1.37": ("placementGenerate", "placementScore", "podGroupPostFilter"),
                           "1.38": ("placementGenerate", "placementScore", "placementFeasible",
                                    "podGroupPostFilter")}.get(version, ())


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
def test_plugins_only_use_extension_points_of_their_version(version):
    points = set(extension_points(version))
    for plugin in in_tree_plugins(version).values():
        assert plugin.extension_points <= points, plugin


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
def test_well_known_extension_points(version):
    """The `var _ framework.XPlugin = &T{}` assertions of the plugin sources."""
    registry = in_tree_plugins(version)
    assert registry["PrioritySort"] == Plugin("PrioritySort", ["queueSort"])
    assert registry["DefaultBinder"].extension_points == frozenset(["bind"])
    assert registry["SchedulingGates"].extension_points == frozenset(["preEnqueue"])
    assert registry["ImageLocality"].extension_points == frozenset(["score"])
    assert "score" not in registry["NodePorts"].extension_points
    assert registry["NodeResourcesFit"].extension_points >= frozenset(["preFilter", "filter", "score"])
    assert registry["VolumeBinding"].extension_points >= frozenset(["reserve", "preBind"])
    assert ("score" in registry["DynamicResources"].extension_points) is (version >= "1.35")


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
def test_args_kinds(version):
    """types_pluginargs.go: the seven args kinds of every version, DynamicResourcesArgs from 1.34."""
    kinds = args_kind_plugins(version)
    expected = {
        "DefaultPreemptionArgs": "DefaultPreemption",
        "InterPodAffinityArgs": "InterPodAffinity",
        "NodeAffinityArgs": "NodeAffinity",
        "NodeResourcesBalancedAllocationArgs": "NodeResourcesBalancedAllocation",
        "NodeResourcesFitArgs": "NodeResourcesFit",
        "PodTopologySpreadArgs": "PodTopologySpread",
        "VolumeBindingArgs": "VolumeBinding",
    }
    if version >= "1.34":
        expected["DynamicResourcesArgs"] = "DynamicResources"
    assert kinds == expected
    for kind, name in kinds.items():
        assert in_tree_plugins(version)[name].args_kind == kind


def test_versions_accept_patch_levels():
    assert default_multipoint("v1.30.4") == UPSTREAM_1_30
    assert in_tree_plugins("1.31.0") == in_tree_plugins("1.31")
