# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one check of the shape of extra_plugins (the scheduler_config option, an instance's field, the deployment
role's variable): the config library runs it before it builds a registry, the action plugins and the instance model
before anything else, each naming its own field. Pure Python: no Ansible imports.
"""

from __future__ import annotations

import re

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.messages import shown, type_name

_PLUGIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./-]{0,127}")
_ARGS_KIND = re.compile(r"[A-Za-z][A-Za-z0-9]{0,127}")
EXTRA_PLUGIN_KEYS = ("name", "extension_points", "args_kind")


def check_extra_plugins(value, field="extra_plugins"):
    """The shape of extra_plugins, before the config library sees it: a list of plugin names, or of dicts with
    name, extension_points (a list of names) and args_kind. Returns a list of one-line problems."""
    if value is None:
        return []
    if not isinstance(value, list):
        return ["%s: must be a list of plugin names or dicts, got %s" % (field, type_name(value))]
    problems = []
    seen = set()
    for index, entry in enumerate(value):
        where = "%s[%d]" % (field, index)
        if isinstance(entry, str):
            entry = {"name": entry}
        if not isinstance(entry, dict):
            problems.append("%s: must be a plugin name or a dict with name, extension_points and args_kind, got %s"
                            % (where, type_name(entry)))
            continue
        unknown = sorted(str(key) for key in entry if key not in EXTRA_PLUGIN_KEYS)
        if unknown:
            problems.append("%s: unknown keys %s; known keys are %s"
                            % (where, ", ".join(shown(k) for k in unknown), ", ".join(EXTRA_PLUGIN_KEYS)))
        name = entry.get("name")
        if not isinstance(name, str) or not _PLUGIN_NAME.fullmatch(name):
            problems.append("%s.name: Invalid value: %s: a plugin name starts with a letter or digit and has only "
                            "letters, digits, '_', '.', '/' and '-' ('*' means every plugin in a profile and cannot be one)"
                            % (where, shown(name)))
        elif name in seen:
            problems.append("%s.name: Duplicate value: %s" % (where, shown(name)))
        seen.add(name)
        points = entry.get("extension_points")
        if points is not None and (not isinstance(points, list) or not all(isinstance(p, str) for p in points)):
            problems.append("%s.extension_points: must be a list of extension point names such as [queueSort, "
                            "score], got %s" % (where, type_name(points)))
        kind = entry.get("args_kind")
        if kind is not None and (not isinstance(kind, str) or not _ARGS_KIND.fullmatch(kind)):
            problems.append("%s.args_kind: Invalid value: %s: must be the kind of the plugin's args, such as "
                            "CoschedulingArgs (letters and digits)" % (where, shown(kind)))
    return problems
