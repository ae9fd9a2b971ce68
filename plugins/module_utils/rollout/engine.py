# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout engine on a master, for both kinds of scheduler (systemd units and static pods).

Plan: compare every file the controller rendered with the host (content, owner, group, mode), the binary link, and
the units' state; report per instance what would change, with a diff (a Plan of InstancePlans, plan.py,
reported as the module's ``plan`` mapping). Nothing is written.
Apply, kubeadm's upgradeComponent for the master's changed instances together (the master is the unit of a
rollout): back up what the change replaces, write atomically, restart (systemd) or let the kubelet replace the pod
(static pods), wait for a NEW healthy process of each; on any failure restore everything this call changed, keep
the backups and fail; on success HOLD the change (held_change.py): the master's last gate may come after this call
(the verify role's metrics gate in the rollout playbooks). Commit releases the held change once that gate passed
(the backups go); restore puts the master back from it, by the same restore as a failed apply.
Before anything is written, the master's own kube-scheduler checks every new config and its flags offline.
What differs by kind sits behind two seams: a strategy (strategies.py: how a change takes effect, how an instance
stops, whether it runs, which binary checks the config) and a waiter (how a new healthy process is awaited).
Host code: stdlib only.
"""

from __future__ import annotations

import errno
import os
import stat
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.file_specs import (
    account_ids, owner_problems, file_changes, file_diff, file_owners, installed_port, make_parents, read_file,
    set_attributes, spec_problems, wanted_port, write_atomically)
from ansible_collections.kubesched.schedulers.plugins.module_utils._files import (
    Backup, WriteFailed, remove_path, sha256, sha256_file, switch_link, writing)
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.held_change import (
    HeldChange, as_before, remove_backups, stale_backups)
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.host_facts import account_facts, resolve_path
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout import lease_access
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.kube_api import ApiError, KubeconfigError, Unreachable
from ansible_collections.kubesched.schedulers.plugins.module_utils._named_files import missing_named_files
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import (
    PreflightFailed, ReadChanged, RolledBack, RolloutFailed)
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.lock import MasterLock
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.plan import (
    ATTRIBUTES, CREATE, HEALTHY, NONE, NOT_HEALTHY, REMOVE, RESTART, START, STARTS_A_PROCESS, UPDATE, InstancePlan, Plan)
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.standbys import (
    TemporaryStandbys, adopted, leftover_warnings, leftovers, remove_absent)

# --- the engine ---------------------------------------------------------------------------------------------------

# What a call does: read facts only, plan (compare, diff, and run the master's kube-scheduler against every new
# config; nothing is written), apply the plan and hold it, commit the held change (its last gate passed) or restore
# the master from it (its last gate failed).
READ, PLAN, APPLY, COMMIT, RESTORE = "read", "plan", "apply", "commit", "restore"
MODES = (READ, PLAN, APPLY, COMMIT, RESTORE)

# The role variable that lets the apply call create a missing lease Role and RoleBinding (named in messages).
LEASE_RBAC_CREATE_VARIABLE = "kube_scheduler_lease_rbac_create"


class Engine(object):
    """kubeadm's upgradeComponent for a master's instances: plan; check before the first write; back up, write, make
    it take effect (the strategy), gate every new process together; restore everything on failure."""

    def __init__(self, params, strategy, waiter):
        self.p = params
        self.strategy = strategy
        self.waiter = waiter
        self.result = {}
        # What the call has done so far, which a restore undoes: the instances that gave no healthy answer in its
        # gate, the files whose attributes alone it set ((path, uid, gid, mode) before), the temporary standbys it
        # runs or took over. What a step needs besides is passed to it: the plan, and the held change.
        self._gate_failed = set()
        self._attributes_before = []
        self._standbys = TemporaryStandbys(strategy, waiter, write_atomically, params.get("health_timeout"),
                                           params.get("settle"))

    def run(self, mode):
        """The master's rollout lock (lock.py) around the call, before anything is read as pending: a plan
        (a Check job's too) refuses while another run holds it; apply, commit and restore take or renew it, and it
        stays while a change of the run is held here."""
        lock = None if mode == READ or not self.p.get("state_dir") else MasterLock.of(self.p)
        taking = lock is not None and mode != PLAN
        if lock is not None:
            self.result.setdefault("warnings", []).extend(lock.take() if taking else lock.check())
            if not self.result["warnings"]:
                del self.result["warnings"]
        try:
            result = self._run(mode)
        except BaseException:
            if taking:
                try:
                    lock.release()  # the run stops at this master: nothing of it is in flight here any more
                except OSError:
                    pass  # the call's own failure is the one to report; a lock left goes stale
            raise
        if taking and not os.path.lexists(HeldChange(self.p["state_dir"]).path):
            lock.release()
        return result

    def _run(self, mode):
        """The call's one line: facts, then (plan, apply) the plan, then (apply) the change. ``self.result`` holds
        what is known so far when a typed exception (PreflightFailed, RolledBack) ends the call."""
        if self.p.get("state_dir"):
            HeldChange.load(self.p["state_dir"])  # a record that cannot be trusted stops every mode (RecordDamaged)
        warnings = self.result.get("warnings") or []
        if mode == COMMIT:
            self.result = dict(self.commit(), **({"warnings": warnings} if warnings else {}))
            return self.result
        if mode == RESTORE:
            self.result = dict(self.restore(), **({"warnings": warnings} if warnings else {}))
            return self.result
        self._check_unchanged()
        self.result = dict(changed=False, **self.facts())
        if warnings:
            self.result["warnings"] = list(warnings)
        problem = self.strategy.host_problem(self.result)
        if problem:
            raise PreflightFailed(problem)
        if mode == READ:
            return self.result
        plan, diff, changed = self.plan()
        self.result.update(changed=changed, plan=plan.as_dict(), diff=diff)
        if mode == APPLY and changed:
            try:
                self.result["applied"] = self.apply(plan)
            finally:
                # What the apply step added to the plan (the lease RBAC it created) is reported, also on failure.
                self.result["plan"] = plan.as_dict()
            if not self.p.get("hold", True):
                # No gate after this call: its health gate was the last, so the change is committed here, in the
                # same call, instead of a commit call of its own.
                self.result["committed"] = self.commit()["committed"]
        return self.result

    # read ------------------------------------------------------------------------------------------------------
    def _check_unchanged(self):
        """An apply rendered from what the plan read (a static-pod master) is only as good as that read: every file
        it read must still have the same checksum (or still be missing), and the directories that must stay apart
        from the kubelet's (config, state) must still not be it by another name (as the read call would find them),
        else ReadChanged before anything is written, and the controller reads and renders again."""
        unchanged = self.p.get("unchanged")
        if not unchanged:
            return
        # The checksum alone, as read_file gives it (null for anything but a file), without reading the content.
        differ = [path for path, digest in sorted((unchanged.get("files") or {}).items())
                  if (sha256_file(path) if os.path.isfile(path) else None) != digest]
        kubelet = resolve_path(unchanged["manifest_dir"])["directory"] if unchanged.get("manifest_dir") else None
        differ.extend(path for path in unchanged.get("apart") or []
                      if kubelet is not None and resolve_path(path)["directory"] == kubelet)
        if differ:
            raise ReadChanged(differ)

    def facts(self):
        """What the controller asked about (files to read, the service account) and what the kind's strategy tells
        (systemd: machine, systemd booted, the binary; static pods: the kubelet's directory and its manifests)."""
        p = self.p
        out, reads = self.strategy.facts(p)
        reads = list(p.get("read") or []) + reads
        if reads:
            out["read"] = dict((path, read_file(path)) for path in reads)
        if p.get("accounts"):
            out["accounts"] = account_facts(p["accounts"]["user"], p["accounts"]["group"])
        if p.get("resolve"):
            out["resolved"] = dict((path, resolve_path(path)) for path in p["resolve"])
        return out

    # plan ------------------------------------------------------------------------------------------------------
    def plan(self):
        """What differs, with a diff; then the master's kube-scheduler runs offline against the new config and flags
        of every instance that would start a process: a refusal fails the plan (PreflightFailed), nothing written.
        Returns (Plan, diff, changed)."""
        plan, diff = Plan(), []
        self._plan_directories(plan, diff)
        self._plan_link(plan, diff)
        self._plan_instances(plan, diff)
        refusals = self._check_leases(plan)
        held = self._plan_what_earlier_runs_left(plan)
        refusals.extend(self._port_refusals(plan))
        refusals.extend(self._health_refusals(plan, held))
        changed = bool(plan.directories or plan.link_changed or held is not None or plan.leftovers
                       or plan.stale_backups or any(entry.pending() for entry in plan.instances.values()))
        self._ask_the_binary(plan, diff, refusals)
        return plan, diff, changed

    def _plan_directories(self, plan, diff):
        """The directories to make, or whose owner, group or mode to set."""
        for directory in self.p["directories"]:
            if self._directory_differs(directory):
                plan.directories.append(directory["path"])
                diff.append({"before_header": directory["path"], "after_header": directory["path"],
                             "before": "" if not os.path.isdir(directory["path"]) else "(directory, other owner or mode)\n",
                             "after": "(directory %s:%s %s)\n" % (
                                 directory.get("owner") or "root", directory.get("group") or "root", directory.get("mode") or "")})

    def _plan_link(self, plan, diff):
        """Whether the binary link points elsewhere (systemd: a new release restarts every instance)."""
        link = self.p.get("link")
        if link:
            current = os.readlink(link["path"]) if os.path.islink(link["path"]) else None
            if current != link["src"]:
                plan.link_changed = True
                diff.append({"before_header": link["path"], "after_header": link["path"],
                             "before": ("-> %s\n" % current) if current else ("(regular file)\n" if os.path.lexists(link["path"]) else ""),
                             "after": "-> %s\n" % link["src"]})

    def _plan_instances(self, plan, diff):
        """Each instance's action and the files it changes (or, absent, removes), in the order of the instances."""
        owners = file_owners(self.p["instances"])
        for instance in self.p["instances"]:
            entry = InstancePlan()
            if instance["state"] == "absent":
                # Not a file another instance still uses, nor one another absent instance removes.
                entry.files = [f["path"] for f in instance["files"]
                               if owners[f["path"]] == instance["name"] and os.path.lexists(f["path"])]
                if entry.files:
                    entry.action = REMOVE
                    diff.extend({"before_header": path, "after_header": "%s (absent)" % path, "before": "(present)\n", "after": ""}
                                for path in entry.files)
            else:
                changes = {}
                for spec in instance["files"]:
                    change = file_changes(spec)
                    if change:
                        # Every instance that uses a changed file restarts on it; its diff is shown once.
                        changes[spec["path"]] = change
                        if owners[spec["path"]] == instance["name"]:
                            diff.append(file_diff(spec))
                entry.files = sorted(changes)
                existed = any(os.path.lexists(spec["path"]) for spec in instance["files"])
                if "content" in changes.values():
                    entry.action = UPDATE if existed else CREATE
                elif plan.link_changed:
                    entry.action = RESTART
                elif not self.strategy.running(instance):
                    entry.action = START
                elif changes:
                    entry.action = ATTRIBUTES
            plan.instances[instance["name"]] = entry

    def _plan_what_earlier_runs_left(self, plan):
        """What an earlier run left on the master, each with a warning: a held change (returned, or None), backups
        no change names, temporary standbys. All of it is pending: the apply step gates, removes or takes it over."""
        p = self.p
        held = HeldChange.load(p["state_dir"]) if p.get("state_dir") else None
        if held is not None:
            plan.held = held.names()
            names = ", ".join(held.names()) or "directories"
            if not held.gate_passed:
                # Recorded before its first write, never gated to the end: the run (or the engine, or the master)
                # stopped in between. The files on the master prove nothing either way.
                warning = ("%s: a change an earlier run began was never gated to the end (the run stopped between its "
                           "first write and its health gate); it is pending: the apply step gates it again from its "
                           "record (%s) and restores what was there before it when that fails, whatever the files "
                           "look like now" % (names, HeldChange(p["state_dir"]).path))
            else:
                # An apply whose commit or restore never came (the run stopped in between): still unproven, so still
                # pending. The next apply gates it again and holds it with its own change, for the last gate to judge.
                warning = ("%s: a change applied by an earlier run was never committed or restored (the run stopped "
                           "before the master's last gate); it is pending: the apply step gates it again and holds "
                           "it, and a restore puts back what was there before it (backups in %s)" % (names, p["state_dir"]))
            self.result.setdefault("warnings", []).append(warning)
        stale = stale_backups(p["state_dir"], held) if p.get("state_dir") else []
        if stale:
            # Backups of changes that were restored (kept for the operator) or never recorded: the apply step
            # removes them, as a commit removes the backups of its change.
            plan.stale_backups = stale
        # What the apply step removes once the instance it stands in for answers health (read once, here).
        plan.leftovers = leftovers(p["instances"])
        if plan.leftovers:
            # A run stopped while a temporary standby ran (make before break).
            plan.standby_leftovers = [found["name"] for found in plan.leftovers]
            self.result.setdefault("warnings", []).extend(leftover_warnings(plan.leftovers))
        return held

    def _health_refusals(self, plan, held):
        """Every present instance this call leaves running as it is (nothing to restart, or its owner and mode
        alone) must answer health: a master whose files are converged is never reported so while one of its
        schedulers crash-loops or does not answer. One short look each, side by side, so a plan stays quick; one that
        does not answer is given the time its health gate gives a new process (it may be starting: a master that
        just booted, a pod the kubelet is replacing), then refuses the plan, naming what it answered and where its
        logs are. Instances an earlier run left pending (a held change, a leftover standby) are not asked here: the
        apply step gates them, and restores them when they fail."""
        if not self.p.get("health_check", True):
            return []
        pending = set(held.names() if held is not None else []) | set(found["name"] for found in plan.leftovers)
        asking = [instance for instance in self.p["instances"] if instance["state"] == "present"
                  and plan.entry(instance).action in (NONE, ATTRIBUTES) and instance["name"] not in pending]
        if not asking:
            return []
        with ThreadPoolExecutor(max_workers=len(asking)) as pool:
            looks = list(pool.map(lambda instance: self.waiter.health(instance["port"], instance["health_url"]), asking))
        again = self._gate_all([(instance, None) for instance, (_pid, error) in zip(asking, looks) if error])
        refusals = []
        for instance, look in zip(asking, looks):
            pid, error = again.get(instance["name"], look)[:2]
            entry = plan.entry(instance)
            if error is None:
                entry.health = {"status": HEALTHY, "detail": "process %s answers %s" % (pid, instance["health_url"])}
                continue
            entry.health = {"status": NOT_HEALTHY, "detail": error}
            lines = self.strategy.log_tail(instance)
            refusals.append(
                "%s is not healthy: %s (asked again for %ss, the time its health gate gives a new process); nothing "
                "is rolled out on this master while it is not: look at %s%s" % (
                    instance["name"], error, self.p["health_timeout"], self.strategy.log_hint(instance),
                    ("; last log lines: " + " | ".join(lines)) if lines else ""))
        return refusals

    def _port_refusals(self, plan):
        """The ports the offline preflight cannot see (it runs with --secure-port 0): each instance that would start
        a process must find its secure port free, or held by the process the change replaces (the kernel's listener
        is the instance's own: the strategy asks systemd or the container runtime, never the unit or manifest); each
        temporary standby must find its own port free, or held by that standby a killed run left."""
        refusals = []
        leftover_for = set(found["name"] for found in plan.leftovers)
        for instance in self.p["instances"]:
            action = plan.entry(instance).action
            if instance["state"] != "present" or action not in STARTS_A_PROCESS:
                continue
            stranger = self._stranger(instance, instance["port"])
            if stranger:
                refusals.append(
                    "%s: secure port %d is taken on this master by %s, not by the kube-scheduler this change "
                    "replaces (%s): kube-scheduler would exit at start (bind: address already in use); stop that "
                    "process, or give the instance a free port (its secure_port, or --secure-port in its flags)"
                    % ((instance["name"], instance["port"]) + stranger))
            standby = instance.get("standby")
            if (standby and action in (UPDATE, RESTART) and instance["name"] not in leftover_for
                    and self._listens_now(instance)):
                holder = self.waiter.port_holder(standby["port"])
                if holder is not None:
                    refusals.append(
                        "%s: port %d, for its temporary standby %s, is taken on this master by %s; set "
                        "kube_scheduler_standby_port_offset to a free range, or kube_scheduler_make_before_break: "
                        "false" % (instance["name"], standby["port"], standby["name"], holder))
        for found in plan.leftovers:
            standby = adopted(found)
            stranger = self._stranger(standby, found["port"])
            if stranger:
                refusals.append(
                    "%s: port %d of its temporary standby %s, which an earlier run left, is taken on this master by %s, "
                    "not by that standby (%s): the apply step would count on a standby that does not run; stop that "
                    "process, or remove the standby's files (%s) once %s answers health"
                    % ((found["name"], found["port"], standby["name"]) + stranger
                       + (", ".join(found["paths"]), found["name"])))
        return refusals

    def _stranger(self, owner, port):
        """(who listens on ``port``, what ``owner`` runs) when the listener is not ``owner``'s own process (the
        strategy asks systemd or the container runtime), else None."""
        holder = self.waiter.port_holder(port)
        foreign = holder is not None and self.strategy.foreign(owner, holder)
        return (holder, foreign) if foreign else None

    def _check_leases(self, plan):
        """Every present instance with a lease asks, as itself (its kubeconfig, from this master), whether it may
        get, update and create its lease. A missing right refuses the plan with the Role and RoleBinding to add,
        unless the operator lets the apply call create them; an API server this master cannot reach is a warning
        (the check did not run), never a silent pass."""
        create = bool((self.p.get("lease_rbac") or {}).get("create"))
        refusals = []
        asking = [instance for instance in self.p["instances"] if instance["state"] == "present" and instance.get("lease_access")]
        if not asking:
            return refusals
        # The instances ask side by side (each its own connections to the API server): the plan's one call waits for
        # the slowest answer, not for their sum.
        with ThreadPoolExecutor(max_workers=len(asking)) as pool:
            answers = list(pool.map(lambda instance: lease_access.check(instance["lease_access"], instance.get("files")), asking))
        for instance, found in zip(asking, answers):
            spec = instance["lease_access"]
            shown = dict((key, value) for key, value in found.items() if key != "rbac")
            plan.entry(instance).lease_access = shown
            if found["status"] == lease_access.NOT_CHECKED:
                self.result.setdefault("warnings", []).append(
                    "%s: lease %s: the lease access check did not run: %s" % (instance["name"], found["lease"], found["detail"]))
            elif found["status"] == lease_access.MISSING and create:
                shown["will_create"] = True
                plan.rbac_to_create.append((instance, spec, found["rbac"]))
            elif found["status"] == lease_access.MISSING:
                refusals.append(
                    "%s would never lead: %s (asked as its kubeconfig %s); add this Role and RoleBinding "
                    "(kubectl apply -f -), or set %s: true to let the apply step create them:\n%s"
                    % (instance["name"], found["detail"], spec["kubeconfig"], LEASE_RBAC_CREATE_VARIABLE, found["rbac_yaml"]))
        return refusals

    def _create_lease_rbac(self, plan):
        """The apply call creates the Roles and RoleBindings the plan found missing (the operator's opt-in), with
        the administrator's kubeconfig on this master, then asks again as each instance: before the first write."""
        if not plan.rbac_to_create:
            return
        admin = (self.p.get("lease_rbac") or {}).get("kubeconfig")
        created = []
        for instance, spec, objects in plan.rbac_to_create:
            name = instance["name"]
            try:
                created.extend(lease_access.create(objects, admin))
            except (OSError, KubeconfigError, Unreachable, ApiError) as exc:
                raise PreflightFailed("nothing was changed: %s: the Role and RoleBinding for lease %s/%s could not be "
                                      "created with %s: %s" % (name, spec["namespace"], spec["name"], admin, exc))
            again = lease_access.check(spec, instance.get("files"))
            if again["status"] != lease_access.ALLOWED:
                raise PreflightFailed("nothing was changed: %s: after creating %s: %s"
                                      % (name, ", ".join(created), again["detail"]))
            plan.entry(name).lease_access.update(status=again["status"], detail=again["detail"], missing=[],
                                                 will_create=False)
        self.result["lease_rbac_created"] = created

    def _ask_the_binary(self, plan, diff, refusals):
        for instance in self.p["instances"]:
            entry = plan.entry(instance)
            if instance["state"] != "present" or not entry.starts_a_process():
                continue
            verdict = self.strategy.preflight(instance, self.p)
            entry.preflight = verdict.note
            if verdict.refused is not None:
                refusals.append("%s would be refused by the master's kube-scheduler: %s (%s, offline with the new "
                                "config and flags)" % (instance["name"], verdict.refused, verdict.note))
            elif verdict.problem is not None:
                refusals.append("%s: the master's kube-scheduler could not check the new config: %s"
                                % (instance["name"], verdict.problem))
        if refusals:
            raise PreflightFailed("nothing was changed: " + "; ".join(refusals), plan.as_dict(), diff)

    def _directory_differs(self, directory):
        path = directory["path"]
        if not os.path.isdir(path):
            return True
        if not directory.get("mode"):
            return False  # only created when missing
        st = os.stat(path)
        ids = account_ids(directory.get("owner") or "root", directory.get("group") or "root")
        return ids is None or (st.st_uid, st.st_gid) != ids or stat.S_IMODE(st.st_mode) != int(directory["mode"], 8)

    # apply -----------------------------------------------------------------------------------------------------
    def preflight(self, plan):
        """Everything that can be known before the first write; nothing is written when it fails."""
        p = self.p
        problems = spec_problems(p)
        problems.extend(owner_problems(
            [dict(directory, directory=True) for directory in p["directories"] if directory["path"] in plan.directories]
            + [spec for instance in p["instances"] if instance["state"] == "present"
               for spec in instance["files"] if spec["path"] in plan.entry(instance).files]))
        link = p.get("link")
        if link and os.path.lexists(link["path"]) and not os.path.islink(link["path"]):
            problems.append("%s is a regular file, not a link this engine manages; move it away so an upgrade or a "
                            "restore can switch the link" % link["path"])
        problems.extend(self.strategy.binary_problems(p))
        # Files this call writes count as there: one instance may write the kubeconfig another one reads.
        will_exist = frozenset(spec["path"] for instance in p["instances"] if instance["state"] == "present"
                               for spec in instance["files"])
        for instance in p["instances"]:
            if instance["state"] != "present" or not plan.entry(instance).writes():
                continue
            problems.extend("%s: %s" % (instance["name"], problem)
                            for problem in missing_named_files(instance.get("named_files") or [], will_exist))
        if problems:
            raise PreflightFailed("nothing was changed: " + "; ".join(problems))

    def apply(self, plan):
        """Returns {name: {restarted, pid}} and holds the change (every instance it restarted has passed its health
        gate) for the commit or restore step; raises PreflightFailed before the first write, RolledBack after
        restoring (the story in its message). Intent first: the change is recorded (held_change.py) before each of
        its writes, so a run killed anywhere leaves a record the next run gates again. The steps: prepare
        (directories, absent instances), standbys, back up, write, gate, finish; any failure after the first
        write restores. ``plan``: the plan step's Plan, or the mapping it reports."""
        plan = Plan.of(plan)
        self.preflight(plan)
        self._create_lease_rbac(plan)
        # A change an earlier apply held, or began, and nothing committed is as unproven as this one: this change
        # builds on it, and a restore goes back to before both (each instance's first backup is kept).
        held = HeldChange.load(self.p["state_dir"]) or HeldChange(self.p["state_dir"])
        held.gate_passed = False
        try:
            self._prepare(plan, held)
        except (RolloutFailed, OSError) as exc:
            raise RolledBack("%s. %s" % (exc, self._restore(held, made=held.made)[0]))
        applied = {}
        try:
            self.result["removed_backups"] = remove_backups(plan.stale_backups or [])
            left = self._start_standbys(plan, held)
            restarting = self._back_up(plan, held)
            self._write(plan, held, restarting, applied)
            self._gate(restarting, held, applied, left)
            self._finish(held)
        except (RolloutFailed, OSError) as exc:
            raise RolledBack("%s. %s" % (exc, self._restore(held, made=held.made)[0]))
        return applied

    def _prepare(self, plan, held):
        """The directories the plan wants made or changed, the intent recorded, then the absent instances removed,
        and the standbys a killed run left for them."""
        for directory in self.p["directories"]:
            if directory["path"] in plan.directories:
                self._make_directory(directory, held)
        held.save()
        self._remove_absent(plan, held)
        problems = remove_absent(self.strategy, self.waiter, plan.leftovers, self.p["health_timeout"])
        if problems:
            raise RolloutFailed("; ".join(problems))

    def _start_standbys(self, plan, held):
        """Make before break: the standbys start before the first write of their instances
        (plugin_utils/rollout/temporary_standby.py), recorded first. A standby a killed run left stands in for its
        instance until that instance answers health: it is taken over (never removed first), and no second one
        starts for the same instance. A standby that never gets ready fails the call before any instance is touched.
        Returns the leftover standbys it took over, by the name of their instance."""
        p = self.p
        left = dict((found["name"], found) for found in plan.leftovers if found["state"] == "present")
        standbys = [instance["standby"] for instance in p["instances"]
                    if instance.get("standby") and instance["state"] == "present" and instance["name"] not in left
                    and plan.entry(instance).action in (UPDATE, RESTART)
                    and self._listens_now(instance)]
        held.standbys = sorted(set(held.standbys) | set(s["name"] for s in standbys)
                               | set(adopted(found)["name"] for found in left.values()))
        held.save()
        for found in left.values():
            self._standbys.adopt(found)
        if standbys:
            self._standbys.start(standbys)
            self.result["standbys"] = [standby["name"] for standby in standbys]
        return left

    def _listens_now(self, instance):
        """Whether the instance runs now, on the port its installed unit or manifest gives it (a change may move it)."""
        return self.waiter.listener(installed_port(instance) or instance["port"]) is not None

    def _back_up(self, plan, held):
        """What the change replaces, backed up and recorded before the first write of an instance's files or the
        link; returns the (instance, pid_before) the change restarts."""
        p = self.p
        changing = [instance for instance in p["instances"] if instance["state"] == "present" and plan.entry(instance).writes()]
        restarting, backed_up = [], []
        for instance in changing:
            pid_before = self.waiter.listener(instance["port"])
            if not held.holds(instance["name"]):
                # A shared file another instance of this call backs up is in that instance's backup (as it was
                # before): one copy of the text it replaces.
                backup = Backup(p["state_dir"], instance["name"])
                backup.save([spec["path"] for spec in instance["files"] if spec["path"] not in backed_up])
                before = installed_port(instance)
                held.add(instance, backup, pid_before,
                         before if before is not None and before != wanted_port(instance) else None)
            else:
                # Rewritten on top of an earlier, unproven change: a run killed from here gates it where it listens now.
                held.update(instance)
            backed_up.extend(spec["path"] for spec in instance["files"])
            restarting.append((instance, pid_before))
        if plan.link_changed and held.link_before is None:
            link = p["link"]
            held.link_path = link["path"]
            held.link_before = os.readlink(link["path"]) if os.path.islink(link["path"]) else ""
        held.written.update((spec["path"], sha256(spec["content"])) for instance in changing
                            for spec in instance["files"] if spec["path"] in plan.entry(instance).files)
        held.save()
        return restarting

    def _write(self, plan, held, restarting, applied):
        """The link switched, every changed file written (attributes only: set, no restart), then the kind makes
        the change take effect (a reload, the restarts)."""
        p = self.p
        if plan.link_changed:
            self._switch_link(p["link"]["path"], p["link"]["src"], held.made)
        written = []
        for instance in p["instances"]:
            entry = plan.entry(instance)
            if instance["state"] != "present" or entry.action == NONE:
                continue
            if entry.action == ATTRIBUTES:
                for spec in instance["files"]:
                    if spec["path"] in entry.files:
                        st = os.stat(spec["path"])
                        self._attributes_before.append((spec["path"], st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)))
                        set_attributes(spec)
                applied[instance["name"]] = {"restarted": False, "pid": None}
                continue
            for spec in instance["files"]:
                if spec["path"] in entry.files and spec["path"] not in written:
                    write_atomically(spec, held.made)
                    written.append(spec["path"])
        if written:
            self.strategy.reload(written)
        for instance, _pid in restarting:
            self.strategy.restart(instance)

    def _gate(self, restarting, held, applied, left):
        """The instances of one master are gated together (the master is the unit of a rollout; the other masters
        keep serving): their start-up and settle time overlap instead of adding up. An instance an earlier, unproven
        change holds and this call did not restart is gated too, on the process it runs, from its record (its unit
        or manifest, port and health URL), whether or not the call still names it; and so is one a leftover standby
        stands in for (``left``): the standby goes only once its instance answers."""
        p = self.p
        restarted = set(instance["name"] for instance, _pid in restarting)
        waiting = restarting + [(instance, None) for instance, _backup, _pid in held.touched
                                if instance["name"] not in restarted]
        gated = set(instance["name"] for instance, _pid in waiting)
        waiting += [(instance, None) for instance in p["instances"]
                    if instance["name"] in left and instance["name"] not in gated]
        gates = self._gate_all(waiting)
        failed = []
        for instance, _pid in waiting:
            pid, error, healthy_for = gates[instance["name"]]
            if error:
                self._gate_failed.add(instance["name"])
                lines = self.strategy.log_tail(instance)
                failed.append("%s gave no healthy answer from a new process within %ss that held for its %ss settle: "
                              "%s%s" % (instance["name"], p["health_timeout"], p["settle"], error,
                                        ("; last log lines: " + " | ".join(lines)) if lines else ""))
            if instance["name"] in restarted or held.holds(instance["name"]):
                # How long the gate watched the process it passed: what "healthy" means here, in the result.
                applied[instance["name"]] = {"restarted": instance["name"] in restarted, "pid": pid,
                                             "healthy_for": round(healthy_for, 1)}
        # The record says which of its instances passed this gate: the commit releases no instance that did not.
        held.mark_gated(set(instance["name"] for instance, _pid in waiting) - self._gate_failed)
        if failed:
            raise RolloutFailed("; ".join(failed))

    def _finish(self, held):
        """Every instance answers from its new process: the standbys go and hand the leases back, and the record
        says the gate passed (the change is held for the commit), or goes when nothing is left to hold."""
        problems = self._standbys.stop_all()
        if problems:
            raise RolloutFailed("; ".join(problems))
        if held.touched or held.made or held.changed_dirs or held.link_before is not None:
            held.gate_passed = True
            held.standbys = []
            held.save()
        else:
            held.forget()

    def commit(self):
        """The master's last gate passed: the held change is released (its backups go, and any backup no change
        names: one a restore kept for the operator, or one of a change never recorded). Nothing held is no error (a
        change of attributes only, or none); a change whose health gate never passed is never committed."""
        state_dir = self.p["state_dir"]
        held = HeldChange.load(state_dir)
        if held is not None and not held.gate_passed:
            raise RolloutFailed("%s: the change recorded on this master never passed its health gate (a run stopped "
                                "between its first write and its gate), so it is not committed; run the rollout "
                                "again: its apply step gates the change again, and restores it when that fails"
                                % (", ".join(held.names()) or "directories"))
        ungated = held.ungated() if held is not None else []
        if ungated:
            raise RolloutFailed("%s: the change recorded on this master names %s, which its health gate never watched, "
                                "so it is not committed; run the rollout again: its apply step gates every instance of "
                                "the change from its record, and restores it when that fails"
                                % (", ".join(held.names()), ", ".join(ungated)))
        removed = remove_backups(stale_backups(state_dir, held))
        if held is None:
            return {"changed": bool(removed), "committed": [], "removed_backups": removed}
        removed = held.release() + removed
        return {"changed": False, "committed": held.names(), "removed_backups": removed}

    def restore(self):
        """The master's last gate failed: the master is put back from the held change, by the one restore the apply
        step uses on its own failure. Nothing held: nothing to restore (the failing step restored, or changed
        nothing)."""
        held = HeldChange.load(self.p["state_dir"])
        if held is None:
            return {"changed": False, "restored": False, "not_healthy": [],
                    "story": "Nothing to restore: no change is held on this master."}
        story, not_healthy = self._restore(held, made=None)
        return {"changed": True, "restored": True, "instances": held.names(),
                "not_healthy": list(not_healthy), "story": story}

    def _gate_all(self, waiting):
        """{name: (pid, error)} of every (instance, pid_before), each awaited in a thread of its own."""
        if not waiting:
            return {}
        with ThreadPoolExecutor(max_workers=len(waiting)) as pool:
            futures = dict((instance["name"], pool.submit(
                self.waiter.wait_new_healthy, instance["port"], instance["health_url"], pid_before,
                self.p["health_timeout"], self.p["settle"])) for instance, pid_before in waiting)
        return dict((name, future.result()) for name, future in futures.items())

    def _restore(self, held, made):
        """Put back everything the held change (this call's, and an earlier unproven one's) changed; returns the story
        (what was restored, how the instances answer) and the instances that do not answer. ``made`` records the
        directories the binary link's restore makes: the apply call's own change (its list), or nothing (None)."""
        story = self._restore_link(held, made)
        story.extend(self._restore_attributes())
        # The restored instances listen where they did before the change (a change may have moved a secure port).
        touched = [(as_before(instance), backup, pid) for instance, backup, pid in held.touched]
        # Who listens now, before the restore: the failed processes, which the restored ones must replace.
        failed_pids = dict((instance["name"], self.waiter.listener(instance["port"])) for instance, _b, _p in touched)
        restored, told = self._restore_files(held, touched)
        story.extend(told)
        try:
            held.forget()
        except WriteFailed as exc:
            # The record stays: the next run finds it and gates the master again, as after a killed run.
            story.append("NOT removed: the record of the change %s on %s (%s)" % (exc.path, exc.master, exc.reason))
        story.extend(self._restore_directories(held))
        answers, not_healthy = self._restart_restored(touched, restored, failed_pids)
        answers.extend(self._stop_standbys(restored, not_healthy))
        return (" ".join(["Restored: %s." % ("; ".join(story) or "nothing had changed yet")] + answers
                         + ["Backups are kept in %s." % self.p["state_dir"]]), not_healthy)

    def _restore_link(self, held, made):
        """The binary link back to its previous target, or removed when there was none."""
        story = []
        if held.link_before is not None:
            try:
                if held.link_before:
                    self._switch_link(held.link_path, held.link_before, made)
                    story.append("binary link %s -> %s" % (held.link_path, held.link_before))
                else:
                    remove_path(held.link_path)
                    story.append("binary link %s removed (there was none)" % held.link_path)
            except WriteFailed as exc:
                story.append("NOT restored: binary link %s on %s (%s)" % (held.link_path, exc.master, exc.reason))
        return story

    def _restore_files(self, held, touched):
        """Each touched instance's files back from its backup, only as the record allows (``held.refusal``); an
        instance that did not run before the change is stopped and its files removed. Returns the instances that
        ran before (to restart) and the story."""
        story = []
        restored, removed, unrestorable = [], [], []
        for instance, backup, _pid in touched:
            unrestorable.extend(backup.restore(held.refusal(instance)))
            (restored if backup.ran_before() else removed).append(instance)
        if touched:
            try:
                self.strategy.reload([entry["path"] for _i, backup, _p in touched for entry in backup.entries])
            except RolloutFailed as exc:
                story.append("(%s)" % exc)
        for instance in removed:
            self.strategy.stop(instance)
        if restored:
            story.append("the files of %s from %s" % (
                ", ".join(i["name"] for i in restored), os.path.join(self.p["state_dir"], "<instance>", "backup")))
        if removed:
            story.append("removed the new instance%s %s, which never was healthy or never passed the last gate" % (
                "s" if len(removed) > 1 else "", ", ".join(i["name"] for i in removed)))
        if unrestorable:
            story.append("NOT restored: %s" % ", ".join(unrestorable))
        return restored, story

    def _restart_restored(self, touched, restored, failed_pids):
        """The restored instances restarted and gated together, as a change is; returns how each answers and the
        ones that do not."""
        answers, waiting, not_healthy = [], [], []
        for instance, _backup, pid_before in touched:
            if instance not in restored:
                continue
            try:
                self.strategy.restart(instance)
            except RolloutFailed as exc:
                answers.append("%s could not be restarted: %s" % (instance["name"], exc))
                not_healthy.append(instance["name"])
                continue
            # The failed process (if one replaced the original) does not count as the restored one.
            failed_pid = failed_pids.get(instance["name"])
            waiting.append((instance, failed_pid if failed_pid != pid_before else None))
        gates = self._gate_all(waiting)
        for instance, _previous in waiting:
            error = gates[instance["name"]][1]
            if error:
                not_healthy.append(instance["name"])
            answers.append("After restore %s answers health again at %s." % (instance["name"], instance["health_url"])
                           if not error else
                           "After restore %s is STILL NOT HEALTHY at %s: %s." % (instance["name"], instance["health_url"], error))
        return answers, not_healthy

    def _stop_standbys(self, restored, not_healthy):
        """Once the instances are back: the leases the standbys hold move back to them. A standby whose instance
        does not answer stays: it is the one process of this master that elects on that lease."""
        standbys = self._standbys
        if not standbys.running:
            return []
        answers = []
        restored_healthy = set(i["name"] for i in restored) - set(not_healthy)
        unhealthy = (self._gate_failed - restored_healthy) | set(not_healthy)
        names = [standby["name"] for standby in standbys.running if standby["for"] not in unhealthy]
        problems = standbys.stop_all(keep_for=unhealthy)
        if names:
            answers.extend(problems or ["The temporary standby %s is removed." % ", ".join(names)])
        answers.extend("The temporary standby %s is KEPT: it holds the lease while %s is not healthy; the next "
                       "run removes it once %s answers health." % (standby["name"], standby["for"], standby["for"])
                       for standby in standbys.running)
        return answers

    def _restore_attributes(self):
        """Files whose owner and mode alone this call changed (not backed up: no restart, nothing held) get them back
        when a later step of the call fails."""
        story = []
        for path, uid, gid, mode in reversed(self._attributes_before):
            now = os.stat(path)
            if (now.st_uid, now.st_gid, stat.S_IMODE(now.st_mode)) == (uid, gid, mode):
                continue  # its change failed before it changed anything (a read-only file system)
            try:
                with writing(path, action="set the owner and mode of"):
                    os.chown(path, uid, gid)
                    os.chmod(path, mode)
                story.append("the owner and mode of %s" % path)
            except WriteFailed as exc:
                story.append("NOT restored: the owner and mode of %s on %s (%s)" % (path, exc.master, exc.reason))
        self._attributes_before = []
        return story

    def _restore_directories(self, held):
        """Directories back as they were: the changed ones get their owner, group and mode back, the ones the change
        made are removed (innermost first) unless something is kept in them (the backups)."""
        story = []
        for path, uid, gid, mode in reversed(held.changed_dirs):
            try:
                with writing(path, action="set the owner and mode of"):
                    os.chown(path, uid, gid)
                    os.chmod(path, mode)
                story.append("directory %s back to %04o" % (path, mode))
            except WriteFailed as exc:
                story.append("NOT restored: directory %s on %s (%s)" % (path, exc.master, exc.reason))
        removed = []
        for path in reversed(held.made):
            try:
                with writing(path, action="remove"):
                    os.rmdir(path)
                removed.append(path)
            except WriteFailed as exc:
                # Not empty: it holds what is kept (the backups); gone already: nothing to do.
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT):
                    story.append("NOT removed: directory %s on %s (%s)" % (path, exc.master, exc.reason))
        if removed:
            plural = "y" if len(removed) == 1 else "ies"
            story.append("removed the director%s it had made: %s" % (plural, ", ".join(removed)))
        return story

    @staticmethod
    def _switch_link(path, src, made):
        """The link at ``path`` to ``src``; the directories it makes for it are recorded in ``made`` (or not: None)."""
        make_parents(path, made)
        switch_link(path, src)

    @staticmethod
    def _make_directory(directory, held):
        path = directory["path"]
        ids = account_ids(directory.get("owner") or "root", directory.get("group") or "root")
        if ids is None:
            raise RolloutFailed("%s: owner %s:%s does not exist on this host" % (path, directory.get("owner"), directory.get("group")))
        make_parents(path, held.made)
        if not os.path.isdir(path):
            with writing(path, action="make"):
                os.mkdir(path, 0o700)
            held.made.append(path)
        else:
            st = os.stat(path)
            held.changed_dirs.append((path, st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)))
        with writing(path, action="set the owner and mode of"):
            os.chown(path, *ids)
            os.chmod(path, int(directory.get("mode") or "0700", 8))

    def _remove_absent(self, plan, held):
        """Absent instances go first, what runs first: the unit stopped, or the manifest removed so the kubelet stops
        the pod (and its port is free before this returns)."""
        p = self.p
        removed = []
        for instance in p["instances"]:
            if instance["state"] != "absent":
                continue
            if plan.entry(instance).action != REMOVE:
                if held.holds(instance["name"]):
                    # An unproven earlier change of it, none of its files left: nothing of it to gate or put back.
                    Backup(p["state_dir"], instance["name"]).clear()
                    held.touched = [entry for entry in held.touched if entry[0]["name"] != instance["name"]]
                continue

            def remove_files(instance=instance):
                # Only the files the plan gives this instance: not one another instance still uses.
                mine = plan.entry(instance).files
                for spec in reversed(instance["files"]):
                    if spec["path"] in mine:
                        remove_path(spec["path"])
                        removed.append(spec["path"])
                Backup(p["state_dir"], instance["name"]).clear()
                # An unproven earlier change that made this instance: removing it is the restore of that part.
                held.touched = [entry for entry in held.touched if entry[0]["name"] != instance["name"]]

            self.strategy.remove(instance, remove_files, self.waiter, p["health_timeout"])
        if removed:
            self.strategy.reload(removed)
