# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One short hint with the fix after kube-scheduler's own error line.

Upstream's line stays first and exact (operators search for it); the hint names the field as the user wrote it
(``kube_scheduler_instances[0].config.leaderElection.leaseDuration``) and says what to write instead. An error
without a known fix gets no hint. Pure Python: no Ansible imports.
"""

from __future__ import annotations

import re

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import scheduler_plugins
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._plugin_names import suggestion
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._plugin_registry import extension_points, in_tree_plugins
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.schema import List, Map, Scalar, Struct, configuration_type
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import errors
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.durations import format_duration, parse_duration
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import minor_of
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.kinds import closest

# k8s.io/client-go/tools/leaderelection: JitterFactor = 1.2; component-base defaults of kube-scheduler.
JITTER_FACTOR = 1.2
_LEADER_DEFAULTS = {"leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "2s"}
_TOKEN = re.compile(r"\[\d+\]|[^.\[\]]+")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def with_hints(config_errors, config, version, where, render, known_plugins=None):
    """Each error rendered by ``render`` (upstream's line, as the caller prefixes and redacts it), followed by
    ``hint: ...`` when there is a known fix. ``where`` is the user's name for the config (a variable or option);
    ``known_plugins``: the plugin names of the scheduler build (default: the in-tree ones of ``version``)."""
    lines = []
    for error in config_errors:
        lines.append(render(error))
        try:
            text = hint(error, config if isinstance(config, dict) else None, version, known_plugins, where)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            text = None  # a hint is a courtesy: never a reason to hide the error itself
        if text:
            field = error.get("field")
            if error.get("type") == errors.FEATURE_GATE and field:
                # A refused --feature-gates is the module's feature_gates option, not a field of the config.
                lines.append("  hint (feature_gates): %s" % text)
                continue
            lines.append("  hint (%s%s): %s" % (where, "." + field if field else "", text))
    return lines


def hint(error, config, version, known_plugins=None, where=""):
    kind, field, message = error.get("type"), error.get("field") or "", error.get("message") or ""
    if kind == errors.UNKNOWN_FIELD:
        return _unknown_field(field, message, version)
    if kind == errors.TYPE_MISMATCH:
        return _type_mismatch(field, message, _value_at(config, field), version)
    if kind == errors.LEADER_ELECTION:
        return _leader_election(message, config)
    if kind == errors.DUPLICATE and field.endswith(".schedulerName"):
        return _duplicate_profile(field, config)
    if kind == errors.NOT_REGISTERED and re.search(r'for version "kubescheduler\.config\.k8s\.io/v1beta[23]"', message):
        return ("convert the file to v1 with kubesched.schedulers.scheduler_upgrade_check and convert: true (or the "
                "kubesched.schedulers.upgrade_check playbook), then use its converted text")
    if kind == errors.INVALID and "was invalid in version" in message:
        name = _first_quoted(message)
        text = suggestion(name, in_tree_plugins(version)) if name else ""
        return "%s is not a plugin of kube-scheduler %s%s" % (name, version, text) if text else None
    if kind == errors.FEATURE_GATE and "depends on features that are disabled: [" in message:
        return _gate_dependencies(message)
    if kind == errors.FRAMEWORK and "unable to parse DefaultRequestsMultiplier: strconv.ParseFloat:" in message:
        return ('write a number as text, such as "1.5" (Go\'s float syntax: digits, an optional point and exponent; '
                'at most about 1.8e308)')
    if kind == errors.FRAMEWORK and message.endswith("does not exist"):
        name = _first_quoted(message)
        if name and scheduler_plugins.releases_with(name) and name not in (known_plugins or ()):
            return _scheduler_plugins_plugin(name, version, where)
        text = suggestion(name, known_plugins or in_tree_plugins(version)) if name else ""
        return ("%s is not a plugin of kube-scheduler %s%s; an out-of-tree plugin is declared in extra_plugins"
                % (name, version, text)) if name else None
    return None


# From the start of a name only (the look-behind): a search would read every long word to its end from each letter.
_DISABLED = re.compile(r"(?<!\w)(\w+) is enabled, but depends on features that are disabled: \[([\w ]*)\]")


def _gate_dependencies(message):
    """The gates to turn on beside the ones a --feature-gates value (AllAlpha=true, say) turned on without them."""
    needed = sorted(set(name for _gate, names in _DISABLED.findall(message) for name in names.split()))
    return ("turn on what they depend on as well (%s), or name the gates you need instead of AllAlpha or AllBeta"
            % ",".join("%s=true" % name for name in needed)) if needed else None


def _scheduler_plugins_plugin(name, version, where):
    """A plugin of kubernetes-sigs/scheduler-plugins in a config checked as kube-scheduler's own: the option (or role
    variable) that names the release, and the releases that have the plugin, the one built on ``version`` first."""
    releases = sorted(scheduler_plugins.releases_with(name), key=lambda found: minor_of(found[1]) != minor_of(version))
    listed = ", ".join("%s (built on Kubernetes %s)" % found for found in releases)
    text = "%s is a plugin of scheduler-plugins (kubernetes-sigs/scheduler-plugins), not of kube-scheduler %s: " % (
        name, version)
    if where.startswith("kube_scheduler_instances"):
        return text + ("the deployment role runs it, with kube_scheduler_deployment_scheduler_plugins_version set to a "
                       "release that has it: %s; scheduler_config checks a config for one with scheduler_plugins_version"
                       % listed)
    option = ("kube_scheduler_deployment_scheduler_plugins_version" if where.startswith("kube_scheduler_deployment")
              else "scheduler_plugins_version")
    return text + "set %s to a release that has it: %s" % (option, listed)


def _first_quoted(message):
    # Matched at the first quote only: when no string closes from there, none closes from a later quote either
    # (each of them is escaped in the first one's reading), and a search would scan to the end from every one.
    start = message.find('"')
    match = _QUOTED.match(message, start) if start >= 0 else None
    return match.group(1) if match else None


def _tokens(field):
    return _TOKEN.findall(field)


def _value_at(config, field):
    value = config
    for token in _tokens(field):
        if token.startswith("["):
            index = int(token[1:-1])
            value = value[index] if isinstance(value, list) and index < len(value) else None
        else:
            value = value.get(token) if isinstance(value, dict) else None
    return value


def _schema_at(tokens, version):
    node = configuration_type(version, tuple(extension_points(version)))
    for token in tokens:
        if isinstance(node, List) and token.startswith("["):
            node = node.item
        elif isinstance(node, Struct):
            node = node.fields.get(token)
        elif isinstance(node, Map):
            node = node.value
        else:
            return None
    return node


def _unknown_field(field, message, version):
    tokens = _tokens(field)
    name = _first_quoted(message) or (tokens[-1] if tokens else None)
    if not name:
        return None
    parent = _schema_at(tokens[:-1], version) if tokens and tokens[-1] == name else _schema_at(tokens, version)
    if not isinstance(parent, Struct):
        return None
    match = closest(name, parent.fields, cutoff=0.6)
    if match is None:
        match = dict((known.lower(), known) for known in parent.fields).get(name.lower())
    if match is None:
        return "known fields here: %s" % ", ".join(sorted(parent.fields))
    return "did you mean %s? (field names are case-sensitive)" % match


def _type_mismatch(field, message, value, version):
    node = _schema_at(_tokens(field), version)
    if isinstance(node, Scalar) and node.kind == "duration" and isinstance(value, (int, float)) \
            and not isinstance(value, bool):
        return "write a duration with its unit, such as %ss (Go durations: 500ms, 15s, 1m30s)" % (
            int(value) if float(value).is_integer() else value)
    if "of type bool" in message and isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        return ("use a boolean, %s without quotes: a survey or -e key=value gives text (convert it with | bool)"
                % ("true" if value.strip().lower() in ("true", "yes") else "false"))
    if re.search(r"of type (u?int\d*|float\d*)$", message) and isinstance(value, str) \
            and re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", value.strip()):
        return "write the number %s without quotes" % value.strip()
    return None


def _leader_election(message, config):
    leader = dict(_LEADER_DEFAULTS)
    given = (config or {}).get("leaderElection") if isinstance(config, dict) else None
    for key in _LEADER_DEFAULTS:
        if isinstance(given, dict) and isinstance(given.get(key), str):
            leader[key] = given[key]
    values = dict((key, parse_duration(text)) for key, text in leader.items())
    if "renewDeadline must be greater than retryPeriod*JitterFactor" in message:
        limit = int(values["retryPeriod"] * JITTER_FACTOR)
        return ("renewDeadline is %s but retryPeriod x JitterFactor is %s x %s = %s: make renewDeadline longer than %s, "
                "or retryPeriod shorter than %s" % (
                    format_duration(values["renewDeadline"]), JITTER_FACTOR, format_duration(values["retryPeriod"]),
                    format_duration(limit), format_duration(limit),
                    format_duration(int(values["renewDeadline"] / JITTER_FACTOR))))
    if "leaseDuration must be greater than renewDeadline" in message:
        return ("leaseDuration is %s and renewDeadline %s: the lease must outlast the renewal deadline (defaults: "
                "15s, 10s, 2s)" % (format_duration(values["leaseDuration"]), format_duration(values["renewDeadline"])))
    return None


def _duplicate_profile(field, config):
    match = re.fullmatch(r"profiles\[(\d+)\]\.schedulerName", field)
    profiles = (config or {}).get("profiles") if isinstance(config, dict) else None
    if not match or not isinstance(profiles, list):
        return None
    index = int(match.group(1))
    name = _value_at(config, field)
    if name is None:
        name = "default-scheduler"  # a profile without a name is defaulted to it
    for other, profile in enumerate(profiles[:index]):
        other_name = profile.get("schedulerName") if isinstance(profile, dict) else None
        if (other_name if other_name is not None else "default-scheduler") == name:
            return ("profiles[%d] and profiles[%d] are both named %s: give each profile a schedulerName of its own"
                    % (other, index, errors.go_quote(name)))
    return None
