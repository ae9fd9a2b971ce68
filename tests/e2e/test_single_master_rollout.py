"""Make before break on one master, on real kubelets.

The e2e cluster's m2 stops its kubeadm scheduler (its manifest moved away), so m1's is the only process that
elects on kube-system/kube-scheduler: a one-master cluster's shape. playbooks/static_pod.yml then changes m1's
scheduler (adopting kubeadm's manifest first, then a config-only change): the plan names the temporary standby,
the lease goes from the old process to the standby (a process of its own on m1) and from the standby to the new
process, and nothing of the standby is left: no manifest, no config copy, no listener on its port, no mirror pod. A
rerun changes nothing; a Check job shows the standby and starts none. How long the lease was unheld is measured by
`make bench-lease-gaps`, not asserted here. Runs last (file order): m1 keeps the role's manifest, m2 gets kubeadm's back.
"""
from __future__ import annotations

import threading
import time

from kubernetes import client

from cluster import wait_for  # tests/controlplane (realcluster.py puts it on sys.path)
from realcluster import changed_count

MANIFEST = "/etc/kubernetes/manifests/kube-scheduler.yaml"
STANDBY = "kubesched-standby-kube-scheduler"
STANDBY_PORT = 11259
PLAN_LINE = "holds lease kube-system/kube-scheduler and no other master stands by for it: a temporary standby"


def holder(cluster):
    lease = client.CoordinationV1Api(cluster.api()).read_namespaced_lease("kube-scheduler", "kube-system")
    return lease.spec.holder_identity or ""


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


def change(cluster, score, options=()):
    return cluster.playbook("playbooks/static_pod.yml", {"kube_scheduler_version": cluster.version, "kube_scheduler_instances": [
        {"name": "kube-scheduler", "default_scheduler": True, "config": {"percentageOfNodesToScore": score}}]},
        masters=True, check=False, options=("--limit", cluster.masters[0]) + tuple(options))


def test_a_one_master_change_hands_the_lease_to_a_temporary_standby_and_back_leaving_nothing(cluster):
    m1, m2 = cluster.masters
    real = cluster.real
    real.node_exec(m2, "mv", MANIFEST, "/root/kube-scheduler.yaml")
    try:
        wait_for("m2's scheduler to stop", lambda: not real.node_exec(m2, "ss", "-Hltn", "sport = :10259").strip(), timeout=90)
        wait_for("m1 to hold the default lease", lambda: holder(cluster).startswith(m1 + "_"), timeout=90)

        # The first run adopts kubeadm's manifest (a change of m1's pod too), the second is a config-only change.
        first = change(cluster, 50)
        assert first.returncode == 0, first.stdout[-6000:]
        wait_for("m1 to hold the default lease", lambda: holder(cluster).startswith(m1 + "_"), timeout=90)

        check = change(cluster, 60, ("--check", "--diff"))
        assert check.returncode == 0 and PLAN_LINE in check.stdout, check.stdout[-6000:]
        assert STANDBY not in real.node_exec(m1, "ls", "/etc/kubernetes/manifests")

        holders = Holders(cluster)
        before = holder(cluster)
        holders.start()
        run = change(cluster, 60)
        wait_for("m1 to hold the default lease", lambda: holder(cluster).startswith(m1 + "_") and holder(cluster) != before,
                 timeout=90)
        holders.done.set()
        holders.join()
        # The holder the wait above saw, which the thread may have stopped before reading.
        holders.record(holder(cluster))
        assert run.returncode == 0, run.stdout[-6000:]
        assert "%s: kube-scheduler %s" % (m1, PLAN_LINE) in run.stdout, run.stdout[-6000:]
        # The old process, the standby, the new process: three identities of m1, each holding the lease in turn.
        identities = [identity for identity in holders.seen if identity]
        assert len(identities) == 3 and len(set(identities)) == 3 and identities[0] == before, holders.seen
        assert all(identity.startswith(m1 + "_") for identity in identities), holders.seen

        # Nothing of the standby is left on m1 or in the API.
        assert STANDBY not in real.node_exec(m1, "ls", "/etc/kubernetes/manifests", "/etc/kubernetes/schedulers")
        assert not real.node_exec(m1, "ss", "-Hltn", "sport = :%d" % STANDBY_PORT).strip()
        core = client.CoreV1Api(cluster.api())
        wait_for("the standby's mirror pod to go", lambda: not [
            pod for pod in core.list_namespaced_pod("kube-system").items if pod.metadata.name.startswith(STANDBY)], timeout=60)

        again = change(cluster, 60)
        assert again.returncode == 0 and changed_count(again) == 0, again.stdout[-6000:]
        assert PLAN_LINE not in again.stdout
    finally:
        real.node_exec(m2, "mv", "/root/kube-scheduler.yaml", MANIFEST)
