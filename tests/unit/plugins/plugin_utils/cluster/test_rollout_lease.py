# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One rollout at a time in a cluster: the rollout Lease against a real kube-apiserver (1.35, `make binaries`, and
Debian's etcd: tests/controlplane/local_apiserver.py), through the library and the action plugin in real
ansible-playbook runs (two runs, a Check job); the rollout playbooks' plays with it: test_rollout_lease_plays.py.

Without the binaries the module is skipped with a line naming the variables.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster.rollout_lease import (
    NAME, NAMESPACE, RUN_ANNOTATION, ClusterLock, LeaseRefused)

REPO = Path(__file__).resolve().parents[5]
sys.path.insert(0, str(REPO / "tests" / "controlplane"))
from local_apiserver import LocalApiServer, missing_binaries  # noqa: E402  pylint: disable=wrong-import-position

if missing_binaries():
    pytest.skip("the rollout Lease test needs real binaries (make binaries): missing " + ", ".join(missing_binaries()),
                allow_module_level=True)

FIRST = {"id": "1f1f1f1f1f1f1f1f", "started": "2026-12-07T09:00:00Z", "controller": "awx-job-101",
         "playbook": "/runner/project/playbooks/static_pod.yml", "job": "AWX job 101 (schedulers weight 3)"}
SECOND = {"id": "2e2e2e2e2e2e2e2e", "started": "2026-12-07T09:00:01Z", "controller": "awx-job-102",
          "playbook": "/runner/project/playbooks/static_pod.yml"}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with LocalApiServer(tmp_path_factory.mktemp("apiserver")) as server:
        server.namespaces("default", "kube-system")
        yield server


@pytest.fixture
def fresh(api):
    """No rollout Lease before the test (each test starts from a cluster no run holds)."""
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    try:
        client.CoordinationV1Api(api.client).delete_namespaced_lease(NAME, NAMESPACE)
    except client.ApiException as exc:
        assert exc.status == 404
    return api


def lease(api):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    try:
        return api.client.sanitize_for_serialization(client.CoordinationV1Api(api.client).read_namespaced_lease(NAME, NAMESPACE))
    except client.ApiException as exc:
        assert exc.status == 404
        return None


class Clock(object):
    def __init__(self):
        self.now = datetime.datetime.now(datetime.timezone.utc)

    def __call__(self):
        return self.now


def test_a_second_run_is_refused_naming_the_first_and_a_check_job_writes_nothing(fresh):
    assert ClusterLock(fresh.client, FIRST, 600).hold()["verb"] == "create"
    held = lease(fresh)
    assert held["spec"]["holderIdentity"] == FIRST["id"] and held["spec"]["leaseDurationSeconds"] == 600
    assert json.loads(held["metadata"]["annotations"][RUN_ANNOTATION]) == FIRST

    for check_mode in (False, True):
        with pytest.raises(LeaseRefused) as refused:
            ClusterLock(fresh.client, SECOND, 600).hold(check_mode=check_mode)
        message = str(refused.value)
        assert message.startswith("another rollout holds this cluster")
        for shown in ("another rollout holds this cluster: run 1f1f1f1f1f1f1f1f, started 2026-12-07T09:00:00Z, on "
                      "controller awx-job-101, playbook /runner/project/playbooks/static_pod.yml, AWX job 101 "
                      "(schedulers weight 3), which last renewed it at", "(Lease kube-system/kubesched-rollout)",
                      "nothing was changed", "until the Lease expires at", "kubectl -n kube-system delete lease "
                      "kubesched-rollout"):
            assert shown in message
        assert lease(fresh)["metadata"]["resourceVersion"] == held["metadata"]["resourceVersion"]


def test_the_same_run_renews_and_only_its_holder_releases_it(fresh):
    clock = Clock()
    ClusterLock(fresh.client, FIRST, 600, clock).hold()
    first = lease(fresh)
    clock.now += datetime.timedelta(seconds=300)
    assert ClusterLock(fresh.client, FIRST, 600, clock).hold() == {"verb": "renew", "warning": None, "changed": False}
    renewed = lease(fresh)
    assert renewed["spec"]["renewTime"] > first["spec"]["renewTime"]
    assert renewed["spec"]["acquireTime"] == first["spec"]["acquireTime"]
    assert renewed["spec"]["leaseTransitions"] == 0

    assert ClusterLock(fresh.client, SECOND, 600).release() is False and lease(fresh) is not None
    assert ClusterLock(fresh.client, FIRST, 600).release() is True and lease(fresh) is None
    assert ClusterLock(fresh.client, SECOND, 600).hold()["verb"] == "create"


def test_an_expired_lease_is_taken_over_with_a_warning(fresh):
    clock = Clock()
    ClusterLock(fresh.client, FIRST, 60, clock).hold()  # the first run dies here
    clock.now += datetime.timedelta(seconds=59)
    with pytest.raises(LeaseRefused, match=r"\(59 s ago\)"):
        ClusterLock(fresh.client, SECOND, 60, clock).hold()
    clock.now += datetime.timedelta(seconds=2)
    taken = ClusterLock(fresh.client, SECOND, 60, clock).hold()
    assert taken["verb"] == "take" and taken["changed"]
    for shown in ("run 1f1f1f1f1f1f1f1f", "(61 s ago)", "expired 1 s ago (its leaseDurationSeconds is 60)",
                  "taken for one that died", "run 2e2e2e2e2e2e2e2e"):
        assert shown in taken["warning"]
    now = lease(fresh)
    assert now["spec"]["holderIdentity"] == SECOND["id"] and now["spec"]["leaseTransitions"] == 1
    with pytest.raises(LeaseRefused, match="run 2e2e2e2e2e2e2e2e"):
        ClusterLock(fresh.client, FIRST, 60, clock).hold()  # the first run, back late


def test_a_holder_known_dead_is_taken_over_at_once(fresh):
    ClusterLock(fresh.client, dict(FIRST, pid=4242), 600).hold()
    taken = ClusterLock(fresh.client, SECOND, 600, dead=lambda holder: holder["id"] == FIRST["id"]).hold()
    assert taken["verb"] == "take" and "process on this controller is gone (pid 4242)" in taken["warning"]
    assert lease(fresh)["spec"]["holderIdentity"] == SECOND["id"]


def test_runs_racing_for_the_lease_never_both_hold_it(fresh):
    """Eight runs ask at one moment, five times over: the API server's create and replace at a resourceVersion let
    exactly one hold it."""
    for _round in range(5):
        ClusterLock(fresh.client, {"id": "nobody"}, 60).hold()
        ClusterLock(fresh.client, {"id": "nobody"}, 60).release()
        start, won, lock = threading.Barrier(8), [], threading.Lock()

        def ask(number):
            start.wait()
            try:
                ClusterLock(fresh.client, {"id": "run-%d" % number}, 600).hold()
                with lock:
                    won.append("run-%d" % number)
            except LeaseRefused:
                pass

        threads = [threading.Thread(target=ask, args=(number,)) for number in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(won) == 1 and lease(fresh)["spec"]["holderIdentity"] == won[0]
        ClusterLock(fresh.client, {"id": won[0]}, 600).release()


PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: The cluster's rollout Lease
      kubesched.schedulers.rollout_lease:
        state: "{{ state | default('held') }}"
        kubeconfig: "{{ kubeconfig }}"
        duration: 600

    - name: Keep running (a rollout in the middle of its masters) until told
      ansible.builtin.wait_for:
        path: "{{ go_on }}"
        timeout: 120
      when: go_on is defined
"""


def test_two_ansible_playbook_runs_and_a_check_job(fresh, ansible_playbook, collections_path, tmp_path):
    """Each ansible-playbook run is one run: while the first holds the Lease (it is still running), the second, and
    a Check job, fail naming it (this controller, its playbook), and the second's release leaves it alone. Once the
    first run's process is gone (as a run killed on this controller), the next run takes the Lease over at once,
    saying so. An empty kubeconfig says that no cluster lock applies."""
    first, second, go_on = tmp_path / "first.yml", tmp_path / "second.yml", tmp_path / "go-on"
    first.write_text(PLAY)
    second.write_text(PLAY)
    extra = ["-e", json.dumps({"kubeconfig": str(fresh.kubeconfig)})]
    running = subprocess.Popen([str(Path(sys.executable).with_name("ansible-playbook")), str(first)] + extra
                               + ["-e", json.dumps({"go_on": str(go_on)})], cwd=tmp_path, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path))
    try:
        deadline = time.time() + 120
        while lease(fresh) is None and running.poll() is None and time.time() < deadline:
            time.sleep(0.5)
        holder = json.loads(lease(fresh)["metadata"]["annotations"][RUN_ANNOTATION])
        assert holder["playbook"] == str(first) and re.fullmatch(r"[0-9a-f]{16}", holder["id"])

        for mode in ([], ["--check"]):
            refused = ansible_playbook([str(second)] + extra + mode, cwd=tmp_path)
            output = refused.stdout + refused.stderr
            assert refused.returncode == 2, output
            assert "another rollout holds this cluster: run %s, started %s, on controller %s, playbook %s" % (
                holder["id"], holder["started"], holder["controller"], first) in output
        released = ansible_playbook([str(second)] + extra + ["-e", "state=released"], cwd=tmp_path)
        assert released.returncode == 0 and "changed=0" in released.stdout
        assert lease(fresh)["spec"]["holderIdentity"] == holder["id"]
    finally:
        go_on.write_text("")
        assert running.wait(timeout=120) == 0, running.stdout.read()

    taken = ansible_playbook([str(second)] + extra, cwd=tmp_path)
    assert taken.returncode == 0, taken.stdout + taken.stderr
    assert ("belongs to a run whose ansible-playbook process on this controller is gone (pid %d)" % holder["pid"]) in (
        taken.stdout + taken.stderr)
    assert lease(fresh)["spec"]["holderIdentity"] != holder["id"]

    none = ansible_playbook([str(second), "-v", "-e", json.dumps({"kubeconfig": ""})], cwd=tmp_path)
    assert none.returncode == 0 and "No cluster lock: kube_scheduler_rollout_lock_kubeconfig is not set" in none.stdout
