# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lease audit's rules without an API server (tests/unit/roles/test_cluster_view_apiserver.py runs it on leases
a real kube-apiserver returns): whose holder counts as this inventory's, what is stale, and the leases never held."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster.lease_audit import audit, holder_host

NOW = "2026-11-26T08:00:00.000000Z"


def lease(name, holder, renewed, duration=15, namespace="kube-system"):
    return {"metadata": {"namespace": namespace, "name": name},
            "spec": {"holderIdentity": holder, "renewTime": renewed, "leaseDurationSeconds": duration}}


def test_a_deployments_replica_holds_its_lease_as_its_pod_name():
    rows = audit([lease("batch", "batch-7d4b9c-x2x9q_3f1c", "2026-11-26T07:59:59.5Z")],
                 [{"lease": "kube-system/batch", "instance": "deployment kube-system/batch", "deployment": "batch"}],
                 NOW)
    assert rows[0]["flags"] == [] and rows[0]["expected_holders"] == ["batch-*"]
    assert rows[0]["renewed_seconds_ago"] == 0.5  # one digit of MicroTime is enough


def test_a_master_holds_it_by_host_name_case_blind_and_a_prefix_is_not_the_host():
    expected = [{"lease": "kube-system/s", "instance": "s", "host": "m1", "hostname": "Master-1"}]
    ours = audit([lease("s", "master-1_0d7e", "2026-11-26T07:59:58Z")], expected, NOW)
    assert ours[0]["flags"] == []
    foreign = audit([lease("s", "master-10_0d7e", "2026-11-26T07:59:58Z")], expected, NOW)
    assert foreign[0]["flags"] == ["foreign contender"]
    assert holder_host("node_a_b_uuid") == "node_a_b"  # host names may hold '_'; the UUID never does


def test_a_lease_expected_but_absent_or_released_is_not_held():
    expected = [{"lease": "batch/volcano", "instance": "volcano", "host": "m1", "hostname": "m1"}]
    assert audit([], expected, NOW)[0]["flags"] == ["not held"]
    released = audit([lease("volcano", "", "2026-11-26T07:00:00Z", namespace="batch")], expected, NOW)
    assert released[0]["flags"] == ["not held"]  # a released lease is not stale: nobody is expected to renew it


def test_only_scheduler_leases_are_listed_and_a_foreign_one_is_never_a_contender():
    rows = audit([lease("kube-controller-manager", "m1_1", NOW), lease("apiserver-abc", "m1_2", NOW),
                  lease("my-scheduler", "elsewhere_3", NOW)], [], NOW)
    assert [(row["lease"], row["ours"], row["flags"]) for row in rows] == [("kube-system/my-scheduler", False, [])]
