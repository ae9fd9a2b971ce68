# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make before break on the master: the temporary standbys of one apply call.

The controller renders a standby (plugin_utils/rollout/temporary_standby.py: the new config, a spare port, a short retry
period) for an instance that holds a lease no other master stands by for. The engine (engine.py) starts it before
it writes the instance's files, so that the standby takes the lease the moment the old process releases it; once the
instance's new process answers its health gate, the standby goes and the lease moves back. Every standby a call
started is gone when the call returns, also after a failure (the engine's one restore removes it once the instance
is back). A standby a killed run left behind is found by its files on the next run (``leftovers``) and removed:
once its instance answers health, or at once when its instance is now absent.
Host code: stdlib only.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.kubesched.schedulers.plugins.module_utils._files import remove_path
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import RolloutFailed


# How much of a file is read for its mark: the standby's config copy and unit carry it in their first line, its
# manifest among its labels, near the top.
_MARK_READ = 64 * 1024


def carries(path, mark):
    """Whether the regular file ``path`` has ``mark`` as one of its lines: alone, as a comment, or as a label of the
    manifest (indented, its value maybe quoted)."""
    if os.path.islink(path) or not os.path.isfile(path):
        return False
    with open(path, "rb") as handle:
        return carries_text(handle.read(_MARK_READ).decode("utf-8", "replace"), mark)


def carries_text(text, mark):
    key, _colon, value = mark.partition(": ")
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("#"):
            line = line[1:].strip()
        found_key, colon, found_value = line.partition(":")
        if colon and found_key.strip().strip("\"'") == key and found_value.strip().strip("\"'") == value:
            return True
    return False


def leftovers(instances):
    """The standbys of ``instances`` whose files a run that stopped half-way left on this master, whatever the state
    of their instance now: [{name, state (the instance's), paths (those present and carrying the standby's mark),
    unit, port}]. A file at a standby's path without the mark is not the collection's (an operator's, or an
    instance's) and is never counted, so never removed."""
    found = []
    for instance in instances:
        spec = instance.get("standby_leftover")
        if not spec:
            continue
        present = [path for path in spec["paths"] if carries(path, spec["mark"])]
        if present:
            found.append({"name": instance["name"], "state": instance.get("state", "present"), "paths": present,
                          "unit": spec.get("unit"), "port": spec["port"]})
    return found


def leftover_warnings(found):
    """What the plan says of the standbys ``leftovers`` found: one removed once its instance answers health, one of an
    absent instance removed with it (it stands in for nothing any more, and would keep running)."""
    warnings = []
    for state, text in (("present", "%s: a temporary standby an earlier run started is still on this master (%s); the "
                                    "apply step removes it once the instance it stands in for answers health, never "
                                    "before"),
                        ("absent", "%s: a temporary standby an earlier run started is still on this master (%s), and "
                                   "its instance is absent: it stands in for nothing and would keep running; the apply "
                                   "step stops it and removes its files with the instance")):
        left = [entry for entry in found if entry["state"] == state]
        if left:
            warnings.append(text % (", ".join(entry["name"] for entry in left),
                                    ", ".join(path for entry in left for path in entry["paths"])))
    return warnings


def remove_absent(strategy, waiter, found, timeout):
    """The standbys ``leftovers`` found for absent instances, stopped and their files removed; returns the problems."""
    problems = []
    for entry in found:
        if entry["state"] == "absent":
            problems.extend(remove(strategy, waiter, adopted(entry), timeout))
    return problems


def _removal(spec):
    """What removes a standby this call started: {name, for (the instance), unit, port, paths}."""
    return {"name": spec["name"], "for": spec["standby_for"], "unit": spec.get("unit"), "port": spec["port"],
            "paths": [f["path"] for f in spec["files"]]}


def adopted(found):
    """A standby an earlier, killed run left ({name (its instance), paths, unit, port}, from ``leftovers``) as one
    this call removes once its instance answers health."""
    name = os.path.splitext(os.path.basename(found["paths"][0]))[0]
    return {"name": name, "for": found["name"], "unit": found.get("unit"), "port": found["port"],
            "paths": list(found["paths"])}


class TemporaryStandbys(object):
    """The standbys this call runs or took over from a killed run; ``write`` writes one file spec (the engine's
    atomic writer)."""

    def __init__(self, strategy, waiter, write, timeout, settle):
        self.strategy = strategy
        self.waiter = waiter
        self._write = write
        self.timeout = timeout
        self.settle = settle
        self.running = []  # removals (_removal, adopted) of the standbys this call removes, in start order

    def adopt(self, found):
        """A standby a killed run left: removed with this call's own (never before its instance answers)."""
        self.running.append(adopted(found))

    def start(self, specs):
        """Each standby written, started and answering its readiness gate from a process of its own. Raises
        RolloutFailed (the caller restores, and ``stop_all`` removes what was started) when a port is taken or a
        standby never answers."""
        for spec in specs:
            pid = self.waiter.listener(spec["port"])
            if pid is not None:
                raise RolloutFailed("%s: port %d, for the temporary standby of %s, is taken by process %s on this "
                                    "master; set kube_scheduler_standby_port_offset to a free range, or "
                                    "kube_scheduler_make_before_break: false"
                                    % (spec["name"], spec["port"], spec["standby_for"], pid))
        for spec in specs:
            self.running.append(_removal(spec))
            for file_spec in spec["files"]:
                self._write(file_spec)
        self.strategy.reload([file_spec["path"] for spec in specs for file_spec in spec["files"]])
        for spec in specs:
            self.strategy.start_standby(spec)
        with ThreadPoolExecutor(max_workers=len(specs) or 1) as pool:
            gates = [(spec, pool.submit(self.waiter.wait_new_healthy, spec["port"], spec["health_url"], None,
                                        self.timeout, self.settle)) for spec in specs]
        failed = ["the temporary standby %s gave no ready answer within %ss: %s" % (spec["name"], self.timeout, error)
                  for spec, (_pid, error, _healthy_for) in ((spec, future.result()) for spec, future in gates) if error]
        if failed:
            raise RolloutFailed("; ".join(failed))

    def stop_all(self, keep_for=()):
        """Every standby this call runs goes, but those standing in for an instance of ``keep_for`` (not healthy:
        the standby is the one process of its master that elects on that lease): the lease it holds moves back.
        Returns what could not be removed (the caller reports it), never raises."""
        problems = []
        kept = [removal for removal in self.running if removal["for"] in keep_for]
        for removal in reversed(self.running):
            if removal not in kept:
                problems.extend(remove(self.strategy, self.waiter, removal, self.timeout))
        self.running = kept
        return problems


def remove(strategy, waiter, found, timeout):
    """A standby ({name, paths, unit, port}) stopped and its files removed, the unit file last seen by systemd;
    returns the problems, one line each."""
    def remove_files():
        for path in reversed(found["paths"]):
            remove_path(path)

    try:
        strategy.remove({"name": found["name"], "unit": found.get("unit"), "port": found["port"]}, remove_files, waiter, timeout)
        strategy.reload(found["paths"])
    except (RolloutFailed, OSError) as exc:
        return ["the temporary standby %s was NOT removed: %s (remove %s)" % (found["name"], exc, ", ".join(found["paths"]))]
    return []
