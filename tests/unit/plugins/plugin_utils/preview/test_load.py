"""What a snapshot's objects become in the throwaway control plane, and the order pods are created in."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._load import (
    creation_order, fixed_pods, node_object, pod_object, pod_requests)

NODE = {
    "metadata": {"name": "n1", "uid": "u1", "resourceVersion": "7", "labels": {"topology.kubernetes.io/zone": "a"},
                 "annotations": {"node.alpha.kubernetes.io/ttl": "0"}, "managedFields": [{"manager": "kubelet"}]},
    "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}], "podCIDR": "10.0.0.0/24",
             "providerID": "x://1"},
    "status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3800m"}, "images": [{"names": ["nginx"]}],
               "conditions": [{"type": "Ready", "status": "True"}], "daemonEndpoints": {"kubeletEndpoint": {}}},
}


def test_a_node_keeps_its_labels_exactly_its_taints_and_what_scheduling_reads_of_its_status():
    obj, status = node_object(NODE)
    assert obj == {"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "a"},
                                "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
                   "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}}
    assert status == {"status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3800m"},
                                 "images": [{"names": ["nginx"]}], "conditions": [{"type": "Ready", "status": "True"}]}}


def _pod(name, created, priority=None, node=None, scheduler=None, annotations=None):
    spec = {"containers": [{"name": "c"}], "ephemeralContainers": [{"name": "debug"}]}
    if priority is not None:
        spec["priority"] = priority
    if node:
        spec["nodeName"] = node
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"metadata": {"name": name, "namespace": "apps", "uid": "u-" + name, "creationTimestamp": created,
                         "finalizers": ["x/y"], "annotations": dict(annotations or {}, **{
                             "kubectl.kubernetes.io/last-applied-configuration": "{}"})},
            "spec": spec, "status": {"phase": "Running"}}


def test_a_pod_loses_its_node_status_finalizers_and_ephemeral_containers_unless_it_keeps_its_node():
    pod = _pod("a", "2026-01-01T00:00:00Z", node="n1")
    assert pod_object(pod, keep_node=False) == {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "apps", "annotations": {}},
        "spec": {"containers": [{"name": "c"}]}}
    assert pod_object(pod, keep_node=True)["spec"]["nodeName"] == "n1"
    assert "nodeName" in pod["spec"] and "ephemeralContainers" in pod["spec"]  # the snapshot is not changed


def test_pods_are_created_oldest_first_and_within_a_second_by_priority_then_bound_before_pending():
    pods = [_pod("late", "2026-01-01T00:00:02Z"), _pod("low", "2026-01-01T00:00:01Z", 0),
            _pod("high", "2026-01-01T00:00:01Z", 1000), _pod("first", "2026-01-01T00:00:00Z", -5),
            _pod("a-pending", "2026-01-01T00:00:01Z", 0), _pod("z-bound", "2026-01-01T00:00:01Z", 0, node="n1")]
    assert [pod["metadata"]["name"] for pod in creation_order(pods)] == [
        "first", "high", "z-bound", "a-pending", "low", "late"]


def test_each_pods_request_is_serialised_once_with_a_wave_per_creation_second():
    """What every run of a preview sends: each pod as pod_object gives it, serialised once, in the order given,
    the pods of one creation second in one wave."""
    pods = creation_order([_pod("b", "2026-01-01T00:00:01Z", node="n1"), _pod("a", "2026-01-01T00:00:00Z"),
                           _pod("c", "2026-01-01T00:00:01Z"), _pod("d", "2026-01-01T00:00:05Z")])
    bodies, waves = pod_requests(pods, keep_node=False)
    assert [path for path, _body in bodies] == ["/api/v1/namespaces/apps/pods"] * 4
    assert [json.loads(body) for _path, body in bodies] == [pod_object(pod, keep_node=False) for pod in pods]
    assert [json.loads(body)["metadata"]["name"] for _path, body in bodies] == ["a", "b", "c", "d"]
    assert waves == [1, 2, 1]
    assert json.loads(pod_requests(pods, keep_node=True)[0][1][1])["spec"]["nodeName"] == "n1"


def test_mirror_pods_and_bound_pods_of_other_schedulers_keep_their_node():
    pods = [_pod("mirror", "t", node="m1", annotations={"kubernetes.io/config.mirror": "h"}),
            _pod("other", "t", node="n1", scheduler="batch"), _pod("other-pending", "t", scheduler="batch"),
            _pod("mine", "t", node="n1")]
    assert [pod["metadata"]["name"] for pod in fixed_pods({"pods": pods}, {"default-scheduler"})] == [
        "mirror", "other"]
    assert [pod["metadata"]["name"] for pod in fixed_pods({"pods": pods}, {"default-scheduler", "batch"})] == [
        "mirror"]


def test_a_pod_whose_match_label_keys_the_api_server_merged_is_created_again_as_it_is_stored(tmp_path):
    """A real API server merges a topology spread constraint's and a pod affinity term's matchLabelKeys (and
    mismatchLabelKeys) into their labelSelector when it stores a pod (the deployment role's own Deployment spreads its
    pods so), and refuses a new pod that names a key in both: the preview creates the pod it read again, and it is
    stored as it was."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[5] / "tests" / "controlplane"))
    from local_apiserver import LocalApiServer, missing_binaries  # pylint: disable=import-outside-toplevel
    if missing_binaries():
        pytest.skip("no local API server binaries (make binaries): " + ", ".join(missing_binaries()))
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    selector = {"matchLabels": {"app": "web"}}
    term = {"topologyKey": "kubernetes.io/hostname", "labelSelector": selector, "matchLabelKeys": ["pod-template-hash"]}
    pod = {"metadata": {"name": "web-1", "labels": {"app": "web", "pod-template-hash": "5b585dfcf7"}}, "spec": {
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
        "topologySpreadConstraints": [dict(term, maxSkew=1, whenUnsatisfiable="ScheduleAnyway")],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": term}]}, "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": selector,
                 "mismatchLabelKeys": ["pod-template-hash"]}]}}}}
    with LocalApiServer(tmp_path) as api:
        api.namespaces("apps", "again")
        core = client.CoreV1Api(api.client)
        core.create_namespaced_pod("apps", pod)
        stored = json.loads(core.read_namespaced_pod("web-1", "apps", _preload_content=False).data)
        read = json.dumps(stored, sort_keys=True)
        again = pod_object(stored, keep_node=False)
        assert json.dumps(stored, sort_keys=True) == read  # the snapshot is not changed
        again["metadata"]["namespace"] = "again"
        core.create_namespaced_pod("again", again)
        recreated = json.loads(core.read_namespaced_pod("web-1", "again", _preload_content=False).data)
    assert recreated["spec"]["topologySpreadConstraints"] == stored["spec"]["topologySpreadConstraints"]
    assert recreated["spec"]["affinity"] == stored["spec"]["affinity"]
