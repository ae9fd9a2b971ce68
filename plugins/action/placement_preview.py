# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a scheduler change does, before it runs: the real kube-scheduler of the minor places a read-only snapshot of
the cluster under the current and the proposed configuration, in a throwaway control plane on the controller."""

from __future__ import annotations

import os
import tempfile

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import scheduler_plugins
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.hints import with_hints
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import UnsupportedVersion, minor_of, unquoted_number
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import parsed, parsed_or_none, plain
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_limits import check_structure
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.action_errors import ControllerOnly
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview import binaries, placement, report, snapshot

ARGUMENT_SPEC = {
    "kubeconfig": {"type": "raw"},
    "context": {"type": "str"},
    "kubernetes_version": {"type": "str"},
    "current": {"type": "dict"},
    "current_src": {"type": "path"},
    "proposed": {"type": "dict"},
    "proposed_src": {"type": "path"},
    "names": {"type": "list", "elements": "str", "default": ["current", "proposed"]},
    "feature_gates": {"type": "str"},
    "binaries": {"type": "dict", "default": {}, "options": {
        "etcd": {"type": "path"}, "kube_apiserver": {"type": "path"}, "kube_scheduler": {"type": "path"}}},
    "binaries_dir": {"type": "path"},
    "scheduler_plugins_version": {"type": "str"},
    "runs": {"type": "int", "default": 3},
    "timeout": {"type": "int", "default": 1800},
    "picture": {"type": "path"},
}
MAX_RUNS = 20
# scheduler-plugins' own CRDs, as the deployment role applies them: the throwaway control plane gets those its
# enabled plugins read.
SCHEDULER_PLUGINS_CRDS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                      "roles", "deployment", "files", "scheduler-plugins")
# The table's first column: the cluster as the snapshot found it, beside the preview of its current configuration.
OBSERVED = "cluster now"


class PreviewFailed(Exception):
    """Everything that stops a preview, said once as the task's msg."""


class ActionModule(ControllerOnly, ActionBase):

    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        number = unquoted_number(self._task.args.get("kubernetes_version"))
        if number:
            raise AnsibleActionFail(number)
        for name in ("current", "proposed"):
            too_costly = check_structure(self._task.args.get(name), name)
            if too_costly:
                raise AnsibleActionFail(too_costly)
        _validation, args = self.validate_argument_spec(
            argument_spec=ARGUMENT_SPEC,
            mutually_exclusive=[("current", "current_src"), ("proposed", "proposed_src")],
            required_one_of=[("current", "current_src"), ("proposed", "proposed_src")])
        try:
            result.update(self._preview(args))
        except PreviewFailed as exc:
            result.update(failed=True, msg=str(exc))
        return result

    def _preview(self, args) -> dict:
        absent = placement.missing()
        if absent:
            raise PreviewFailed("the preview needs the Python package%s %s on the controller (pip install %s)"
                                % ("s" if len(absent) > 1 else "", " and ".join(absent), " ".join(absent)))
        if not 1 <= args["runs"] <= MAX_RUNS:
            raise PreviewFailed("runs: %d is not between 1 and %d" % (args["runs"], MAX_RUNS))
        if len(args["names"]) != 2 or len(set(args["names"])) != 2 or not all(args["names"]) or OBSERVED in args[
                "names"]:
            raise PreviewFailed("names: two different names, the current configuration's and the proposed one's "
                                "(%r is the column of the cluster as it is)" % OBSERVED)
        picture = args["picture"]
        if picture and not picture.endswith((".svg", ".html")):
            raise PreviewFailed("picture: %s must end in .svg (the picture) or .html (a page with the picture and "
                                "the table)" % picture)
        try:
            version = minor_of(args["kubernetes_version"])
        except UnsupportedVersion as exc:
            raise PreviewFailed(str(exc)) from None
        release = None
        if args["scheduler_plugins_version"]:
            try:
                release = scheduler_plugins.release(args["scheduler_plugins_version"], version)
            except scheduler_plugins.SchedulerPluginsError as exc:
                raise PreviewFailed(str(exc)) from None
        # 1. Both configurations as the minor's kube-scheduler (or that scheduler-plugins release's) loads them: a
        # refused one stops here.
        configs = [(args["names"][0], self._config(args, "current", version, release)),
                   (args["names"][1], self._config(args, "proposed", version, release))]
        needs = release.needs(_enabled_plugins(configs)) if release else {"crds": [], "external_crds": [], "rules": []}
        if needs["external_crds"]:
            raise PreviewFailed("scheduler_plugins_version: the profiles enable %s, which read%s %s of other projects; "
                                "the preview carries scheduler-plugins' own objects only (PodGroups, ElasticQuotas)"
                                % (", ".join(needs["plugins"]), "s" if len(needs["plugins"]) == 1 else "",
                                   ", ".join(needs["external_crds"])))
        crds = [_crd(name) for name in needs["crds"]]
        # 2. The binaries, by component and minor, before anything starts.
        given = dict((component, (args["binaries"] or {}).get(component.replace("-", "_")))
                     for component in binaries.COMPONENTS)
        try:
            paths = binaries.resolve(given, args["binaries_dir"])
            versions = binaries.check(paths, version)
        except binaries.BinaryError as exc:
            raise PreviewFailed("binaries: %s" % exc) from None
        # 3. The snapshot, read-only; 4. the runs; 5. the report.
        kubeconfig = plain(args["kubeconfig"])
        if isinstance(kubeconfig, str):
            kubeconfig = os.path.expanduser(kubeconfig) if kubeconfig else None
        try:
            taken = snapshot.take(snapshot.connect(kubeconfig, args["context"]), crds=needs["crds"])
        except snapshot.SnapshotError as exc:
            raise PreviewFailed(str(exc)) from None
        try:
            outcome = placement.preview(taken, configs, paths, runs=args["runs"], timeout=args["timeout"],
                                        feature_gates=args["feature_gates"], crds=crds, scheduler_rules=needs["rules"])
        except Exception as exc:  # pylint: disable=broad-except  # the engine's errors, each saying what stopped
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            raise PreviewFailed("the preview stopped: %s" % exc) from None
        compared = report.compare(taken, outcome, observed_label=OBSERVED)
        lines = report.table(compared)
        missing = snapshot.unsupported(taken)
        written = None
        if picture:
            title = "%s vs %s, Kubernetes %s, %d nodes, %d pods" % (
                configs[0][0], configs[1][0], versions["kube-scheduler"], len(taken["nodes"]), len(taken["pods"]))
            written = _write(os.path.expanduser(picture), report.html_page(compared, title) if picture.endswith(
                ".html") else report.picture(compared, title))
        return {
            "changed": False,
            "table": lines,
            "msg": "\n".join(lines),
            "configs": dict((label, {"runs": data["runs"], "spread": data["spread"], "per_node": data["per_node"],
                                     "unschedulable_pods": dict(list(data["unschedulable_pods"].items())[:100])})
                            for label, data in compared["configs"].items()),
            "observed": OBSERVED,
            "moved": compared.get("moved"),
            "snapshot": dict(((name, len(items)) for name, items in taken.items() if isinstance(items, list)),
                             dra=taken["dra"], kept_on_their_node=len(outcome["fixed"])),
            "not_reproduced": {
                "pods": dict(list(missing.items())[:100]),
                "note": "Pods keep no node of their own: every pod a previewed scheduler name serves is placed "
                        "again, DaemonSet pods by their node affinity; mirror pods and bound pods of other "
                        "scheduler names keep their node. Ties kube-scheduler breaks at random show as the runs' "
                        "spread. A claim kube-scheduler binds is bound as the cluster's PersistentVolume "
                        "controller would, one it provisions gets a volume on the chosen node's topology (its "
                        "CSINode's); disruption budgets keep the status the cluster gave them; ResourceClaims are "
                        "allocated again (those of pods that keep their node too). Pods with generic ephemeral "
                        "volumes or ResourceClaimTemplates are listed under pods.",
            },
            "binaries": versions,
            "picture": written,
            "seconds": {"load": outcome["load_seconds"], "total": outcome["total_seconds"]},
        }

    def _config(self, args, which: str, version: str, release=None) -> dict:
        config, source = plain(args[which]), which
        content = None
        if args[which + "_src"]:
            source = which + "_src"
            try:
                with open(self._find_needle("files", args[which + "_src"]), encoding="utf-8") as handle:
                    content = handle.read()
            except (OSError, UnicodeDecodeError, AnsibleActionFail) as exc:
                raise PreviewFailed("%s: %s" % (source, exc)) from None
        try:
            outcome = process(content=content, config=config, kubernetes_version=version, strict=True,
                              feature_gates=args["feature_gates"],
                              scheduler_plugins_version=release.release if release else None)
        except ValueError as exc:
            raise PreviewFailed("%s: %s" % (source, exc)) from None
        if not outcome.ok:
            shown = config if config is not None else parsed_or_none(content)
            lines = with_hints(outcome.errors, shown, outcome.version, source, lambda error: error["message"],
                               outcome.plugin_names)
            raise PreviewFailed("%s: kube-scheduler %s would refuse it, nothing was started:\n%s"
                                % (source, version, "\n".join(lines)))
        loaded = parsed(outcome.rendered)
        if loaded.get("extenders"):
            raise PreviewFailed("%s: a preview does not call extenders (they are services of the real cluster, and "
                                "one may bind pods); preview the configuration without its extenders" % source)
        return loaded


def _enabled_plugins(configs) -> set:
    """Every plugin name a profile of the configurations enables, at any extension point."""
    return set(plugin.get("name") for _label, config in configs for profile in config.get("profiles") or ()
               for point in (profile.get("plugins") or {}).values() for plugin in (point or {}).get("enabled") or ())


def _crd(name: str) -> dict:
    """scheduler-plugins' CustomResourceDefinition ``name`` as the collection ships it."""
    path = os.path.join(SCHEDULER_PLUGINS_CRDS, name + ".yaml")
    try:
        with open(path, encoding="utf-8") as handle:
            return parsed(handle.read())
    except (OSError, ValueError) as exc:
        raise PreviewFailed("scheduler-plugins' CRD %s could not be read from %s: %s" % (name, path, exc)) from None


def _write(path: str, text: str) -> str:
    """The picture, replaced whole (a temp file beside it, renamed over it)."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        descriptor, temp = tempfile.mkstemp(prefix=".placement-preview.", dir=directory)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except OSError as exc:
        raise PreviewFailed("picture: %s could not be written: %s" % (path, exc)) from None
    return os.path.abspath(path)
