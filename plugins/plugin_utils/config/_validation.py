# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ValidateKubeSchedulerConfiguration of pkg/scheduler/apis/config/validation/validation.go.

Input is the config kube-scheduler validates: defaulted, with each profile's merged ``plugins`` and its
``pluginConfig`` in the user's order (defaulted args; the entries defaulting appends are valid by construction).
Errors come back in the order upstream appends them; the only Go map iteration (the extension points checked
for removed plugins) is reported in the Plugins struct order.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _validation_pluginargs as validation_pluginargs
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._plugin_registry import args_kind_plugins, validation_stages
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.schema import API_VERSION
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import errors
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.durations import parse_duration
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import minor_number, since

# invalidPluginsByVersion: empty for v1 in 1.30; the in-tree volume-limit plugins are listed for v1 from 1.31 on.
# kube-scheduler v1.31.8 refuses them ("was invalid in version") in enabled lists and pluginConfig, although its
# registry still has them (a multiPoint entry, which validation does not look at, is accepted).
_REMOVED_FROM_131 = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")


class Features(object):
    """The feature gates validation depends on, as the version's defaults reveal them."""

    def __init__(self, capacity_scoring_gate: str, capacity_scoring: bool, dra_filter_timeout: bool, dra_binding: bool,
                 topology_aware_scheduling: bool = False):
        # VolumeCapacityPriority was renamed StorageCapacityScoring in 1.33 (validation_pluginargs.go).
        self.capacity_scoring_gate = capacity_scoring_gate
        self.capacity_scoring = capacity_scoring
        self.dra_filter_timeout = dra_filter_timeout
        self.dra_binding = dra_binding
        # TopologyAwareWorkloadScheduling: percentageOfPlacementsToScore (1.38) may be set only while it is on.
        self.topology_aware_scheduling = topology_aware_scheduling


def removed_plugins(version: str) -> tuple:
    return _REMOVED_FROM_131 if since("volume_limit_plugins_invalid", version) else ()


def _removed_detail() -> str:
    # invalidPluginsByVersion is keyed by the version alone: kube-scheduler v1.31.8-v1.35.4 say 'in version "v1"'.
    return "was invalid in version %s (KubeSchedulerConfiguration is version %s)" % (
        errors.go_quote(API_VERSION.rsplit("/", 1)[-1]), errors.go_quote(API_VERSION))


def _go_plugin_set(plugin_set) -> errors.GoLiteral:
    """%#v of an internal config.PluginSet."""
    def plugins(items):
        if not items:
            return "[]config.Plugin(nil)"
        return "[]config.Plugin{%s}" % ", ".join(
            "config.Plugin{Name:%s, Weight:%d}" % (errors.go_quote(p.get("name", "")), p.get("weight", 0)) for p in items)

    def plain(items):
        return [{"Name": p.get("name", ""), "Weight": p.get("weight", 0)} for p in items] if items else None
    plugin_set = plugin_set or {}
    return errors.GoLiteral("config.PluginSet{Enabled:%s, Disabled:%s}" % (
        plugins(plugin_set.get("enabled")), plugins(plugin_set.get("disabled"))),
        errors.go_json({"Enabled": plain(plugin_set.get("enabled")), "Disabled": plain(plugin_set.get("disabled"))}))


def _go_args(args) -> errors.GoLiteral:
    """Args of a kind that is not registered stay a *runtime.Unknown: printed with its String() up to 1.33; from 1.34
    on as json.Marshal prints it, Unknown.MarshalJSON's Raw (the args as JSON, their keys sorted by the YAML-to-JSON
    step), compacted."""
    import json
    if args is None:
        return errors.GoLiteral("null")
    raw = json.dumps(args, separators=(",", ":"), sort_keys=True)
    return errors.GoLiteral("&Unknown{TypeMeta:TypeMeta{APIVersion:,Kind:,},Raw:%s,ContentEncoding:,"
                            "ContentType:application/json,}" % raw, errors.go_json(json.loads(raw)))


def _go_typed_args(args, kind: str, fields: list) -> errors.GoLiteral:
    """Args of a registered kind of scheduler-plugins, as ErrorBody prints the internal object they were converted to
    (apis/config/types.go: plain fields without json tags, TypeMeta emptied by the conversion): %#v up to 1.33, and
    from 1.34 on json.Marshal, which names the Go fields (permitWaitingTimeSeconds is PermitWaitingTimeSeconds) in
    the struct's order. Measured on scheduler-plugins 0.34.7; the %#v form is read from apimachinery 0.33's
    ErrorBody (no 0.33.5 binary measured it), for the field types of the kinds that can be a queue sort's."""
    if not isinstance(args, dict):
        return _go_args(args)
    go_names = [(field, field[:1].upper() + field[1:]) for field in fields]
    values = dict((go, args.get(field)) for field, go in go_names)
    modern = errors.go_json(values)

    def go_syntax(value):
        if isinstance(value, bool) or not isinstance(value, (int, list)) or (
                isinstance(value, list) and not all(isinstance(item, str) for item in value)):
            return None
        if isinstance(value, int):
            return str(value)
        return "[]string{%s}" % ", ".join(errors.go_quote(item) for item in value)
    shown = [(go, go_syntax(values[go])) for _field, go in go_names]
    if any(text is None for _go, text in shown):
        return errors.GoLiteral(str(_go_args(args)), modern)
    return errors.GoLiteral("config.%s{TypeMeta:v1.TypeMeta{Kind:\"\", APIVersion:\"\"}, %s}" % (
        kind, ", ".join("%s:%s" % item for item in shown)), modern)


def _same_plugin_set(a, b) -> bool:
    """apiequality.Semantic.DeepEqual on PluginSets: nil and empty lists are equal, weight nil is 0."""
    def norm(plugin_set):
        plugin_set = plugin_set or {}
        return tuple(tuple((p.get("name", ""), p.get("weight", 0) or 0) for p in plugin_set.get(key) or [])
                     for key in ("enabled", "disabled"))
    return norm(a) == norm(b)


def _validate_percentage(path: str, value):
    if value is not None and (value < 0 or value > 100):
        return [errors.invalid(path, value, "not in valid range [0-100]")]
    return []


def _validate_placements(path: str, value, features: Features):
    """validatePercentageOfPlacementsToScore: a set value needs TopologyAwareWorkloadScheduling, then [0-100]."""
    if value is not None and not features.topology_aware_scheduling:
        return [errors.forbidden(path, "percentageOfPlacementsToScore requires TopologyAwareWorkloadScheduling feature gate "
                                 "to be enabled")]
    return _validate_percentage(path, value)


def _validate_leader_election(le: dict, minor: int) -> list:
    """component-base config/validation ValidateLeaderElectionConfiguration."""
    if not le.get("leaderElect"):
        return []
    errs = []
    durations = {}
    for name in ("leaseDuration", "renewDeadline", "retryPeriod"):
        durations[name] = parse_duration(le.get(name, "0s"))
        if durations[name] <= 0:
            errs.append(errors.invalid("leaderElection." + name, validation_pluginargs.go_duration(le.get(name, "0s")),
                                       "must be greater than zero"))
    if durations["leaseDuration"] <= durations["renewDeadline"]:
        # v1.34.7 on: "must be greater than `RenewDeadline`" (the value is still the renew deadline).
        errs.append(errors.invalid("leaderElection.leaseDuration", validation_pluginargs.go_duration(le.get("renewDeadline", "0s")),
                                   "must be greater than `RenewDeadline`" if since("lease_duration_message_backquoted", minor)
                                   else "LeaseDuration must be greater than RenewDeadline"))
    for name, detail in (("resourceLock", "resourceLock is required"),
                         ("resourceNamespace", "resourceNamespace is required"),
                         ("resourceName", "resourceName is required")):
        if not le.get(name):
            errs.append(errors.invalid("leaderElection." + name, le.get(name, ""), detail))
    return errs


def _args_validators(version: str, features: Features) -> dict:
    """validatePluginConfig's map m (note upstream's "NodeResourcesFitArgs" key: Fit args are only checked by
    the plugin constructor, see framework_checks)."""
    validators = {
        "DefaultPreemption": validation_pluginargs.validate_default_preemption_args,
        "InterPodAffinity": validation_pluginargs.validate_inter_pod_affinity_args,
        "NodeAffinity": validation_pluginargs.validate_node_affinity_args,
        "NodeResourcesBalancedAllocation": validation_pluginargs.validate_balanced_allocation_args,
        "NodeResourcesFitArgs": validation_pluginargs.validate_node_resources_fit_args,
        "PodTopologySpread": validation_pluginargs.validate_pod_topology_spread_args,
        "VolumeBinding": lambda path, args: validation_pluginargs.validate_volume_binding_args(
            path, args, features.capacity_scoring_gate, features.capacity_scoring, minor_number(version)),
    }
    if "DynamicResourcesArgs" in args_kind_plugins(version):
        validators["DynamicResources"] = lambda path, args: validation_pluginargs.validate_dynamic_resources_args(
            path, args, features.dra_filter_timeout, features.dra_binding)
    return validators


def _validate_profile(path: str, profile: dict, version: str, validators: dict, typed_args: set,
                      features: Features) -> list:
    errs = []
    if not profile.get("schedulerName"):
        errs.append(errors.required(path + ".schedulerName"))
    errs.extend(_validate_percentage(path + ".percentageOfNodesToScore", profile.get("percentageOfNodesToScore")))
    errs.extend(_validate_placements(path + ".percentageOfPlacementsToScore",
                                     profile.get("percentageOfPlacementsToScore"), features))
    removed = removed_plugins(version)
    plugins = profile.get("plugins")
    if plugins is not None:
        for stage in validation_stages(version):
            for i, plugin in enumerate((plugins.get(stage) or {}).get("enabled") or []):
                if plugin.get("name") in removed:
                    errs.append(errors.invalid("%s.plugins.%s.enabled[%d]" % (path, stage, i), plugin.get("name"),
                                               _removed_detail()))
    seen = set()
    for i, plugin_config in enumerate(profile.get("pluginConfig") or []):
        config_path = "%s.pluginConfig[%d]" % (path, i)
        name = plugin_config.get("name", "")
        args = plugin_config.get("args")
        if name in seen:
            errs.append(errors.duplicate(config_path, name))
        seen.add(name)
        if name in removed:
            errs.append(errors.invalid(config_path, name, _removed_detail()))
        elif name in validators:
            if name not in typed_args:
                # reflect.TypeOf(args) differs from the validator's args type.
                errs.append(errors.invalid(config_path + ".args", _go_args(args), "has to match plugin args"))
            else:
                errs.extend(validators[name](config_path + ".args", args or {}))
    return errs


def _validate_common_queue_sort(profiles: list, version: str, typed_fields=None) -> list:
    """``typed_fields``: {plugin: (args kind, its fields in the internal struct's order)} of the scheduler-plugins
    plugins whose args are a registered kind (a queue sort's args are printed as that object)."""
    typed_fields = typed_fields or {}
    errs = []
    first = profiles[0]
    canon = (first.get("plugins") or {}).get("queueSort") or {}
    enabled = canon.get("enabled") or []
    queue_sort_name = enabled[0].get("name", "") if enabled else ""
    if len(enabled) > 1:
        errs.append(errors.invalid("profiles[0].plugins.queueSort.Enabled", len(enabled),
                                   "only one queue sort plugin can be enabled"))
    queue_sort_args = None
    for plugin_config in first.get("pluginConfig") or []:
        if queue_sort_name and plugin_config.get("name") == queue_sort_name:
            queue_sort_args = plugin_config.get("args")
    for i in range(1, len(profiles)):
        curr = (profiles[i].get("plugins") or {}).get("queueSort") or {}
        if not _same_plugin_set(canon, curr):
            # "queueSort must be ..." up to v1.33.3, "must be ..." from v1.34.7 on (as the binaries print it).
            errs.append(errors.invalid("profiles[%d].plugins.queueSort" % i, _go_plugin_set(curr),
                                       ("" if since("queue_sort_message_unprefixed", version) else "queueSort ")
                                       + "must be the same for all profiles"))
        for plugin_config in profiles[i].get("pluginConfig") or []:
            if plugin_config.get("name", "") == queue_sort_name and plugin_config.get("args") != queue_sort_args:
                value = (_go_typed_args(plugin_config.get("args"), *typed_fields[queue_sort_name])
                         if queue_sort_name in typed_fields else _go_args(plugin_config.get("args")))
                errs.append(errors.invalid("profiles[%d].pluginConfig.args" % i, value,
                                           "queueSort must be the same for all profiles"))
    return errs


def _is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName."""
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    return not validation_pluginargs.is_qualified_name("requests." + name)


def _validate_extenders(extenders: list) -> list:
    errs = []
    binders = 0
    seen = set()
    for i, extender in enumerate(extenders or []):
        path = "extenders[%d]" % i
        if extender.get("prioritizeVerb") and extender.get("weight", 0) <= 0:
            errs.append(errors.invalid(path + ".weight", extender.get("weight", 0),
                                       "must have a positive weight applied to it"))
        if extender.get("bindVerb"):
            binders += 1
        for j, resource in enumerate(extender.get("managedResources") or []):
            name_path = "%s.managedResources[%d].name" % (path, j)
            name = resource.get("name", "")
            name_errs = [errors.invalid(name_path, name, msg) for msg in validation_pluginargs.is_qualified_name(name)]
            if not name_errs and not _is_extended_resource_name(name):
                name_errs.append(errors.invalid(name_path, name, "is an invalid extended resource name"))
            errs.extend(name_errs)
            if name in seen:
                errs.append(errors.invalid(name_path, name, "duplicate extender managed resource name"))
            seen.add(name)
    if binders > 1:
        errs.append(errors.invalid("extenders", "found %d extenders implementing bind" % binders,
                                   "only one extender can implement bind"))
    return errs


def validate_configuration(config: dict, version: str, features: Features, typed_args: set,
                           typed_fields=None) -> list:
    """Every error ValidateKubeSchedulerConfiguration reports, in its order.

    ``typed_args``: the plugin names whose args decode to their registered ``<Plugin>Args`` type; ``typed_fields``:
    scheduler-plugins' such plugins, {plugin: (args kind, fields in the internal struct's order)}.
    """
    errs = []
    burst = (config.get("clientConnection") or {}).get("burst", 0)
    if burst < 0:
        errs.append(errors.invalid("clientConnection.burst", burst, "must be non-negative"))
    leader_election = config.get("leaderElection") or {}
    errs.extend(_validate_leader_election(leader_election, minor_number(version)))
    if leader_election.get("leaderElect") and leader_election.get("resourceLock") != "leases":
        errs.append(errors.invalid("leaderElection.resourceLock", leader_election.get("resourceLock", ""),
                                   'resourceLock value must be "leases"'))
    parallelism = config.get("parallelism", 0)
    if parallelism <= 0:
        errs.append(errors.invalid("parallelism", parallelism, "should be an integer value greater than zero"))
    profiles = config.get("profiles") or []
    if not profiles:
        errs.append(errors.required("profiles"))
    else:
        validators = _args_validators(version, features)
        existing = {}
        for i, profile in enumerate(profiles):
            path = "profiles[%d]" % i
            errs.extend(_validate_profile(path, profile, version, validators, typed_args, features))
            name = profile.get("schedulerName", "")
            if name in existing:
                # field.Duplicate with a *field.Path value, which prints through its String().
                errs.append(errors.duplicate(path + ".schedulerName",
                                             errors.GoLiteral("profiles[%d].schedulerName" % existing[name], "{}")))
            existing[name] = i
        errs.extend(_validate_common_queue_sort(profiles, version, typed_fields))
    errs.extend(_validate_percentage("percentageOfNodesToScore", config.get("percentageOfNodesToScore")))
    errs.extend(_validate_placements("percentageOfPlacementsToScore", config.get("percentageOfPlacementsToScore"),
                                     features))
    initial = config.get("podInitialBackoffSeconds", 0)
    if initial <= 0:
        errs.append(errors.invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    maximum = config.get("podMaxBackoffSeconds", 0)
    if maximum < initial:
        errs.append(errors.invalid("podMaxBackoffSeconds", maximum,
                                   "must be greater than or equal to PodInitialBackoffSeconds"))
    errs.extend(_validate_extenders(config.get("extenders")))
    return errs
