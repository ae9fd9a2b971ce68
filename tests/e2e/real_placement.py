"""Where a real cluster places pods, against what the placement preview predicted for it: the parts the preview's
fidelity tests share (tests/e2e/test_preview_fidelity.py: kubeadm's kube-scheduler; tests/e2e_plugins/
test_preview_fidelity_plugins.py: scheduler-plugins' scheduler deployed by the deployment role).

Node objects of a test's sizes are kept Ready as a kubelet keeps its node: the Ready condition written once, a Lease
in kube-node-lease renewed every few seconds (kube-controller-manager's node lifecycle controller then takes off the
not-ready taint the API server's admission gave each node, and leaves the node Ready as long as its Lease is renewed).
The pods are created one per second (the preview replays pods in creation order, a second at a time: a
creationTimestamp says no more), each decided (bound or unschedulable) before the next. What the preview reports for a
configuration is counted on the cluster apart from the preview's own arithmetic.
"""
from __future__ import annotations

import contextlib
import json
import threading
import time
from datetime import datetime, timezone

from kubernetes import client

from cluster import wait_for  # tests/controlplane (realcluster.py puts it on sys.path)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview import placement, report, snapshot

LEASE_RENEW = 5


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class ReadyNodes(threading.Thread):
    """Node objects ``nodes`` ((name, CPU cores, memory) each), labelled ``label`` and tainted ``taints`` (besides
    the API server's not-ready one), kept Ready as a kubelet keeps its node: each created with the Ready condition,
    its Lease renewed every LEASE_RENEW seconds (a kubelet writes its status far less often) until remove()."""

    def __init__(self, api, nodes, label, taints=()):
        super().__init__(daemon=True)
        self.core, self.leases = client.CoreV1Api(api), client.CoordinationV1Api(api)
        self.nodes, self.label, self.taints = list(nodes), label, list(taints)
        self.stopping = threading.Event()
        self.error = None

    def create(self):
        for name, cpu, memory in self.nodes:
            self.core.create_node({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, self.label: ""}},
                                   "spec": {"taints": self.taints}})
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
                for name, _cpu, _memory in self.nodes:
                    self.leases.patch_namespaced_lease(name, "kube-node-lease", {"spec": {"renewTime": now()}})
            except Exception as exc:  # pylint: disable=broad-except  # said by the test, which checks the nodes
                self.error = exc

    def ready(self):
        """Whether every node is Ready with the test's taints alone (the node lifecycle controller took the not-ready
        taint off that the API server's admission gave each, and never marked one unreachable)."""
        nodes = self.core.list_node(label_selector=self.label).items
        own = sorted((taint["key"], taint["effect"]) for taint in self.taints)
        return len(nodes) == len(self.nodes) and all(
            sorted((taint.key, taint.effect) for taint in node.spec.taints or ()) == own and any(
                condition.type == "Ready" and condition.status == "True" for condition in node.status.conditions or ())
            for node in nodes)

    def remove(self):
        self.stopping.set()
        for name, _cpu, _memory in self.nodes:
            for delete, args in ((self.core.delete_node, (name,)),
                                 (self.leases.delete_namespaced_lease, (name, "kube-node-lease"))):
                try:
                    delete(*args)
                except client.ApiException as exc:
                    if exc.status != 404:
                        raise


@contextlib.contextmanager
def nodes_and_namespace(cluster, namespace, nodes, label, served, taints=()):
    """The cluster with the Node objects ``nodes`` Ready and the test's namespace: (a CoreV1Api, the ReadyNodes);
    both removed after, with the namespace's pods."""
    core = client.CoreV1Api(cluster.api())
    own = [pod.metadata for pod in core.list_pod_for_all_namespaces().items if pod.spec.node_name and not (
        (pod.metadata.annotations or {}).get("kubernetes.io/config.mirror")) and pod.spec.scheduler_name in served]
    # The preview places every pod of the previewed scheduler names again; the cluster moves none: only the test's
    # may be there, or the two would not count the same pods.
    assert not own, "pods of another test are bound: %s" % ["%s/%s" % (m.namespace, m.name) for m in own]
    ready = ReadyNodes(cluster.api(), nodes, label, taints)
    core.create_namespace({"metadata": {"name": namespace}})
    try:
        ready.create()
        wait_for("the node lifecycle controller to take the not-ready taint off", ready.ready, timeout=180)
        yield core, ready
    finally:
        try:
            delete_pods(core, namespace)
            core.delete_namespace(namespace)
            wait_for("the namespace deleted", lambda: namespace not in [
                item.metadata.name for item in core.list_namespace().items], timeout=120)
        finally:
            ready.remove()


def decision(core, namespace, name):
    """('bound', node) or ('unschedulable', kube-scheduler's message) or None while undecided."""
    item = core.read_namespaced_pod(name, namespace)
    if item.spec.node_name:
        return "bound", item.spec.node_name
    for condition in item.status.conditions or ():
        if condition.type == "PodScheduled" and condition.status == "False" and condition.reason == "Unschedulable":
            return "unschedulable", condition.message
    return None


def create_pods(core, namespace, pods):
    """``pods`` (name, body) in order, one per creation second, each decided before the next: (pod -> node,
    pod -> message)."""
    bound, refused = {}, {}
    for name, body in pods:
        time.sleep(1 - time.time() % 1 + 0.05)
        core.create_namespaced_pod(namespace, body)
        kind, value = wait_for("%s decided" % name, lambda name=name: decision(core, namespace, name), timeout=120)
        (bound if kind == "bound" else refused)[name] = value
    return bound, refused


def create_again(core, namespace, pods, nodes=None):
    """The test's pods deleted, ``pods`` created (create_pods), and the outcome counted (``nodes``: outcome's)."""
    delete_pods(core, namespace)
    return outcome(core, namespace, *create_pods(core, namespace, pods), nodes=nodes)


def delete_pods(core, namespace):
    core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
    wait_for("the pods deleted", lambda: not core.list_namespaced_pod(namespace).items, timeout=120)


def cluster_requests(core):
    """node -> (requested CPU millicores, memory bytes) of every pod bound there that is not finished, as
    kube-scheduler counts them: the tests' pods' and the cluster's own pods' containers (no init container, no
    overhead; only the quantities they use are read), counted here, apart from the preview's own arithmetic."""
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


def nodes_held(core):
    """The nodes that hold a pod other than a mirror pod or a DaemonSet's, not finished: nodes used, as the preview
    counts them (the test's pods' nodes, and those of the cluster's own pods that no previewed name places)."""
    return set(item.spec.node_name for item in core.list_pod_for_all_namespaces().items
               if item.spec.node_name and item.status.phase not in ("Succeeded", "Failed")
               and not (item.metadata.annotations or {}).get("kubernetes.io/config.mirror")
               and not any(owner.kind == "DaemonSet" for owner in item.metadata.owner_references or ()))


def outcome(core, namespace, bound, refused, nodes=None):
    """What the preview reports for a configuration, counted on the cluster: nodes used, the requests of every node
    (or of ``nodes``), the unschedulable pods' messages; and where each of the test's pods is."""
    names = nodes or [node.metadata.name for node in core.list_node().items]
    requests = cluster_requests(core)
    return {"nodes_used": len(nodes_held(core)), "unschedulable": len(refused),
            "placed": dict(("%s/%s" % (namespace, name), node) for name, node in bound.items()),
            "per_node": dict((name, requests.get(name, (0, 0))) for name in names),
            "unschedulable_pods": dict(("%s/%s" % (namespace, name), message) for name, message in refused.items())}


def predicted_per_node(config, nodes=None):
    return dict((name, (value["cpu_millicores"], value["memory_bytes"])) for name, value in config["per_node"].items()
                if nodes is None or name in nodes)


def check(label, predicted, real, nodes=None):
    """One configuration's prediction (a preview's configs[label]) against the cluster's outcome under it: every run's
    nodes used and unschedulable count, the per-node requests sorted (of ``nodes``, or every node), the unschedulable
    pods with kube-scheduler's own message."""
    for run in predicted["runs"]:
        assert (run["nodes_used"], run["unschedulable"]) == (real["nodes_used"], real["unschedulable"]), label
    assert sorted(predicted_per_node(predicted, nodes).values()) == sorted(real["per_node"].values()), label
    assert predicted["unschedulable_pods"] == real["unschedulable_pods"], label


def together(placed):
    """Each bound pod -> the first pod bound on its node: which pods share a node, whatever the nodes' names (kube-
    scheduler breaks a tie between equal nodes at random)."""
    first = {}
    for pod_key in sorted(placed):
        if placed[pod_key] is not None:
            first.setdefault(placed[pod_key], pod_key)
    return dict((pod_key, first[node]) for pod_key, node in placed.items() if node is not None)


def roll_out_and_preview(ready, labels, roll_out, recreate, preview, engine):
    """The fidelity test's course: the current configuration (``labels``[0]) rolled out by ``roll_out``(label), the
    pods created (``recreate``() deletes the test's pods, creates them again and returns their outcome), the
    ``preview``() of both (the playbook's result) and the ``engine``()'s runs ((placed, summaries)), the proposed one
    (``labels``[1]) rolled out, the pods created again; the Node objects of ``ready`` Ready throughout. Prints what
    each step took, the preview's table and both placements; returns ({label: outcome}, the preview, placed,
    summaries)."""
    current, proposed = labels
    started = time.monotonic()
    roll_out(current)
    rolled_current = time.monotonic()
    real = {current: recreate()}
    created = time.monotonic()
    result = preview()
    previewed = time.monotonic()
    placed, summaries = engine()
    ran = time.monotonic()
    roll_out(proposed)
    rolled = time.monotonic()
    real[proposed] = recreate()
    assert ready.error is None, ready.error
    assert ready.ready(), "a Node object lost its Ready condition or got another taint during the test"
    runs = len(next(iter(placed[current].values())))
    print("the current configuration rolled out in %.0f s, pods created in %.0f s, the playbook's preview %.0f s (%s), "
          "the engine's %d runs %.0f s, the change rolled out in %.0f s, all %.0f s"
          % (rolled_current - started, created - rolled_current, previewed - created, result["seconds"], runs,
             ran - previewed, rolled - ran, time.monotonic() - started))
    print("\n".join(result["table"]))
    for label in labels:
        print("%s, the cluster: %s" % (label, json.dumps(real[label], sort_keys=True)))
        print("%s, the engine's runs: %s" % (label, json.dumps(placed[label], sort_keys=True)))
    return real, result, placed, summaries


def run_preview(cluster, monkeypatch, variables):
    """playbooks/preview.yml as an operator runs it on the controller, with ``variables``; its registered result,
    read from the json callback."""
    monkeypatch.setenv("ANSIBLE_STDOUT_CALLBACK", "ansible.posix.json")
    run = cluster.playbook("playbooks/preview.yml", dict(
        variables, kube_scheduler_preview_kubeconfig=str(cluster.admin_kubeconfig)), check=False)
    answer = json.loads(run.stdout[run.stdout.find("{\n"):])
    tasks = dict((task["task"]["name"], task["hosts"]["localhost"]) for task in answer["plays"][0]["tasks"])
    preview = tasks["Preview the current and the proposed configuration"]
    assert run.returncode == 0 and not preview.get("failed"), preview.get("msg") or run.stdout[-6000:]
    return preview


def engine_runs(cluster, configs, paths, pod_keys, runs):
    """The same preview by the action's engine, ``runs`` runs of each configuration ((name, mapping) each, with its
    apiVersion and kind; ``paths`` the binaries by component): where each pod of ``pod_keys`` went in each run (the
    action reports aggregates only). {name: {"namespace/pod": [node of each run]}}, the summaries."""
    taken = snapshot.take(snapshot.connect(str(cluster.admin_kubeconfig)))
    result = placement.preview(taken, configs, paths, runs=runs)
    placed = dict((name, dict((pod_key, [run["placed"].get(pod_key) for run in result["runs"][name]])
                              for pod_key in pod_keys))
                  for name, _config in configs)
    return placed, report.compare(taken, result)["configs"]
