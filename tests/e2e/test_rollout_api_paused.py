"""kube-apiserver paused in the middle of a rollout's health gate, on real kubelets.

playbooks/static_pod.yml changes the default scheduler's config on m1 (real kubelet and containerd). Once m1's new
manifest is written and the change's record says its gate has not passed yet, the API server is frozen (SIGSTOP to
its unit on the control-plane host: connections hang, nothing is refused, as with an API server that is stuck) for
75 s, then let go. The kubelet runs the new pod without the API server; the new kube-scheduler listens only once its
start-up requests to the API server gave up (measured: 45 s into the pause). The health gate waits for it (it asks the
new process alone, never the API server) and passes, still inside the pause; the run succeeds with the new config
running and no record, backup or temporary standby left. Once the API server answers again a scheduler holds and
renews the default lease, and the next run changes nothing. m2 is not touched.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kubernetes import client

from cluster import wait_for  # tests/controlplane (realcluster.py puts it on sys.path)
from realcluster import REPO, changed_count

MANIFEST = "/etc/kubernetes/manifests/kube-scheduler.yaml"
STATE_DIR = "/var/lib/kubesched/static-pod"
RECORD = STATE_DIR + "/held-change.json"
# m1's manifest before the run, kept on m1 to tell when the run writes the new one.
MANIFEST_BEFORE = "/root/api-paused-manifest-before.yaml"
PAUSE = 75
# A score no other test of the suite gives m1's default scheduler: the run below is a change whatever ran before.
SCORE = 35


def variables(cluster):
    return {"kube_scheduler_version": cluster.version, "kube_scheduler_instances": [
        {"name": "kube-scheduler", "default_scheduler": True, "config": {"percentageOfNodesToScore": SCORE}}]}


def start(cluster):
    """playbooks/static_pod.yml on m1 as an operator runs it, in the background (the test pauses the API server
    while it runs)."""
    extra = cluster.directory / "api-paused-vars.json"
    extra.write_text(json.dumps(variables(cluster)))
    return subprocess.Popen(
        [str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(cluster.real.inventory()),
         "-e", "@%s" % extra, "--limit", cluster.masters[0], "playbooks/static_pod.yml"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO,
        env=dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0"))


def api_server_signal(real, signal):
    real.node_exec(real.api_host, "systemctl", "kill", "--kill-whom=main", "--signal=" + signal, "kube-apiserver.service")


def api_server_state(real):
    """The state letter of kube-apiserver's process in ps (T: stopped)."""
    pid = real.node_exec(real.api_host, "systemctl", "show", "--property=MainPID", "--value", "kube-apiserver.service")
    return real.node_exec(real.api_host, "ps", "-o", "stat=", "-p", pid.strip()).strip()


def answers(cluster):
    try:
        client.CoreV1Api(cluster.api()).list_namespace(limit=1, _request_timeout=3)
    except Exception:  # pylint: disable=broad-except  # a timeout or a refused connection: it does not answer
        return False
    return True


def listener(real, master):
    """The process listening on the default scheduler's secure port (ss's users field), "" when none."""
    line = real.node_exec(master, "ss", "-Hltnp", "sport = :10259").strip()
    return line.split("users:", 1)[-1] if line else ""


def lease(cluster):
    found = client.CoordinationV1Api(cluster.api()).read_namespaced_lease("kube-scheduler", "kube-system")
    return found.spec.holder_identity or "", found.spec.renew_time


def test_the_health_gate_waits_for_the_new_process_while_the_api_server_is_frozen_and_the_next_run_changes_nothing(cluster):
    real, m1 = cluster.real, cluster.masters[0]
    before = real.node_exec(m1, "cat", MANIFEST)
    configs = "cat /etc/kubernetes/schedulers/*.yaml 2>/dev/null; true"
    assert "percentageOfNodesToScore: %d" % SCORE not in real.node_exec(m1, "sh", "-c", configs)
    real.node_exec(m1, "cp", MANIFEST, MANIFEST_BEFORE)
    started = time.monotonic()
    playbook = start(cluster)
    paused_at = resumed_at = ended = listening = None
    old_process = listener(real, m1)
    try:
        # The pause begins inside the gate: the new manifest is on m1 and its change's record says the gate has not
        # passed (the record is written before the first write and goes with the commit, after the gate).
        # m1 itself watches its manifest, in one exec (a podman exec every 0.2 s from here cost the machine about
        # 0.1 CPU-s each); this loop watches that exec and the run.
        watch = subprocess.Popen(["podman", "exec", m1, "timeout", "600", "sh", "-c",
                                  "while cmp -s %s %s; do sleep 0.2; done" % (MANIFEST, MANIFEST_BEFORE)])
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and playbook.poll() is None and watch.poll() is None:
            time.sleep(0.2)
        if watch.poll() != 0:  # still waiting (the run ended first, or the deadline), or its own time ran out
            watch.kill()
            watch.wait()
            raise AssertionError("the run never wrote m1's new manifest: %s" % (
                playbook.communicate()[0][-6000:] if playbook.poll() is not None else "(still running)"))
        api_server_signal(real, "SIGSTOP")
        paused_at = time.monotonic()
        record = real.node_exec(m1, "cat", RECORD)
        assert playbook.poll() is None and record and json.loads(record)["gate_passed"] is False, (
            "the gate ended before the API server was paused: " + record)
        assert api_server_state(real).startswith("T") and not answers(cluster)
        while time.monotonic() < paused_at + PAUSE:
            if ended is None and playbook.poll() is not None:
                ended = time.monotonic()
            if listening is None and listener(real, m1) not in ("", old_process):
                listening = time.monotonic()
            time.sleep(1)
    finally:
        api_server_signal(real, "SIGCONT")
        resumed_at = time.monotonic()
    output = playbook.communicate(timeout=600)[0]
    ended = ended or time.monotonic()
    print("API server paused %.0f s after the run began, for %.0f s; m1's new scheduler listened %s; the run ended "
          "%.0f s after the pause began (%s the pause), %.0f s in all" % (
              paused_at - started, resumed_at - paused_at,
              "%.0f s after the pause began" % (listening - paused_at) if listening else "only after the pause",
              ended - paused_at, "within" if ended < resumed_at else "after", ended - started))
    assert playbook.returncode == 0, output[-6000:]
    assert changed_count(subprocess.CompletedProcess([], 0, output)) > 0, output[-6000:]
    assert "Restored" not in output and "rolled back" not in output, output[-6000:]

    # The new config runs on m1; nothing of the change is left over.
    assert real.node_exec(m1, "cat", MANIFEST) != before
    assert "percentageOfNodesToScore: %d" % SCORE in real.node_exec(m1, "sh", "-c", configs)
    assert not real.node_exec(m1, "sh", "-c", "test -e %s && echo left || true" % RECORD).strip()
    assert "backup" not in real.node_exec(m1, "find", STATE_DIR)
    assert "kubesched-standby" not in real.node_exec(m1, "ls", "/etc/kubernetes/manifests", "/etc/kubernetes/schedulers")
    assert listener(real, m1) not in ("", old_process)

    # The API server answers again and a scheduler holds the default lease, renewed since.
    wait_for("the API server to answer", lambda: answers(cluster), timeout=60)
    resumed = time.time()
    wait_for("a scheduler to renew the default lease", lambda: lease(cluster)[0] and lease(cluster)[1].timestamp() > resumed,
             timeout=90)
    again = cluster.playbook("playbooks/static_pod.yml", variables(cluster), masters=True, check=False,
                             options=("--limit", m1))
    assert again.returncode == 0 and changed_count(again) == 0, again.stdout[-6000:]


@pytest.fixture(autouse=True)
def _api_server_runs_again(cluster):
    """Whatever the test did, the API server is not left frozen for the tests after it."""
    yield
    api_server_signal(cluster.real, "SIGCONT")
