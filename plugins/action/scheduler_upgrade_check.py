# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Before an upgrade: check a config against target Kubernetes minors, on the controller; no host is contacted."""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.hints import with_hints
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.redaction import (
    leaks, redact_message, redact_result, redact_text, register_secrets, secret_values)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import (
    UnsupportedVersion, preview_warning, unquoted_number)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import parsed, parsed_or_none, plain
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_limits import check_structure
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.action_errors import ControllerOnly
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.upgrade.upgrade_check import check_upgrade
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.upgrade.upgrade_scan import configs_in_configmaps, scan, table

ARGUMENT_SPEC = {
    "content": {"type": "str"},
    "src": {"type": "path"},
    "config": {"type": "dict"},
    "current_version": {"type": "str", "required": True},
    "target_versions": {"type": "list", "elements": "str", "required": True},
    "extra_plugins": {"type": "list", "elements": "raw", "default": []},
    "scheduler_plugins_version": {"type": "str"},
    "convert": {"type": "bool", "default": False},
    "fail_on_error": {"type": "bool", "default": False},
    "kubeconfig": {"type": "raw"},
    "context": {"type": "str"},
    "configs": {"type": "list", "elements": "dict"},
}
# The cluster scan: a kubeconfig (every ConfigMap in every namespace) and/or configs gathered elsewhere (the masters'
# static pod configs, this inventory's instances), instead of one config.
SCAN = ("kubeconfig", "configs")


class ActionModule(ControllerOnly, ActionBase):

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        given = self._task.args.get("target_versions")
        for name, value in [("current_version", self._task.args.get("current_version"))] + [
                ("target_versions[%d]" % index, item) for index, item in enumerate(given if isinstance(given, list) else [])]:
            number = unquoted_number(value, name)
            if number:
                return dict(result, failed=True, msg=number)
        too_costly = check_structure(self._task.args.get("config"), "config")
        if too_costly:
            return dict(result, failed=True, msg=too_costly)
        _validation, args = self.validate_argument_spec(
            argument_spec=ARGUMENT_SPEC,
            mutually_exclusive=[["content", "src", "config"], ["content", "kubeconfig"], ["src", "kubeconfig"],
                                ["config", "kubeconfig"], ["content", "configs"], ["src", "configs"],
                                ["config", "configs"]],
            required_one_of=[["content", "src", "config", "kubeconfig", "configs"]])
        if any(args[name] is not None for name in SCAN):
            return self._scan(result, args)
        content, config = args["content"], plain(args["config"]) if args["config"] is not None else None
        if args["src"]:
            try:
                with open(self._find_needle("files", args["src"]), encoding="utf-8") as handle:
                    content = handle.read()
            except (OSError, UnicodeDecodeError, AnsibleActionFail) as exc:
                return dict(result, failed=True, msg="src: %s" % exc)
        try:
            report = check_upgrade(content=plain(content) if content is not None else None, config=config,
                                   current_version=args["current_version"], target_versions=args["target_versions"],
                                   extra_plugins=plain(args["extra_plugins"]), convert=args["convert"],
                                   scheduler_plugins_version=args["scheduler_plugins_version"])
        except (UnsupportedVersion, ValueError) as exc:
            return dict(result, failed=True, msg=str(exc))
        # Every secret of the input (given as config or as text) and of the converted text: the report shows the
        # config back in "converted", in the effective-config changes and in the decoder's whole-input echo.
        secrets = set(secret_values(config or {}))
        for text in (content, (report.get("converted") or {}).get("converted")):
            data = parsed_or_none(text)
            secrets.update(secret_values(data) if data is not None else ())
        secrets = sorted(secrets, key=lambda value: (-len(value), value))
        register_secrets(secrets)
        report = redact_result(report, secrets, parsed)
        if report.get("converted") and report["converted"].get("converted"):
            report["converted"]["converted"] = redact_text(report["converted"]["converted"])
        result.update(changed=False, **report)
        _warn_previews(result, [args["current_version"]] + list(args["target_versions"]))
        if args["fail_on_error"] and not report["ok"]:
            broken = ", ".join("%s (%s)" % (minor, "; ".join([e["message"] for e in target["errors"]]
                                                             + ([target["skew"]] if "skew" in target else [])))
                               for minor, target in report["targets"].items()
                               if not target["starts"] or "skew" in target)
            # kube-scheduler's lines first (above), then one hint with the fix per line that has one (hints.py).
            shown = config if config is not None else parsed_or_none(content)
            where = "config" if config is not None else ("src" if args["src"] else "content")
            hints = [redact_message(line, secrets) for minor, target in report["targets"].items() if not target["starts"]
                     for line in with_hints(target["errors"], shown, minor, where, lambda error: None) if line]
            result.update(failed=True, msg="\n".join(["the config would not start on %s" % broken] + hints))
        if leaks(result, secrets):
            result["_ansible_no_log"] = True  # the last resort: a secret the redaction missed hides the whole result
        return result

    def _scan(self, result, args):
        """Every KubeSchedulerConfiguration of the cluster's ConfigMaps and the given configs, one report and one
        table each. Read-only: a list of ConfigMaps is the only API call."""
        objects, read = [], None
        if args["kubeconfig"] is not None:
            try:
                configmaps = list_configmaps(plain(args["kubeconfig"]), args["context"])
            except ClusterUnreadable as exc:
                return dict(result, failed=True, msg=str(exc))
            read = len(configmaps)
            objects.extend(configs_in_configmaps(configmaps))
        for index, given in enumerate(plain(args["configs"] or [])):
            flags = given.get("flags")
            flags_given = isinstance(flags, list) and all(isinstance(flag, str) for flag in flags)
            config_given = isinstance(given.get("content"), str) or isinstance(given.get("config"), dict)
            if not isinstance(given.get("where"), str) or (flags is not None and not flags_given) or not (
                    config_given or flags_given):
                return dict(result, failed=True, msg="configs[%d]: needs where (text) and content (text), config "
                                                     "(a dict) or flags (a list of text)" % index)
            objects.append(dict(given, source=given.get("source") or "given"))
        secrets = set()
        for obj in objects:
            found = obj["config"] if isinstance(obj.get("config"), dict) else parsed_or_none(obj.get("content"))
            secrets.update(secret_values(found) if isinstance(found, dict) else ())
        secrets = sorted(secrets, key=lambda value: (-len(value), value))
        register_secrets(secrets)
        try:
            reports = scan(objects, args["current_version"], args["target_versions"], convert=args["convert"])
        except (UnsupportedVersion, ValueError) as exc:
            return dict(result, failed=True, msg=str(exc))
        for report in reports:
            if report.get("converted") and report["converted"].get("converted"):
                report["converted"]["converted"] = redact_text(report["converted"]["converted"])
        reports = [redact_result(report, secrets, parsed) for report in reports]
        lines = []
        for report in reports:
            lines.extend(([""] if lines else []) + table(report))
        broken = [report["where"] for report in reports if not report["ok"]]
        result.update(changed=False, objects=reports, table=lines, ok=not broken,
                      scanned={"configmaps": read, "configs": len(reports)})
        _warn_previews(result, [args["current_version"]] + list(args["target_versions"]))
        if args["fail_on_error"] and broken:
            result.update(failed=True, msg="%d of %d scheduler configs would not start on a target: %s"
                          % (len(broken), len(reports), "; ".join(broken)))
        if leaks(result, secrets):
            result["_ansible_no_log"] = True
        return result


def _warn_previews(result, versions):
    """Each preview minor and pre-release among the versions checked, once (each minor's own report carries it
    too)."""
    warnings = []
    for version in versions:
        preview = preview_warning(version)
        if preview and preview not in warnings:
            warnings.append(preview)
    if warnings:
        result["warnings"] = list(result.get("warnings") or []) + warnings


class ClusterUnreadable(Exception):
    """The ConfigMaps could not be listed (no kubernetes package, no kubeconfig, refused, unreachable)."""


def list_configmaps(kubeconfig, context):
    """Every ConfigMap of every namespace, as plain dicts, through the kubernetes client the roles use."""
    try:
        from kubernetes import client, config  # pylint: disable=import-outside-toplevel
        from kubernetes.client.exceptions import ApiException  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise ClusterUnreadable("kubeconfig: the cluster scan needs the kubernetes Python package on the controller "
                                "(pip install kubernetes)") from None
    try:
        if isinstance(kubeconfig, dict):
            api = config.new_client_from_config_dict(kubeconfig, context=context)
        else:
            api = config.new_client_from_config(config_file=os.path.expanduser(kubeconfig) if kubeconfig else None,
                                                context=context)
        answer = client.CoreV1Api(api).list_config_map_for_all_namespaces(_request_timeout=30)
    except ApiException as exc:
        raise ClusterUnreadable("kubeconfig: listing the ConfigMaps of every namespace was refused (HTTP %s %s); the "
                                "scan needs list on configmaps cluster-wide" % (exc.status, exc.reason)) from None
    except Exception as exc:  # config errors, connection errors: the client raises many types
        raise ClusterUnreadable("kubeconfig: the ConfigMaps could not be listed: %s" % str(exc).splitlines()[0]) from None
    return [api.sanitize_for_serialization(item) for item in answer.items]
