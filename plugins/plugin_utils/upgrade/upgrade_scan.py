# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Before a cluster upgrade: every KubeSchedulerConfiguration the cluster holds, checked against the target minors.

Third-party schedulers (storage, batch, the scheduler-plugins chart) keep their config in a ConfigMap in any
namespace, under any key; the only reliable mark is the document's ``kind``. Each one found, and each config the
caller adds (the masters' static pod configs, this inventory's instances), goes through check_upgrade
(upgrade_check.py): starts or not on each minor, every error with its field, the default plugins that change. The
table per object names where it lives (namespace/name and key, or host and path). A static pod's command line is
checked too: a flag the target's kube-scheduler does not have stops it as surely as a bad config. A kube-scheduler
pod without --config (kubeadm's own manifest) runs on the defaults of its minor, so those are checked for it.
Pure Python: no Ansible imports.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.kube_scheduler_flags import REMOVED, flags_for
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.schema import API_VERSION, KIND
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import parse_text
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.upgrade.upgrade_check import check_upgrade

# A ConfigMap value larger than this is not a scheduler config (the API server's limit is 1 MiB for the whole map).
MAX_VALUE = 256 * 1024
# What kube-scheduler runs on without --config (options.go: the defaults of the newest config API, then its flags).
DEFAULTS_ONLY = "apiVersion: %s\nkind: %s\n" % (API_VERSION, KIND)


def configs_in_configmaps(configmaps):
    """[{where, namespace, name, key, content}] for every data value that parses as a KubeSchedulerConfiguration."""
    found = []
    for configmap in configmaps:
        meta = configmap.get("metadata") or {}
        for key, value in sorted((configmap.get("data") or {}).items()):
            if not isinstance(value, str) or len(value) > MAX_VALUE or KIND not in value:
                continue
            data, _strict, error = parse_text(value)
            if error or not isinstance(data, dict) or data.get("kind") != KIND:
                continue
            found.append({"where": "configmap %s/%s key %s" % (meta.get("namespace"), meta.get("name"), key),
                          "source": "configmap", "namespace": meta.get("namespace"), "name": meta.get("name"),
                          "key": key, "content": value})
    return found


def scan(objects, current_version, target_versions, convert=False):
    """Each object ({where, content or config or flags, extra_plugins?}) with its report: ``api_version``,
    ``current``, ``targets``, ``converted`` and ``ok``, the object's other keys kept (the content itself is not
    returned). ``flags`` is a static pod's command line after the binary: each flag the minor's kube-scheduler does
    not have is an error of that minor; with neither content nor config, the minor's defaults are checked."""
    reports = []
    for obj in objects:
        content, config, flags = obj.get("content"), obj.get("config"), obj.get("flags")
        defaults_only = content is None and config is None and flags is not None
        report = check_upgrade(content=DEFAULTS_ONLY if defaults_only else content, config=config,
                               current_version=current_version, target_versions=target_versions,
                               extra_plugins=obj.get("extra_plugins") or [], convert=convert)
        if flags is not None:
            for found in [report["current"]] + list(report["targets"].values()):
                _check_flags(found, flags)
            report["ok"] = all(found["starts"] for found in report["targets"].values())
        shown = dict((key, value) for key, value in obj.items()
                     if key not in ("content", "config", "extra_plugins", "flags"))
        shown.update(api_version="no --config: the defaults of each minor" if defaults_only
                     else _api_version(content, config), **report)
        reports.append(shown)
    return reports


def flag_names(argv):
    """The names of the long flags (``--name`` or ``--name=value``) of a command line, in order."""
    return [arg[2:].split("=", 1)[0] for arg in argv if isinstance(arg, str) and arg.startswith("--") and len(arg) > 2]


def _check_flags(found, argv):
    """A flag this minor does not have: kube-scheduler exits with cobra's error before it reads any config."""
    known = flags_for(found["minor"])
    for name in dict.fromkeys(flag_names(argv)):  # each once, in order
        if name not in known:
            hint = " (%s)" % REMOVED[name] if name in REMOVED else ""
            error = {"field": "--%s" % name, "message": "unknown flag: --%s%s" % (name, hint)}
            found["errors"] = found["errors"] + [error]
            found["starts"] = False


def _api_version(content, config):
    if isinstance(config, dict):  # an instance's config in upstream field names: the collection fills apiVersion
        return config.get("apiVersion") or "%s, the collection's default" % API_VERSION
    data, _strict, error = parse_text(content) if isinstance(content, str) else (None, [], "none")
    return data.get("apiVersion") if not error and isinstance(data, dict) else None


def table(report):
    """The lines an operator reads for one object: where it is, then one row per minor and finding."""
    rows = [("MINOR", "STARTS", "FIELD", "FINDING")]
    minors = [("%s (now)" % report["current"]["minor"], report["current"])] + list(report["targets"].items())
    for minor, found in minors:
        findings = [(error.get("field") or "-", error.get("message", "")) for error in found["errors"]]
        for change in ((found.get("changes") or {}).get("plugins") or []):
            where = "%s.plugins.%s" % (change["profile"], change["extension_point"])
            if change.get("plugin"):
                findings.append((where, "default plugin %s %s" % (change["plugin"], change["change"])))
            elif change["change"] == "order":
                # 1.37 runs NodeName before NodeUnschedulable, for example: the order plugins run in changes.
                findings.append((where, "plugins run in another order: %s" % ", ".join(
                    name for name in change["after"] if name in change["before"])))
        for change in ((found.get("changes") or {}).get("defaults") or []):
            findings.append((change["path"], "default %s" % change["change"]))
        if not findings:
            findings = [("-", "no error, no change" if found["starts"] else "")]
        for index, (field, text) in enumerate(findings):
            rows.append((minor if index == 0 else "", ("yes" if found["starts"] else "NO") if index == 0 else "",
                         field, text))
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    head = "%s (%s)" % (report["where"], report.get("api_version") or "no apiVersion")
    if report.get("converted") and report["converted"].get("converted"):
        head += "; converted to v1 for the check"
    return [head] + ["  " + "  ".join(row[column].ljust(widths[column]) for column in range(3)) + "  " + row[3]
                     for row in rows]
