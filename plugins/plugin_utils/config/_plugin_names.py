# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Strict plugin names: a name in a profile's plugins (enabled or disabled) or pluginConfig that no registry of the
chosen minor knows, nor extra_plugins declares.

kube-scheduler refuses an unknown name only where it enables a plugin ("... does not exist"); in ``disabled`` and
``pluginConfig`` it ignores it, so a typo (NodeResourceFit) silently leaves the profile as it was. With ``strict``
(the default of the modules and roles) such names are errors with the closest known name; ``strict: false`` keeps
kube-scheduler's tolerance. Pure Python: no Ansible imports.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import errors
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.kinds import closest

# In-tree plugins that were removed, with the plugin that does their work now.
REMOVED_PLUGINS = {
    "EBSLimits": ("1.31", "NodeVolumeLimits"),
    "GCEPDLimits": ("1.31", "NodeVolumeLimits"),
    "AzureDiskLimits": ("1.31", "NodeVolumeLimits"),
    "CinderLimits": ("1.31", "NodeVolumeLimits"),
    "SelectorSpread": ("1.27", "PodTopologySpread"),
}


def suggestion(name, known):
    """' (did you mean X?)', a removed plugin's replacement, or ''."""
    if name in REMOVED_PLUGINS:
        since, instead = REMOVED_PLUGINS[name]
        return " (removed in Kubernetes %s: use %s)" % (since, instead)
    match = closest(name, known, cutoff=0.75)
    if match is None and isinstance(name, str):
        match = dict((k.lower(), k) for k in known).get(name.lower())
    return " (did you mean %s?)" % match if match else ""


def unknown_plugins(user_profiles, registry, version):
    """One ConfigError per unknown name in the user's profiles (enabled names are kube-scheduler's own error)."""
    known = set(registry.plugins)
    problems = []
    for i, profile in enumerate(user_profiles or []):
        if not isinstance(profile, dict):
            continue
        for point, plugin_set in sorted((profile.get("plugins") or {}).items()):
            for j, plugin in enumerate((plugin_set or {}).get("disabled") or []):
                name = (plugin or {}).get("name")
                if isinstance(name, str) and name != "*" and name not in known:
                    problems.append(_error("profiles[%d].plugins.%s.disabled[%d].name" % (i, point, j), name, version,
                                           known, "so nothing is disabled"))
        for j, entry in enumerate(profile.get("pluginConfig") or []):
            name = (entry or {}).get("name")
            if isinstance(name, str) and name not in known:
                problems.append(_error("profiles[%d].pluginConfig[%d].name" % (i, j), name, version, known,
                                       "so its args are ignored"))
    return problems


def _error(field, name, version, known, effect):
    message = ("%s: %s: %s: kube-scheduler %s has no plugin of this name, %s%s; fix the name, declare an out-of-tree "
               "plugin in extra_plugins, or set strict: false to accept it as kube-scheduler does"
               % (field, errors.UNKNOWN_PLUGIN, errors.go_quote(name), version, effect, suggestion(name, known)))
    return errors.ConfigError(field, errors.UNKNOWN_PLUGIN, message)
