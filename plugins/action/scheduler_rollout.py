# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render every file a master should have, then let the module's host side plan or apply them in one call.

The controller renders (units or static pod manifests, from the resolved instances); the module of the same name,
on the host, compares, diffs and, when asked to apply, changes the master behind a health gate and restores on
failure.
A static-pod master is read first, in one call (the directory its kubelet watches, the current and adopted
manifests, kubeconfig checksums), because what its manifest should be builds on what kubeadm wrote there; its apply
step renders from what its plan read (planned_read) once the master, in the apply call, finds those files unchanged.
"""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.kubesched.schedulers.plugins.module_utils._files import sha256
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.arguments import TASK_SPEC
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout import last_render
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import APPLY, PLAN, READ
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import UnsupportedVersion, normalise, preview_warning
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import plain
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs import kinds
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.action_errors import NamesItsFqcn
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.role_variables import check_real_paths, paths_to_resolve, real_paths
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.rollout_files import (
    RolloutError, check_outside, static_pod_host, static_pod_reads, systemd_host)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.run_identity import (
    gone, playbooks_of_this_run, run_identity)

# The task names it, and its host side (the module of the same name) is run by it.
FQCN = "kubesched.schedulers.scheduler_rollout"
# The input model's kinds for every option that reaches a path, a unit or the host (inputs/kinds.py); the roles check
# their variables with the same kinds first, under the variables' own names.
_KINDS = {
    "config_dir": kinds.path, "state_dir": kinds.path, "unit_dir": kinds.path, "binary_link": kinds.path,
    "binary_path": kinds.optional_path, "manifest_dir": kinds.optional_path,
    "preflight_binary": kinds.optional_path, "user": kinds.account,
    "group": kinds.account, "health_timeout": kinds.integer(1, 3600, "a number of seconds"),
    "settle": kinds.integer(0, 600, "a number of seconds"),
    "standby_port_offset": kinds.integer(1, 65534, "a number of ports"),
    "lock_timeout": kinds.integer(60, 86400, "a number of seconds"),
}

# The static_pod role's names of the options compared on the host with the kubelet's directory.
_ROLE_VARIABLE = {"config_dir": "kube_scheduler_config_dir", "state_dir": "kube_scheduler_state_dir"}
_KUBELET_APART = ("config_dir", "state_dir")


class Refused(Exception):
    """The one way this action fails; run() turns it into the failed result, once. ``fields`` is what that result
    adds to the task's result: failed, anything else it names, and msg last, in the order the result always had."""

    def __init__(self, msg, **fields):
        super().__init__(msg)
        self.fields = dict(failed=True, **fields)
        self.fields["msg"] = msg

    @classmethod
    def engine(cls, answer):
        """The engine's own failed answer, which becomes the result as it came."""
        refusal = cls(answer.get("msg"))
        refusal.fields = answer
        return refusal


class ActionModule(NamesItsFqcn, ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=TASK_SPEC)
        try:
            if args["finish"]:
                return self._finish(result, args, task_vars)
            return self._plan_or_apply(result, args, task_vars)
        except Refused as refusal:
            return dict(result, **refusal.fields)

    def _plan_or_apply(self, result, args, task_vars):
        """Check the options, render every file of the master and let the engine plan or apply them."""
        missing = [name for name in ("instances", "kubernetes_version", "config_dir") if args[name] is None]
        if missing:
            raise Refused("%s: missing required arguments: %s (only finish needs none of them)"
                          % (FQCN, ", ".join(missing)))
        if args["host_paths"] and args["apply"]:
            # Compared after the call answers: only a plan, which writes nothing, may learn them that way.
            raise Refused("%s: host_paths is checked by the plan (apply: false), before any apply; nothing was changed"
                          % FQCN)
        if args["host_paths"] and args["kind"] != "systemd":
            raise Refused("%s: host_paths names the systemd role's directories (kind: systemd); a static-pod master's "
                          "are compared with the kubelet's directory by the read call" % FQCN)
        # The raw options, not ansible-core's type=path conversion (which expands ~ and $VARS).
        raw = dict((name, self._task.args.get(name, args[name])) for name in _KINDS)
        normalised, problems = kinds.check_all(raw, _KINDS)
        try:
            version = normalise(args["kubernetes_version"], full=True)
        except UnsupportedVersion as exc:
            problems.append(str(exc))
        instances = plain(args["instances"])
        problems.extend(_instance_problems(instances))
        if not problems:
            dirs = ("config_dir", "state_dir", "unit_dir") if args["kind"] == "systemd" else ("config_dir", "state_dir", "manifest_dir")
            problems.extend(kinds.separate_directories(dict((name, normalised[name]) for name in dirs)))
        if problems:
            raise Refused("%s: nothing was changed:\n%s" % (FQCN, "\n".join(problems)))
        args.update(normalised, kubernetes_version=version)
        engine = {"mode": APPLY if args["apply"] else PLAN, "state_dir": args["state_dir"], "hold": args["hold"],
                  "health_timeout": args["health_timeout"], "settle": args["settle"],
                  "lock": _lock(args, normalised, task_vars)}
        host_paths = dict((name, str(path)) for name, path in (args["host_paths"] or {}).items())
        if host_paths:
            engine["resolve"] = sorted(set(paths_to_resolve(host_paths).values()))
        drift = None
        if args["kind"] == "systemd":
            if not args["binary_path"]:
                raise Refused("binary_path: Required value: the systemd kind runs a binary")
            try:
                engine.update(systemd_host(instances, {
                    "unit_dir": args["unit_dir"], "config_dir": args["config_dir"], "binary_link": args["binary_link"],
                    "binary_path": args["binary_path"], "version": args["kubernetes_version"],
                    "user": args["user"], "group": args["group"], "standbys": args["standbys"],
                    "standby_port_offset": args["standby_port_offset"]}))
            except RolloutError as exc:
                raise Refused(str(exc)) from None
        else:
            carried = _carried(args, instances) if args["apply"] else None
            # A plan's read call also plans with the input the last apply kept (module_utils/rollout/last_render.py).
            speculate = None if args["apply"] else dict(engine, mode=PLAN)
            host, drift, read = self._static_pod(result, args, instances, carried, task_vars, speculate)
            if not args["apply"]:
                # What this plan read and rendered from, for its apply step (planned_read): read once per master.
                result["host_read"] = _host_read(read, instances)
            engine.update(host)
        self._complete(engine, args, instances)
        answer = None
        if args["kind"] == "static_pod" and args["apply"]:
            engine["remember"] = self._next_plan_input(args, instances, read, engine)
        elif args["kind"] == "static_pod" and read.get("speculated"):
            speculated = read["speculated"]
            if speculated.get("input") == last_render.digest(last_render.plan_input(engine)):
                answer = speculated["answer"]  # what this plan's own call would answer: the same input
        if answer is None:
            answer = self._engine(engine, task_vars)
        if answer.get("read_changed") and engine.get("unchanged"):
            # The master changed since its plan read it (nothing was written): read it now and render anew.
            host, drift, read = self._static_pod(result, args, instances, None, task_vars)
            engine.pop("unchanged")
            engine.update(host)
            self._complete(engine, args, instances)
            engine["remember"] = self._next_plan_input(args, instances, read, engine)
            answer = self._engine(engine, task_vars)
        if host_paths:
            # Whatever else the plan says, two names for one directory come first: nothing may be applied on them.
            found = dict((path, (entry or {}).get("path")) for path, entry in (answer.get("resolved") or {}).items())
            problems = check_real_paths(args["kind"], host_paths, real_paths(host_paths, found)) if found else []
            if problems:
                raise Refused("%s: the variables are not valid on this master, nothing was changed:\n%s"
                              % (FQCN, "\n".join(problems)), resolved=answer.get("resolved"))
        result.update(answer)
        preview = preview_warning(version)
        if preview:
            result["warnings"] = [preview] + list(result.get("warnings") or [])
        # A plan outside check mode changes nothing: it says what is pending and leaves "changed" (and the diff on
        # screen) to the apply step. In check mode the plan is what a Check job reports.
        result["pending"] = bool(answer.get("changed") or answer.get("pending"))
        if not args["apply"] and not self._task.check_mode:
            result["changed"] = False
            result.pop("diff", None)
        if drift is not None:
            planned = (answer.get("plan") or {}).get("instances") or {}
            result["drift"] = {name: dict(entry, drifted=_action(planned, name) != "none",
                                          reason=entry["reason"] if _action(planned, name) != "none" else "none")
                               for name, entry in drift.items()}
        if answer.get("failed") and answer.get("rolled_back"):
            result["msg"] = "%s: rolled back. %s" % (task_vars.get("inventory_hostname"), answer.get("msg", ""))
        return result

    def _static_pod(self, result, args, instances, carried, task_vars, speculate=None):
        """(the host's arguments, the drift report, what it was rendered from: the read call's answer, or
        ``carried``) of a static-pod master, and the kubelet's directory in ``result`` (also when refused), rendered
        from what the master holds: from what its plan read (``carried``), which the engine checks is unchanged
        before it writes anything, or else from a read call (the kubelet's directory unless given, the manifests in
        it, what else the render builds on, and the config and state directories as the host resolves them), which
        also plans with ``speculate`` added to the input the last apply kept, when given."""
        if carried is not None:
            answer = carried
        else:
            call = {"kind": "static_pod", "mode": READ, "read": static_pod_reads(instances, args["state_dir"]),
                    "manifest_dir": args["manifest_dir"] or None,
                    "resolve": [args[name] for name in _KUBELET_APART],
                    "manifest_names": [instance["name"] for instance in instances]}
            if speculate is not None:
                call["speculate"] = speculate
            answer = self._engine(call, task_vars)
            if answer.get("failed"):
                raise Refused.engine(answer)
        result["manifest_dir"] = found = answer["manifest_dir"]
        same = _same_directory(found, answer.get("resolved") or {}, args)
        if same:
            raise Refused(same)
        try:
            check_outside(found["path"], (args["config_dir"], args["state_dir"]))
            host, drift = static_pod_host(instances, {
                "manifest_dir": found["path"], "config_dir": args["config_dir"],
                "state_dir": args["state_dir"], "version": args["kubernetes_version"],
                "preflight_binary": args["preflight_binary"], "standbys": args["standbys"],
                "standby_port_offset": args["standby_port_offset"]}, answer.get("read") or {})
        except RolloutError as exc:
            raise Refused(str(exc)) from None
        if carried is not None:
            # Checked by the apply call before anything else: the files as read, the directories still apart (they may
            # have been created since the plan: this run's lock and certificates are written there).
            host["unchanged"] = {"files": dict((path, entry.get("sha256")) for path, entry in carried["read"].items()),
                                 "manifest_dir": found["path"], "apart": [args[name] for name in _KUBELET_APART]}
        return host, drift, answer

    def _next_plan_input(self, args, instances, read, engine):
        """What the next plan of this master renders (last_render.plan_input) once this apply succeeded: from what
        its read will find then (every file this apply writes with its content, every one it removes gone), as a
        plan renders it (no temporary standby)."""
        after = _read_after(read.get("read") or {}, engine["instances"])
        try:
            host, _drift = static_pod_host(instances, {
                "manifest_dir": read["manifest_dir"]["path"], "config_dir": args["config_dir"],
                "state_dir": args["state_dir"], "version": args["kubernetes_version"],
                "preflight_binary": args["preflight_binary"], "standbys": [],
                "standby_port_offset": args["standby_port_offset"]}, after)
        except RolloutError:
            return None  # nothing kept: the next plan reads and plans in two calls
        self._complete(host, args, instances)
        return last_render.plan_input(host)

    @staticmethod
    def _complete(engine, args, instances):
        """What every plan and apply call adds: whether it asks the instances' health and the master's
        kube-scheduler, and the lease check."""
        # A report asks neither the master's kube-scheduler nor the instances' health: both are the plan's questions.
        engine["health_check"] = args["preflight"]
        if not args["preflight"]:
            for entry in engine["instances"]:
                entry.pop("preflight", None)
        if args["lease_check"]:
            _add_lease_access(engine, instances, args)

    def _finish(self, result, args, task_vars):
        """Commit or restore the change the apply step holds on the master: the engine finds everything it needs
        there (module_utils/rollout/held_change.py)."""
        normalised, problems = kinds.check_all(dict((name, self._task.args.get(name, args[name])) for name in (
            "state_dir", "health_timeout", "settle", "lock_timeout")), _KINDS)
        if problems:
            raise Refused("%s: nothing was changed:\n%s" % (FQCN, "\n".join(problems)))
        lock = _lock(args, normalised, task_vars)
        del normalised["lock_timeout"]
        answer = self._engine(dict(normalised, kind=args["kind"], mode=args["finish"], lock=lock), task_vars)
        return dict(result, **answer)

    def _engine(self, module_args, task_vars):
        answer = self._execute_module(module_name=FQCN, module_args=module_args, task_vars=task_vars)
        answer.pop("invocation", None)  # the file contents, some of them credentials
        lock = module_args.get("lock")
        if answer.get("failed") and lock and not lock.get("take_over") and gone(answer.get("lock_holder")):
            # A run of this controller that was killed (its process is gone) holds the master: taken over at once,
            # not after the lock's timeout; the engine says so in a warning.
            lock = dict(lock, take_over=answer["lock_holder"]["id"])
            return self._engine(dict(module_args, lock=lock), task_vars)
        return answer


def _lock(args, normalised, task_vars):
    """The master's rollout lock as the engine takes it: this run (module_utils/rollout/lock.py)."""
    run = args["run"] or run_identity(task_vars, playbooks_of_this_run())
    return {"run": plain(run), "timeout": normalised["lock_timeout"]}


def _host_read(answer, instances):
    """What a static-pod plan read and rendered from, as its result's host_read: the directory, the resolved
    directories and each file read, the kubeconfigs by checksum alone (their content never leaves the call)."""
    kubeconfigs = set(instance["kubeconfig"] for instance in instances)
    return {"manifest_dir": answer["manifest_dir"], "resolved": answer.get("resolved") or {},
            "read": dict((path, dict((key, value) for key, value in entry.items()
                                     if not (key == "content" and path in kubeconfigs)))
                         for path, entry in (answer.get("read") or {}).items())}


def _read_after(read, engine_instances):
    """``read`` (path: what the read call found) as an apply of ``engine_instances`` leaves it."""
    after = dict(read)
    for instance in engine_instances:
        for spec in instance["files"]:
            if spec["path"] not in after:
                continue
            if instance["state"] == "absent":
                after[spec["path"]] = {"exists": False, "content": None, "sha256": None}
            else:
                after[spec["path"]] = {"exists": True, "content": spec["content"], "sha256": sha256(spec["content"])}
    return after


def _carried(args, instances):
    """The plan's host_read when it is what this apply needs (planned_read), else None: the same directory, a read of
    every file and directory this apply's render builds on, and each content it carries the one its checksum names
    (the master checks the checksums, so a content edited on its way here would otherwise be rendered from)."""
    carried = args["planned_read"]
    if not isinstance(carried, dict) or not all(isinstance(carried.get(key), dict) for key in ("manifest_dir", "resolved", "read")):
        return None
    path = carried["manifest_dir"].get("path")
    if not isinstance(path, str) or (args["manifest_dir"] and args["manifest_dir"].rstrip("/") != path.rstrip("/")):
        return None
    manifests = ["%s/%s.yaml" % (path.rstrip("/"), instance["name"]) for instance in instances]
    reads = static_pod_reads(instances, args["state_dir"]) + manifests
    if not all(isinstance(carried["read"].get(name), dict) for name in reads):
        return None
    if any(isinstance(entry.get("content"), str) and sha256(entry["content"]) != entry.get("sha256")
           for entry in carried["read"].values()):
        return None
    if not all(args[name] in carried["resolved"] for name in _KUBELET_APART):
        return None
    return carried


def _same_directory(kubelet, resolved, args):
    """Paths compared by what they are on the host, not as strings: a config or state directory that is (by a
    symbolic link, or a bind mount) the kubelet's directory would make every stored file a pod. Compared by device
    and inode, which is what the kubelet lists; the read call resolved them all."""
    if kubelet.get("directory") is None:
        return None
    for name in _KUBELET_APART:
        if (resolved.get(args[name]) or {}).get("directory") == kubelet["directory"]:
            return ("%s (%s in the static_pod role): Invalid value: %r: on the host it is the static pod "
                    "directory %s (a symbolic link, or the same directory by another path); the kubelet would run "
                    "every file stored there. Choose a directory outside it. Nothing was changed."
                    % (name, _ROLE_VARIABLE[name], args[name], kubelet["path"]))
    return None


def _instance_problems(instances):
    """Resolved instances (scheduler_instances' result) carry checked values; one given by hand must not smuggle a
    line into a unit or a path outside the model either."""
    problems = []
    for index, instance in enumerate(instances):
        where = "instances[%d]" % index
        try:
            kinds.dns_label(instance.get("name"), where + ".name")
            for key in ("config_path", "kubeconfig"):
                if instance.get(key) is not None:
                    kinds.path(instance[key], "%s.%s" % (where, key))
            for position, flag in enumerate(instance.get("flags") or []):
                kinds.flag_argument(kinds.text(flag, "%s.flags[%d]" % (where, position)), "%s.flags[%d]" % (where, position))
            for key in ("health_url", "image"):
                if isinstance(instance.get(key), str):
                    kinds.text(instance[key], "%s.%s" % (where, key))
        except kinds.InputError as exc:
            problems.append(str(exc))
    return problems


def _add_lease_access(engine, instances, args):
    """Each present instance that elects a leader asks, as itself, whether it may hold its lease (the engine's
    lease check, module_utils/rollout/lease_access.py); the apply call may create what is missing when the operator says so."""
    by_name = dict((instance["name"], instance) for instance in instances)
    for entry in engine["instances"]:
        instance = by_name.get(entry["name"]) or {}
        if entry.get("state") == "present" and instance.get("lease") and instance.get("kubeconfig"):
            entry["lease_access"] = {"kubeconfig": instance["kubeconfig"], "namespace": instance["lease"]["namespace"],
                                     "name": instance["lease"]["name"]}
    engine["lease_rbac"] = {"create": args["lease_rbac_create"], "kubeconfig": args["lease_rbac_kubeconfig"]}


def _action(planned, name):
    return (planned.get(name) or {}).get("action", "none")
