"""The engine on real parts, where a placement is more than a fit: preemption (the victim is deleted at once, as a
kubelet would, and reported), a pod of a scheduler name no configuration serves keeps its node, a mirror pod keeps
its node, a gated pod stays gated, each run starts from the same cluster; volume claims, disruption budgets and DRA
claims place as a real cluster (kube-apiserver, kube-controller-manager, kube-scheduler) places them."""
from __future__ import annotations

import json
import os
import subprocess
import time

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview import snapshot
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._control_plane import ControlPlane
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._load import SELECTED_NODE, Writer
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview.placement import (
    DECODED_WORDS, UNDECODED_TYPES, _resource_version, _Volumes, _Watch, preview)
from local_apiserver import LocalApiServer, missing_binaries  # tests/controlplane, on the path by conftest.py

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
@pytest.mark.parametrize("labels, runs", [
    pytest.param(("a",), 1, id="one-run"),
    pytest.param(("a", "b"), 2, id="two-configurations-twice", marks=pytest.mark.slow_preview)])
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


class _Cluster:
    """The "real cluster" of the comparison: a real etcd and kube-apiserver (tests/controlplane/local_apiserver.py,
    Node objects kept Ready), kube-controller-manager's PersistentVolume binder and disruption controllers, and,
    once started, the real kube-scheduler; a pod it deletes (a preemption's victim) is removed at once, as a kubelet
    would."""

    def __init__(self, api, directory, paths):
        from kubernetes import client  # pylint: disable=import-outside-toplevel
        self.api, self.directory, self.paths = api, directory, paths
        self.core = client.CoreV1Api(api.client)
        self.processes = []

    def start(self, name, argv):
        log = (self.directory / (name + ".log")).open("wb")
        self.processes.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT))  # pylint: disable=consider-using-with

    def controllers(self, binary):
        self.start("kube-controller-manager", [
            binary, "--kubeconfig=%s" % self.api.kubeconfig, "--leader-elect=false", "--secure-port=0",
            "--controllers=persistentvolume-binder-controller,disruption-controller"])

    def scheduler(self):
        path = self.directory / "scheduler.yaml"
        path.write_text(yaml.safe_dump(dict(CONFIG, clientConnection={"kubeconfig": str(self.api.kubeconfig)},
                                            leaderElection={"leaderElect": False})))
        self.start("kube-scheduler", [self.paths["kube-scheduler"], "--config=%s" % path, "--secure-port=0"])

    def until(self, what, check, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for process in self.processes:
                assert process.poll() is None, "%s exited (logs in %s)" % (process.args[0], self.directory)
            # The kubelet's part in a preemption: the victim goes at once.
            for pod in self.core.list_namespaced_pod("apps").items:
                if pod.metadata.deletion_timestamp:
                    self.core.delete_namespaced_pod(pod.metadata.name, "apps", grace_period_seconds=0)
            found = check()
            if found:
                return found
            time.sleep(0.3)
        raise AssertionError("the cluster did not get there: %s (logs in %s)" % (what, self.directory))

    def stop(self):
        for process in reversed(self.processes):
            process.terminate()
            process.wait(timeout=30)


def _object(kind, name, namespace=None, **fields):
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    api_version = {"StorageClass": "storage.k8s.io/v1", "PodDisruptionBudget": "policy/v1",
                   "PriorityClass": "scheduling.k8s.io/v1", "DeviceClass": "resource.k8s.io/v1",
                   "ResourceSlice": "resource.k8s.io/v1", "ResourceClaim": "resource.k8s.io/v1"}.get(kind, "v1")
    return dict({"apiVersion": api_version, "kind": kind, "metadata": meta}, **fields)


def _local_volume(name, zone, claim=None):
    spec = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
            "local": {"path": "/mnt/" + name}, "nodeAffinity": {"required": {"nodeSelectorTerms": [{
                "matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}}}
    if claim:
        spec["claimRef"] = {"namespace": "apps", "name": claim}
    return _object("PersistentVolume", name, spec=spec)


def _claim(name, volume=None):
    spec = {"accessModes": ["ReadWriteOnce"], "storageClassName": "local",
            "resources": {"requests": {"storage": "1Gi"}}}
    if volume:
        spec["volumeName"] = volume
    return _object("PersistentVolumeClaim", name, "apps", spec=spec)


def _cluster_pod(name, cpu, **spec):
    pod = _object("Pod", name, "apps", spec=dict({"terminationGracePeriodSeconds": 0, "containers": [
        {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}}}]}, **spec))
    pod["metadata"]["labels"] = {"app": name}
    return pod


def _with_claim(claim):
    return {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}


def test_claims_budgets_and_devices_place_as_the_cluster_places_them(binaries, tmp_path):
    """One cluster, three stories, each of which the preview gets wrong without the objects:

    - volumes: zone a's node is busy (a pod of another scheduler holds 3 of its 4 CPUs), so LeastAllocated alone
      would take zone b; the claim `logs` is bound to a volume in zone a, and `data`, WaitForFirstConsumer, unbound
      in the snapshot, can only get the one free volume, also in zone a: both pods go to zone a;
    - preemption: `urgent` (priority 1000) needs one of the two 1-CPU nodes of role=pdb; `guarded` (priority 0)
      holds one, protected by a budget the cluster's disruption controller says allows no disruption, and `plain`
      (priority 10) the other: without the budget kube-scheduler would evict the lower priority, `guarded`; with it,
      `plain`;
    - DRA: the one device of its class is in a ResourceSlice of zone a's busy node, and `gpu` claims it.
    """
    minor, paths = binaries
    manager = os.environ.get("KUBE_CONTROLLER_MANAGER_BIN_" + minor.replace(".", "_"))
    if not (manager and os.access(manager, os.X_OK) and not missing_binaries()):
        pytest.skip("no kube-controller-manager %s or local API server binaries (make binaries)" % minor)
    from kubernetes import client, dynamic  # pylint: disable=import-outside-toplevel
    with LocalApiServer(tmp_path) as api:
        cluster = _Cluster(api, tmp_path, paths)
        objects = dynamic.DynamicClient(api.client)
        try:
            big = {"cpu": "4", "memory": "8Gi", "pods": "110"}
            api.ready_nodes({"node-a": {"topology.kubernetes.io/zone": "a"},
                             "node-b": {"topology.kubernetes.io/zone": "b"}}, big)
            api.ready_nodes({"p1": {"role": "pdb"}, "p2": {"role": "pdb"}}, {"cpu": "1", "memory": "8Gi", "pods": "110"})
            api.namespaces("apps")
            for obj in [_object("StorageClass", "local", provisioner="kubernetes.io/no-provisioner",
                                volumeBindingMode="WaitForFirstConsumer"),
                        _local_volume("logs-a", "a", claim="logs"), _local_volume("free-a", "a"),
                        _claim("logs", volume="logs-a"), _claim("data"),
                        _object("PriorityClass", "mid", value=10), _object("PriorityClass", "high", value=1000),
                        _object("PodDisruptionBudget", "guarded", "apps", spec={
                            "minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}),
                        _object("DeviceClass", "gpu.example.com", spec={"selectors": [
                            {"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}),
                        _object("ResourceSlice", "node-a-gpus", spec={
                            "driver": "gpu.example.com", "nodeName": "node-a", "devices": [{"name": "gpu-0"}],
                            "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1}}),
                        _object("ResourceClaim", "gpu", "apps", spec={"devices": {"requests": [
                            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}),
                        _cluster_pod("busy", "3", schedulerName="batch", nodeName="node-a"),
                        _cluster_pod("guarded", "800m", nodeName="p1", nodeSelector={"role": "pdb"}),
                        _cluster_pod("plain", "800m", nodeName="p2", priorityClassName="mid",
                                     nodeSelector={"role": "pdb"})]:
                objects.resources.get(api_version=obj["apiVersion"], kind=obj["kind"]).create(
                    body=obj, namespace=obj["metadata"].get("namespace"))
            cluster.controllers(manager)
            budgets = client.PolicyV1Api(api.client)
            cluster.until("logs bound, the budget's status", lambda: (
                cluster.core.read_namespaced_persistent_volume_claim("logs", "apps").status.phase == "Bound"
                and budgets.read_namespaced_pod_disruption_budget("guarded", "apps").status.observed_generation))
            time.sleep(1.1)  # the pending pods of a later creation second than the bound ones
            for obj in [_cluster_pod("reader", "100m", **_with_claim("logs")),
                        _cluster_pod("db", "100m", **_with_claim("data")),
                        _cluster_pod("urgent", "800m", priorityClassName="high", nodeSelector={"role": "pdb"}),
                        _cluster_pod("gpu", "100m", resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu"}])]:
                cluster.core.create_namespaced_pod("apps", obj)

            taken = snapshot.take(snapshot.connect(str(api.kubeconfig)))
            claims = dict((claim["metadata"]["name"], claim) for claim in taken["persistent_volume_claims"])
            assert claims["data"]["status"]["phase"] == "Pending" and "volumeName" not in claims["data"]["spec"]
            assert taken["pod_disruption_budgets"][0]["status"]["disruptionsAllowed"] == 0
            assert taken["dra"] is True and len(taken["resource_slices"]) == 1 and snapshot.unsupported(taken) == {}
            run = preview(taken, [("a", CONFIG)], paths, runs=1, timeout=120)["runs"]["a"][0]
            # The preview wrote nothing to the cluster: `data` is still unbound there.
            assert not cluster.core.read_namespaced_persistent_volume_claim("data", "apps").spec.volume_name

            cluster.scheduler()

            def bound():
                nodes = dict((pod.metadata.name, pod.spec.node_name)
                             for pod in cluster.core.list_namespaced_pod("apps").items)
                return nodes if all(nodes.get(name) for name in ("reader", "db", "urgent", "gpu")) else None
            placed = cluster.until("reader, db, urgent and gpu bound", bound)
        finally:
            cluster.stop()
    assert placed["reader"] == placed["db"] == placed["gpu"] == "node-a"
    assert "plain" not in placed and placed["guarded"] == "p1"
    for name in ("reader", "db", "gpu"):
        assert run["placed"]["apps/" + name] == placed[name], run
    assert run["preempted"] == ["apps/plain"], run
    assert run["placed"]["apps/urgent"] in ("p1", "p2") and "apps/guarded" in run["placed"], run
    assert run["unschedulable"] == {}, run


class _CountingWriter(Writer):
    """A Writer that counts the requests it sends, by method and path."""

    def __init__(self, api_client):
        super().__init__(api_client)
        self.sent = []

    def request(self, method, path, body=None, query=None, content_type="application/json"):
        self.sent.append((method, path))
        return super().request(method, path, body, query, content_type)


def test_volume_claims_are_bound_as_they_change_from_a_watch_not_a_list_on_a_timer(binaries):
    """The claims' binder (what the PV controller and a provisioner do) on a real throwaway API server, no scheduler:
    a claim kube-scheduler would give a node (the selected-node annotation) gets a volume on that node's zone, bound;
    a static volume whose claimRef kube-scheduler would set binds its claim. It lists claims and volumes once and
    then follows them: a run with thousands of claims is not listed again every fraction of a second. Each watch
    here ends after a second (the API server's timeoutSeconds, an hour in a preview) and the claims change after
    that: a watch that was not opened again would never see them (it was not, before)."""
    _minor, paths = binaries
    zone = "topology.kubernetes.io/zone"
    node = {"metadata": {"name": "node-a", "labels": {"kubernetes.io/hostname": "node-a", zone: "a"}}}
    data = {"storage_classes": [{"metadata": {"name": "csi"}, "provisioner": "csi.example.com",
                                 "volumeBindingMode": "WaitForFirstConsumer"}],
            "nodes": [node], "csi_nodes": [{"metadata": {"name": "node-a"}, "spec": {"drivers": [
                {"name": "csi.example.com", "nodeID": "node-a", "topologyKeys": [zone]}]}}]}
    claim = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    with ControlPlane(paths) as plane:
        writer = _CountingWriter(plane.client())
        writer.create("/api/v1/namespaces", {"metadata": {"name": "apps"}})
        claims = "/api/v1/namespaces/apps/persistentvolumeclaims"
        writer.create(claims, {"metadata": {"name": "data"}, "spec": dict(claim, storageClassName="csi")})
        writer.create(claims, {"metadata": {"name": "logs"}, "spec": dict(claim, storageClassName="")})
        watched, follow = [], writer.api.lines

        def short_watch(path, query=None):
            watched.append(path)
            return follow(path, dict(query or {}, timeoutSeconds=1))
        writer.api.lines = short_watch
        binder = _Volumes(writer, data)
        binder.start()
        try:
            time.sleep(2.5)  # each watch has ended by now, at least once
            writer.request("PATCH", claims + "/data", {"metadata": {"annotations": {SELECTED_NODE: "node-a"}}},
                           content_type="application/merge-patch+json")
            logs = writer.request("GET", claims + "/logs")
            writer.create("/api/v1/persistentvolumes", {"metadata": {"name": "logs-a"}, "spec": {
                "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/logs"},
                "claimRef": {"namespace": "apps", "name": "logs", "uid": logs["metadata"]["uid"]}}})
            deadline = time.monotonic() + 30
            while True:
                bound = dict((item["metadata"]["name"], item["spec"].get("volumeName"))
                             for item in writer.request("GET", claims)["items"])
                if all(bound.values()) or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            time.sleep(1)  # what a binder on a timer would list meanwhile
            assert binder.error is None
            assert bound["logs"] == "logs-a" and bound["data"], bound
            provisioned = writer.request("GET", "/api/v1/persistentvolumes/" + bound["data"])
        finally:
            binder.stop()
    assert provisioned["spec"]["csi"]["driver"] == "csi.example.com"
    assert provisioned["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": zone, "operator": "In", "values": ["a"]}]}]
    lists = [path for method, path in writer.sent if method == "GET" and path in (
        "/api/v1/persistentvolumeclaims", "/api/v1/persistentvolumes")]
    assert lists == ["/api/v1/persistentvolumeclaims", "/api/v1/persistentvolumes"], lists
    assert watched.count("/api/v1/persistentvolumeclaims") >= 2 and watched.count("/api/v1/persistentvolumes") >= 2, (
        watched)


def test_the_watch_decodes_only_the_lines_that_tell_it_something_and_records_what_decoding_each_one_would(binaries):
    """The pods' watch on a real throwaway API server (no scheduler): pods created, one bound, one found
    unschedulable, one gated, one deleted while bound. The lines of a pod created without a node, condition or
    deletion are not decoded; what the watch records from the lines (nodes, conditions, gates, deletions, the
    resourceVersion to follow from) is what it records decoding every one."""
    _minor, paths = binaries
    with ControlPlane(paths) as plane:
        writer = Writer(plane.client())
        writer.create("/api/v1/namespaces", {"metadata": {"name": "apps"}})
        writer.create("/api/v1/nodes", {"metadata": {"name": "n1"}})
        version = _resource_version(writer)
        pods = "/api/v1/namespaces/apps/pods"
        for name, spec in (("bound", {}), ("stuck", {}), ("gated", {"schedulingGates": [{"name": "x/y"}]}),
                           ("deleted", {})):
            writer.create(pods, {"metadata": {"name": name}, "spec": dict(
                {"containers": [{"name": "c", "image": "pause"}]}, **spec)})
        for name in ("bound", "deleted"):
            writer.create(pods + "/%s/binding" % name, {"metadata": {"name": name}, "target": {
                "kind": "Node", "name": "n1"}})
        writer.request("PATCH", pods + "/stuck/status", {"status": {"conditions": [{
            "type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/1 nodes fit"}]}},
            content_type="application/merge-patch+json")
        writer.request("DELETE", pods + "/deleted")
        lines = list(writer.api.lines("/api/v1/pods", {"watch": "true", "resourceVersion": version,
                                                       "timeoutSeconds": 2}))
        decoded, read = _Watch(writer, version), _Watch(writer, version)
        for line in lines:
            decoded._event(json.loads(line))  # pylint: disable=protected-access
            read._line(line)  # pylint: disable=protected-access
        undecoded = [json.loads(line)["object"]["metadata"]["name"] for line in lines
                     if line.startswith(UNDECODED_TYPES) and not any(word in line for word in DECODED_WORDS)]
        time.sleep(0.5)  # both watches force-delete the deleted pod (no kubelet here)
    assert sorted(undecoded) == ["bound", "deleted", "stuck"]
    assert (read.placed, read.unschedulable, read.gated, read.preempted, read.resource_version) == (
        decoded.placed, decoded.unschedulable, decoded.gated, decoded.preempted, decoded.resource_version)
    assert read.placed == {"apps/bound": "n1", "apps/deleted": "n1"}
    assert read.unschedulable == {"apps/stuck": "0/1 nodes fit"}
    assert list(read.gated) == ["apps/gated"] and read.preempted == {"apps/deleted": "n1"}
    assert read.resource_version == json.loads(lines[-1])["object"]["metadata"]["resourceVersion"]
