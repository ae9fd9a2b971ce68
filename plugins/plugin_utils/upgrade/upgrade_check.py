# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Before a cluster upgrade: would this config start on each target minor, and what would be different there.

Each minor is the library's own model of that kube-scheduler (1.30-1.35 verified against the real binaries), so
the report is derived by running the same config through the current and each target minor and comparing the
effective (defaulted) configurations: no list of changes is written down here. Pure Python: no Ansible imports.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import scheduler_plugins
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.conversion import CONVERTIBLE, convert_to_v1
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import minor_number, minor_of
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import parse_text


def check_upgrade(content=None, config=None, current_version=None, target_versions=(), extra_plugins=None, convert=False,
                  scheduler_plugins_version=None):
    """The report: {"current": {...}, "targets": {minor: {...}}, "converted": {...} or None, "ok": bool}.

    Per minor: ``starts`` and every ``error`` (upstream field paths and messages) and ``warnings``; per target also
    ``changes`` against the current minor (``plugins`` that appear, disappear or change weight per profile and
    extension point, ``defaults`` whose effective value differs, ``fields`` present in one effective config only).
    With ``convert``, a v1beta2/v1beta3 file is converted to v1 first (``converted`` says what changed and what
    needs a human) and the converted text is what is checked.
    ``scheduler_plugins_version``: the scheduler is that scheduler-plugins release's, whatever the cluster's minor: the
    config is checked against it on every minor, and a minor whose API server the release is more than one minor
    older than (or newer than: Kubernetes' skew policy) gets a ``skew`` line naming the release to move to.
    """
    if scheduler_plugins_version is not None:
        return _check_scheduler_plugins(content, config, current_version, target_versions, extra_plugins,
                                        scheduler_plugins.normalise(scheduler_plugins_version))
    converted = None
    if convert:
        apiversion = _api_version(content, config)
        if apiversion in CONVERTIBLE:
            converted = convert_to_v1(content if content is not None else config)
            if converted["converted"] is not None:
                content, config = converted["converted"], None
    current, current_result = _minor_report(content, config, current_version, extra_plugins)
    targets = {}
    for target in target_versions:
        report, result = _minor_report(content, config, target, extra_plugins)
        if current_result.ok and result.ok:
            report["changes"] = _changes(current_result, result)
        targets[report["minor"]] = report
    return {"current": current, "targets": targets, "converted": converted,
            "ok": all(report["starts"] for report in targets.values())}


def _check_scheduler_plugins(content, config, current_version, target_versions, extra_plugins, release):
    if release not in scheduler_plugins.RELEASES:
        scheduler_plugins.release(release, current_version)  # raises, naming the releases it knows
    built_on = minor_of(scheduler_plugins.RELEASES[release])
    result = process(content=content, config=config, kubernetes_version=built_on, extra_plugins=extra_plugins,
                     scheduler_plugins_version=release)

    def report(version):
        minor = minor_of(version)
        entry = {"minor": minor, "starts": result.ok, "errors": result.errors, "warnings": result.warnings,
                 "profiles": result.profiles, "scheduler_plugins": release, "built_on": built_on}
        behind = minor_number(minor) - minor_number(built_on)
        if behind not in (0, 1):
            matching = [known for known, kubernetes in sorted(scheduler_plugins.RELEASES.items())
                        if minor_of(kubernetes) in (minor, "1.%d" % (minor_number(minor) - 1))]
            entry["skew"] = (
                "scheduler-plugins %s is built on Kubernetes %s: with a %s API server it is %s, and Kubernetes' "
                "skew policy lets a scheduler be at most one minor older than its API server, never newer; move to %s"
                % (release, built_on, minor, "%d minors older" % behind if behind > 0 else "newer",
                   "scheduler-plugins %s" % " or ".join(matching) if matching else
                   "the scheduler-plugins release built on %s (none is known to this collection yet)" % minor))
        return entry

    targets = dict((minor_of(target), report(target)) for target in target_versions)
    return {"current": report(current_version), "targets": targets, "converted": None,
            "ok": all(entry["starts"] and "skew" not in entry for entry in targets.values())}


def _api_version(content, config):
    if config is not None:
        return config.get("apiVersion") if isinstance(config, dict) else None
    data, _strict, error = parse_text(content) if isinstance(content, str) else (None, [], "not text")
    return data.get("apiVersion") if not error and isinstance(data, dict) else None


def _minor_report(content, config, version, extra_plugins):
    result = process(content=content, config=config, kubernetes_version=version, extra_plugins=extra_plugins)
    return {"minor": minor_of(version), "starts": result.ok, "errors": result.errors, "warnings": result.warnings,
            "profiles": result.profiles}, result


def _changes(before, after):
    return {"plugins": _plugin_changes(before.plugins or {}, after.plugins or {}),
            "defaults": _value_changes(_without_plugin_sets(before.effective), _without_plugin_sets(after.effective))}


def _plugin_changes(before, after):
    """Per profile and extension point, the enabled plugins (in order, with weights) that differ."""
    changes = []
    for profile in sorted(set(before) | set(after)):
        points_before, points_after = before.get(profile) or {}, after.get(profile) or {}
        for point in sorted(set(points_before) | set(points_after)):
            old = dict((p["name"], p.get("weight")) for p in points_before.get(point) or [])
            new = dict((p["name"], p.get("weight")) for p in points_after.get(point) or [])
            where = "%s.%s" % (profile, point)
            changes.extend(_entry(profile, point, name, "appears", new[name]) for name in new if name not in old)
            changes.extend(_entry(profile, point, name, "disappears", old[name]) for name in old if name not in new)
            changes.extend({"profile": profile, "extension_point": point, "plugin": name, "change": "weight",
                            "before": old[name], "after": new[name]}
                           for name in new if name in old and new[name] != old[name])
            if [n for n in old if n in new] != [n for n in new if n in old]:
                changes.append({"profile": profile, "extension_point": point, "change": "order",
                                "before": list(old), "after": list(new), "where": where})
    return changes


def _entry(profile, point, name, change, weight):
    entry = {"profile": profile, "extension_point": point, "plugin": name, "change": change}
    if weight is not None:
        entry["weight"] = weight
    return entry


def _without_plugin_sets(effective):
    """The effective config without profiles[].plugins, whose change the plugins view reports more precisely."""
    out = dict(effective)
    out["profiles"] = [dict((k, v) for k, v in profile.items() if k != "plugins") for profile in effective.get("profiles") or []]
    return out


def _value_changes(before, after, path=""):
    """[{path, change: changed|added|removed, before, after}] between two effective configs; profiles and plugin
    configs are matched by schedulerName and plugin name, not by position."""
    if isinstance(before, dict) and isinstance(after, dict):
        return _entry_changes(before, after, sorted(set(before) | set(after)),
                              lambda key: "%s.%s" % (path, key) if path else key)
    if isinstance(before, list) and isinstance(after, list) and _keyed(before) and _keyed(after):
        key = _keyed(before)
        old = dict((item[key], item) for item in before)
        new = dict((item[key], item) for item in after)
        return _entry_changes(old, new, list(old) + [name for name in new if name not in old],
                              lambda name: "%s[%s=%s]" % (path, key, name))
    return [] if before == after else [{"path": path, "change": "changed", "before": before, "after": after}]


def _entry_changes(before, after, names, child_path):
    """The changes of the entries ``names`` between two mappings (a dict's keys, or a keyed list's items by name):
    removed, added, or those within an entry both have; ``child_path(name)`` is the entry's path."""
    out = []
    for name in names:
        child = child_path(name)
        if name not in after:
            out.append({"path": child, "change": "removed", "before": before[name], "after": None})
        elif name not in before:
            out.append({"path": child, "change": "added", "before": None, "after": after[name]})
        else:
            out.extend(_value_changes(before[name], after[name], child))
    return out


def _keyed(items):
    """The identifying key of a list of dicts (schedulerName for profiles, name for pluginConfig), or None."""
    for key in ("schedulerName", "name"):
        if items and all(isinstance(item, dict) and key in item for item in items):
            return key
    return None
