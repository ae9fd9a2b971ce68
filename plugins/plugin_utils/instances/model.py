# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scheduler instance model shared by the systemd and static_pod roles.

An instance is one kube-scheduler process per master: its own name, port, config file and lease. This module
normalises the user's list, validates every config with the same pipeline as the scheduler_config module, derives
what the roles need (argv, config path, health URL, lease) and checks instances against each other and against
the same variable on the other masters, so a conflict fails before any host is touched.
Pure Python: no Ansible imports.
"""

from __future__ import annotations

import ipaddress
import json

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.extra_plugins import check_extra_plugins
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.hints import with_hints
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.schema import API_VERSION, KIND
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import (
    OTHER_COMPONENTS, PREFLIGHT_NAME_PREFIX, STANDBY_NAME_PREFIX)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.errors import FEATURE_GATE
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.redaction import redact_message, secret_values
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import (
    UnsupportedVersion, full_version, health_paths, normalise, preview_warning)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import parse_text, parsed, plain
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_limits import check_structure
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs import kinds
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances import serving
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances._instance_spec import INSTANCE_SPEC, MUTUALLY_EXCLUSIVE
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render import command_line

VAR = "kube_scheduler_instances"
# Each instance is a kube-scheduler process with a port, a config, a lease and a unit or manifest of its own, checked
# against every other one: a few per master is the norm. The cap keeps a mistaken list (a loop, a survey pasted
# twice) from planning thousands of processes, and the plan's cost bounded (10000 instances took 23 s to refuse).
MAX_INSTANCES = 100
INSTANCE_LIST = kinds.list_of_at_most(MAX_INSTANCES, "instances on one master (each is a kube-scheduler process "
                                      "with its own port, config and lease); give one instance "
                                      "several profiles instead")
DEFAULT_LEASE = ("kube-system", "kube-scheduler")
DEFAULT_IMAGE_REPOSITORY = "registry.k8s.io/kube-scheduler"

# The spec gives each field its type and default; these checks add what a type cannot say (see the _check_* below).
_SEMANTIC = {"name": "name", "state": "state", "default_scheduler": "bool", "secure_port": "port", "bind_address": "bind",
             "kubeconfig": "abspath", "image": "image", "strict": "bool", "serving_cert": "bool"}
FIELDS = dict((field, (_SEMANTIC.get(field, spec["type"]), spec.get("default"))) for field, spec in INSTANCE_SPEC.items())


class InstanceError(Exception):
    """One problem, already worded for the operator with the path of the field it is about."""


# The other masters' instances are resolved only to be compared with this host's, never run: their node address is
# not known here, and the bind address is the one thing replicas may differ in (_one_lease_one_config), so a
# documentation address (RFC 5737) stands in for it.
_PEER_NODE = {"address": "192.0.2.1", "addresses": [], "names": []}


def resolve(instances, kubernetes_version, config_dir, peers=None, node=None, cert_dir=serving.CERT_DIR,
            profiling=None):
    """Resolve this host's instances and check them, also against ``peers`` (host -> raw instance list).

    ``node``: this master's {"address": the IP for bind_address node, "addresses": [...], "names": [...]} (the SANs
    of serving certificates); ``cert_dir``: where serving certificates go on the master; ``profiling``: the
    enableProfiling of every config that does not set it (the roles' kube_scheduler_profiling), None to leave it to
    kube-scheduler's default (on).
    Returns (resolved, errors, warnings): resolved is a list of dicts in input order (see the action plugin's
    RETURN docs); errors and warnings are lists of one-line strings. Nothing is resolved when errors is not empty.
    """
    try:
        config_dir = kinds.path(config_dir, "config_dir")
        cert_dir = kinds.path(cert_dir, "serving_cert_dir")
        kubernetes_version = normalise(kubernetes_version)
    except ValueError as exc:
        return [], [str(exc)], []
    where = {"node": node or {}, "cert_dir": cert_dir, "profiling": profiling}
    resolved, errors, warnings = _resolve_list(instances, kubernetes_version, config_dir, where)
    preview = preview_warning(kubernetes_version)
    if preview:
        warnings.insert(0, preview)
    if errors:
        return [], errors, warnings
    errors.extend(_check_together(resolved, VAR))
    others = {}
    for host in sorted(peers or {}):
        peer_resolved, peer_errors, _unused = _resolve_list(peers[host], kubernetes_version, config_dir,
                                                            {"node": _PEER_NODE, "cert_dir": cert_dir,
                                                             "profiling": profiling})
        errors.extend("host %s: %s" % (host, error) for error in peer_errors)
        others[host] = peer_resolved
    if not errors:
        errors.extend(_check_across_hosts(resolved, others))
    for instance in resolved:
        instance.pop("_effective", None)
    return (resolved if not errors else []), errors, warnings


def needs_node_facts(instances):
    """Whether the master's network facts are needed to resolve ``instances`` (the user's raw list): an instance bound
    to the node's address, or with a serving certificate (its SANs are the node's addresses and names), by the same
    rules resolve() follows. Anything malformed answers False here and is refused by resolve(), naming the field."""
    if not isinstance(instances, list):
        return False
    return any(isinstance(raw, dict) and _needs_node(raw) for raw in instances)


def _needs_node(raw):
    address = raw.get("bind_address", FIELDS["bind_address"][1])
    if address == serving.NODE:
        return True
    try:
        return serving.wants_certificate(raw.get("serving_cert"), str(address))
    except ValueError:
        return False


def _resolve_list(instances, kubernetes_version, config_dir, where):
    if not isinstance(instances, list):
        return [], ["%s: must be a list of instances, got %s" % (VAR, kinds.type_name(instances))], []
    try:
        INSTANCE_LIST(instances, VAR)
    except kinds.InputError as exc:
        return [], [str(exc)], []
    resolved, errors, warnings = [], [], []
    for index, raw in enumerate(instances):
        path = "%s[%d]" % (VAR, index)
        try:
            instance, instance_warnings = _resolve_one(raw, path, kubernetes_version, config_dir, where)
        except InstanceError as exc:
            errors.extend(str(exc).splitlines())
            continue
        resolved.append(instance)
        warnings.extend(instance_warnings)
    return resolved, errors, warnings


def _resolve_one(raw, path, kubernetes_version, config_dir, where):
    fields = _normalise_fields(raw, path)
    name = fields["name"]
    try:
        address = serving.bind_address(fields["bind_address"], where["node"].get("address"), path + ".bind_address")
    except serving.NodeUnknown as exc:
        raise InstanceError(str(exc))
    config_path = "%s/%s.yaml" % (config_dir.rstrip("/"), name)
    instance = {
        "name": name,
        "state": fields["state"],
        "default_scheduler": fields["default_scheduler"],
        "secure_port": fields["secure_port"],
        "bind_address": address,
        "kubeconfig": fields["kubeconfig"],
        "kubeconfig_content_given": fields["kubeconfig_content"] is not None,
        # The resolved instance carries everything the roles need; the action hides its result when this is set.
        "kubeconfig_content": fields["kubeconfig_content"],
        "config_path": config_path,
        "extra_plugins": fields["extra_plugins"],
        "image": fields["image"] or _default_image(kubernetes_version),
        # An adopted kubeadm manifest keeps kubeadm's image unless the instance names one.
        "image_given": fields["image"] is not None,
    }
    instance["serving_cert"] = (serving.certificate(name, address, where["node"], where["cert_dir"])
                                if fields["state"] == "present" and serving.wants_certificate(fields["serving_cert"], address)
                                else None)
    instance["health_path"] = health_paths(kubernetes_version)["liveness"]
    instance["health_url"] = "https://%s:%d%s" % (
        _probe_host(instance["bind_address"]), instance["secure_port"], instance["health_path"])
    if instance["state"] == "absent":
        # Removing an instance must not depend on its config or flags still being valid.
        instance.update(config_rendered=None, config_has_secrets=False, config_checksum=None, scheduler_names=[], leader_elect=False,
                        lease=None, flags=[])
        # A certificate it may have had goes with it: nothing else uses it, and its key should not outlive it.
        instance["serving_cert_files"] = sorted(serving.files(name, where["cert_dir"]).values())
        return instance, []
    result, secrets = _validated_config(fields, path, kubernetes_version, where.get("profiling"))
    leader = result.effective.get("leaderElection", {})
    _check_printable(result.profiles, leader, path)
    leader_elect = bool(leader.get("leaderElect"))
    instance.update({
        "config_rendered": result.rendered,
        # The roles write config_rendered as it is; the action plugin hides its whole result when this is true.
        "config_has_secrets": bool(secrets),
        "config_checksum": result.checksum,
        "scheduler_names": list(result.profiles),
        # For one lease = one config across masters; removed before the instances are returned.
        "_effective": result.effective,
        "leader_elect": leader_elect,
        "lease": ({"namespace": leader.get("resourceNamespace"), "name": leader.get("resourceName")}
                  if leader_elect else None),
    })
    instance["flags"], problems = command_line.argv(instance, fields["extra_flags"], path, kubernetes_version)
    if problems:
        raise InstanceError("\n".join(problems))
    if instance["lease"] and _lease_key(instance) == DEFAULT_LEASE and not instance["default_scheduler"]:
        raise InstanceError(
            "%s.config.leaderElection.resourceName: instance %s would take the default scheduler's lease "
            "kube-system/kube-scheduler and compete with it (only one of them would ever schedule): give it a "
            "lease of its own (leaderElection.resourceName), or set default_scheduler: true if it is the "
            "cluster's default scheduler" % (path, name))
    # A preview minor's warning is the version's, not the instance's: resolve() gives it once.
    warnings = ["%s.config: %s" % (path, warning) for warning in result.warnings if warning != result.preview]
    if instance["serving_cert"] is None and not ipaddress.ip_address(address).is_loopback:
        warnings.append("%s.serving_cert: false: instance %s serves /metrics on %s with a self-signed certificate no "
                        "client can verify; leave serving_cert unset to get one signed by the cluster CA"
                        % (path, name, address))
    return instance, warnings


def _check_printable(scheduler_names, leader, path):
    """kube-scheduler only wants these non-empty and unique; but pods select a scheduler by spec.schedulerName, which
    the API server accepts only as a DNS-1123 subdomain, and the lease is an API object with a name and a
    namespace. Names are also printed in logs, events and by the roles, where a newline would forge lines."""
    problems = []
    for index, name in enumerate(scheduler_names):
        try:
            kinds.scheduler_name(name, "%s.config.profiles[%d].schedulerName" % (path, index))
        except kinds.InputError as exc:
            problems.append(str(exc))
    checks = {"resourceName": kinds.dns_subdomain, "resourceNamespace": kinds.dns_label}
    for key in ("resourceName", "resourceNamespace", "resourceLock"):
        value = leader.get(key)
        where = "%s.config.leaderElection.%s" % (path, key)
        try:
            if key in checks and leader.get("leaderElect"):
                checks[key](value, where)
            elif isinstance(value, str) and kinds.CONTROL.search(value):
                kinds.text(value, where)
        except kinds.InputError as exc:
            problems.append(str(exc))
    if problems:
        raise InstanceError("\n".join(problems))


def _normalise_fields(raw, path):
    if not isinstance(raw, dict):
        raise InstanceError("%s: must be a dict with at least a name, got %s" % (path, kinds.type_name(raw)))
    problems = ["%s.%s: unknown field; known fields are %s" % (path, kinds.field_key(key), ", ".join(sorted(FIELDS)))
                for key in sorted(set(raw) - set(FIELDS), key=str)]
    fields = {}
    for key, (kind, default) in FIELDS.items():
        value = raw.get(key)
        if value is None and key == "name":
            problems.append("%s.name: Required value: every instance needs a name" % path)
        if value is None:
            fields[key] = plain(default)
            continue
        try:
            fields[key] = _CHECKS[kind](value, "%s.%s" % (path, key))
        except kinds.InputError as exc:
            problems.append(str(exc))
        except ValueError as exc:
            problems.append("%s.%s: %s" % (path, key, exc))
    for group in MUTUALLY_EXCLUSIVE:
        if all(raw.get(field) is not None for field in group):
            problems.append("%s: %s are mutually exclusive: give one of them" % (path, " and ".join(group)))
    if "extra_plugins" in fields:
        problems.extend(check_extra_plugins(fields["extra_plugins"], path + ".extra_plugins"))
    problems.extend(_duplicate_flags(fields.get("extra_flags"), path))
    if problems:
        raise InstanceError("\n".join(problems))
    return fields


def _duplicate_flags(extra_flags, path):
    """Two keys of extra_flags that name one flag (``feature-gates`` and ``--feature-gates``): kube-scheduler keeps
    the last of the two on its command line, while the config would be checked with one of them."""
    spellings = {}
    for flag in extra_flags if isinstance(extra_flags, dict) else ():
        if isinstance(flag, str) and flag.lstrip("-"):
            spellings.setdefault(flag.lstrip("-"), []).append(flag)
    return ["%s.extra_flags: %s name one flag, --%s: keep one of them (kube-scheduler would get both on its command "
            "line and run with the last)"
            % (path, " and ".join(kinds.field_key(flag) for flag in sorted(keys)), name)
            for name, keys in sorted(spellings.items()) if len(keys) > 1]


def _validated_config(fields, path, kubernetes_version, profiling=None):
    """Validate the config like kube-scheduler, with clientConnection.kubeconfig set to the instance's kubeconfig and
    enableProfiling set to ``profiling`` unless the config sets it (None: kube-scheduler's default)."""
    if fields["config_content"] is not None:
        config_field = path + ".config_content"
        config = _parsed_content(fields, config_field, kubernetes_version)
    else:
        config = plain(fields["config"] or {})
        config_field = path + ".config"
    if config.get("clientConnection") is None:
        config["clientConnection"] = {}
    connection = config["clientConnection"]
    if isinstance(connection, dict):  # anything else is a type error the pipeline reports in upstream words
        given = connection.get("kubeconfig")
        if given and given != fields["kubeconfig"]:
            raise InstanceError(
                "%s.clientConnection.kubeconfig: %s differs from the instance's kubeconfig %s: kube-scheduler reads "
                "only the config's value when --config is set; remove it from the config or make them equal"
                % (config_field, kinds.shown(given), kinds.shown(fields["kubeconfig"])))
        connection["kubeconfig"] = fields["kubeconfig"]
    if profiling is not None and "enableProfiling" not in config:
        # The profiling handlers (/debug/pprof) follow the config alone: with --config, --profiling is ignored.
        config["enableProfiling"] = profiling
    config.setdefault("apiVersion", API_VERSION)
    config.setdefault("kind", KIND)
    # The instance's --feature-gates decide defaults, default plugins and validation, as in kube-scheduler.
    gates = _feature_gates(fields["extra_flags"])
    result = _process(config_field, config=config, kubernetes_version=kubernetes_version,
                      extra_plugins=fields["extra_plugins"], strict=fields["strict"], feature_gates=gates)
    refused = [error for error in result.errors if error.get("type") == FEATURE_GATE]
    if refused:
        # The hint names the instance's key, not kube-scheduler's flag.
        refused = [dict(error, field=None) for error in refused]
        raise InstanceError("\n".join(with_hints(refused, None, result.version, path + ".extra_flags.feature-gates",
                                                 lambda error: "%s.extra_flags.feature-gates: %s" % (path, error["message"]))))
    secrets = secret_values(config)
    _raise_config_errors(result, config_field, secrets, config)
    return result, secrets


def _feature_gates(extra_flags):
    """The value of --feature-gates among the extra flags (given with or without its dashes), or None."""
    for flag, value in (extra_flags or {}).items():
        if isinstance(flag, str) and flag.lstrip("-") == "feature-gates":
            return value
    return None


def _parsed_content(fields, config_field, kubernetes_version):
    """The text parsed once (within the cost limits of yaml_limits). Strict decoding (duplicate keys, unknown
    fields) must see the text itself, so a text with any problem, and JSON text (whose numbers decode differently
    from YAML's), go through the whole pipeline as text for kube-scheduler's own words."""
    text = fields["config_content"]
    is_json = text.lstrip().startswith("{")
    data, strict, error = (None, [], None) if is_json else parse_text(text)
    # config_content is a whole file: unlike config, it gets no apiVersion or kind by default.
    if is_json or error or strict or not isinstance(data, dict) or not data.get("apiVersion") or not data.get("kind"):
        first = _process(config_field, content=text, kubernetes_version=kubernetes_version,
                         extra_plugins=fields["extra_plugins"], strict=fields["strict"])
        _raise_config_errors(first, config_field, (), data if isinstance(data, dict) else None)
        data = json.loads(text) if is_json else data
    if not isinstance(data, dict):
        raise InstanceError("%s: must be the YAML or JSON text of a KubeSchedulerConfiguration" % config_field)
    return data


def _process(config_field, **kwargs):
    try:
        return process(**kwargs)
    except ValueError as exc:
        raise InstanceError("%s: %s" % (config_field, exc)) from None


def _raise_config_errors(result, field_prefix, secrets=(), config=None):
    """Every problem of the config, secret-bearing values (extender key and certificate data) redacted, also in
    the decoder's "Object 'Kind' is missing in '...'" that echoes the whole input; each upstream line is followed
    by a hint with the fix when there is one (hints.py)."""
    if result.errors:
        lines = with_hints(result.errors, config, result.version, field_prefix,
                           lambda error: redact_message(_prefixed(field_prefix, error), secrets, parsed))
        raise InstanceError("\n".join(lines))


def _prefixed(prefix, error):
    """Put the instance's path in front of an upstream error, which may or may not start with its field."""
    field, message = error.get("field"), error["message"]
    if field and message.startswith(field + ":"):
        return "%s.%s" % (prefix, message)
    if field:
        return "%s.%s: %s" % (prefix, field, message)
    return "%s: %s" % (prefix, message)


def _check_together(instances, var):
    """Names, ports, schedulerNames and leases must not collide between the instances of one host."""
    errors = []
    seen = {"name": {}, "port": {}, "scheduler": {}, "lease": {}}
    defaults = [i["name"] for i in instances if i["default_scheduler"] and i["state"] == "present"]
    if len(defaults) > 1:
        errors.append("%s: only one instance can be the default scheduler, got %s" % (var, ", ".join(defaults)))
    config_paths = {i["config_path"]: i["name"] for i in instances}
    kubeconfigs = {}
    for index, instance in enumerate(instances):
        path = "%s[%d]" % (var, index)
        errors.extend(_claim(seen["name"], instance["name"], instance["name"], path + ".name", "name"))
        if instance["state"] != "present":
            continue
        owner = config_paths.get(instance["kubeconfig"])
        if owner is not None:
            errors.append("%s.kubeconfig: Invalid value: %r: it is the config file of instance %s; writing one would "
                          "overwrite the other (and the credentials): give the kubeconfig a path of its own"
                          % (path, instance["kubeconfig"], owner))
        if instance["kubeconfig_content_given"]:
            first = kubeconfigs.setdefault(instance["kubeconfig"], (instance["name"], instance["kubeconfig_content"]))
            if first[1] != instance["kubeconfig_content"]:
                errors.append("%s.kubeconfig_content: instance %s writes another kubeconfig to %s than instance %s "
                              "(the last would silently win): one path holds one content. Give kubeconfig_content "
                              "once (one variable that both instances use: the file is written once and stays while "
                              "either uses it), or give each content a kubeconfig path of its own"
                              % (path, instance["name"], instance["kubeconfig"], first[0]))
        errors.extend(_claim(seen["port"], instance["secure_port"], instance["name"], path + ".secure_port",
                             "port"))
        for scheduler in instance["scheduler_names"]:
            errors.extend(_claim(seen["scheduler"], scheduler, instance["name"], path + ".config.profiles",
                                 "schedulerName"))
        if instance["lease"]:
            errors.extend(_claim(seen["lease"], _lease_key(instance), instance["name"],
                                 path + ".config.leaderElection", "lease"))
    return errors


def _claim(owners, key, owner, field, what):
    if key in owners:
        shown = "/".join(key) if isinstance(key, tuple) else key
        return ["%s: %s %s is already used by instance %s" % (field, what, shown, owners[key])]
    owners[key] = owner
    return []


def _check_across_hosts(mine, others):
    """The same instance name on several masters must be the same scheduler (replicas sharing one lease);
    different instances must not share a lease or a schedulerName anywhere."""
    errors = []
    by_name = {i["name"]: i for i in mine if i["state"] == "present"}
    for host, instances in others.items():
        for other in instances:
            if other["state"] != "present":
                continue
            same = by_name.get(other["name"])
            if same is not None:
                for key in ("scheduler_names", "lease"):
                    if same[key] != other[key]:
                        errors.append("%s: instance %s has %s %s here but %s on host %s; replicas of one "
                                      "instance must agree" % (VAR, other["name"], key, same[key], other[key], host))
                if same["lease"] and same["lease"] == other["lease"]:
                    errors.extend(_one_lease_one_config(same, other, host))
                continue
            for instance in by_name.values():
                shared = sorted(set(instance["scheduler_names"]) & set(other["scheduler_names"]))
                if shared:
                    errors.append("%s: schedulerName %s of instance %s is also served by instance %s on host %s"
                                  % (VAR, ", ".join(shared), instance["name"], other["name"], host))
                if instance["lease"] and instance["lease"] == other["lease"]:
                    errors.append("%s: lease %s of instance %s is also used by instance %s on host %s"
                                  % (VAR, "/".join(_lease_key(instance)), instance["name"], other["name"], host))
    return errors


def _one_lease_one_config(mine, other, host):
    """Replicas behind one lease take turns: whichever master holds it schedules, so they must run the same
    effective config and flags, or which profile scores pods depends on which master won the lease."""
    difference = first_difference(mine["_effective"], other["_effective"], "config")
    if difference is None:
        mine_flags = [flag for flag in mine["flags"] if not flag.startswith("--bind-address=")]
        other_flags = [flag for flag in other["flags"] if not flag.startswith("--bind-address=")]
        if mine_flags != other_flags:
            index = next(i for i, pair in enumerate(zip(mine_flags + [None], other_flags + [None])) if pair[0] != pair[1])
            difference = ("flags", (mine_flags + ["(none)"])[index], (other_flags + ["(none)"])[index])
    if difference is None:
        return []
    where, here, there = difference
    secrets = sorted(set(secret_values(mine["_effective"])) | set(secret_values(other["_effective"])),
                     key=lambda value: (-len(value), value))
    return [redact_message(
        "%s: instance %s shares the lease %s with host %s but its effective %s differs: %s here, %s on %s; "
        "replicas behind one lease must run one config (set it once, in group_vars)"
        % (VAR, mine["name"], "/".join(_lease_key(mine)), host, where, kinds.shown(here, 60), kinds.shown(there, 60), host),
        secrets)]


_MISSING = object()


def first_difference(left, right, path):
    """(field path, left value, right value) of the first difference in document order, or None."""
    if isinstance(left, dict) and isinstance(right, dict):
        for key in list(left) + [key for key in right if key not in left]:
            found = first_difference(left.get(key, _MISSING), right.get(key, _MISSING), "%s.%s" % (path, key))
            if found:
                return found
        return None
    if isinstance(left, list) and isinstance(right, list):
        for index in range(max(len(left), len(right))):
            found = first_difference(left[index] if index < len(left) else _MISSING,
                                     right[index] if index < len(right) else _MISSING, "%s[%d]" % (path, index))
            if found:
                return found
        return None
    if left == right and type(left) is type(right):
        return None
    return (path, "(not set)" if left is _MISSING else left, "(not set)" if right is _MISSING else right)


def _lease_key(instance):
    return (instance["lease"]["namespace"], instance["lease"]["name"])


def _probe_host(bind_address):
    address = ipaddress.ip_address(bind_address)
    if address.is_unspecified:
        return "127.0.0.1" if address.version == 4 else "[::1]"
    return str(address) if address.version == 4 else "[%s]" % address


def _default_image(kubernetes_version):
    try:
        return "%s:v%s" % (DEFAULT_IMAGE_REPOSITORY, full_version(kubernetes_version))
    except UnsupportedVersion:
        return None  # a minor alone names no image; roles that need one require a full version


def _check_name(value, _name=None):
    if not kinds.is_dns_label(value):
        raise ValueError("Invalid value: %r: must be a DNS-1123 label (lower-case letters, digits and '-', at "
                         "most 63 characters): it names the unit, the manifest and the config file" % (value,))
    if value.startswith(STANDBY_NAME_PREFIX):
        raise ValueError("Invalid value: %r: names that start with %r are reserved for the temporary standbys of make "
                         "before break, which the rollout starts and removes on its own; give the instance another "
                         "name" % (value, STANDBY_NAME_PREFIX))
    if value.startswith(PREFLIGHT_NAME_PREFIX):
        raise ValueError("Invalid value: %r: names that start with %r are reserved for the preflight's own static pod, "
                         "which the plan starts and removes on its own; give the instance another name"
                         % (value, PREFLIGHT_NAME_PREFIX))
    if value in OTHER_COMPONENTS:
        raise ValueError("Invalid value: %r: the name of another component of the master (its unit %s.service, its "
                         "static pod %s.yaml): an instance of that name would replace it, or stop and remove it with "
                         "state: absent; give the instance another name" % (value, value, value))
    return value


def _check_state(value, _name=None):
    if value not in ("present", "absent"):
        raise ValueError("Unsupported value: %r: supported values: \"absent\", \"present\"" % (value,))
    return value


def _check_bind(value, _name=None):
    if value == serving.NODE:
        return value
    try:
        return str(ipaddress.ip_address(str(value)))
    except ValueError:
        raise ValueError("Invalid value: %r: must be an IP address such as 127.0.0.1, or \"node\" for the node's "
                         "address" % (value,))


def check_path(value, field):
    """An absolute, normalised path with no control characters (kinds.path), or ValueError naming ``field``."""
    return kinds.path(value, field)


def _check_type(expected, name):
    def check(value, _field=None):
        if not isinstance(value, expected):
            raise ValueError("must be %s, got %s" % (name, kinds.type_name(value)))
        too_costly = check_structure(value, None)
        if too_costly:
            raise ValueError(too_costly)
        return plain(value)
    return check


def _check_port(value, name):
    if isinstance(value, int) and not isinstance(value, bool) and value == 0:
        raise kinds.InputError("%s: Invalid value: 0: must be between 1 and 65535 (0 would turn off the secure "
                               "port, and with it the health endpoints)" % name)
    return kinds.port(value, name)


_CHECKS = {
    "name": _check_name,
    "state": _check_state,
    "bool": kinds.boolean,
    "port": _check_port,
    "bind": _check_bind,
    "abspath": kinds.path,
    "image": kinds.image,
    "str": _check_type(str, "a string"),
    "dict": _check_type(dict, "a dict"),
    "list": _check_type(list, "a list"),
}
