# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What kube-scheduler checks only when it builds the profiles, and the leader-election rule of its run time.

Upstream: pkg/scheduler/framework/runtime/framework.go (NewFramework, updatePluginList,
expandMultiPointPlugins, getScoreWeights), pkg/scheduler/profile/profile.go (NewMap, cfgValidator),
pkg/scheduler/scheduler.go ("initializing profiles: %v"), the plugin constructors (only NodeResourcesFit's
check is not already done by validation.go, whose map uses the key "NodeResourcesFitArgs"), and client-go
tools/leaderelection/leaderelection.go (NewLeaderElector, JitterFactor 1.2).
Profiles are built in order and the first failing one stops start-up, so at most one error is returned.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._plugin_registry import (
    EXTENSION_POINTS, FRAMEWORK_ORDER, in_tree_plugins, interface_name)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._plugin_registry import extension_points as extension_points_of
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._validation_pluginargs import (
    fit_args_panic, validate_node_resources_fit_args)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import errors
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.durations import parse_duration

MAX_NODE_SCORE = 100
MAX_TOTAL_SCORE = 2 ** 63 - 1
JITTER_FACTOR = 1.2


def _int64(value: int) -> int:
    """Go int64 arithmetic wraps around."""
    return ((value + 2 ** 63) % 2 ** 64) - 2 ** 63


def _names(plugin_set) -> list:
    return [p.get("name", "") for p in (plugin_set or {}).get("enabled") or []]


class _ProfileError(Exception):
    def __init__(self, field: str, message: str, wrap: bool = True):
        Exception.__init__(self, message)
        self.field = field
        self.message = message
        self.wrap = wrap


class Registry(object):
    """Plugin name -> Plugin (plugin_registry.Plugin); ``any_point`` names plugins declared without points."""

    def __init__(self, plugins: dict, any_point=(), minor=None, out_of_tree=None):
        self.plugins = plugins
        self.any_point = frozenset(any_point)
        self.minor = minor  # the Kubernetes minor number, where a message differs between minors
        self.out_of_tree = out_of_tree  # a scheduler-plugins release (scheduler_plugins.py): its constructors' checks

    def implements(self, name: str, point: str, explicit: bool) -> bool:
        if name in self.any_point:
            return explicit
        return point in self.plugins[name].extension_points


class _Framework(object):
    def __init__(self, index: int, profile: dict, user_profile: dict, plugin_config: dict, registry: Registry,
                 points: tuple):
        self.index = index
        self.profile = profile
        self.user_plugins = (user_profile or {}).get("plugins") or {}
        self.plugin_config = plugin_config
        self.registry = registry
        self.points = points
        self.lists = dict((point, []) for point, _t in points)
        self.weights = {}

    def enabled_path(self, point: str, name: str, effective_index: int) -> str:
        """Point at the user's own entry when there is one, else at the merged list."""
        user_names = _names(self.user_plugins.get(point))
        at = user_names.index(name) if name in user_names else effective_index
        return "profiles[%d].plugins.%s.enabled[%d]" % (self.index, point, at)

    def build(self) -> list:
        plugins = self.profile.get("plugins") or {}
        needed = set()
        for point in list(dict(self.points)) + ["multiPoint"]:
            needed.update(_names(plugins.get(point)))
        plugins_map = set(name for name in needed if name in self.registry.plugins)
        self.construct(plugins_map)
        for point, go_type in self.points:
            self.update_plugin_list(point, go_type, plugins.get(point) or {}, plugins_map)
        multi_point = _names(plugins.get("multiPoint"))
        if multi_point:
            self.expand_multi_point(plugins, multi_point, plugins_map)
        name = self.profile.get("schedulerName", "")
        queue_sort = self.lists["queueSort"]
        if len(queue_sort) != 1:
            raise _ProfileError("profiles[%d].plugins.queueSort" % self.index,
                                "only one queue sort plugin required for profile with scheduler name %s, but got %d"
                                % (errors.go_quote(name), len(queue_sort)))
        if not self.lists["bind"]:
            raise _ProfileError("profiles[%d].plugins.bind" % self.index,
                                "at least one bind plugin is needed for profile with scheduler name %s"
                                % errors.go_quote(name))
        self.score_weights(plugins)
        return queue_sort

    def construct(self, plugins_map: set) -> None:
        """Plugin constructors; NodeResourcesFit validates its args with a nil path."""
        if "NodeResourcesFit" in plugins_map and "NodeResourcesFit" in self.plugin_config:
            config_index, args = self.plugin_config["NodeResourcesFit"]
            errs = validate_node_resources_fit_args("", args or {}, self.registry.minor)
            if not errs:
                panic = fit_args_panic("", args or {})
                errs = [panic] if panic is not None else []
            if errs:
                base = "profiles[%d].pluginConfig[%d].args" % (self.index, config_index) if config_index is not None \
                    else "profiles[%d].pluginConfig" % self.index
                raise _ProfileError(base + "." + errs[0].field, 'initializing plugin "NodeResourcesFit": '
                                    + errors.go_aggregate([e.message for e in errs]))
        out_of_tree = self.registry.out_of_tree
        for name in sorted(plugins_map) if out_of_tree is not None else ():
            # NewFramework walks a Go map: of two out-of-tree plugins that both refuse their args, either may be named.
            config_index, args = self.plugin_config.get(name, (None, None))
            errs = out_of_tree.construct(name, args)
            if errs:
                base = "profiles[%d].pluginConfig[%d].args" % (self.index, config_index) if config_index is not None \
                    else "profiles[%d].pluginConfig" % self.index
                raise _ProfileError(base + "." + errs[0][0], 'initializing plugin "%s": %s'
                                    % (name, errors.go_aggregate([message for _field, message in errs])))

    def update_plugin_list(self, point: str, go_type: str, plugin_set: dict, plugins_map: set) -> None:
        seen = set()
        for i, name in enumerate(_names(plugin_set)):
            if name not in plugins_map:
                raise _ProfileError(self.enabled_path(point, name, i), "%s %s does not exist" % (
                    go_type, errors.go_quote(name)))
            if not self.registry.implements(name, point, True):
                raise _ProfileError(self.enabled_path(point, name, i), "plugin %s does not extend %s plugin" % (
                    errors.go_quote(name), go_type))
            if name in seen:
                raise _ProfileError(self.enabled_path(point, name, i), "plugin %s already registered as %s" % (
                    errors.go_quote(name), errors.go_quote(go_type)))
            seen.add(name)
            self.lists[point].append(name)

    def expand_multi_point(self, plugins: dict, multi_point: list, plugins_map: set) -> None:
        for point, go_type in self.points:
            plugin_set = plugins.get(point) or {}
            enabled = _names(plugin_set)
            disabled = set(p.get("name", "") for p in plugin_set.get("disabled") or [])
            if "*" in disabled:
                continue
            multi_enabled, overrides = [], []
            for i, name in enumerate(multi_point):
                if name not in plugins_map:
                    raise _ProfileError(self.enabled_path("multiPoint", name, i), "%s %s does not exist" % (
                        go_type, errors.go_quote(name)))
                if not self.registry.implements(name, point, False) or name in disabled:
                    continue
                if name in enabled:
                    if name not in overrides:
                        overrides.append(name)
                    continue
                if name in multi_enabled:
                    raise _ProfileError(self.enabled_path("multiPoint", name, i),
                                        "plugin %s already registered as %s" % (errors.go_quote(name), errors.go_quote(go_type)))
                multi_enabled.append(name)
            rest = [name for name in enabled if name not in overrides]
            self.lists[point] = [n for n in enabled if n in overrides] + multi_enabled + rest

    def score_weights(self, plugins: dict) -> None:
        total = 0
        weights = {}
        blame = None  # a negative weight makes a later plugin overflow: point at the negative one
        entries = [("score", i, p) for i, p in enumerate((plugins.get("score") or {}).get("enabled") or [])]
        entries += [("multiPoint", i, p) for i, p in enumerate((plugins.get("multiPoint") or {}).get("enabled") or [])]
        for point, i, plugin in entries:
            name = plugin.get("name", "")
            if not self.registry.implements(name, "score", point == "score") or name in weights:
                continue
            weight = plugin.get("weight", 0) or 1
            weights[name] = weight
            self.weights[name] = weight
            path = self.enabled_path(point, name, i) + ".weight"
            if weight < 0 and blame is None:
                blame = path
            if weight * MAX_NODE_SCORE > _int64(MAX_TOTAL_SCORE - total):
                raise _ProfileError(blame or path, "total score of Score plugins could overflow")
            total = _int64(total + weight * MAX_NODE_SCORE)


def _view(framework: _Framework, extension_points: tuple) -> dict:
    """Extension point -> the enabled plugins in the order the framework runs them (score plugins with weight)."""
    view = {}
    for point in extension_points:
        names = framework.lists.get(point) or []
        if names:
            view[point] = [{"name": name, "weight": framework.weights[name]} if point == "score" else {"name": name}
                           for name in names]
    return view


def _points(extension_points: tuple) -> tuple:
    return tuple((point, interface_name(point)) for point in FRAMEWORK_ORDER
                 if point in EXTENSION_POINTS or point in extension_points)


def plugins_view(effective: dict, version: str, registry=None) -> dict:
    """Scheduler name -> extension point -> ordered enabled plugins, after the multiPoint/enabled/disabled merge.

    ``effective`` is an effective config (ours or the one ``kube-scheduler --write-config-to`` writes); the
    merge is NewFramework's (updatePluginList, expandMultiPointPlugins, getScoreWeights). ``registry`` defaults
    to the in-tree plugins of ``version``. Raises ValueError when a profile could not be built.
    """
    points = tuple(extension_points_of(version))
    if registry is None:
        registry = Registry(in_tree_plugins(version))
    view = {}
    for i, profile in enumerate(effective.get("profiles") or []):
        framework = _Framework(i, profile, {}, {}, registry, _points(points))
        try:
            framework.build()
        except _ProfileError as exc:
            raise ValueError(exc.message)
        view[profile.get("schedulerName", "")] = _view(framework, points)
    return view


def _queue_sort_args(profile: dict, name: str):
    for plugin_config in profile.get("pluginConfig") or []:
        if plugin_config.get("name") == name:
            return plugin_config.get("args")
    return None


def build_profiles(profiles: list, user_profiles: list, plugin_configs: list, registry: Registry,
                   extension_points: tuple, views=None) -> list:
    """profile.NewMap: build every profile in order; [] or the one error kube-scheduler stops with.

    ``plugin_configs[i]``: plugin name -> (index in the user's pluginConfig or None, defaulted args).
    ``views``: a dict that receives each built profile's plugins view (see plugins_view).
    """
    points = _points(extension_points)
    first_queue_sort = None
    first_args = None
    for i, profile in enumerate(profiles):
        name = profile.get("schedulerName", "")
        user_profile = user_profiles[i] if i < len(user_profiles) else {}
        framework = _Framework(i, profile, user_profile, plugin_configs[i], registry, points)
        try:
            queue_sort = framework.build()[0]
            if views is not None:
                views[name] = _view(framework, extension_points)
            args = (plugin_configs[i].get(queue_sort) or (None, None))[1]
            if first_queue_sort is None:
                first_queue_sort, first_args = queue_sort, args
            elif queue_sort != first_queue_sort:
                raise _ProfileError("profiles[%d].plugins.queueSort" % i,
                                    "different queue sort plugins for profile %s: %s, first: %s" % (
                                        errors.go_quote(name), errors.go_quote(queue_sort), errors.go_quote(first_queue_sort)),
                                    wrap=False)
            elif args != first_args:
                raise _ProfileError("profiles[%d].pluginConfig" % i,
                                    "different queue sort plugin args for profile %s" % errors.go_quote(name), wrap=False)
        except _ProfileError as exc:
            message = exc.message
            if exc.wrap:
                message = "creating profile for scheduler name %s: %s" % (name, message)
            return [errors.ConfigError(exc.field, errors.FRAMEWORK, "initializing profiles: " + message)]
    return []


def check_leader_election(leader_election: dict) -> list:
    """leaderelection.NewLeaderElector, reached only once kube-scheduler runs with leaderElect: true."""
    if not leader_election.get("leaderElect"):
        return []
    lease = parse_duration(leader_election.get("leaseDuration", "0s"))
    renew = parse_duration(leader_election.get("renewDeadline", "0s"))
    retry = parse_duration(leader_election.get("retryPeriod", "0s"))
    problems = (
        (lease <= renew, "leaderElection.leaseDuration", "leaseDuration must be greater than renewDeadline"),
        (renew <= int(JITTER_FACTOR * float(retry)), "leaderElection.renewDeadline",
         "renewDeadline must be greater than retryPeriod*JitterFactor"),
        (lease < 1, "leaderElection.leaseDuration", "leaseDuration must be greater than zero"),
        (renew < 1, "leaderElection.renewDeadline", "renewDeadline must be greater than zero"),
        (retry < 1, "leaderElection.retryPeriod", "retryPeriod must be greater than zero"),
    )
    for failed, field, detail in problems:
        if failed:
            return [errors.ConfigError(field, errors.LEADER_ELECTION, "couldn't create leader elector: " + detail)]
    return []
