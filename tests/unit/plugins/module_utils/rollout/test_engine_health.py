# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A plan never reports a master converged while one of its schedulers does not answer: every instance the call
leaves running as it is is asked its health, once and briefly, and one that does not answer (nothing listens, or
what listens gives another answer) is given its health gate's time, then fails the plan naming it, what it answered
and where its logs are. Against real processes: kube-scheduler 1.35 (KUBE_SCHEDULER_BIN_1_35, serving its health
endpoints without an API server), a plain HTTP server holding the port, and the module in check mode (a Check job)
through real ansible-playbook runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import APPLY, PLAN, Engine
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import PreflightFailed, RolledBack
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.waiter import Waiter

from test_engine import FakeStrategy, FakeWaiter, converge, instance, params

sys.path.insert(0, str(Path(__file__).resolve().parents[5] / "tests" / "controlplane"))
from cluster import free_port  # noqa: E402  pylint: disable=wrong-import-position,import-error

SCHEDULER_VARIABLE = "KUBE_SCHEDULER_BIN_1_35"


@pytest.fixture
def processes():
    """Start real processes for one test; each is stopped at its end."""
    started = []

    def start(argv, delay=0):
        if delay:
            argv = ["sh", "-c", 'sleep %s; exec "$@"' % delay, "sh"] + argv
        started.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))  # pylint: disable=consider-using-with
        return started[-1]

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def scheduler(port):
    """kube-scheduler on ``port``, its API server unreachable: it serves /livez and /healthz all the same."""
    binary = os.environ.get(SCHEDULER_VARIABLE)
    if not binary:
        pytest.skip("%s is not set: no real kube-scheduler 1.35 to ask its health (make binaries)" % SCHEDULER_VARIABLE)
    return [binary, "--secure-port=%d" % port, "--bind-address=127.0.0.1", "--master=http://127.0.0.1:1",
            "--leader-elect=false"]


def answering(port, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        pid, error = Waiter.health(port, "https://127.0.0.1:%d/livez" % port)
        if error is None:
            return pid
        time.sleep(0.2)
    raise AssertionError("nothing answers on port %d" % port)


def converged(tmp_path, port, **extra):
    """A master whose one instance's files are what the plan wants: the plan writes nothing and restarts nothing."""
    p = params(tmp_path, [instance(tmp_path, "one", port)], health_timeout=2, **extra)
    converge(p)
    return p


def test_a_converged_instance_that_answers_is_reported_healthy_and_the_plan_stays_quick(tmp_path, processes):
    port = free_port()
    p = converged(tmp_path, port)
    proc = processes(scheduler(port))
    answering(port)
    started = time.monotonic()
    result = Engine(p, FakeStrategy(), Waiter()).run(PLAN)
    took = time.monotonic() - started
    assert result["changed"] is False
    assert result["plan"]["instances"]["one"] == {"action": "none", "files": [], "health": {
        "status": "healthy", "detail": "process %d answers https://127.0.0.1:%d/livez" % (proc.pid, port)}}
    assert took < 2, "a converged plan took %.2fs" % took  # one short look, no wait (measured: about 0.05 s)


def test_a_converged_instance_nothing_listens_for_fails_the_plan_naming_it_and_where_to_look(tmp_path):
    port = free_port()
    p = converged(tmp_path, port)
    eng = Engine(p, FakeStrategy(), Waiter())
    with pytest.raises(PreflightFailed) as failure:
        eng.run(APPLY)
    assert str(failure.value) == (
        "nothing was changed: one is not healthy: no process listens on port %d (asked again for 2s, the time its "
        "health gate gives a new process); nothing is rolled out on this master while it is not: look at journalctl "
        "-u one.service; last log lines: one.service: the last line it logged" % port)
    assert failure.value.plan["instances"]["one"]["health"] == {
        "status": "not healthy", "detail": "no process listens on port %d" % port}


def test_a_port_another_process_holds_is_not_healthy_with_its_answer(tmp_path, processes):
    """As after a change gave the instance a port another process listens on: the scheduler exits at start and the
    other process keeps the port; what that process answers is said."""
    port = free_port()
    p = converged(tmp_path, port)
    processes([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"])
    deadline = time.time() + 30
    while Waiter.listener(port) is None and time.time() < deadline:
        time.sleep(0.1)
    with pytest.raises(PreflightFailed) as failure:
        Engine(p, FakeStrategy(), Waiter()).run(PLAN)
    message = str(failure.value)
    assert message.startswith("nothing was changed: one is not healthy: https://127.0.0.1:%d/livez: " % port), message
    assert "look at journalctl -u one.service" in message


def test_an_instance_that_is_still_starting_is_waited_for_as_its_gate_would(tmp_path, processes):
    port = free_port()
    p = converged(tmp_path, port, settle=1)
    p["health_timeout"] = 60
    proc = processes(scheduler(port), delay=2)  # a master just booted: its scheduler is not up yet
    started = time.monotonic()
    result = Engine(p, FakeStrategy(), Waiter()).run(PLAN)
    assert time.monotonic() - started >= 2
    assert result["plan"]["instances"]["one"]["health"] == {
        "status": "healthy", "detail": "process %d answers https://127.0.0.1:%d/livez" % (proc.pid, port)}


class Unhealthy(FakeWaiter):
    """Nothing answers health on any port, also not in a gate."""

    def health(self, port, url):
        return None, "no process listens on port %d" % port

    def wait_new_healthy(self, port, url, previous_pid, timeout, settle):
        self.gates.append(port)
        return None, "no process listens on port %d" % port, 0.0


def test_an_instance_an_earlier_run_left_pending_is_not_refused_but_gated_and_restored(tmp_path):
    """A held change whose instance does not answer is the apply step's to gate again and restore, not a reason
    to stop before it."""
    port = 10259
    converged(tmp_path, port)
    changed = params(tmp_path, [instance(tmp_path, "one", port, config="a: 2\n")], health_timeout=2)
    Engine(changed, FakeStrategy(), FakeWaiter()).run(APPLY)  # held, never committed
    eng = Engine(changed, FakeStrategy(), Unhealthy())
    plan, _diff, pending = eng.plan()
    assert pending and plan["held"] == ["one"] and "health" not in plan["instances"]["one"]
    with pytest.raises(RolledBack, match="one gave no healthy answer from a new process"):
        eng.apply(plan)


def test_a_report_asks_no_health(tmp_path):
    p = converged(tmp_path, 10259, health_check=False)
    result = Engine(p, FakeStrategy(), Unhealthy()).run(PLAN)
    assert result["changed"] is False and "health" not in result["plan"]["instances"]["one"]


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: plan
      ansible.legacy.scheduler_rollout:
        kind: static_pod
        mode: apply
        state_dir: "{{ work }}/state"
        health_timeout: 1
        settle: 0
        instances:
          - name: batch
            port: "{{ port }}"
            health_url: "https://127.0.0.1:{{ port }}/livez"
            files:
              - {path: "{{ work }}/batch.yaml", content: "kind: Pod\\n", mode: "0600"}
      ignore_errors: true
"""


@pytest.mark.parametrize("running", [True, False], ids=["answering", "not running"])
def test_a_check_job_reports_each_instances_health_and_fails_on_one_that_does_not_answer(
        tmp_path, ansible_playbook, json_task_results, processes, running, host_side_env):
    if os.geteuid() != 0:
        pytest.skip("the engine compares files owned by root")
    port = free_port()
    (tmp_path / "batch.yaml").write_text("kind: Pod\n")
    os.chmod(str(tmp_path / "batch.yaml"), 0o600)
    if running:
        proc = processes(scheduler(port))
        answering(port)
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    run = ansible_playbook(["--check", "-i", "localhost,", "-c", "local", "-e",
                            "ansible_python_interpreter=%s" % sys.executable, "-e",
                            json.dumps({"work": str(tmp_path), "port": port}), "play.yml"], cwd=tmp_path,
                           env=dict(host_side_env, ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
                                    ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp")))
    result = json_task_results(run)["plan"]
    if running:
        assert not result.get("failed") and result["changed"] is False, result
        assert result["plan"]["instances"]["batch"]["health"] == {
            "status": "healthy", "detail": "process %d answers https://127.0.0.1:%d/livez" % (proc.pid, port)}
        return
    assert result["failed"] and result["rolled_back"] is False
    assert result["msg"] == (
        "nothing was changed: batch is not healthy: no process listens on port %d (asked again for 1s, the time its "
        "health gate gives a new process); nothing is rolled out on this master while it is not: look at crictl ps "
        "--all --name batch, then crictl logs <its container ID> (and journalctl -u kubelet)" % port)
    assert result["plan"]["instances"]["batch"]["health"]["status"] == "not healthy"
