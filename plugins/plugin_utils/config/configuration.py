# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The facade of the config library: ``process()`` runs kube-scheduler's ``--config`` pipeline.

strict decode -> defaulting -> ValidateKubeSchedulerConfiguration -> building each profile's framework ->
leader-election rule of the run time. Each step runs only when the previous one passed, as in kube-scheduler.
"""

from __future__ import annotations

import base64
import copy

from ansible_collections.kubesched.schedulers.plugins.module_utils._files import sha256
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _feature_gates as feature_gates_model
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _framework_checks as framework_checks
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _plugin_names as plugin_names
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _strict_decode as strict_decode
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _validation as validation
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import scheduler_plugins
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._defaults import (
    args_kinds, capacity_scoring_gate, default_plugin_args, extender_ignored_resources, set_defaults)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._plugin_registry import (
    Plugin, args_kind_plugins, extension_points, in_tree_plugins)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.extra_plugins import check_extra_plugins
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.schema import API_VERSION, KIND
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import errors, pem
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import minor_number, minor_of, preview_warning
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import dump_yaml, parse_text


class Result(object):
    def __init__(self, version: str, given: str | None = None):
        self.version = version
        self.errors = []
        # A preview minor's facts come from a pre-release, and a pre-release (``given``: the version as the user
        # wrote it) is validated as its minor: every answer for either says so, first, refused or not.
        self.preview = preview_warning(given or version)
        self.warnings = [self.preview] if self.preview else []
        self.effective = None
        self.rendered = None
        self.checksum = None
        self.profiles = []
        self.plugin_names = []  # every plugin of the scheduler build: in-tree, scheduler-plugins', extra_plugins
        self.scheduler_plugins = None  # with a scheduler-plugins release: what its enabled plugins need (needs())
        # scheduler name -> extension point -> [{"name", "weight" (score only)}], in the order the framework runs them
        self.plugins = None

    @property
    def ok(self) -> bool:
        return not self.errors

    def fail(self, found: list) -> "Result":
        self.errors = [e.as_dict() for e in errors.for_minor(found, minor_number(self.version))]
        return self


def _registry(version: str, extra_plugins, out_of_tree=None) -> framework_checks.Registry:
    """The in-tree registry plus a scheduler-plugins release's plugins and those the user declares (a name, or a
    dict)."""
    plugins = in_tree_plugins(version)
    if out_of_tree is not None:
        plugins.update(out_of_tree.plugins)
    points = tuple(extension_points(version))
    any_point = []
    problems = check_extra_plugins(extra_plugins)
    if problems:
        raise ValueError("; ".join(problems))
    for extra in extra_plugins or ():
        if isinstance(extra, str):
            extra = {"name": extra}
        name = extra["name"]
        if name in plugins:
            # frameworkruntime.Registry.Merge refuses a name that is already registered.
            raise ValueError("extra_plugins: a plugin named %s already exists in kube-scheduler %s%s"
                             % (name, version, "" if out_of_tree is None
                                else " with scheduler-plugins " + out_of_tree.release))
        declared = extra.get("extension_points")
        if declared is None:
            any_point.append(name)
            declared = points
        bad = [p for p in declared if p not in points]
        if bad:
            raise ValueError("extra_plugins entry %s: unknown extension points %s; kube-scheduler %s has %s"
                             % (name, ", ".join(map(str, bad)), version, ", ".join(points)))
        plugins[name] = Plugin(name, declared, extra.get("args_kind"))
    return framework_checks.Registry(plugins, any_point, minor_number(version), out_of_tree)


def _features(version: str, gates=None) -> validation.Features:
    """Gates in force as the defaults show them: a defaulted field exists only when its gate is on."""
    volume = default_plugin_args("VolumeBindingArgs", {}, version, gates)
    has_dra = "DynamicResourcesArgs" in args_kind_plugins(version)
    dra = default_plugin_args("DynamicResourcesArgs", {}, version, gates) if has_dra else {}
    return validation.Features(capacity_scoring_gate(version), "shape" in volume, dra.get("filterTimeout") is not None,
                               "bindingTimeout" in dra,
                               feature_gates_model.enabled("TopologyAwareWorkloadScheduling", version, gates))


def _decode(content, config, version: str, out_of_tree=None):
    points = tuple(extension_points(version))
    kinds = args_kinds(version, out_of_tree)
    extra_types = out_of_tree.args_types if out_of_tree is not None else None
    if content is not None:
        if not isinstance(content, str):
            raise ValueError("content must be a string with the YAML or JSON of a KubeSchedulerConfiguration")
        data, strict, error = parse_text(content, minor_number(version))
        if error:
            return strict_decode.DecodeResult(errors=[errors.ConfigError(getattr(error, "field", ""), errors.DECODE, str(error))])
        return strict_decode.decode(data, version, points, strict, content, content.lstrip().startswith("{"), kinds,
                                    extra_types)
    if not isinstance(config, dict):
        raise ValueError("config must be a dict in the upstream field names of KubeSchedulerConfiguration")
    data = copy.deepcopy(config)
    data.setdefault("apiVersion", API_VERSION)
    data.setdefault("kind", KIND)
    return strict_decode.decode(data, version, points, args_kinds=kinds, extra_args_types=extra_types)


def _internal_profiles(decoded: dict, effective: dict, version: str, gates=None, out_of_tree=None):
    """The profiles as ValidateKubeSchedulerConfiguration sees them: merged plugins, and the user's
    pluginConfig in its order with defaulted args (entries defaulting appends are valid by construction)."""
    kinds = args_kinds(version, out_of_tree)
    user_profiles = decoded.get("profiles") or []
    profiles, plugin_configs = [], []
    for i, profile in enumerate(effective["profiles"]):
        user = user_profiles[i] if i < len(user_profiles) else {}
        entries, by_name = [], {}
        for j, entry in enumerate(user.get("pluginConfig") or []):
            name = entry.get("name", "")
            args = entry.get("args")
            if kinds.get(name + "Args") == name and (args is None or isinstance(args, dict)):
                args = default_plugin_args(name + "Args", args or {}, version, gates, out_of_tree)
            entries.append({"name": name, "args": args})
            by_name.setdefault(name, (j, args))
        for entry in profile.get("pluginConfig") or []:
            by_name.setdefault(entry["name"], (None, entry.get("args")))
        internal = dict(profile)
        internal["pluginConfig"] = entries
        profiles.append(internal)
        plugin_configs.append(by_name)
    return user_profiles, profiles, plugin_configs


def _enabled(plugins: dict) -> set:
    return set(p.get("name") for plugin_set in plugins.values() for p in (plugin_set or {}).get("enabled") or [])


def _warnings(user_profiles: list, profiles: list, registry: framework_checks.Registry) -> list:
    warnings = []
    for i, profile in enumerate(profiles):
        enabled = _enabled(profile.get("plugins") or {})
        for j, entry in enumerate(profile.get("pluginConfig") or []):
            name = entry.get("name", "")
            if name not in registry.plugins:
                warnings.append("profiles[%d].pluginConfig[%d]: %s is not a plugin of this kube-scheduler; "
                                "its args are ignored" % (i, j, name))
            elif name not in enabled:
                warnings.append("profiles[%d].pluginConfig[%d]: plugin %s is not enabled in profile %s; "
                                "its args are ignored" % (i, j, name, profile.get("schedulerName", "")))
        user_plugins = (user_profiles[i] if i < len(user_profiles) else {}).get("plugins") or {}
        for point, plugin_set in sorted(user_plugins.items()):
            for k, plugin in enumerate((plugin_set or {}).get("enabled") or []):
                if "weight" not in plugin:
                    continue
                path = "profiles[%d].plugins.%s.enabled[%d].weight" % (i, point, k)
                known = registry.plugins.get(plugin.get("name"))
                is_score = known is not None and "score" in known.extension_points
                if point not in ("score", "multiPoint") or (known is not None and not is_score):
                    warnings.append("%s: weight is used only for score plugins; it is ignored here" % path)
                elif plugin["weight"] == 0:
                    warnings.append("%s: a score weight of 0 is treated as 1 by kube-scheduler; disable the "
                                    "plugin to turn it off" % path)
    return warnings


def _tls_error(tls: dict, enable_https: bool):
    """client-go transport.TLSConfigFor as NewHTTPExtender's makeTransport calls it: the error text or None.

    Files (certFile, keyFile, caFile) are read by kube-scheduler on its host; they are not checked here.
    A certificate is parsed with the cryptography package (its rules are close to, not the same as, Go's x509).
    """
    ca = base64.b64decode(tls.get("caData") or "")
    has_ca = bool(ca) or bool(tls.get("caFile"))
    insecure = bool(tls.get("insecure")) or (enable_https and not has_ca)
    if has_ca and insecure:
        return "caData", "specifying a root certificates file with the insecure flag is not allowed"
    if ca:
        blocks = pem.blocks(ca)
        if not blocks:
            return "caData", "unable to load root certificates: unable to parse bytes as PEM block"
        certificates = [der for kind, headers, der in blocks if kind == "CERTIFICATE" and not headers]
        if not any(pem.parses_as_certificate(der) for der in certificates):
            if certificates:
                return "caData", "unable to load root certificates: failed to parse certificate: x509: malformed certificate"
            return "caData", "unable to load root certificates: no valid certificate authority data seen"
    cert = base64.b64decode(tls.get("certData") or "")
    key = base64.b64decode(tls.get("keyData") or "")
    if (cert or tls.get("certFile")) and (key or tls.get("keyFile")):
        if cert and not pem.blocks(cert):
            return "certData", "tls: failed to find any PEM data in certificate input"
        if key and not pem.blocks(key):
            return "keyData", "tls: failed to find any PEM data in key input"
    return None


def _build_extenders(config: dict, plugin_configs: list) -> list:
    """scheduler.New's buildExtenders, before the profiles are built: each extender's HTTP transport, then the
    resources extenders mark ignoredByScheduler replace NodeResourcesFit's ignoredResources in every profile
    (the args the plugin is constructed with). ``plugin_configs`` is updated in place."""
    for i, extender in enumerate(config.get("extenders") or []):
        extender = extender or {}
        if extender.get("tlsConfig") is None and not extender.get("enableHTTPS"):
            continue
        problem = _tls_error(extender.get("tlsConfig") or {}, bool(extender.get("enableHTTPS")))
        if problem is not None:
            return [errors.ConfigError("extenders[%d].tlsConfig.%s" % (i, problem[0]), errors.FRAMEWORK,
                                       "couldn't build extenders: " + problem[1])]
    ignored = extender_ignored_resources(config)
    if not ignored:
        return []
    for i, by_name in enumerate(plugin_configs):
        if "NodeResourcesFit" not in by_name:
            return [errors.ConfigError("profiles[%d].pluginConfig" % i, errors.FRAMEWORK,
                                       "couldn't build extenders: can't find NodeResourcesFitArgs in plugin config")]
        index, args = by_name["NodeResourcesFit"]
        if isinstance(args, dict):
            by_name["NodeResourcesFit"] = (index, dict(args, ignoredResources=list(ignored)))
    return []


def process(content=None, config=None, kubernetes_version=None, extra_plugins=None, strict=False,
            feature_gates=None, scheduler_plugins_version=None) -> Result:
    """Decode, default, validate and render a KubeSchedulerConfiguration like kube-scheduler of that version.

    ``strict``: also refuse plugin names kube-scheduler would ignore (_plugin_names.py); off, the verdict is exactly
    kube-scheduler's. ``feature_gates``: the instance's --feature-gates (its text, or {gate: bool}); defaults,
    default plugins and validation follow the gates in force, and a value kube-scheduler refuses at start is an
    error in its words. ``scheduler_plugins_version``: the config is for that kubernetes-sigs/scheduler-plugins
    release's kube-scheduler (scheduler_plugins.py), built on ``kubernetes_version``'s minor."""
    if (content is None) == (config is None):
        raise ValueError("exactly one of content or config is required")
    version = minor_of(kubernetes_version)
    out_of_tree = None
    if scheduler_plugins_version is not None:
        out_of_tree = scheduler_plugins.release(scheduler_plugins_version, version)
    registry = _registry(version, extra_plugins, out_of_tree)
    result = Result(version, kubernetes_version)
    result.plugin_names = sorted(registry.plugins)
    try:
        gates = feature_gates_model.parse(feature_gates, version)
    except feature_gates_model.FeatureGateError as exc:
        return result.fail([errors.ConfigError("--feature-gates", errors.FEATURE_GATE, str(exc))])

    decoded = _decode(content, config, version, out_of_tree)
    if decoded.errors:
        return result.fail(decoded.errors)
    user = decoded.config
    effective = set_defaults(user, version, extra_plugins=sorted(registry.plugins), gates=gates, out_of_tree=out_of_tree)

    user_profiles, profiles, plugin_configs = _internal_profiles(user, effective, version, gates, out_of_tree)
    internal = dict(effective)
    internal["profiles"] = profiles
    typed = set(args_kind_plugins(version).values())
    # scheduler-plugins' args kinds, whose fields a refusal names as the internal struct's (the schema's order).
    typed_fields = dict((name, (kind, [field for field in out_of_tree.args_types[kind].fields
                                       if field not in ("apiVersion", "kind")]))
                        for kind, name in (out_of_tree.args_kinds.items() if out_of_tree is not None else ()))
    problems = errors.dedupe(validation.validate_configuration(internal, version, _features(version, gates), typed,
                                                               typed_fields))
    views = {}
    if not problems:
        problems = _build_extenders(user, plugin_configs)
    if not problems:
        problems = framework_checks.build_profiles(effective["profiles"], user_profiles, plugin_configs, registry,
                                                   tuple(extension_points(version)), views)
    if not problems:
        problems = framework_checks.check_leader_election(effective["leaderElection"])
    if not problems and strict:
        problems = plugin_names.unknown_plugins(user_profiles, registry, version)
    if problems:
        return result.fail(problems)

    result.warnings = result.warnings + _warnings(user_profiles, profiles, registry)
    result.effective = effective
    result.rendered = dump_yaml(user)
    result.checksum = sha256(result.rendered)  # what the static pod annotation and the roles compare
    result.profiles = [profile.get("schedulerName", "") for profile in effective["profiles"]]
    result.plugins = views
    if out_of_tree is not None:
        result.scheduler_plugins = dict(out_of_tree.needs(
            plugin["name"] for view in views.values() for plugins in view.values() for plugin in plugins),
            release=out_of_tree.release)
    return result
