"""The engine on real parts, where a placement is more than a fit: preemption (the victim is deleted at once, as a
kubelet would, and reported), a pod of a scheduler name no configuration serves keeps its node, a mirror pod keeps
its node, a gated pod stays gated, each run starts from the same cluster."""
from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview.placement import preview

READY = [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "",
          "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}]
CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"schedulerName": "default-scheduler"}]}


def _node(name, cpu="2"):
    resources = {"cpu": cpu, "memory": "4Gi", "pods": "20"}
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": resources, "allocatable": resources, "conditions": READY}}


def _pod(name, cpu, created, priority=0, **spec):
    body = dict({"containers": [{"name": "c", "image": "pause",
                                 "resources": {"requests": {"cpu": cpu}}}], "priority": priority}, **spec)
    return {"metadata": {"name": name, "namespace": "apps", "creationTimestamp": created}, "spec": body}


# make test: one configuration, one run; make preview-tests: two configurations twice, each run from the same cluster.
@pytest.mark.parametrize("labels, runs", [(("a",), 1), pytest.param(("a", "b"), 2, marks=pytest.mark.slow_preview)])
def test_preemption_other_schedulers_mirror_and_gated_pods(binaries, labels, runs):
    _minor, paths = binaries
    mirror = _pod("etcd-n1", "100m", "2026-01-01T00:00:00Z", nodeName="n1")
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    snapshot = {
        "nodes": [_node("n1")], "namespaces": [{"metadata": {"name": "apps"}}],
        "priority_classes": [{"metadata": {"name": "high"}, "value": 1000}],
        "pods": [mirror,
                 _pod("batch-job", "1500m", "2026-01-01T00:00:00Z", schedulerName="batch", nodeName="n1"),
                 _pod("low", "1", "2026-01-01T00:00:01Z"),
                 _pod("gated", "100m", "2026-01-01T00:00:02Z", schedulingGates=[{"name": "wait"}]),
                 _pod("high", "1", "2026-01-01T00:00:03Z", priority=1000, priorityClassName="high")],
    }
    result = preview(snapshot, [(label, CONFIG) for label in labels], paths, runs=runs, timeout=120)
    assert sorted(result["fixed"]) == ["apps/batch-job", "apps/etcd-n1"]
    for label in labels:
        assert len(result["runs"][label]) == runs
        for run in result["runs"][label]:
            # 2 CPUs, 400m free beside the mirror pod and the batch scheduler's pod. high (1 CPU, priority 1000)
            # leaves kube-scheduler's queue first and preempts the batch pod, which is deleted at once (no kubelet
            # here); low (1 CPU, priority 0) then fits nowhere and may preempt nothing.
            assert run["placed"] == {"apps/high": "n1"}, run
            assert run["preempted"] == ["apps/batch-job"], run
            assert list(run["unschedulable"]) == ["apps/low"]
            assert "1 Insufficient cpu" in run["unschedulable"]["apps/low"]
            assert run["gated"] == ["apps/gated"]
            assert run["not_served"] == []


def test_kube_schedulers_queue_meets_the_pods_in_the_order_the_cluster_created_them(binaries):
    """Pods created before kube-scheduler lists them would reach its queue in namespace/name order: a-late first."""
    _minor, paths = binaries
    snapshot = {"nodes": [_node("n1", cpu="4")], "namespaces": [{"metadata": {"name": "apps"}}],
                "priority_classes": [],
                "pods": [_pod("z-first", "2", "2026-01-01T00:00:00Z"), _pod("z-second", "2", "2026-01-01T00:00:01Z"),
                         _pod("a-late", "2", "2026-01-01T00:00:02Z")]}
    run = preview(snapshot, [("a", CONFIG)], paths, runs=1, timeout=120)["runs"]["a"][0]
    assert run["placed"] == {"apps/z-first": "n1", "apps/z-second": "n1"}
    assert list(run["unschedulable"]) == ["apps/a-late"]
