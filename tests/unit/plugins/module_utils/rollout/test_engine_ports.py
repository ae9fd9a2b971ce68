# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan's port check asks the kernel who listens (/proc: the socket's process, its cgroup) and systemd or the
container runtime whose process that is, never the instance's unit or manifest. The foreign process is real (python's
http.server on a free port); systemctl and crictl answer as a master's do (this machine runs neither systemd nor a
kubelet: tests/e2e has the real ones)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils import _health
from ansible_collections.kubesched.schedulers.plugins.module_utils._kubelet import node_name
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import PLAN, Engine
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import PreflightFailed
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.strategies import StaticPodStrategy, SystemdStrategy

from test_engine import FakeWaiter, converge, instance, params, snapshot


@pytest.fixture
def listener():
    """A real process, no scheduler's, listening on a free port: (port, pid, comm)."""
    proc = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(re.search(r" port (\d+) ", proc.stdout.readline()).group(1))
        with open("/proc/%d/comm" % proc.pid) as handle:
            yield port, proc.pid, handle.read().strip()
    finally:
        proc.kill()
        proc.wait()


def cgroup_of(pid):
    return _health.Holder(0, pid).cgroup


class KernelWaiter(FakeWaiter):
    """The fake gate, but who holds a port is what the kernel says (the real module's port_holder)."""

    port_holder = staticmethod(_health.port_holder)


class Systemd(SystemdStrategy):
    """The real systemd strategy; systemctl answers as a master's systemd does: ``units`` maps a unit to its
    (MainPID, ControlGroup), a unit it does not name runs nothing (MainPID=0, as for a unit not loaded)."""

    def __init__(self, units=None, enabled=True):
        self.asked = []

        def run(argv):
            self.asked.append(argv)
            if argv[:2] == ["systemctl", "show"]:
                main, group = (units or {}).get(argv[-1], (0, ""))
                return 0, "MainPID=%d\nControlGroup=%s\n" % (main, group), ""
            if argv[:2] == ["systemctl", "is-enabled"]:
                return (0 if enabled else 1), "", ""
            return 0, "", ""
        super().__init__(run)

    def facts(self, params):
        return {"host": {"systemd": True}}, []


def unit_on(port):
    return "[Service]\nExecStart=/bin/one --secure-port=%d\n" % port


def one(tmp_path, port, config="a: 1\n", **extra):
    entry = instance(tmp_path, "one", port, config=config, **extra)
    entry["files"][1]["content"] = unit_on(port)
    return entry


def test_a_foreign_process_on_the_port_the_units_own_file_names_is_refused_naming_it(tmp_path, listener):
    """The report's case: the role's own unit names the port, an unrelated process listens there. The unit's file
    and systemd's "active" said yes; the kernel and systemd's MainPID say it is not the unit's process."""
    port, pid, comm = listener
    converge(params(tmp_path, [one(tmp_path, port)]))
    before = snapshot(tmp_path)
    strategy = Systemd({"one.service": (os.getpid(), "/system.slice/one.service")})
    with pytest.raises(PreflightFailed) as failure:
        Engine(params(tmp_path, [one(tmp_path, port, config="a: 2\n")]), strategy, KernelWaiter()).run(PLAN)
    assert str(failure.value) == (
        "nothing was changed: one: secure port %d is taken on this master by process %d (%s, cgroup %s), not by the "
        "kube-scheduler this change replaces (its unit one.service runs process %d (cgroup /system.slice/one.service)): "
        "kube-scheduler would exit at start (bind: address already in use); stop that process, or give the instance "
        "a free port (its secure_port, or --secure-port in its flags)" % (port, pid, comm, cgroup_of(pid), os.getpid()))
    assert ["systemctl", "show", "--property=MainPID", "--property=ControlGroup", "one.service"] in strategy.asked
    assert snapshot(tmp_path) == before


def test_the_units_own_process_is_accepted_whatever_its_file_says(tmp_path, listener):
    """systemd's MainPID (or the unit's cgroup) is the listener: the process the change replaces, so no refusal, also
    where the unit's file cannot tell (a disabled unit the change starts again, a file naming another port)."""
    port, pid, _comm = listener
    converge(params(tmp_path, [one(tmp_path, port)]))
    disabled = Systemd({"one.service": (pid, "/system.slice/one.service")}, enabled=False)
    result = Engine(params(tmp_path, [one(tmp_path, port)]), disabled, KernelWaiter()).run(PLAN)
    assert result["plan"]["instances"]["one"]["action"] == "start" and result["changed"]
    # A process in the unit's cgroup that is not its main process (a child it started) is the unit's too.
    moved = one(tmp_path, port, config="a: 2\n")
    (tmp_path / "units" / "one.service").write_text(unit_on(port + 1))
    in_its_cgroup = Systemd({"one.service": (os.getpid() + 100000, cgroup_of(pid))})
    result = Engine(params(tmp_path, [moved]), in_its_cgroup, KernelWaiter()).run(PLAN)
    assert result["plan"]["instances"]["one"]["action"] == "update"


MARK = "kubesched.schedulers/standby-for: one"


def test_a_standby_port_a_foreign_process_holds_is_refused_also_for_a_standby_a_killed_run_left(tmp_path, listener):
    """A killed run left one's temporary standby (its marked files); an unrelated process listens on the standby's
    port. The plan once only warned that the apply step would remove the standby once one answers."""
    port, pid, comm = listener
    instance_port = port + 1 if port < 65535 else port - 1
    converge(params(tmp_path, [one(tmp_path, instance_port)]))
    paths = [str(tmp_path / "run" / "kubesched-standby-one.service"), str(tmp_path / "etc" / "kubesched-standby-one.yaml")]
    for path in paths:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write("# %s\n" % MARK)
    left = {"paths": paths, "unit": "kubesched-standby-one.service", "port": port, "mark": MARK}
    p = params(tmp_path, [one(tmp_path, instance_port, standby_leftover=left)])
    before = snapshot(tmp_path)
    with pytest.raises(PreflightFailed) as failure:
        Engine(p, Systemd(), KernelWaiter()).run(PLAN)
    assert str(failure.value) == (
        "nothing was changed: one: port %d of its temporary standby kubesched-standby-one, which an earlier run left, "
        "is taken on this master by process %d (%s, cgroup %s), not by that standby (its unit "
        "kubesched-standby-one.service runs no process): the apply step would count on a standby that does not run; "
        "stop that process, or remove the standby's files (%s) once one answers health"
        % (port, pid, comm, cgroup_of(pid), ", ".join(paths)))
    assert snapshot(tmp_path) == before
    # The standby's own process on its port is no refusal: the apply step takes it over.
    result = Engine(p, Systemd({"kubesched-standby-one.service": (pid, "/system.slice/kubesched-standby-one.service")}),
                    KernelWaiter()).run(PLAN)
    assert result["plan"]["standby_leftovers"] == ["one"]


def test_a_process_of_another_pid_namespace_is_never_the_instances(tmp_path):
    hidden = _health.Holder(10259, 0)
    assert str(hidden) == "a process this master's /proc does not show (another PID namespace)"
    assert Systemd({"one.service": (0, "/system.slice/one.service")}).foreign({"unit": "one.service"}, hidden)
    assert StaticPodStrategy(lambda argv: (0, "", ""), which=lambda name: "/usr/bin/" + name).foreign(
        {"name": "one"}, hidden) == "its pod's processes are in this master's PID namespace"


# --- static pods: the listener's cgroup names its container; crictl says whose pod it is --------------------------

MINE, OTHER = "a" * 64, "b" * 64


def in_container(holder, container_id):
    """The real listener as a pod's process is seen: its cgroup names its container (containerd, systemd driver)."""
    holder.cgroups = ("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f1e2d3c_4b5a_6978_8796_"
                      "a5b4c3d2e1f0.slice/cri-containerd-%s.scope\n" % container_id)
    holder.cgroup = holder.cgroups[3:].strip()
    return holder


def crictl(running):
    calls = []

    def run(argv):
        calls.append(argv)
        if argv[:2] == ["crictl", "ps"]:
            return 0, "".join("%s\n" % container for container in running), ""
        return 1, "", "unexpected"
    return run, calls


def test_a_static_pods_port_is_its_own_only_when_the_listeners_container_is_one_of_its_pods(tmp_path, listener):
    port, pid, _comm = listener
    run, calls = crictl([MINE])
    strategy = StaticPodStrategy(run, which=lambda name: "/usr/bin/" + name)
    pod = {"name": "one", "files": [{"path": str(tmp_path / "one.yaml"), "content": "--secure-port=%d" % port}]}
    assert strategy.foreign(pod, in_container(_health.port_holder(port), MINE)) is None
    assert calls == [["crictl", "ps", "--quiet", "--state", "running", "--label", "io.kubernetes.pod.namespace=kube-system",
                      "--label", "io.kubernetes.pod.name=one-%s" % node_name()]]
    assert strategy.foreign(pod, in_container(_health.port_holder(port), OTHER)) == (
        "its pod kube-system/one-%s runs container %s" % (node_name(), MINE[:13]))
    # The process as it really is: in no container (or, where this machine is a container, in one of another pod).
    assert strategy.foreign(pod, _health.port_holder(port)) in (
        "that process runs in no container", "its pod kube-system/one-%s runs container %s" % (node_name(), MINE[:13]))
    run, calls = crictl([])
    assert StaticPodStrategy(run, which=lambda name: "/usr/bin/" + name).foreign(
        pod, in_container(_health.port_holder(port), MINE)) == "its pod kube-system/one-%s runs no container" % node_name()


def test_without_crictl_a_pods_process_on_the_port_its_manifest_names_is_taken_for_its_own_and_no_other(tmp_path, listener):
    port, _pid, _comm = listener
    manifest = tmp_path / "one.yaml"
    manifest.write_text("spec:\n  containers:\n  - command: [kube-scheduler, --secure-port=%d]\n" % port)
    pod = {"name": "one", "files": [{"path": str(manifest)}]}
    strategy = StaticPodStrategy(lambda argv: (127, "", "not found"), which=lambda name: None)
    assert strategy.foreign(pod, in_container(_health.port_holder(port), MINE)) is None
    real = _health.port_holder(port)
    if not re.search(r"\b[0-9a-f]{64}\b", real.cgroups):  # this machine's processes are in no container
        assert strategy.foreign(pod, real) == "that process runs in no container"
    manifest.write_text("spec:\n  containers:\n  - command: [kube-scheduler, --secure-port=%d]\n" % (port + 1))
    assert strategy.foreign(pod, in_container(_health.port_holder(port), MINE)) == (
        "the pod kube-system/one-%s cannot be asked (there is no crictl) and its manifest names port %d"
        % (node_name(), port + 1))
