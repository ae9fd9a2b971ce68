# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A v1beta2 or v1beta3 KubeSchedulerConfiguration as v1, where the conversion is mechanical.

v1beta2 was removed in Kubernetes 1.28, v1beta3 in 1.29: a file in either stops every kube-scheduler this
collection supports. What changes mechanically is the apiVersion (also inside pluginConfig args). What needs a
human: plugins v1beta3 or later removed without a replacement (pkg/scheduler/apis/config/v1beta3 dropped NodeLabel,
ServiceAffinity and NodePreferAvoidPods; SelectorSpread left the registry later), and the default score weights
v1beta3 changed (InterPodAffinity 1 -> 2, NodeAffinity 1 -> 2, TaintToleration 1 -> 3), which only matter to a
profile that relies on the defaults. Pure Python: no Ansible imports.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.schema import API_VERSION, GROUP
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import dump_yaml, parse_text, plain

CONVERTIBLE = (GROUP + "/v1beta2", GROUP + "/v1beta3")
# Plugins a v1beta2 file may name that no supported kube-scheduler has, with what replaces them.
REMOVED_PLUGINS = {
    "NodeLabel": "removed in v1beta3; express node preferences with NodeAffinity (nodeAffinity in the pods or "
                 "NodeAffinityArgs.addedAffinity)",
    "ServiceAffinity": "removed in v1beta3; use InterPodAffinity (podAffinity in the pods)",
    "NodePreferAvoidPods": "removed in v1beta3 with the node annotation it read; use taints and tolerations",
    "SelectorSpread": "removed from kube-scheduler; PodTopologySpread with its default constraints replaces it",
}
# pkg/scheduler/apis/config/v1beta3/default_plugins.go changed these default score weights from v1beta2's 1.
V1BETA3_WEIGHTS = {"InterPodAffinity": 2, "NodeAffinity": 2, "TaintToleration": 3}
_POINTS_WITH_PLUGINS = ("multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
                        "score", "reserve", "permit", "preBind", "bind", "postBind")


def convert_to_v1(source):
    """{"converted": v1 text or None, "from": apiVersion, "changes": [...], "needs_human": [...]}.

    ``source`` is the YAML/JSON text or a dict. Each change and each item for a human names its field.
    """
    if isinstance(source, str):
        data, _strict, error = parse_text(source)
        if error:
            return {"converted": None, "from": None, "changes": [], "needs_human": ["(file): %s" % error]}
    else:
        data = plain(source)
    if not isinstance(data, dict):
        return {"converted": None, "from": None, "changes": [], "needs_human": ["(file): not a KubeSchedulerConfiguration"]}
    version = data.get("apiVersion")
    if version == API_VERSION:
        return {"converted": dump_yaml(data), "from": version, "changes": [], "needs_human": []}
    if version not in CONVERTIBLE:
        return {"converted": None, "from": version, "changes": [], "needs_human": [
            "apiVersion: %r cannot be converted; supported: %s" % (version, ", ".join(CONVERTIBLE))]}
    changes = ["apiVersion: %s -> %s" % (version, API_VERSION)]
    needs_human = []
    data["apiVersion"] = API_VERSION
    # Only the shapes a conversion can touch are converted; any other value (profiles: 5) is carried over as it is,
    # and checking the converted text reports it in kube-scheduler's words.
    profiles = data.get("profiles")
    for index, profile in enumerate(profiles if isinstance(profiles, list) else []):
        if isinstance(profile, dict):
            _convert_profile(profile, "profiles[%d]" % index, version, changes, needs_human)
    return {"converted": dump_yaml(data), "from": version, "changes": changes, "needs_human": needs_human}


def _convert_profile(profile, where, version, changes, needs_human):
    plugins = profile.get("plugins") if isinstance(profile.get("plugins"), dict) else {}
    for point in _POINTS_WITH_PLUGINS:
        point_set = plugins.get(point) if isinstance(plugins.get(point), dict) else {}
        for list_name in ("enabled", "disabled"):
            entries = point_set.get(list_name) if isinstance(point_set.get(list_name), list) else []
            for index, entry in enumerate(entries):
                name = entry.get("name") if isinstance(entry, dict) else None
                field = "%s.plugins.%s.%s[%d]" % (where, point, list_name, index)
                if name in REMOVED_PLUGINS and list_name == "disabled":
                    changes.append("%s: dropped %s from the disabled list (%s)" % (field, name, REMOVED_PLUGINS[name]))
                elif name in REMOVED_PLUGINS:
                    needs_human.append("%s.name: %s was %s" % (field, name, REMOVED_PLUGINS[name]))
            if list_name == "disabled":
                point_set[list_name] = [e for e in entries if not (isinstance(e, dict) and e.get("name") in REMOVED_PLUGINS)]
    configs = profile.get("pluginConfig") if isinstance(profile.get("pluginConfig"), list) else []
    for index, plugin_config in enumerate(configs):
        if not isinstance(plugin_config, dict):
            continue
        field = "%s.pluginConfig[%d]" % (where, index)
        if plugin_config.get("name") in REMOVED_PLUGINS:
            needs_human.append("%s.name: %s was %s; its args have no v1 home" % (
                field, plugin_config["name"], REMOVED_PLUGINS[plugin_config["name"]]))
        args = plugin_config.get("args")
        if isinstance(args, dict) and args.get("apiVersion") in CONVERTIBLE:
            changes.append("%s.args.apiVersion: %s -> %s" % (field, args["apiVersion"], API_VERSION))
            args["apiVersion"] = API_VERSION
    if version.endswith("v1beta2"):
        relied = sorted(name for name in V1BETA3_WEIGHTS if not _weight_given(plugins, name))
        if relied:
            changes.append("%s.plugins.score: default weights since v1beta3: %s (v1beta2 gave them 1); set a "
                           "weight in plugins.score.enabled to keep the old balance" % (
                               where, ", ".join("%s %d" % (name, V1BETA3_WEIGHTS[name]) for name in relied)))


def _weight_given(plugins, name):
    for point in ("score", "multiPoint"):
        point_set = plugins.get(point) if isinstance(plugins.get(point), dict) else {}
        enabled = point_set.get("enabled")
        for entry in enabled if isinstance(enabled, list) else []:
            if isinstance(entry, dict) and entry.get("name") == name and entry.get("weight"):
                return True
    return False
