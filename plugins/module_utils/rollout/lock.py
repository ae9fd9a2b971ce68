# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One rollout at a time on a master: the engine's lock in its state directory.

The engine's calls of one run on a master are separate module calls (plan, apply, commit or restore), so what keeps
two runs apart is a record on the master, ``<state_dir>/rollout-lock.json`` (root's, mode 0600): the run that holds
it (the identity the controller gives every call of one playbook run: its id, when it started, its controller and
playbook) and when that run last renewed it. The apply takes it and keeps it while the run's change is held on the
master; the commit or the restore renews it, then releases it (an apply that commits in its own call, or fails and
restores, releases it at once). A plan, a Check job's too, only looks. Another run's call is refused, naming the
holder, before it reads anything else: a change in flight is never taken for one a dead run left (a plan would
report it as pending, an apply would adopt its standby and write over it). A lock not renewed for ``timeout`` seconds
is taken for one whose run died and is taken over, with a warning. The check and the take happen under an exclusive
flock of the state directory, and the record is replaced by an atomic rename (written and fsynced first), so two
engines on one master never both win and a reader never sees half a record. Host code: stdlib only.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from contextlib import contextmanager

from ansible_collections.kubesched.schedulers.plugins.module_utils._files import write_atomically, writing
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import PreflightFailed

FILE_NAME = "rollout-lock.json"
# The role variable that sets the timeout (named in messages).
TIMEOUT_VARIABLE = "kube_scheduler_rollout_lock_timeout"
# Its default (the roles' too): longer than the longest legitimate gap between two calls of one run on one master,
# the wait of a master planned at the start for its turn in the apply play (docs/hostile-inputs.md, Concurrency).
DEFAULT_TIMEOUT = 1800


class LockHeld(PreflightFailed):
    """Another run holds the master: nothing was read as pending, nothing was changed. ``holder``: that run."""

    def __init__(self, message, holder):
        super(LockHeld, self).__init__(message)
        self.holder = holder


def _when(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def describe(run):
    """A run as the operator knows it: its id, when it started, where and what it ran."""
    run = run if isinstance(run, dict) else {}
    parts = ["run %s" % (run.get("id") or "(unknown)")]
    if run.get("started"):
        parts.append("started %s" % run["started"])
    if run.get("controller"):
        parts.append("on controller %s" % run["controller"])
    if run.get("playbook"):
        parts.append("playbook %s" % run["playbook"])
    if run.get("job"):
        parts.append(str(run["job"]))
    return ", ".join(parts)


class MasterLock(object):
    """``run``: the calling run's identity (a mapping with at least ``id``), or None for a caller that names no run
    (it is refused by a live lock of a run, and takes none); ``timeout``: seconds without renewal after which a lock
    is taken over."""

    def __init__(self, state_dir, run, timeout, clock=time.time, take_over=None):
        self.state_dir = state_dir
        self.path = os.path.join(state_dir, FILE_NAME)
        self.run = run if run and run.get("id") else None
        self.timeout = int(timeout)
        self.clock = clock
        # The id of a holder the controller found dead (its ansible-playbook process gone): taken over at once.
        self.take_over = take_over

    @classmethod
    def of(cls, params):
        """The lock an engine call names: ``state_dir`` and ``lock`` ({run, timeout}) of its parameters."""
        lock = params.get("lock") or {}
        return cls(params["state_dir"], lock.get("run"), lock.get("timeout") or DEFAULT_TIMEOUT,
                   take_over=lock.get("take_over"))

    # --- the calls -----------------------------------------------------------------------------------------------
    def take(self):
        """Take or renew the lock for this run; returns the warnings (a lock taken over). Raises LockHeld."""
        if self.run is None:
            return self.check()
        with self._guard(create=True):
            warnings = self._judge(self._read(), True)
            record = {"run": self.run, "renewed": self.clock(), "timeout": self.timeout}
            write_atomically(self.path, json.dumps(record, indent=1, sort_keys=True).encode("utf-8"), None, 0o600)
        return warnings

    def check(self):
        """What take would say, writing nothing (check mode, or a caller that names no run)."""
        if not os.path.isdir(self.state_dir):
            return []
        with self._guard(create=False):
            return self._judge(self._read(), False)

    def release(self):
        """The lock goes when this run holds it; another run's lock stays. Returns whether one was released."""
        if self.run is None or not os.path.isdir(self.state_dir):
            return False
        with self._guard(create=True):
            found = self._read()
            if found is None or (found.get("run") or {}).get("id") != self.run["id"]:
                return False
            with writing(self.path, action="remove", purpose="the rollout lock of this master"):
                os.unlink(self.path)
        return True

    # --- inside ----------------------------------------------------------------------------------------------------
    @contextmanager
    def _guard(self, create):
        """An exclusive flock of the state directory itself for the check-and-take (or the check, or the release):
        a directory is never unlinked and replaced under a waiting engine, as a lock file of its own could be."""
        if create:
            with writing(self.state_dir, action="make", purpose="the state directory"):
                os.makedirs(self.state_dir, 0o700, exist_ok=True)
        try:
            fd = os.open(self.state_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as error:
            if isinstance(error, FileNotFoundError) and not create:
                yield  # a plan on a master no run ever locked: nothing to guard, nothing to read
                return
            with writing(self.state_dir, action="open", purpose="the state directory, to lock it"):
                raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _read(self):
        """The record, or None. One that cannot be read counts as a lock of an unknown run renewed when the file
        last changed: refused while fresh, taken over once stale, never silently ignored."""
        try:
            with open(self.path) as handle:
                record = json.load(handle)
            if isinstance(record, dict) and isinstance(record.get("renewed"), (int, float)):
                return record
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            pass
        try:
            changed = os.stat(self.path).st_mtime
        except FileNotFoundError:
            return None
        return {"run": {"id": "(unknown: %s cannot be read)" % self.path}, "renewed": changed, "unreadable": True}

    def _judge(self, found, taking):
        """Nothing, or this run's own lock: no word. Another run's fresh lock: LockHeld. A stale one, or one whose
        run the controller found dead: a warning (``taking``: this call takes it; else a later call of the run will)."""
        if found is None:
            return []
        holder = found.get("run") or {}
        if self.run is not None and holder.get("id") == self.run["id"]:
            return []
        now = self.clock()
        age = max(0, int(now - found["renewed"]))
        shown = "%s, which last renewed it at %s (%d s ago)" % (describe(holder), _when(found["renewed"]), age)
        taker = "%s %s" % (describe(self.run) if self.run is not None else "the next run",
                           "takes it over" if taking else "will take it over at its apply")
        if self.take_over and holder.get("id") == self.take_over:
            return ["this master's rollout lock (%s) belongs to a run whose ansible-playbook process on this controller "
                    "is gone (pid %s): %s" % (shown, holder.get("pid"), taker)]
        if age > self.timeout:
            return ["this master's rollout lock (%s) was not renewed for more than %s (%d s): its run is taken for "
                    "one that died, and %s" % (shown, TIMEOUT_VARIABLE, self.timeout, taker)]
        raise LockHeld(
            "another rollout holds this master: %s; nothing was changed. Two runs changing one master at once would "
            "each take the other's change for its own (a change in flight is not one an earlier run abandoned). Wait "
            "until that run ends; a lock not renewed for %s (%d s) is taken for one whose run died and is taken over "
            "(from %s); if that run is known to be gone, remove %s" % (
                shown, TIMEOUT_VARIABLE, self.timeout, _when(found["renewed"] + self.timeout), self.path), holder)
