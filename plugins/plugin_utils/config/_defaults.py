# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The effective KubeSchedulerConfiguration, as ``kube-scheduler --write-config-to`` writes it.

Mirrors pkg/scheduler/apis/config/v1/defaults.go (SetDefaults_*), default_plugins.go (mergePlugins),
the framework's profile capture (pkg/scheduler/framework/runtime/framework.go, NewFramework: only args of
needed, registered plugins, sorted by name) and the JSON of the v1 types after the round trip through the
internal types (staging/src/k8s.io/kube-scheduler/config/v1/types.go, types_pluginargs.go and
component-base config/v1alpha1: fields that are plain values internally are always written, omitempty
applies to the rest). Pure Python, no Ansible imports.
"""

from __future__ import annotations

import copy

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _feature_gates as feature_gates
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._plugin_registry import (
    args_kind_plugins, default_disabled, default_multipoint, extension_points, in_tree_plugins)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.schema import (
    API_VERSION, KIND, configuration_type, plugin_args_types)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.durations import format_duration, parse_duration
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import float32


def _duration(value, default=None):
    """A written metav1.Duration; a zero duration becomes ``default`` when one is given."""
    if value is None or value == "":
        nanos = 0
    else:
        try:
            nanos = parse_duration(value)
        except ValueError:
            return value
    if nanos == 0 and default is not None:
        return default
    return format_duration(nanos)


def _number(value):
    """float32 QPS as encoding/json writes it: the float32 value in its shortest form, integral ones without a
    fraction (16777217 is written 16777216, 0.1 stays 0.1)."""
    rounded = float32(value)
    for digits in range(1, 10):
        text = "%.*g" % (digits, rounded)
        if float32(float(text)) == rounded:
            break
    shortest = float(text)
    return int(shortest) if shortest.is_integer() and abs(shortest) < 1e21 else shortest


# How a Go struct field is written by encoding/json.
ALWAYS = "always"        # no omitempty: written even when zero (nil slices as null)
OMITEMPTY = "omitempty"  # value, slice or map with omitempty: left out when zero or empty
OMITNIL = "omitnil"      # pointer with omitempty: left out only when nil


def _pick(source, spec):
    """Copy the fields of one Go struct: spec is [(json name, mode, normaliser, zero value)].

    ``zero`` is what Go writes for a missing field without omitempty ("" for strings, 0, null for slices).
    """
    out = {}
    for name, mode, normalise, zero in spec:
        value = source.get(name)
        if value is None:
            if mode == ALWAYS:
                out[name] = zero
            continue
        if mode == OMITEMPTY and (value is False or value == 0 or value in ("", [], {})):
            continue
        out[name] = normalise(value) if normalise is not None else value
    return out


def _list_of(normalise):
    return lambda items: [normalise(item) for item in items]


# core/v1 and metav1 types used inside plugin args (k8s.io/api/core/v1/types.go, apimachinery LabelSelector).
def _requirement(item):
    return _pick(item, [("key", ALWAYS, None, ""), ("operator", ALWAYS, None, ""),
                        ("values", OMITEMPTY, None, None)])


def _node_selector_term(item):
    return _pick(item, [("matchExpressions", OMITEMPTY, _list_of(_requirement), None),
                        ("matchFields", OMITEMPTY, _list_of(_requirement), None)])


def _node_selector(item):
    return _pick(item, [("nodeSelectorTerms", ALWAYS, _list_of(_node_selector_term), None)])


def _preferred_term(item):
    return _pick(item, [("weight", ALWAYS, None, 0), ("preference", ALWAYS, _node_selector_term, {})])


def _node_affinity(item):
    return _pick(item, [("requiredDuringSchedulingIgnoredDuringExecution", OMITNIL, _node_selector, None),
                        ("preferredDuringSchedulingIgnoredDuringExecution", OMITEMPTY,
                         _list_of(_preferred_term), None)])


def _label_selector(item):
    return _pick(item, [("matchLabels", OMITEMPTY, None, None),
                        ("matchExpressions", OMITEMPTY, _list_of(_requirement), None)])


def _spread_constraint(item):
    return _pick(item, [("maxSkew", ALWAYS, None, 0), ("topologyKey", ALWAYS, None, ""),
                        ("whenUnsatisfiable", ALWAYS, None, ""), ("labelSelector", OMITNIL, _label_selector, None),
                        ("minDomains", OMITNIL, None, None), ("nodeAffinityPolicy", OMITNIL, None, None),
                        ("nodeTaintsPolicy", OMITNIL, None, None), ("matchLabelKeys", OMITEMPTY, None, None)])


def _shape_point(item):
    return _pick(item, [("utilization", ALWAYS, None, 0), ("score", ALWAYS, None, 0)])


# pkg/scheduler/apis/config/v1/defaults.go: defaultResourceSpec, and weight 0 defaulted to 1.
def _default_resources(resources):
    if not resources:
        return [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
    return [{"name": item.get("name", ""), "weight": item.get("weight") or 1} for item in resources]


def _preemption_args(args, _version, _gates):
    return {"minCandidateNodesPercentage": _default(args, "minCandidateNodesPercentage", 10),
            "minCandidateNodesAbsolute": _default(args, "minCandidateNodesAbsolute", 100)}


def _inter_pod_affinity_args(args, _version, _gates):
    return {"hardPodAffinityWeight": _default(args, "hardPodAffinityWeight", 1),
            "ignorePreferredTermsOfExistingPods": bool(args.get("ignorePreferredTermsOfExistingPods"))}


def _node_affinity_args(args, _version, _gates):
    return _pick(args, [("addedAffinity", OMITNIL, _node_affinity, None)])


def _balanced_allocation_args(args, _version, _gates):
    return {"resources": _default_resources(args.get("resources"))}


def _fit_args(args, _version, _gates):
    out = _pick(args, [("ignoredResources", OMITEMPTY, None, None),
                       ("ignoredResourceGroups", OMITEMPTY, None, None)])
    strategy = args.get("scoringStrategy")
    if strategy is None:
        strategy = {"type": "LeastAllocated"}
    written = _pick(strategy, [("type", OMITEMPTY, None, None)])
    written["resources"] = _default_resources(strategy.get("resources"))
    ratio = strategy.get("requestedToCapacityRatio")
    if ratio is not None:
        written["requestedToCapacityRatio"] = _pick(ratio, [("shape", OMITEMPTY, _list_of(_shape_point), None)])
    out["scoringStrategy"] = written
    return out


def _spread_args(args, _version, _gates):
    out = _pick(args, [("defaultConstraints", OMITEMPTY, _list_of(_spread_constraint), None)])
    out["defaultingType"] = args.get("defaultingType") or "System"
    return out


def capacity_scoring_gate(version):
    """The gate of VolumeBindingArgs.shape in that version: VolumeCapacityPriority, StorageCapacityScoring from
    1.33 (the one that exists there)."""
    if feature_gates.spec("VolumeCapacityPriority", version):
        return "VolumeCapacityPriority"
    return "StorageCapacityScoring"


# SetDefaults_VolumeBindingArgs' default shape, by release: utilization 0 scores 0 while the gate was
# VolumeCapacityPriority (up to 1.32), 10 (MaxCustomPriorityScore) from StorageCapacityScoring (1.33) on.
_DEFAULT_CAPACITY_SHAPE = {
    30: [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
    33: [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
}


def _volume_binding_args(args, version, gates):
    # SetDefaults_VolumeBindingArgs: an empty or missing shape gets the default while the capacity-scoring gate is
    # on (StorageCapacityScoring: beta and on from 1.37); with it off a set shape (even []) is kept, and refused.
    out = {"bindTimeoutSeconds": _default(args, "bindTimeoutSeconds", 600)}
    if not args.get("shape") and feature_gates.enabled(capacity_scoring_gate(version), version, gates):
        minor = int(version.split(".")[1])
        shape = _DEFAULT_CAPACITY_SHAPE[max(since for since in _DEFAULT_CAPACITY_SHAPE if since <= minor)]
        out["shape"] = [dict(point) for point in shape]
    elif args.get("shape") is not None:
        out["shape"] = [_shape_point(point) for point in args["shape"]]
    return out


def _dynamic_resources_args(args, version, gates):
    # SetDefaults_DynamicResourcesArgs: filterTimeout defaults to 10s while DRASchedulerFilterTimeout is on;
    # bindingTimeout to 10m while DRADeviceBindingConditions and DRAResourceClaimDeviceStatus are.
    out = {}
    filter_timeout = args.get("filterTimeout")
    if filter_timeout is not None:
        out["filterTimeout"] = _duration(filter_timeout)
    elif feature_gates.enabled("DRASchedulerFilterTimeout", version, gates):
        out["filterTimeout"] = "10s"
    else:
        # `json:"filterTimeout"` without omitempty: a nil pointer is written as null.
        out["filterTimeout"] = None
    binding_timeout = args.get("bindingTimeout")
    if binding_timeout is not None:
        out["bindingTimeout"] = _duration(binding_timeout)
    elif ("bindingTimeout" in plugin_args_types(version)["DynamicResourcesArgs"].fields
          and feature_gates.enabled("DRADeviceBindingConditions", version, gates)
          and feature_gates.enabled("DRAResourceClaimDeviceStatus", version, gates)):
        # The field came in 1.35: v1.34.4 with DRADeviceBindingConditions on writes none.
        out["bindingTimeout"] = "10m0s"
    return out


def _default(args, name, value):
    return value if args.get(name) is None else args[name]


_ARGS_DEFAULTERS = {
    "DefaultPreemptionArgs": _preemption_args,
    "InterPodAffinityArgs": _inter_pod_affinity_args,
    "NodeAffinityArgs": _node_affinity_args,
    "NodeResourcesBalancedAllocationArgs": _balanced_allocation_args,
    "NodeResourcesFitArgs": _fit_args,
    "PodTopologySpreadArgs": _spread_args,
    "VolumeBindingArgs": _volume_binding_args,
    "DynamicResourcesArgs": _dynamic_resources_args,
}


def args_kinds(version, out_of_tree=None):
    """Args kind -> plugin name of that version's registry, with an out-of-tree release's (scheduler_plugins.py)."""
    kinds = args_kind_plugins(version)
    if out_of_tree is not None:
        kinds.update(out_of_tree.args_kinds)
    return kinds


def default_plugin_args(kind, args, version, gates=None, out_of_tree=None):
    """SetDefaults_<kind> applied to ``args``: the args as written, with apiVersion and kind (``gates``: the feature
    gates set by --feature-gates; ``out_of_tree``: a scheduler-plugins release, whose kinds it defaults)."""
    if out_of_tree is not None and kind in out_of_tree.args_kinds:
        return out_of_tree.default_args(kind, args)
    if kind not in args_kind_plugins(version):
        raise ValueError("%s is not a registered plugin args kind in Kubernetes %s" % (kind, version))
    out = _ARGS_DEFAULTERS[kind](dict(args or {}), version, gates)
    out["apiVersion"] = API_VERSION
    out["kind"] = kind
    return out


# default_plugins.go mergePluginSet, literally: disabled names (and "*") drop defaults, a re-listed
# default is overridden in place by the last custom entry of that name, other custom entries are appended.
def _plugin(entry):
    return {"name": entry.get("name", ""), "weight": entry.get("weight") or 0}


def merge_plugin_set(default_set, custom_set):
    """Merge one custom PluginSet into the default one, as upstream mergePluginSet."""
    custom_set = custom_set or {}
    disabled = [{"name": entry.get("name", ""), "weight": 0}
                for entry in list(custom_set.get("disabled") or []) + list(default_set.get("disabled") or [])]
    disabled_names = set(entry["name"] for entry in disabled)
    custom = list(custom_set.get("enabled") or [])
    last_index = dict((entry.get("name", ""), index) for index, entry in enumerate(custom))
    replaced = set()
    enabled = []
    if "*" not in disabled_names:
        for entry in default_set.get("enabled") or []:
            if entry["name"] in disabled_names:
                continue
            if entry["name"] in last_index:
                replaced.add(last_index[entry["name"]])
                entry = custom[last_index[entry["name"]]]
            enabled.append(_plugin(entry))
    enabled.extend(_plugin(entry) for index, entry in enumerate(custom) if index not in replaced)
    merged = {}
    if enabled:
        merged["enabled"] = enabled
    if disabled:
        merged["disabled"] = disabled
    return merged


def default_plugins(version, gates=None):
    """getDefaultPlugins(): the multiPoint default set, and the disabled lists applyFeatureGates sets (every other
    extension point empty)."""
    plugins = dict((point, {}) for point in extension_points(version))
    plugins["multiPoint"] = {"enabled": [{"name": name, "weight": weight}
                                         for name, weight in default_multipoint(version, gates)]}
    for point, names in default_disabled(version, gates).items():
        plugins[point] = {"disabled": [{"name": name, "weight": 0} for name in names]}
    return plugins


def merge_plugins(custom, version, gates=None):
    """mergePlugins(getDefaultPlugins(), custom) for one profile."""
    plugins = default_plugins(version, gates)
    if custom is None:
        return plugins
    for point in ("multiPoint",) + tuple(extension_points(version)):
        plugins[point] = merge_plugin_set(plugins[point], custom.get(point))
    return plugins


def _enabled_names(plugins):
    return set(entry["name"] for plugin_set in plugins.values() for entry in plugin_set.get("enabled", []))


def _profile(profile, version, registered, name_default, gates=None, out_of_tree=None):
    kinds = args_kinds(version, out_of_tree)
    plugins = merge_plugins(profile.get("plugins"), version, gates)
    needed = _enabled_names(plugins)
    configs = {}
    for entry in profile.get("pluginConfig") or []:
        name = entry.get("name", "")
        args = entry.get("args")
        if name + "Args" in kinds and kinds[name + "Args"] == name and (args is None or isinstance(args, dict)):
            args = default_plugin_args(name + "Args", args, version, gates, out_of_tree)
        configs.setdefault(name, args)
    for name in sorted(needed):
        if name not in configs and kinds.get(name + "Args") == name:
            configs[name] = default_plugin_args(name + "Args", {}, version, gates, out_of_tree)
    # NewFramework captures only the args of needed plugins that are registered, sorted by name.
    plugin_config = [{"name": name, "args": configs[name]} for name in sorted(configs)
                     if name in needed and name in registered and configs[name] is not None]
    out = {"schedulerName": profile.get("schedulerName") if profile.get("schedulerName") is not None
           else name_default,
           "plugins": plugins}
    for name in ("percentageOfNodesToScore", "percentageOfPlacementsToScore"):
        if profile.get(name) is not None:
            out[name] = profile[name]
    if plugin_config:
        out["pluginConfig"] = plugin_config
    return out


def _tls_config(item):
    return _pick(item, [(name, OMITEMPTY, None, None) for name in (
        "insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")])


def _managed_resource(item):
    return _pick(item, [("name", ALWAYS, None, ""), ("ignoredByScheduler", OMITEMPTY, None, None)])


def _extender(item):
    """v1 Extender; httpTimeout is a struct, so encoding/json always writes it."""
    out = _pick(item, [("urlPrefix", ALWAYS, None, "")] + [(name, OMITEMPTY, None, None) for name in (
        "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb", "enableHTTPS")] + [
        ("tlsConfig", OMITNIL, _tls_config, None), ("nodeCacheCapable", OMITEMPTY, None, None),
        ("managedResources", OMITEMPTY, _list_of(_managed_resource), None), ("ignorable", OMITEMPTY, None, None)])
    # NewHTTPExtender (pkg/scheduler/extender.go) sets a zero timeout to DefaultExtenderTimeout, 5s, in place.
    out["httpTimeout"] = _duration(item.get("httpTimeout"), "5s")
    return out


def extender_ignored_resources(config):
    """buildExtenders: the managed resources extenders mark ignoredByScheduler, in order."""
    return [resource.get("name", "") for extender in (config or {}).get("extenders") or [] if extender
            for resource in extender.get("managedResources") or [] if resource.get("ignoredByScheduler")]


def _extra_plugin_names(extra_plugins):
    names = set()
    for plugin in extra_plugins or ():
        names.add(plugin if isinstance(plugin, str) else plugin.get("name"))
    return names


def _has_field(version, name):
    """Whether that version's KubeSchedulerConfiguration has the top-level field ``name``."""
    return name in configuration_type(version, tuple(extension_points(version))).fields


def set_defaults(config, version, extra_plugins=None, gates=None, out_of_tree=None):
    """The effective config of ``config`` (strictly decoded, v1 field names) for that version.

    ``extra_plugins`` (names, or dicts with a ``name``) are the out-of-tree plugins registered in the
    scheduler build: their pluginConfig is kept when a profile enables them, as the framework does.
    ``out_of_tree``: a scheduler-plugins release (scheduler_plugins.py), whose args kinds are defaulted too.
    """
    config = copy.deepcopy(config or {})
    registered = set(in_tree_plugins(version)) | _extra_plugin_names(extra_plugins)
    election = config.get("leaderElection") or {}
    client = config.get("clientConnection") or {}
    enable_profiling = True if config.get("enableProfiling") is None else config["enableProfiling"]
    contention = config.get("enableContentionProfiling")
    profiles = config.get("profiles") or [{}]
    out = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "parallelism": 16 if config.get("parallelism") is None else config["parallelism"],
        "leaderElection": {
            "leaderElect": True if election.get("leaderElect") is None else election["leaderElect"],
            "leaseDuration": _duration(election.get("leaseDuration"), "15s"),
            "renewDeadline": _duration(election.get("renewDeadline"), "10s"),
            "retryPeriod": _duration(election.get("retryPeriod"), "2s"),
            "resourceLock": election.get("resourceLock") or "leases",
            "resourceName": election.get("resourceName") or "kube-scheduler",
            "resourceNamespace": election.get("resourceNamespace") or "kube-system",
        },
        "clientConnection": {
            "kubeconfig": client.get("kubeconfig") or "",
            "acceptContentTypes": client.get("acceptContentTypes") or "",
            "contentType": client.get("contentType") or "application/vnd.kubernetes.protobuf",
            # float32 first: a qps that rounds to 0 (1e-46) is defaulted like an unset one.
            "qps": _number(client.get("qps") or 0) or 50,
            "burst": client.get("burst") or 100,
        },
        "enableProfiling": enable_profiling,
        # Defaulted to true only when profiling is on; a nil pointer is written as false.
        "enableContentionProfiling": bool(enable_profiling if contention is None else contention),
        "percentageOfNodesToScore": (0 if config.get("percentageOfNodesToScore") is None
                                     else config["percentageOfNodesToScore"]),
        "podInitialBackoffSeconds": (1 if config.get("podInitialBackoffSeconds") is None
                                     else config["podInitialBackoffSeconds"]),
        "podMaxBackoffSeconds": (10 if config.get("podMaxBackoffSeconds") is None
                                 else config["podMaxBackoffSeconds"]),
        # The scheduler name is defaulted only for a single profile; an unset one is written as "".
        "profiles": [_profile(profile, version, registered,
                              "default-scheduler" if len(profiles) == 1 else "", gates, out_of_tree)
                     for profile in profiles],
    }
    placements = config.get("percentageOfPlacementsToScore")
    if placements is None and _has_field(version, "percentageOfPlacementsToScore") and feature_gates.enabled(
            "TopologyAwareWorkloadScheduling", version, gates):
        placements = 0  # DefaultPercentageOfPlacementsToScore: adaptive
    if placements is not None:
        out["percentageOfPlacementsToScore"] = placements
    if config.get("extenders"):
        out["extenders"] = [_extender(extender or {}) for extender in config["extenders"]]
    ignored = extender_ignored_resources(config)
    if ignored:
        # buildExtenders replaces (not extends) NodeResourcesFit's ignoredResources in every profile.
        for profile in out["profiles"]:
            for entry in profile.get("pluginConfig") or []:
                if entry["name"] == "NodeResourcesFit" and isinstance(entry.get("args"), dict):
                    entry["args"]["ignoredResources"] = list(ignored)
    if config.get("delayCacheUntilActive"):
        out["delayCacheUntilActive"] = True
    return out
