"""A one-master cluster's default scheduler changed by playbooks/static_pod.yml, on real kubelets: make before
break through a temporary standby, and a rollout killed between its last write and its health gate's pass.

The e2e cluster's m2 stops its kubeadm scheduler (its manifest moved away) for the whole module, so m1's is the only
process that elects on kube-system/kube-scheduler: a one-master cluster's shape. m1's manifest is adopted by a first
run; each test starts from the config the one before left (so a failure of one can fail the next), and m2 gets
kubeadm's manifest back at the end, before the preflight tests, which need it.

Killed runs (the change was recorded before it was written, so the next run gates it again, and never leaves a master
without a scheduler): each run is killed as a reboot, an OOM kill or a lost session would kill it, SIGKILL to
ansible-playbook's process group and to the engine on m1, once m1's manifest has the new config.

- A change kube-scheduler refuses only at start: the instance's secure port moves to one the plan finds free, and a
  process of the test takes it once the apply step began (its first write, the standby's manifest). The next plain
  run finds the record, gates the change again, restores the old manifest, sees the old process healthy and holding
  the lease, removes the standby only then, and fails naming the instance.
- An instance dropped from the inventory: the killed change also made a second instance, batch, whose port a process
  of the test takes once the apply step began; the next run names kube-scheduler only, gates batch from its record,
  fails naming it, and puts the master back as it was before the killed change.
- A good change: its record cut short first, the Check job and a plain run fail naming it and change nothing; put
  back, the next run gates it from the record, commits it (the backup goes), removes the standby; the run after
  changes nothing.

Make before break: a config-only change names the temporary standby in its plan; the lease goes from the old process
to the standby (a process of its own on m1) and from the standby to the new process, and nothing of the standby is
left: no manifest, no config copy, no listener on its port, no mirror pod. A rerun changes nothing; a Check job shows
the standby and starts none. How long the lease was unheld is measured by `make bench-lease-gaps`, not asserted here.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from kubernetes import client

from cluster import wait_for  # tests/controlplane (realcluster.py puts it on sys.path)
from realcluster import REPO, changed_count

MANIFEST = "/etc/kubernetes/manifests/kube-scheduler.yaml"
STATE_DIR = "/var/lib/kubesched/static-pod"
RECORD = STATE_DIR + "/held-change.json"
TAKEN_PORT = 10271
# The temporary standby of the instance kube-scheduler: its manifest, config and mirror pod are named after it.
STANDBY = "kubesched-standby-kube-scheduler"
STANDBY_PORT = 11259
PLAN_LINE = "holds lease kube-system/kube-scheduler and no other master stands by for it: a temporary standby"
# Between the manifest directory's listing and the manifest in one exec's answer.
LISTED = "--- the manifest ---"
# A process of the test's that holds the port and answers nothing (kube-scheduler's bind then fails).
SQUATTER = ("import socket, time\ns = socket.socket()\ns.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            "s.bind(('0.0.0.0', %d))\ns.listen(8)\ntime.sleep(3600)\n")


def holder(cluster):
    lease = client.CoordinationV1Api(cluster.api()).read_namespaced_lease("kube-scheduler", "kube-system")
    return lease.spec.holder_identity or "", lease.spec.renew_time


def variables(cluster, score, secure_port=None, settle=None):
    instance = {"name": "kube-scheduler", "default_scheduler": True, "config": {"percentageOfNodesToScore": score}}
    if secure_port:
        instance["secure_port"] = secure_port
    # A short health timeout: the gate of a change that never answers fails in a minute, not three.
    out = {"kube_scheduler_version": cluster.version, "kube_scheduler_instances": [instance],
           "kube_scheduler_health_timeout": 60}
    if settle:
        # A long settle holds every gate of the killed run open (the standby's, then the instance's): the test sees
        # each write and kills the run inside the gate, whatever the machine's load.
        out["kube_scheduler_health_settle"] = settle
    return out


def run(cluster, score, secure_port=None, options=()):
    return cluster.playbook("playbooks/static_pod.yml", variables(cluster, score, secure_port), masters=True,
                            check=False, options=("--limit", cluster.masters[0]) + tuple(options))


def start(cluster, score, secure_port=None, settle=30, more=None):
    """The playbook as run() runs it, its gates held open, in a process group of its own (to be killed); ``more``:
    instances after kube-scheduler."""
    extra = cluster.directory / "killed-run-vars.json"
    killed_vars = variables(cluster, score, secure_port, settle=settle)
    killed_vars["kube_scheduler_instances"] += more or []
    extra.write_text(json.dumps(killed_vars))
    return subprocess.Popen(
        [str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(cluster.real.inventory()),
         "-e", "@%s" % extra, "--limit", cluster.masters[0], "playbooks/static_pod.yml"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO, start_new_session=True,
        env=dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0"))


def engine_pids(real, host, spare=()):
    """The engine's processes on the master: the rollout module, piped into python3 by the podman connection."""
    listing = real.node_exec(host, "ps", "-eo", "pid=,args=")
    return [pid for pid, args in (line.strip().split(None, 1) for line in listing.splitlines() if line.strip())
            if re.match(r"(/usr/bin/)?python3?\b", args) and "import socket" not in args and pid not in spare]


def stop(real, host, squatter):
    """The test's process on a port of ``host`` (SQUATTER), if it was started."""
    if squatter is not None:
        real.node_exec(host, "sh", "-c", "pkill -f 'SO_REUSEAD[D]R' || true")
        squatter.kill()
        squatter.wait()


def exists(real, host, path):
    return real.node_exec(host, "sh", "-c", "test -e %s && echo yes || echo no" % path).strip() == "yes"


def kill_once_written(cluster, playbook, written, on_first_write=None):
    """Wait until m1's manifest is ``written`` (a test of its text: the engine's last write), then kill the
    controller's process group and the engine on m1. ``on_first_write`` runs when the apply step's first write (the
    standby's manifest) shows."""
    real, m1 = cluster.real, cluster.masters[0]
    deadline = time.time() + 600
    first = on_first_write is None
    # Once a second, the listing and the manifest in one podman exec (each costs the machine about 0.1 CPU-s): the
    # gates the run is killed in are held open for 30 s (settle).
    while time.time() < deadline and playbook.poll() is None:
        listing, _separator, text = real.node_exec(m1, "sh", "-c", "ls /etc/kubernetes/manifests; echo '%s'; cat %s"
                                                   % (LISTED, MANIFEST)).partition(LISTED + "\n")
        if not first and STANDBY + ".yaml" in listing:
            on_first_write()
            first = True
        if written(text):
            break
        time.sleep(1)
    else:
        output = playbook.communicate()[0] if playbook.poll() is not None else "(still running)"
        raise AssertionError("the run never wrote the new %s: %s" % (MANIFEST, output[-6000:]))
    if playbook.poll() is not None:
        raise AssertionError("the run ended before it could be killed: %s" % playbook.communicate()[0][-6000:])
    if not first:
        raise AssertionError("the apply step wrote %s before any temporary standby showed" % MANIFEST)
    os.killpg(playbook.pid, signal.SIGKILL)
    playbook.wait()
    pids = engine_pids(real, m1)
    assert pids, "no engine process on %s to kill" % m1
    real.node_exec(m1, "kill", "-9", *pids)


@pytest.fixture(scope="module")
def only_m1_elects(cluster):
    """m2's kubeadm scheduler stops; m1 holds the default lease with the role's own manifest (adopted,
    percentageOfNodesToScore 50), for every test of this module. m2's manifest comes back at the end."""
    m1, m2 = cluster.masters
    real = cluster.real
    real.node_exec(m2, "mv", MANIFEST, "/root/kube-scheduler.yaml")
    try:
        wait_for("m2's scheduler to stop", lambda: not real.node_exec(m2, "ss", "-Hltn", "sport = :10259").strip(),
                 timeout=90)
        wait_for("m1 to hold the default lease", lambda: holder(cluster)[0].startswith(m1 + "_"), timeout=90)
        adopted = run(cluster, 50)
        assert adopted.returncode == 0, adopted.stdout[-6000:]
        wait_for("m1 to hold the default lease", lambda: holder(cluster)[0].startswith(m1 + "_"), timeout=90)
        yield
    finally:
        real.node_exec(m2, "mv", "/root/kube-scheduler.yaml", MANIFEST)


def renewed_by_m1(cluster, since):
    identity, renewed = holder(cluster)
    return identity.startswith(cluster.masters[0] + "_") and renewed is not None and renewed.timestamp() > since


def no_standby_left(cluster):
    real, m1 = cluster.real, cluster.masters[0]
    assert STANDBY not in real.node_exec(m1, "ls", "/etc/kubernetes/manifests", "/etc/kubernetes/schedulers")


@pytest.mark.usefixtures("only_m1_elects")
def test_a_killed_change_that_fails_at_start_is_restored_by_the_next_run_which_fails_loudly(cluster):
    real, m1 = cluster.real, cluster.masters[0]
    squatter = None
    try:
        playbook = start(cluster, 50, secure_port=TAKEN_PORT)

        def take_the_port():
            nonlocal squatter
            squatter = subprocess.Popen(["podman", "exec", m1, "python3", "-c", SQUATTER % TAKEN_PORT])

        kill_once_written(cluster, playbook, lambda text: "--secure-port=%d" % TAKEN_PORT in text,
                          on_first_write=take_the_port)
        record = json.loads(real.node_exec(m1, "cat", RECORD))
        assert record["gate_passed"] is False and [i["name"] for i in record["instances"]] == ["kube-scheduler"]

        # The next plain run, as an operator reruns the job: the same variables.
        since = time.time()
        again = run(cluster, 50, secure_port=TAKEN_PORT)
        assert again.returncode != 0, again.stdout[-6000:]
        assert "was never gated to the end" in again.stdout + again.stderr, again.stderr[-3000:]
        for said in ("kube-scheduler gave no healthy answer from a new process", "Restored: the files of kube-scheduler",
                     "After restore kube-scheduler answers health again"):
            assert said in again.stdout, (said, again.stdout[-6000:])
        # The gate's failure quotes the crashing container's own words, read with crictl on m1.
        gate = [line for line in again.stdout.splitlines() if "kube-scheduler gave no healthy answer" in line]
        assert any("; last log lines: " in line and "address already in use" in line for line in gate), gate
        # The old config is back, its process answers health and holds the lease, renewed after the restore.
        assert "--secure-port=%d" % TAKEN_PORT not in real.node_exec(m1, "cat", MANIFEST)
        assert not exists(real, m1, RECORD)
        wait_for("m1's restored scheduler to renew the lease", lambda: renewed_by_m1(cluster, since), timeout=90)
        assert real.node_exec(m1, "ss", "-Hltn", "sport = :10259").strip()
        no_standby_left(cluster)
    finally:
        stop(real, m1, squatter)


def damaged_record_stops_the_check_job_and_the_run(cluster):
    """The killed run's record cut short (a disk error, a copy that stopped half-way): the Check job and a plain run
    fail on the plan naming the record and what to do, and change nothing; the record is then put back as it was."""
    real, m1 = cluster.real, cluster.masters[0]
    manifest = real.node_exec(m1, "cat", MANIFEST)
    real.node_exec(m1, "cp", "-p", RECORD, RECORD + ".whole")
    real.node_exec(m1, "truncate", "-s", "300", RECORD)
    try:
        for options in (("--check", "--diff"), ()):
            damaged = run(cluster, 70, options=options)
            output = damaged.stdout + damaged.stderr
            assert damaged.returncode == 2, output[-6000:]
            assert "%s cannot be trusted: it is not JSON (" % RECORD in output, output[-6000:]
            assert "then remove %s" % RECORD in output and "Traceback" not in output, output[-6000:]
            assert real.node_exec(m1, "cat", MANIFEST) == manifest
            assert exists(real, m1, RECORD)
    finally:
        real.node_exec(m1, "mv", RECORD + ".whole", RECORD)


@pytest.mark.usefixtures("only_m1_elects")
def test_a_killed_good_change_is_committed_by_the_next_run_after_a_real_gate(cluster):
    real, m1 = cluster.real, cluster.masters[0]
    before = real.node_exec(m1, "cat", MANIFEST)
    playbook = start(cluster, 70)
    kill_once_written(cluster, playbook, lambda text: text.strip() and text != before)  # its config checksum
    record = json.loads(real.node_exec(m1, "cat", RECORD))
    assert record["gate_passed"] is False
    damaged_record_stops_the_check_job_and_the_run(cluster)

    since = time.time()
    again = run(cluster, 70)
    assert again.returncode == 0, again.stdout[-6000:]
    assert "was never gated to the end" in again.stdout + again.stderr, again.stderr[-3000:]
    assert not exists(real, m1, RECORD)
    assert "backup" not in real.node_exec(m1, "find", STATE_DIR)
    wait_for("m1's scheduler to renew the lease", lambda: renewed_by_m1(cluster, since), timeout=90)
    no_standby_left(cluster)
    after = run(cluster, 70)
    assert after.returncode == 0 and changed_count(after) == 0, after.stdout[-6000:]


class Holders(threading.Thread):
    """Every distinct holder identity of the default lease, in order, read every 0.2 s ("" while released)."""

    def __init__(self, cluster):
        super().__init__(daemon=True)
        self.coordination = client.CoordinationV1Api(cluster.api())
        self.seen, self.done = [], threading.Event()

    def run(self):
        while not self.done.is_set():
            try:
                identity = self.coordination.read_namespaced_lease("kube-scheduler", "kube-system").spec.holder_identity or ""
            except client.exceptions.ApiException:
                identity = None
            self.record(identity)
            time.sleep(0.2)

    def record(self, identity):
        if identity is not None and (not self.seen or self.seen[-1] != identity):
            self.seen.append(identity)


@pytest.mark.usefixtures("only_m1_elects")
def test_a_one_master_change_hands_the_lease_to_a_temporary_standby_and_back_leaving_nothing(cluster):
    real, m1 = cluster.real, cluster.masters[0]
    check = run(cluster, 60, options=("--check", "--diff"))
    assert check.returncode == 0 and PLAN_LINE in check.stdout, check.stdout[-6000:]
    assert STANDBY not in real.node_exec(m1, "ls", "/etc/kubernetes/manifests")

    holders = Holders(cluster)
    before = holder(cluster)[0]
    holders.start()
    changed = run(cluster, 60)
    wait_for("m1 to hold the default lease",
             lambda: holder(cluster)[0].startswith(m1 + "_") and holder(cluster)[0] != before, timeout=90)
    holders.done.set()
    holders.join()
    # The holder the wait above saw, which the thread may have stopped before reading.
    holders.record(holder(cluster)[0])
    assert changed.returncode == 0, changed.stdout[-6000:]
    assert "%s: kube-scheduler %s" % (m1, PLAN_LINE) in changed.stdout, changed.stdout[-6000:]
    # The old process, the standby, the new process: three identities of m1, each holding the lease in turn.
    identities = [identity for identity in holders.seen if identity]
    assert len(identities) == 3 and len(set(identities)) == 3 and identities[0] == before, holders.seen
    assert all(identity.startswith(m1 + "_") for identity in identities), holders.seen

    # Nothing of the standby is left on m1 or in the API.
    no_standby_left(cluster)
    assert not real.node_exec(m1, "ss", "-Hltn", "sport = :%d" % STANDBY_PORT).strip()
    core = client.CoreV1Api(cluster.api())
    wait_for("the standby's mirror pod to go", lambda: not [
        pod for pod in core.list_namespaced_pod("kube-system").items if pod.metadata.name.startswith(STANDBY)], timeout=60)

    again = run(cluster, 60)
    assert again.returncode == 0 and changed_count(again) == 0, again.stdout[-6000:]
    assert PLAN_LINE not in again.stdout


LOCK = STATE_DIR + "/rollout-lock.json"


def configs(real, host):
    return real.node_exec(host, "sh", "-c", "cat /etc/kubernetes/schedulers/*.yaml 2>/dev/null || true")


@pytest.mark.usefixtures("only_m1_elects")
def test_a_second_run_while_the_first_holds_the_master_is_refused_naming_it_and_writes_nothing(cluster):
    """Two AWX jobs of one master, the second a few seconds after the first, with another weight: while the first
    run's change is under way (its gates held open by a long settle), the second run, and its Check job, fail naming
    the first (its start, this controller, its playbook) without writing anything; the first ends ok with its own
    config, and the master's lock is gone with its commit."""
    real, m1 = cluster.real, cluster.masters[0]
    first = start(cluster, 40, settle=90)  # percentageOfNodesToScore 40; each gate held open 90 s
    try:
        wait_for("the first run's apply to take m1's rollout lock", lambda: exists(real, m1, LOCK), timeout=600)
        holder_run = json.loads(real.node_exec(m1, "cat", LOCK))["run"]
        for options in ((), ("--check", "--diff")):
            second = run(cluster, 45, options=options)
            output = second.stdout + second.stderr
            assert second.returncode != 0, output[-6000:]
            assert ("another rollout holds this master: run %s, started %s, on controller %s, playbook %s"
                    % (holder_run["id"], holder_run["started"], holder_run["controller"],
                       REPO / "playbooks" / "static_pod.yml")) in output, output[-6000:]
            # Not taken for a change a dead run left: neither adopted nor gated again.
            assert "was never gated to the end" not in output and "never committed or restored" not in output
            assert "percentageOfNodesToScore: 45" not in configs(real, m1)
            assert first.poll() is None  # refused while the first run was alive
        out = first.communicate(timeout=900)[0]
        assert first.returncode == 0, out[-6000:]
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
    assert "percentageOfNodesToScore: 40" in configs(real, m1)
    assert not exists(real, m1, LOCK) and not exists(real, m1, RECORD)
    no_standby_left(cluster)


# A second instance of m1, with a lease of its own that kubeadm's identity may take (system:kube-scheduler may get and
# update a Lease named kube-scheduler in any namespace), so the plan's lease check passes and still names the standby.
BATCH_PORT = 10273
BATCH = {"name": "batch", "secure_port": BATCH_PORT,
         "config": {"leaderElection": {"resourceName": "kube-scheduler", "resourceNamespace": "default"},
                    "profiles": [{"schedulerName": "batch"}]}}


@pytest.mark.usefixtures("only_m1_elects")
def test_an_instance_dropped_after_a_killed_run_is_gated_from_its_record_and_restored_when_it_does_not_answer(cluster):
    """A killed change recorded two instances (kube-scheduler's new config and a new batch, whose port a process of
    the test takes once the apply began); the next run names kube-scheduler only. It gates batch from its record
    (its manifest, port and health URL), which does not answer, so the master goes back to before the killed change
    (batch's manifest gone, kube-scheduler's as it was) and the run fails naming batch; it never commits batch
    ungated (once: committed ['kube-scheduler', 'batch'] with nothing on batch's port)."""
    real, m1 = cluster.real, cluster.masters[0]
    before = real.node_exec(m1, "cat", MANIFEST)
    squatter = None
    try:
        playbook = start(cluster, 65, more=[BATCH])

        def take_the_port():
            nonlocal squatter
            squatter = subprocess.Popen(["podman", "exec", m1, "python3", "-c", SQUATTER % BATCH_PORT])

        kill_once_written(cluster, playbook, lambda text: text.strip() and text != before
                          and exists(real, m1, "/etc/kubernetes/manifests/batch.yaml"), on_first_write=take_the_port)
        record = json.loads(real.node_exec(m1, "cat", RECORD))
        assert record["gate_passed"] is False
        assert sorted(i["name"] for i in record["instances"]) == ["batch", "kube-scheduler"], record["instances"]

        since = time.time()
        again = run(cluster, 65)  # kube-scheduler only: batch is dropped from the inventory
        output = again.stdout + again.stderr
        assert again.returncode != 0, output[-6000:]
        assert "was never gated to the end" in output, output[-6000:]
        assert "batch gave no healthy answer from a new process" in again.stdout, output[-6000:]
        assert "batch" not in real.node_exec(m1, "ls", "/etc/kubernetes/manifests")
        assert real.node_exec(m1, "cat", MANIFEST) == before
        assert not exists(real, m1, RECORD)
        wait_for("m1's restored scheduler to renew the lease", lambda: renewed_by_m1(cluster, since), timeout=90)
        no_standby_left(cluster)
    finally:
        stop(real, m1, squatter)
