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

import os

import pytest

from conftest import require_binaries
from real_placement import check, create_again, engine_runs, nodes_and_namespace, roll_out_and_preview, run_preview, together
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
STRATEGIES = ("LeastAllocated", "MostAllocated")
# The engine's runs of each configuration, for the pods that go together whatever the ties.
RUNS = 3


def profile(strategy):
    return {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy}}}]}]}


def pod(name, cpu, memory):
    """A pod for the Node objects alone (the worker and the masters are other sizes: a tie with one of them would not
    be between equals)."""
    return {"metadata": {"name": name, "labels": {LABEL: ""}}, "spec": {
        "terminationGracePeriodSeconds": 0, "nodeSelector": {LABEL: ""},
        "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}}


def pods():
    return [(name, pod(name, cpu, memory)) for name, (cpu, memory) in zip(PODS, REQUESTS)]


def binaries(cluster):
    """The preview's: the cluster's kube-scheduler, and the kube-apiserver of the cluster's control plane (the
    scheduler's minor or one newer, as run-e2e.sh chose it)."""
    minor = os.environ.get("TEST_CONTROL_PLANE_MINOR", cluster.minor).replace(".", "_")
    return {"etcd": os.environ["ETCD_BIN"], "kube_apiserver": os.environ["KUBE_APISERVER_BIN_" + minor],
            "kube_scheduler": cluster.real.scheduler_binary}


def preview_variables(cluster):
    """playbooks/preview.yml's variables: one run of each configuration."""
    return {
        "kube_scheduler_version": cluster.version,
        "kube_scheduler_preview_current": profile("LeastAllocated"),
        "kube_scheduler_preview_proposed": profile("MostAllocated"),
        "kube_scheduler_preview_names": list(STRATEGIES),
        "kube_scheduler_preview_binaries": binaries(cluster),
        "kube_scheduler_preview_runs": 1,
        "kube_scheduler_preview_picture": str(cluster.directory / "preview-fidelity.html"),
    }


def engine_placements(cluster, runs):
    """The engine's RUNS runs of each configuration: {strategy: {"namespace/pod": [node of each run]}}, the
    summaries."""
    configs = [(name, dict(profile(name), apiVersion="kubescheduler.config.k8s.io/v1",
                           kind="KubeSchedulerConfiguration")) for name in STRATEGIES]
    paths = dict((component, binaries(cluster)[component.replace("-", "_")]) for component in COMPONENTS)
    return engine_runs(cluster, configs, paths, ["%s/%s" % (NAMESPACE, name) for name in PODS], runs)


def roll_out(cluster, strategy):
    """playbooks/static_pod.yml on both masters: kube-scheduler (kubeadm's, adopted) runs the profile STRATEGY."""
    cluster.playbook("playbooks/static_pod.yml", {"kube_scheduler_version": cluster.version,
                                                  "kube_scheduler_instances": [{
                                                      "name": "kube-scheduler", "default_scheduler": True,
                                                      "config": profile(strategy)}]}, masters=True)


@pytest.fixture
def fidelity(cluster):
    """The cluster with the Node objects Ready and untainted, the test's namespace; both removed after."""
    with nodes_and_namespace(cluster, NAMESPACE, NODES, LABEL, {"default-scheduler"}) as prepared:
        yield prepared


def test_the_preview_of_a_profile_change_is_where_the_cluster_puts_the_pods_once_it_is_rolled_out(
        cluster, fidelity, monkeypatch):
    core, nodes = fidelity
    real, preview, placed, engine = roll_out_and_preview(
        nodes, STRATEGIES, lambda strategy: roll_out(cluster, strategy), lambda: create_again(core, NAMESPACE, pods()),
        lambda: run_preview(cluster, monkeypatch, preview_variables(cluster)), lambda: engine_placements(cluster, RUNS))

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
