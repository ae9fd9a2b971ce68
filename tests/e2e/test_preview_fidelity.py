"""The placement preview's fidelity on the real cluster: what playbooks/preview.yml predicts for a profile change is
what the cluster's own kube-scheduler does with the same pods once playbooks/static_pod.yml rolled the change out.

The cluster (realcluster.py): a control plane of the scheduler's minor, kubeadm's kube-scheduler on two masters (real
kubelets, tainted), a worker (real kubelet) and, for size, six Node objects of one size kept Ready as a kubelet keeps
its node: the Ready condition written once, a Lease in kube-node-lease renewed every few seconds (kube-controller-
manager's node lifecycle controller then takes off the not-ready taint the API server's admission gave each node, and
leaves the node Ready and untainted as long as its Lease is renewed).

1. playbooks/static_pod.yml writes the current profile (LeastAllocated) on both masters.
2. The pods of a namespace of the test's, for the Node objects, are created one per second (the preview replays pods
   in creation order, a second at a time: a creationTimestamp says no more), each decided (bound or unschedulable)
   before the next.
3. playbooks/preview.yml previews LeastAllocated against MostAllocated from the admin kubeconfig, as an operator runs
   it; the action's engine previews the same snapshot three times more, for where each pod goes in each run (the
   action reports aggregates only).
4. playbooks/static_pod.yml rolls MostAllocated out to both masters; the pods are deleted and created again, in the
   same order, one per second.
5. Each configuration's prediction against what the cluster did under it: the nodes used and the unschedulable pods
   of every run, the per-node requested CPU and memory (sorted: which of two equal nodes takes a pod is a tie
   kube-scheduler breaks at random), the unschedulable pods with kube-scheduler's own message; and, under
   MostAllocated, which pods share a node, pod by pod.

Ties: kube-scheduler picks at random among the nodes of the highest score. Between nodes that differ, that changes the
counts too: with nodes of six sizes and pods of six shapes, the cluster itself, under LeastAllocated, put the same
pods in the same order on other nodes in one run of three here (two nodes scored alike by the integer scores), so
no comparison can hold there. One node size and one pod shape in the nodes' proportion leave only ties between nodes
of equal load, where either choice gives the same counts.

The masters keep MostAllocated after the test; the pods, the namespace and the Node objects are removed. `make e2e`
leaves this test out (make e2e-preview-fidelity runs it: it does not fit make test's budget).
"""
from __future__ import annotations

import json
import os
import threading
import time
from datetime import datetime, timezone

import pytest
from kubernetes import client

from cluster import wait_for  # tests/controlplane (realcluster.py puts it on sys.path)
from conftest import require_binaries
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview import placement, report, snapshot
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview.binaries import COMPONENTS

require_binaries()

NAMESPACE = "preview-fidelity"
LABEL = "kubesched.test/preview-fidelity"
# Node objects (no kubelet), one size: a node pool. (name, CPU cores, memory)
NODES = [("fidelity-n%d" % index, "4", "8Gi") for index in range(1, 7)]
# The pods' requests (CPU, memory) in creation order, named so that their names sort as they are created. One shape,
# in the nodes' own proportion: kube-scheduler's scores of a node then depend on its number of these pods alone, so a
# tie is only ever between two nodes holding as many, where either choice gives the same counts. The last two fit no
# node (their reason is kube-scheduler's own message, compared).
REQUESTS = [("500m", "1Gi")] * 20 + [("5", "1Gi"), ("500m", "10Gi")]
PODS = ["p-%02d" % index for index in range(len(REQUESTS))]
LEASE_RENEW = 5
STRATEGIES = ("LeastAllocated", "MostAllocated")
# The engine's runs of each configuration, for the pods that go together whatever the ties.
RUNS = 3


def profile(strategy):
    return {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy}}}]}]}


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class ReadyNodes(threading.Thread):
    """The Node objects of NODES kept Ready as a kubelet keeps its node: each created with the Ready condition, its
    Lease renewed every LEASE_RENEW seconds (a kubelet writes its status far less often) until remove()."""

    def __init__(self, api):
        super().__init__(daemon=True)
        self.core, self.leases = client.CoreV1Api(api), client.CoordinationV1Api(api)
        self.stopping = threading.Event()
        self.error = None

    def create(self):
        for name, cpu, memory in NODES:
            self.core.create_node({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, LABEL: ""}}})
            resources = {"cpu": cpu, "memory": memory, "pods": "110"}
            ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "lastHeartbeatTime": now(),
                     "lastTransitionTime": now(), "message": "a Node object of the test"}
            self.core.patch_node_status(name, {"status": {"capacity": resources, "allocatable": resources,
                                                          "conditions": [ready]}})
            self.leases.create_namespaced_lease("kube-node-lease", {"metadata": {"name": name}, "spec": {
                "holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": now()}})
        self.start()

    def run(self):
        while not self.stopping.wait(LEASE_RENEW):
            try:
                for name, _cpu, _memory in NODES:
                    self.leases.patch_namespaced_lease(name, "kube-node-lease", {"spec": {"renewTime": now()}})
            except Exception as exc:  # pylint: disable=broad-except  # said by the test, which checks the nodes
                self.error = exc

    def ready(self):
        """Whether every node is Ready with no taint (the node lifecycle controller took the not-ready taint off
        that the API server's admission gave each, and never marked one unreachable)."""
        nodes = self.core.list_node(label_selector=LABEL).items
        return len(nodes) == len(NODES) and all(not node.spec.taints and any(
            condition.type == "Ready" and condition.status == "True" for condition in node.status.conditions or ())
            for node in nodes)

    def remove(self):
        self.stopping.set()
        for name, _cpu, _memory in NODES:
            for delete, args in ((self.core.delete_node, (name,)),
                                 (self.leases.delete_namespaced_lease, (name, "kube-node-lease"))):
                try:
                    delete(*args)
                except client.ApiException as exc:
                    if exc.status != 404:
                        raise


def pod(name, cpu, memory):
    """A pod for the Node objects alone (the worker and the masters are other sizes: a tie with one of them would not
    be between equals)."""
    return {"metadata": {"name": name, "labels": {LABEL: ""}}, "spec": {
        "terminationGracePeriodSeconds": 0, "nodeSelector": {LABEL: ""},
        "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}}


def decision(core, name):
    """('bound', node) or ('unschedulable', kube-scheduler's message) or None while undecided."""
    item = core.read_namespaced_pod(name, NAMESPACE)
    if item.spec.node_name:
        return "bound", item.spec.node_name
    for condition in item.status.conditions or ():
        if condition.type == "PodScheduled" and condition.status == "False" and condition.reason == "Unschedulable":
            return "unschedulable", condition.message
    return None


def create_pods(core):
    """The pods in order, one per creation second, each decided before the next: (pod -> node, pod -> message)."""
    bound, refused = {}, {}
    for name, (cpu, memory) in zip(PODS, REQUESTS):
        time.sleep(1 - time.time() % 1 + 0.05)
        core.create_namespaced_pod(NAMESPACE, pod(name, cpu, memory))
        kind, value = wait_for("%s decided" % name, lambda name=name: decision(core, name), timeout=120)
        (bound if kind == "bound" else refused)[name] = value
    return bound, refused


def delete_pods(core):
    core.delete_collection_namespaced_pod(NAMESPACE, grace_period_seconds=0)
    wait_for("the pods deleted", lambda: not core.list_namespaced_pod(NAMESPACE).items, timeout=120)


def cluster_requests(core):
    """node -> (requested CPU millicores, memory bytes) of every pod bound there that is not finished, as
    kube-scheduler counts them: these pods' and the masters' mirror pods' containers (no init container, no overhead;
    only the quantities they use are read), counted here, apart from the preview's own arithmetic."""
    def milli(value):
        return int(value[:-1]) if value.endswith("m") else int(float(value) * 1000)

    def size(value):
        units = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30}
        return int(value[:-2]) * units[value[-2:]] if value[-2:] in units else int(value)
    per_node = {}
    for item in core.list_pod_for_all_namespaces().items:
        if not item.spec.node_name or item.status.phase in ("Succeeded", "Failed"):
            continue
        cpu, memory = per_node.get(item.spec.node_name, (0, 0))
        for container in item.spec.containers:
            requests = (container.resources and container.resources.requests) or {}
            cpu += milli(requests["cpu"]) if "cpu" in requests else 0
            memory += size(requests["memory"]) if "memory" in requests else 0
        per_node[item.spec.node_name] = (cpu, memory)
    return per_node


def outcome(core, bound, refused):
    """What the preview reports for a configuration, counted on the cluster: nodes used (by these pods: the others
    are mirror pods), every node's requests, the unschedulable pods' messages."""
    names = [node.metadata.name for node in core.list_node().items]
    requests = cluster_requests(core)
    return {"nodes_used": len(set(bound.values())), "unschedulable": len(refused),
            "placed": dict(("%s/%s" % (NAMESPACE, name), node) for name, node in bound.items()),
            "per_node": dict((name, requests.get(name, (0, 0))) for name in names),
            "unschedulable_pods": dict(("%s/%s" % (NAMESPACE, name), message) for name, message in refused.items())}


def predicted_per_node(config):
    return dict((name, (value["cpu_millicores"], value["memory_bytes"])) for name, value in config["per_node"].items())


def binaries(cluster):
    """The preview's: the cluster's kube-scheduler, and the kube-apiserver of the cluster's control plane (the
    scheduler's minor or one newer, as run-e2e.sh chose it)."""
    minor = os.environ.get("TEST_CONTROL_PLANE_MINOR", cluster.minor).replace(".", "_")
    return {"etcd": os.environ["ETCD_BIN"], "kube_apiserver": os.environ["KUBE_APISERVER_BIN_" + minor],
            "kube_scheduler": cluster.real.scheduler_binary}


def run_preview(cluster, monkeypatch):
    """playbooks/preview.yml as an operator runs it on the controller, one run of each configuration; its
    registered result, read from the json callback."""
    monkeypatch.setenv("ANSIBLE_STDOUT_CALLBACK", "ansible.posix.json")
    run = cluster.playbook("playbooks/preview.yml", {
        "kube_scheduler_version": cluster.version,
        "kube_scheduler_preview_kubeconfig": str(cluster.admin_kubeconfig),
        "kube_scheduler_preview_current": profile("LeastAllocated"),
        "kube_scheduler_preview_proposed": profile("MostAllocated"),
        "kube_scheduler_preview_names": list(STRATEGIES),
        "kube_scheduler_preview_binaries": binaries(cluster),
        "kube_scheduler_preview_runs": 1,
        "kube_scheduler_preview_picture": str(cluster.directory / "preview-fidelity.html"),
    }, check=False)
    answer = json.loads(run.stdout[run.stdout.find("{\n"):])
    tasks = dict((task["task"]["name"], task["hosts"]["localhost"]) for task in answer["plays"][0]["tasks"])
    preview = tasks["Preview the current and the proposed configuration"]
    assert run.returncode == 0 and not preview.get("failed"), preview.get("msg") or run.stdout[-6000:]
    return preview


def engine_runs(cluster, runs):
    """The same preview by the action's engine, RUNS runs of each configuration: where each pod went in each run
    (the action reports aggregates only). {strategy: {"namespace/pod": [node of each run]}}, the summaries."""
    kubeconfig = str(cluster.admin_kubeconfig)
    taken = snapshot.take(snapshot.connect(kubeconfig))
    configs = [(name, dict(profile(name), apiVersion="kubescheduler.config.k8s.io/v1",
                           kind="KubeSchedulerConfiguration")) for name in STRATEGIES]
    paths = dict((component, binaries(cluster)[component.replace("-", "_")]) for component in COMPONENTS)
    result = placement.preview(taken, configs, paths, runs=runs)
    placed = dict((name, dict((pod_key, [run["placed"].get(pod_key) for run in result["runs"][name]])
                              for pod_key in ("%s/%s" % (NAMESPACE, pod_name) for pod_name in PODS)))
                  for name in STRATEGIES)
    return placed, report.compare(taken, result)["configs"]


def roll_out(cluster, strategy):
    """playbooks/static_pod.yml on both masters: kube-scheduler (kubeadm's, adopted) runs the profile STRATEGY."""
    cluster.playbook("playbooks/static_pod.yml", {"kube_scheduler_version": cluster.version,
                                                  "kube_scheduler_instances": [{
                                                      "name": "kube-scheduler", "default_scheduler": True,
                                                      "config": profile(strategy)}]}, masters=True)


@pytest.fixture
def fidelity(cluster):
    """The cluster with the Node objects Ready and untainted, the test's namespace; both removed after."""
    api = cluster.api()
    core = client.CoreV1Api(api)
    own = [pod.metadata for pod in core.list_pod_for_all_namespaces().items if pod.spec.node_name and not (
        (pod.metadata.annotations or {}).get("kubernetes.io/config.mirror"))]
    # The preview places every pod of the default scheduler again; the cluster moves none: only the test's may be
    # there, or the two would not count the same pods.
    assert not own, "pods of another test are bound: %s" % ["%s/%s" % (m.namespace, m.name) for m in own]
    nodes = ReadyNodes(cluster.api())
    core.create_namespace({"metadata": {"name": NAMESPACE}})
    try:
        nodes.create()
        wait_for("the node lifecycle controller to take the not-ready taint off", nodes.ready, timeout=180)
        yield core, nodes
    finally:
        try:
            delete_pods(core)
            core.delete_namespace(NAMESPACE)
            wait_for("the namespace deleted", lambda: NAMESPACE not in [
                item.metadata.name for item in core.list_namespace().items], timeout=120)
        finally:
            nodes.remove()


def check(label, predicted, real):
    """One configuration's prediction (a preview's configs[label]) against the cluster's outcome under it."""
    for run in predicted["runs"]:
        assert (run["nodes_used"], run["unschedulable"]) == (real["nodes_used"], real["unschedulable"]), label
    assert sorted(predicted_per_node(predicted).values()) == sorted(real["per_node"].values()), label
    assert predicted["unschedulable_pods"] == real["unschedulable_pods"], label


def together(placed):
    """Each bound pod -> the first pod bound on its node: which pods share a node, whatever the nodes' names (kube-
    scheduler breaks a tie between equal nodes at random)."""
    first = {}
    for pod_key in sorted(placed):
        if placed[pod_key] is not None:
            first.setdefault(placed[pod_key], pod_key)
    return dict((pod_key, first[node]) for pod_key, node in placed.items() if node is not None)


def test_the_preview_of_a_profile_change_is_where_the_cluster_puts_the_pods_once_it_is_rolled_out(
        cluster, fidelity, monkeypatch):
    core, nodes = fidelity
    started = time.monotonic()
    roll_out(cluster, "LeastAllocated")
    current = time.monotonic()
    real = {}
    real["LeastAllocated"] = outcome(core, *create_pods(core))
    created = time.monotonic()
    preview = run_preview(cluster, monkeypatch)
    previewed = time.monotonic()
    placed, engine = engine_runs(cluster, RUNS)
    ran = time.monotonic()
    roll_out(cluster, "MostAllocated")
    rolled = time.monotonic()
    delete_pods(core)
    real["MostAllocated"] = outcome(core, *create_pods(core))
    assert nodes.error is None, nodes.error
    assert nodes.ready(), "a Node object lost its Ready condition or got a taint during the test"
    print("the current config rolled out in %.0f s, pods created in %.0f s, the playbook's preview %.0f s (%s), the "
          "engine's %d runs %.0f s, the change rolled out in %.0f s, all %.0f s"
          % (current - started, created - current, previewed - created, preview["seconds"], RUNS, ran - previewed,
             rolled - ran, time.monotonic() - started))
    print("\n".join(preview["table"]))
    for name in STRATEGIES:
        print("%s, the cluster: %s" % (name, json.dumps(real[name], sort_keys=True)))
        print("%s, the engine's runs: %s" % (name, json.dumps(placed[name], sort_keys=True)))

    assert preview["snapshot"]["nodes"] == len(core.list_node().items)
    assert preview["snapshot"]["pods"] - preview["snapshot"]["kept_on_their_node"] == len(PODS)
    # The cluster as the snapshot found it is LeastAllocated's own placement.
    assert preview["configs"][preview["observed"]]["runs"][0]["nodes_used"] == real["LeastAllocated"]["nodes_used"]
    for name in STRATEGIES:
        check(name, preview["configs"][name], real[name])
        check(name, engine[name], real[name])
    # Pod by pod under MostAllocated: it fills one node before it starts the next, so which pods share a node is the
    # same in every run (only which of the empty nodes a new one is is a tie). LeastAllocated spreads each pod to one of
    # the nodes holding the fewest, a tie nearly every time: its counts are compared above, not its pods.
    runs = [together(dict((pod_key, nodes[index]) for pod_key, nodes in placed["MostAllocated"].items()))
            for index in range(RUNS)]
    assert all(run == runs[0] for run in runs), runs
    assert runs[0] == together(dict((pod_key, real["MostAllocated"]["placed"].get(pod_key))
                                    for pod_key in placed["MostAllocated"]))
    # What the change is about: MostAllocated packs onto fewer nodes what LeastAllocated spreads.
    assert real["MostAllocated"]["nodes_used"] < real["LeastAllocated"]["nodes_used"]
