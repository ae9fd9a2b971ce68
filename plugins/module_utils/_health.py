# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one health gate of this collection: a NEW process listens on the scheduler's port and answers health.

A health answer from the process that listened before a change (the old pod the kubelet has not replaced yet, the
unit systemd has not restarted yet) never counts, as kubeadm waits for a static pod's hash to change before it
asks the component. Host code: stdlib and ansible.module_utils only.
"""

from __future__ import annotations

import os
import time

from ansible.module_utils.urls import open_url

_LISTEN = "0A"


def _listening_inodes(port):
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as handle:
                lines = handle.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == _LISTEN:
                inodes.add(fields[9])
    return inodes


def listener_pid(port):
    """The process listening on TCP ``port`` (host network: pods' processes are visible from the host), or None."""
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    wanted = set("socket:[%s]" % inode for inode in inodes)
    for pid in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
        fd_dir = "/proc/%s/fd" % pid
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(os.path.join(fd_dir, fd)) in wanted:
                    return int(pid)
            except OSError:
                continue
    # A socket whose owner we cannot see (another PID namespace) still means the port is taken.
    return 0


def port_holder(port):
    """Who listens on TCP ``port`` (a Holder), or None when it is free."""
    pid = listener_pid(port)
    return None if pid is None else Holder(port, pid)


class Holder(object):
    """The process listening on a port, as the kernel tells it: its pid (0: one in another PID namespace, which this
    master's /proc does not show), its command name and its cgroups (/proc/<pid>/cgroup: systemd's unit, or the
    container a pod's process runs in). ``str()`` names it for a message."""

    def __init__(self, port, pid):
        self.port = port
        self.pid = pid
        self.comm = (_read("/proc/%d/comm" % pid) or "").strip() if pid else ""
        self.cgroups = (_read("/proc/%d/cgroup" % pid) or "") if pid else ""
        self.cgroup = _main_cgroup(self.cgroups)

    def in_cgroup(self, group):
        """Whether the process runs in the cgroup ``group`` (a unit's ControlGroup) or one below it."""
        return bool(group) and (self.cgroup == group or self.cgroup.startswith(group.rstrip("/") + "/"))

    def __str__(self):
        if not self.pid:
            return "a process this master's /proc does not show (another PID namespace)"
        said = ", ".join(part for part in (self.comm, "cgroup %s" % self.cgroup if self.cgroup else "") if part)
        return "process %d (%s)" % (self.pid, said) if said else "process %d" % self.pid


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def _main_cgroup(text):
    """The cgroup a process is in: the unified hierarchy's (cgroup v2), else systemd's named hierarchy (v1)."""
    paths = {}
    for line in text.splitlines():
        _hierarchy, _sep, rest = line.partition(":")
        controllers, _sep, path = rest.partition(":")
        paths.setdefault(controllers, path)
    return paths.get("", paths.get("name=systemd", next(iter(paths.values()), "")))


def health_error(url, timeout=5):
    """None when ``url`` answers 200 "ok" (the serving certificate is not verified), else the reason."""
    try:
        response = open_url(url, timeout=timeout, validate_certs=False)
        body = response.read().decode("utf-8", "replace").strip()
    except Exception as exc:  # refused, TLS errors, HTTP errors: all mean "not healthy yet"
        return "%s: %s" % (url, exc)
    if response.getcode() != 200 or body != "ok":
        return "%s answered %s %r" % (url, response.getcode(), body[:200])
    return None


# How long the plan's one look at a running instance waits for its answer: kube-scheduler answers its health
# endpoint in milliseconds, so a plan stays quick and one that hangs costs this much.
PROBE_TIMEOUT = 3


def probe(port, url, timeout=PROBE_TIMEOUT):
    """One look at an instance: (pid, None) when a process listens on ``port`` and answers ``url``, else (pid or
    None, what it answered)."""
    pid = listener_pid(port)
    if pid is None:
        return None, "no process listens on port %d" % port
    return pid, health_error(url, timeout)


def _seconds(value):
    return ("%.1f" % value).rstrip("0").rstrip(".")


# How often a gate looks: a new process is seen answering, and its settle seen over, within this much (each look
# reads /proc and makes one HTTPS request to the loopback, a few milliseconds).
LOOK_EVERY = 0.25


def wait_for_new_healthy(port, url, previous_pid, timeout, settle, clock=time.time, sleep=time.sleep):
    """Wait until a process other than ``previous_pid`` listens on ``port`` and answers ``url``, then watch it: the
    gate passes once that one process has answered at every look for ``settle`` seconds without a break. A break
    (no answer, or another process on the port: a restart) starts the count again at the next answer.

    The deadline: the first healthy answer must come within ``timeout``; one that does still gets its full settle,
    so the call may take up to ``timeout + settle``. After the deadline the count never starts again: the process
    watched then must hold to the end of its settle. (The settle is never cut to what is left of the timeout: a
    process that answered just before the deadline would pass having held for no time at all.)

    Returns (pid, error, healthy_for): (pid, None, seconds it answered, at least ``settle``) when the gate passes,
    (pid or None, why, seconds the last process watched answered without a break) when it does not."""
    deadline = clock() + timeout
    healthy_since, healthy_pid = None, None
    broke = None  # how the last watched process stopped answering, for the message
    while True:
        pid = listener_pid(port)
        if pid is None:
            error = "no process listens on port %d" % port
        elif previous_pid and pid == previous_pid:
            error = "the previous process %d still listens on port %d" % (pid, port)
        else:
            error = health_error(url)
        now = clock()
        if healthy_pid is not None and (error is not None or pid != healthy_pid):
            held = now - healthy_since
            broke = ("process %s answered for %ss of its %ss settle, then %s" % (
                healthy_pid, _seconds(held), settle,
                error if error is not None else "process %s took port %d" % (pid, port)))
            healthy_since, healthy_pid = None, None
            if now >= deadline:
                return pid, broke, held
        if error is None and healthy_pid is None and now < deadline:
            healthy_since, healthy_pid = now, pid
        if healthy_pid is not None:
            if now - healthy_since >= settle:
                return pid, None, now - healthy_since
        elif now >= deadline:
            if error is None:
                error = "process %s first answered after the %ss deadline" % (pid, timeout)
            return pid, error + ("; earlier, " + broke if broke else ""), 0.0
        sleep(LOOK_EVERY)


def wait_for_port_free(port, timeout, clock=time.time, sleep=time.sleep):
    """True once nothing listens on ``port`` (a removed pod has stopped), False at the deadline."""
    deadline = clock() + timeout
    while listener_pid(port) is not None:
        if clock() >= deadline:
            return False
        sleep(LOOK_EVERY)
    return True
