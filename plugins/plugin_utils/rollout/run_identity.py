# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which run a rollout call belongs to: one identity per ansible-playbook run, the same in every task of it.

The master's rollout lock and the cluster's rollout Lease name their holder by it. Nothing has to carry it from task
to task: every task of a run executes in a worker process forked by the one ansible-playbook process, so the
identity is derived from that process (this controller's host name, its pid and the time it started), which no
other run shares, and which a second run on the same controller (another AWX job, another operator, a slice of a
sliced job) never has. Its description adds what the operator knows a run by: the playbook, and the AWX job.
A lock held by a run of this controller whose process is gone (a killed run rerun from the same machine) is known
dead (``gone``), and is taken over at once instead of after its timeout.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time


def _started(pid):
    """When the process ``pid`` started (seconds since the epoch), from /proc; None where there is none."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            # The command (field 2) may hold spaces and parentheses: the fields after its last ")" are fixed.
            ticks = int(handle.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat") as handle:
            boot = next(int(line.split()[1]) for line in handle if line.startswith("btime "))
        return boot + ticks / float(os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def run_identity(task_vars=None, playbooks=None, pid=None):
    """{id, started, controller, playbook, job}: ``pid`` is the ansible-playbook process (the worker's parent),
    ``playbooks`` the playbook paths it was given, ``task_vars`` the task's variables (AWX's job variables)."""
    pid = os.getppid() if pid is None else pid
    controller = socket.gethostname()
    started = _started(pid)
    # Without /proc (a controller that is not Linux) the pid alone tells this run from the others of the moment.
    key = "%s/%d/%s" % (controller, pid, "%.2f" % started if started is not None else "")
    identity = {"id": hashlib.sha256(key.encode("utf-8")).hexdigest()[:16],
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)) if started else "(unknown)",
                "controller": controller, "pid": pid,
                "playbook": ", ".join(playbooks or []) or "(not named)"}
    task_vars = task_vars or {}
    job = task_vars.get("awx_job_id", task_vars.get("tower_job_id"))
    if job is not None:
        name = task_vars.get("awx_job_template_name", task_vars.get("tower_job_template_name"))
        identity["job"] = "AWX job %s%s" % (job, " (%s)" % name if name else "")
    return identity


def gone(run):
    """Whether ``run`` (a lock's holder) is a run of this controller whose ansible-playbook process is gone (no
    process with its pid, or one that started at another time): then it is dead for sure, and its locks need not
    wait out their timeout. A run of another controller (another AWX job's container) cannot be asked: False."""
    if not isinstance(run, dict) or run.get("controller") != socket.gethostname() or not isinstance(run.get("pid"), int):
        return False
    started = _started(run["pid"])
    return started is None or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)) != run.get("started")


def playbooks_of_this_run():
    """The playbooks the ansible-playbook command was given (ansible-core's parsed command line)."""
    from ansible import context  # pylint: disable=import-outside-toplevel
    return [os.path.abspath(path) for path in (context.CLIARGS.get("args") or ())]
