"""The placement preview's fidelity for a scheduler-plugins profile, on the real cluster: what playbooks/preview.yml
predicts for a change of scheduler-plugins' NodeResourcesAllocatable mode is what scheduler-plugins' own scheduler,
deployed by the deployment role, does with the same pods once the role rolled the change out.

The cluster (conftest.py): a control plane, a master and a worker of Kubernetes 1.35 (real kubelets); and, for size,
three Node objects of three sizes kept Ready by renewing their Lease (real_placement.py), tainted so that nothing but
the test's pods goes there (the scheduler's and its controller's own pods, placed by the default scheduler, would
otherwise land on a node without a kubelet and never start).

1. The deployment role deploys scheduler-plugins 0.34.7's scheduler (Kubernetes 1.34.7) as NAME with the current
   profile: NodeResourcesAllocatable in mode Most (the nodes of the most allocatable CPU and memory first).
2. The pods of the test's namespace, for the Node objects and NAME, are created one per second, each decided (bound or
   unschedulable) before the next.
3. playbooks/preview.yml previews Most against Least (the nodes of the least allocatable first: small nodes filled,
   big ones kept free for big pods) with scheduler-plugins' scheduler of that release, from the admin kubeconfig, as
   an operator runs it; the action's engine previews the same snapshot again for where each pod goes in each run.
4. The deployment role rolls Least out; once the new pod leads, the pods are deleted and created again, in the same
   order, one per second.
5. Each mode's prediction against what the cluster did under it: the nodes used and the unschedulable pods of every
   run, the per-node requested CPU and memory of the Node objects (sorted), the unschedulable pods with the
   scheduler's own message; and each pod's node, pod by pod, under both modes.

Ties: kube-scheduler picks at random among the nodes of the highest score; here there is none. The three nodes differ
in size, and NodeResourcesAllocatable, weighted WEIGHT, scores the smallest (Least) or the largest (Most) feasible node
100 and the others at least 33 less (its scores are normalized over the feasible nodes, linearly in their allocatable):
WEIGHT times that gap outweighs what the other scores can add (NodeResourcesFit's LeastAllocated at most 100;
BalancedAllocation 100 on every node, the pods' requests in the nodes' proportion; the others alike on nodes without
images, taints the pods mind, affinities or spread constraints). So one node is best for each pod, in the cluster and
in the preview, and every pod is compared by its node.

The deployment keeps Least after the test; the pods, the namespace and the Node objects are removed. `make
e2e-scheduler-plugins` leaves this test out (make e2e-preview-fidelity-plugins runs it: it does not fit make test's
budget).
"""
from __future__ import annotations

import os

import pytest
from kubernetes import client

from cluster import wait_for  # tests/controlplane, on the path through realcluster
from conftest import RELEASE
from real_placement import check, create_again, engine_runs, nodes_and_namespace, roll_out_and_preview, run_preview
from test_gang_scheduling import deployment_vars

NAME = "fidelity-scheduler"
NAMESPACE = "kube-system"
PODS_NAMESPACE = "preview-fidelity-plugins"
LABEL = "kubesched.test/preview-fidelity"
TAINT = {"key": LABEL, "value": "", "effect": "NoSchedule"}
# Node objects (no kubelet) of three sizes, CPU and memory in one proportion: (name, CPU cores, memory).
NODES = [("fidelity-small", "2", "4Gi"), ("fidelity-medium", "4", "8Gi"), ("fidelity-large", "8", "16Gi")]
NODE_NAMES = [name for name, _cpu, _memory in NODES]
# The pods' requests (CPU, memory) in creation order, in the nodes' proportion. Under Most the twelve small ones fill
# 6 of the large node's 8 CPUs and the 5-CPU pod fits nowhere; under Least they fill the small and the medium node and
# leave the large one to it. The last fits no node under either.
REQUESTS = [("500m", "1Gi")] * 12 + [("5", "10Gi"), ("9", "1Gi")]
PODS = ["p-%02d" % index for index in range(len(REQUESTS))]
MODES = ("Most", "Least")
WEIGHT = 10
# The engine's runs of each mode: the same node for each pod in every run (no tie).
RUNS = 2
SCHEDULER_BIN = "SCHEDULER_PLUGINS_SCHEDULER_BIN_" + RELEASE.replace(".", "_")


def profile(mode):
    return {"profiles": [{
        "schedulerName": NAME,
        "plugins": {"score": {"enabled": [{"name": "NodeResourcesAllocatable", "weight": WEIGHT}]}},
        "pluginConfig": [{"name": "NodeResourcesAllocatable", "args": {"mode": mode}}]}]}


def pods():
    """The pods in creation order: for the Node objects alone (their label, their taint), scheduled by NAME."""
    return [(name, {"metadata": {"name": name, "labels": {LABEL: ""}}, "spec": {
        "schedulerName": NAME, "terminationGracePeriodSeconds": 0, "nodeSelector": {LABEL: ""},
        "tolerations": [{"key": LABEL, "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}})
            for name, (cpu, memory) in zip(PODS, REQUESTS)]


def binaries():
    """The preview's: scheduler-plugins' scheduler the cluster runs (the same binary, imported as its image), and
    the kube-apiserver of the cluster's control plane (1.35: one minor newer than the scheduler's 1.34)."""
    return {"etcd": os.environ["ETCD_BIN"], "kube_apiserver": os.environ["KUBE_APISERVER_BIN_1_35"],
            "kube_scheduler": os.environ[SCHEDULER_BIN]}


def preview_variables(cluster):
    """playbooks/preview.yml's variables: one run of each mode, on scheduler-plugins' scheduler of RELEASE."""
    return {
        "kube_scheduler_version": "1.34.7",
        "kube_scheduler_preview_scheduler_plugins_version": RELEASE,
        "kube_scheduler_preview_current": profile("Most"),
        "kube_scheduler_preview_proposed": profile("Least"),
        "kube_scheduler_preview_names": list(MODES),
        "kube_scheduler_preview_binaries": binaries(),
        "kube_scheduler_preview_runs": 1,
        "kube_scheduler_preview_picture": str(cluster.directory / "preview-fidelity-plugins.html"),
    }


def engine_placements(cluster):
    configs = [(mode, dict(profile(mode), apiVersion="kubescheduler.config.k8s.io/v1",
                           kind="KubeSchedulerConfiguration")) for mode in MODES]
    paths = dict((component.replace("_", "-"), path) for component, path in binaries().items())
    return engine_runs(cluster, configs, paths, ["%s/%s" % (PODS_NAMESPACE, name) for name in PODS], RUNS)


def leading(cluster):
    """Whether the scheduler's pods are the current template's alone, running, and one of them holds its lease:
    until then the old pod may still place pods with the old profile."""
    api = cluster.api()
    deployment = client.AppsV1Api(api).read_namespaced_deployment(NAME, NAMESPACE)
    selector = ",".join("%s=%s" % item for item in deployment.spec.selector.match_labels.items())
    pods = client.CoreV1Api(api).list_namespaced_pod(NAMESPACE, label_selector=selector).items
    status = deployment.status
    if (status.updated_replicas, status.ready_replicas, len(pods)) != (deployment.spec.replicas,) * 3:
        return False
    holder = client.CoordinationV1Api(api).read_namespaced_lease(NAME, NAMESPACE).spec.holder_identity or ""
    # kube-scheduler's identity: its host name (the pod's name), "_", a UUID.
    return holder.split("_")[0] in [pod.metadata.name for pod in pods if not pod.metadata.deletion_timestamp]


def roll_out(cluster, mode):
    """The deployment role: scheduler-plugins' scheduler NAME runs the profile of ``mode`` and leads."""
    cluster.playbook("playbooks/deployment.yml", deployment_vars(
        cluster, kube_scheduler_deployment_name=NAME, kube_scheduler_deployment_config=profile(mode)))
    wait_for("%s's new pod to lead" % NAME, lambda: leading(cluster), timeout=120)


@pytest.fixture
def fidelity(cluster):
    """The cluster with the Node objects Ready, tainted for the test's pods alone, the test's namespace; both
    removed after."""
    if not os.access(os.environ.get(SCHEDULER_BIN, ""), os.X_OK):
        pytest.skip("the preview needs scheduler-plugins' scheduler (make binaries): missing " + SCHEDULER_BIN)
    with nodes_and_namespace(cluster, PODS_NAMESPACE, NODES, LABEL, {NAME}, taints=[TAINT]) as prepared:
        yield prepared


def test_the_preview_of_a_scheduler_plugins_profile_change_is_where_its_scheduler_puts_the_pods_once_rolled_out(
        cluster, fidelity, monkeypatch):
    core, nodes = fidelity
    real, preview, placed, engine = roll_out_and_preview(
        nodes, MODES, lambda mode: roll_out(cluster, mode), lambda: create_again(core, PODS_NAMESPACE, pods(), NODE_NAMES),
        lambda: run_preview(cluster, monkeypatch, preview_variables(cluster)), lambda: engine_placements(cluster))

    assert preview["binaries"]["kube-scheduler"] == "1.34.7"
    assert preview["snapshot"]["nodes"] == len(core.list_node().items)
    assert preview["snapshot"]["pods"] - preview["snapshot"]["kept_on_their_node"] == len(PODS)
    # The cluster as the snapshot found it is Most's own placement.
    assert preview["configs"][preview["observed"]]["runs"][0]["nodes_used"] == real["Most"]["nodes_used"]
    for mode in MODES:
        check(mode, preview["configs"][mode], real[mode], NODE_NAMES)
        check(mode, engine[mode], real[mode], NODE_NAMES)
        # Pod by pod, every pod, in every run: no tie (the module's docstring says why).
        for pod_key, runs in placed[mode].items():
            assert runs == [real[mode]["placed"].get(pod_key)] * RUNS, (mode, pod_key, runs)
    # The comparison tells the modes apart: the baseline's prediction is not what the cluster did under the change.
    with pytest.raises(AssertionError):
        check("Most predicted, Least done", preview["configs"]["Most"], real["Least"], NODE_NAMES)
    # What the change is about: Least fills the small nodes and keeps the large one for the 5-CPU pod, which Most
    # leaves without room (the nodes used count the worker too, which holds the scheduler's own pods).
    assert (real["Most"]["nodes_used"], real["Least"]["nodes_used"]) == (2, 4), real
    assert sorted(real["Most"]["unschedulable_pods"]) == ["%s/p-12" % PODS_NAMESPACE, "%s/p-13" % PODS_NAMESPACE]
    assert list(real["Least"]["unschedulable_pods"]) == ["%s/p-13" % PODS_NAMESPACE]
