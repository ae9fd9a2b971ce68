# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout playbooks hold their cluster's rollout Lease from the plan to the end: the rollout engine's own plays
(test_apply_order.py's stand-ins for the roles, real ansible-playbook) against a real kube-apiserver (1.35, `make
binaries`, and Debian's etcd: tests/controlplane/local_apiserver.py).

Without the binaries the module is skipped with a line naming the variables.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster.rollout_lease import (
    NAME, NAMESPACE, ClusterLock)

import test_apply_order as order

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "controlplane"))
from local_apiserver import LocalApiServer, missing_binaries  # noqa: E402  pylint: disable=wrong-import-position

if missing_binaries():
    pytest.skip("the rollout Lease test needs real binaries (make binaries): missing " + ", ".join(missing_binaries()),
                allow_module_level=True)

FIRST = {"id": "1f1f1f1f1f1f1f1f", "started": "2026-12-07T09:00:00Z", "controller": "awx-job-101",
         "playbook": "/runner/project/playbooks/static_pod.yml"}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with LocalApiServer(tmp_path_factory.mktemp("apiserver")) as server:
        server.namespaces("default", "kube-system")
        yield server


def section(output, title):
    """What a task printed: from its title to the next task or play."""
    return re.split(r"^(?:TASK|PLAY) \[", output.split(title, 1)[1], flags=re.M)[0]


def lease(api):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    try:
        return client.CoordinationV1Api(api.client).read_namespaced_lease(NAME, NAMESPACE).spec
    except client.ApiException as exc:
        assert exc.status == 404
        return None


def test_the_rollout_playbook_holds_the_lease_from_its_plan_to_its_end(api, ansible_playbook, tmp_path, request):
    """The rollout engine's own plays (test_apply_order.py's stand-ins for the roles): a run with a change takes its
    cluster's Lease after the plan, holds it through its waves and releases it at the end; while another run holds
    it, the run, and its Check job, fail before any master changes, naming that run."""
    order.playbook("static_pod", tmp_path)
    lock_vars = {"kube_scheduler_rollout_lock_kubeconfig": str(api.kubeconfig)}
    order.inventory(tmp_path, {"c1": (["ks-m1", "ks-m2"], "ks-m2")}, groups=True, group_vars={"c1": lock_vars})
    proc, applied = order.run(ansible_playbook, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [host for host, _batch in applied] == ["ks-m1", "ks-m2"]
    # Taken by both masters' plans (one run: created once, then renewed), renewed by each wave, released once.
    take = section(proc.stdout, "TASK [Take this cluster's rollout Lease for this run]")
    assert sorted(re.findall(r"^(\w+): \[", take, re.M)) == ["changed", "ok"]
    renewals = proc.stdout.split("TASK [Renew this cluster's rollout Lease for this wave]")[1:]
    assert [re.findall(r"^(\w+): \[(ks-m\d)\]", part.split("TASK [")[0], re.M) for part in renewals] == [
        [("ok", "ks-m1")], [("ok", "ks-m2")]]
    release = section(proc.stdout, "TASK [Release this cluster's rollout Lease]")
    assert sorted(re.findall(r"^(\w+): \[", release, re.M)) == ["changed", "ok"]
    assert lease(api) is None  # released at the end

    ClusterLock(api.client, FIRST, 600).hold()
    request.addfinalizer(ClusterLock(api.client, FIRST, 600).release)
    for mode in ([], ["--check", "--diff"]):
        proc, applied = order.run(ansible_playbook, tmp_path, extra=mode)
        assert proc.returncode == 2 and applied == [], proc.stdout
        take = section(proc.stdout, "TASK [Take this cluster's rollout Lease for this run]")
        assert sorted(re.findall(r"^fatal: \[(ks-m\d)\]", take, re.M)) == ["ks-m1", "ks-m2"], take
        assert "another rollout holds this cluster: run 1f1f1f1f1f1f1f1f" in take and "did not answer" not in take
    assert lease(api).holder_identity == FIRST["id"]


def test_a_rollout_that_fails_releases_the_lease(api, ansible_playbook, tmp_path):
    """The one master of the cluster fails its health gate: the whole wave failed, so the playbook ends there; the
    master released the Lease before it failed, and the next run is not kept waiting for it to expire."""
    order.playbook("systemd", tmp_path)
    lock_vars = {"kube_scheduler_rollout_lock_kubeconfig": str(api.kubeconfig)}
    order.inventory(tmp_path, {"c1": (["ks-m1"], "ks-m1")}, failing=("ks-m1",), groups=True, group_vars={"c1": lock_vars})
    proc, applied = order.run(ansible_playbook, tmp_path)
    assert proc.returncode == 2 and applied == [("ks-m1", "ks-m1")], proc.stdout
    assert "the new process never answered health" in proc.stdout
    assert lease(api) is None
