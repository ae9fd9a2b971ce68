"""scheduler-plugins on a real cluster through the deployment role: the scheduler of scheduler-plugins
0.34.7 with Coscheduling and CapacityScheduling, its CRDs, RBAC and controller, all from the role; then what the
cluster shows of it - a PodGroup is bound all together when the worker has room for all of its pods and not at all
when it has room for fewer than minMember, an ElasticQuota caps a namespace - and `state: absent`, which leaves a CRD
that still holds objects. The worker's room is an extended resource (example.com/slot, three of them, set on the
node's status as the Kubernetes docs advertise one), so nothing depends on the host's CPUs."""
from __future__ import annotations

import time

from kubernetes import client

from conftest import IMAGES, RELEASE
from realcluster import changed_count
from cluster import wait_for  # tests/controlplane, on the path through realcluster

NAME = "gang-scheduler"
NAMESPACE = "kube-system"
SLOT = "example.com/slot"
GROUP = "scheduling.x-k8s.io"
PROFILE = {
    "schedulerName": NAME,
    "plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}, {"name": "CapacityScheduling"}]},
                "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}},
    # A gang that cannot be placed gives its reserved pods back after 10 s (the default is 60).
    "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}}],
}


def deployment_vars(cluster, **overrides):
    values = {
        "kube_scheduler_deployment_version": "1.34.7",
        "kube_scheduler_deployment_scheduler_plugins_version": RELEASE,
        "kube_scheduler_deployment_name": NAME,
        "kube_scheduler_deployment_namespace": NAMESPACE,
        "kube_scheduler_deployment_replicas": 1,
        "kube_scheduler_deployment_config": {"profiles": [PROFILE]},
        "kube_scheduler_deployment_wait_timeout": 150,
        "kube_scheduler_deployment_k8s_kubeconfig": str(cluster.admin_kubeconfig),
    }
    values.update(overrides)
    return values


def custom(cluster):
    return client.CustomObjectsApi(cluster.api())


def ensure_namespace(cluster, name):
    try:
        client.CoreV1Api(cluster.api()).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    except client.ApiException as exc:
        if exc.status != 409:
            raise


def give_the_worker_slots(cluster, count):
    core = client.CoreV1Api(cluster.api())
    for worker in cluster.workers:
        core.patch_node_status(worker, {"status": {"capacity": {SLOT: str(count)}}})
    wait_for("the worker to offer %d slots" % count, lambda: all(
        core.read_node(worker).status.allocatable.get(SLOT) == str(count) for worker in cluster.workers), timeout=30)


def pod_group(cluster, namespace, name, min_member):
    custom(cluster).create_namespaced_custom_object(GROUP, "v1alpha1", namespace, "podgroups", {
        "apiVersion": GROUP + "/v1alpha1", "kind": "PodGroup", "metadata": {"name": name},
        "spec": {"minMember": min_member}})


def slot_pods(cluster, namespace, prefix, count, group=None):
    core = client.CoreV1Api(cluster.api())
    for index in range(count):
        core.create_namespaced_pod(namespace, client.V1Pod(
            metadata=client.V1ObjectMeta(name="%s-%d" % (prefix, index),
                                         labels={GROUP + "/pod-group": group} if group else None),
            spec=client.V1PodSpec(scheduler_name=NAME, termination_grace_period_seconds=0, containers=[
                client.V1Container(name="pause", image="registry.k8s.io/pause:3.10",
                                   resources=client.V1ResourceRequirements(requests={SLOT: "1"}, limits={SLOT: "1"}))])))


def bound(cluster, namespace, prefix):
    pods = client.CoreV1Api(cluster.api()).list_namespaced_pod(namespace).items
    return {p.metadata.name: p.spec.node_name for p in pods if p.metadata.name.startswith(prefix) and p.spec.node_name}


def running_status(cluster, namespace, name):
    """The PodGroup's status once its controller says Running, else None."""
    status = custom(cluster).get_namespaced_custom_object(GROUP, "v1alpha1", namespace, "podgroups", name).get("status", {})
    return status if status.get("phase") == "Running" else None


def delete_pods(cluster, namespace):
    core = client.CoreV1Api(cluster.api())
    core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
    wait_for("the pods of %s to be gone" % namespace, lambda: not core.list_namespaced_pod(namespace).items, timeout=60)


def test_the_role_deploys_the_scheduler_its_crds_rbac_and_controller_and_reruns_clean(cluster):
    first = cluster.playbook("playbooks/deployment.yml", deployment_vars(cluster))
    assert changed_count(first) > 0
    extensions = client.ApiextensionsV1Api(cluster.api())
    for crd in ("podgroups.scheduling.x-k8s.io", "elasticquotas.scheduling.x-k8s.io"):
        conditions = {c.type: c.status for c in extensions.read_custom_resource_definition(crd).status.conditions}
        assert conditions.get("Established") == "True", (crd, conditions)
    apps = client.AppsV1Api(cluster.api())
    for name, image in ((NAME, IMAGES["scheduler"]), (NAME + "-controller", IMAGES["controller"])):
        deployment = apps.read_namespaced_deployment(name, NAMESPACE)
        assert deployment.status.ready_replicas == 1, (name, deployment.status)
        assert deployment.spec.template.spec.containers[0].image == image
    # Its own lease, held by its pod (the scheduler-plugins controller elects on its fixed lease too).
    coordination = client.CoordinationV1Api(cluster.api())
    wait_for("the scheduler's own lease", lambda: coordination.read_namespaced_lease(NAME, NAMESPACE).spec.holder_identity,
             timeout=60)
    wait_for("the controller's lease", lambda: coordination.read_namespaced_lease(
        "sched-plugins-controllers", "kube-system").spec.holder_identity, timeout=60)
    second = cluster.playbook("playbooks/deployment.yml", deployment_vars(cluster))
    assert changed_count(second) == 0, second.stdout[-4000:]


def test_verify_proves_the_gang_scheduler_s_profile(cluster):
    """The verify role, as after any rollout: kubeadm's default scheduler on the master, and the Deployment it
    discovers from the role's ConfigMap - its lease, and a test pod bound by its profile (Coscheduling schedules a pod
    of no PodGroup as any scheduler does)."""
    run = cluster.playbook("playbooks/verify.yml", {
        "kube_scheduler_version": cluster.version,
        "kube_scheduler_instances": [{"name": "kube-scheduler", "default_scheduler": True}],
        "kube_scheduler_verify_discover_deployments": True,
        "kube_scheduler_verify_timeout": 60,
        "kube_scheduler_verify_k8s_kubeconfig": str(cluster.admin_kubeconfig)}, masters=True)
    summary = run.stdout[run.stdout.index("Summary"):]
    line = [entry for entry in summary.splitlines() if entry.strip().startswith('"%s ' % NAME)]
    assert line and " ok " in line[0] and "%s/%s" % (NAMESPACE, NAME) in line[0], summary[:3000]


def test_a_pod_group_with_room_for_all_is_bound_all_together(cluster):
    give_the_worker_slots(cluster, 3)
    ensure_namespace(cluster, "gang")
    pod_group(cluster, "gang", "fits", 3)
    slot_pods(cluster, "gang", "fits", 3, group="fits")
    nodes = wait_for("all three pods of the group to be bound", lambda: len(bound(cluster, "gang", "fits")) == 3
                     and bound(cluster, "gang", "fits"), timeout=90)
    assert set(nodes.values()) <= set(cluster.workers)
    # The controller keeps the group's status (pkg/controllers/podgroup_controller.go): Running once minMember of its
    # pods run.
    status = wait_for("the PodGroup to be Running", lambda: running_status(cluster, "gang", "fits"), timeout=90)
    assert status["running"] == 3, status
    delete_pods(cluster, "gang")


def test_a_pod_group_with_room_for_fewer_than_min_member_is_not_bound_at_all(cluster):
    give_the_worker_slots(cluster, 3)
    ensure_namespace(cluster, "gang")
    pod_group(cluster, "gang", "too-big", 4)
    slot_pods(cluster, "gang", "too-big", 4, group="too-big")
    # Three would fit: Coscheduling holds them at Permit and gives them back after permitWaitingTimeSeconds (10 s),
    # again and again; in twice that and more, not one of the four may have been bound.
    deadline = time.monotonic() + 35
    while time.monotonic() < deadline:
        assert bound(cluster, "gang", "too-big") == {}
        time.sleep(1)
    status = custom(cluster).get_namespaced_custom_object(GROUP, "v1alpha1", "gang", "podgroups", "too-big").get(
        "status", {})
    # All four exist, so the controller says Scheduling; none runs.
    assert status.get("phase") == "Scheduling" and not status.get("running"), status
    # Room for the fourth. Coscheduling put its pods back in the queue only on a Pod added or a PodGroup added or
    # updated (its EventsToRegister), not on a node's new room (measured: none bound in 90 s; the queue's flush of
    # unschedulable pods comes after 5 minutes): a change of the PodGroup, as an operator or a job controller makes
    # one, sends them back, and the whole group is bound.
    give_the_worker_slots(cluster, 4)
    custom(cluster).patch_namespaced_custom_object(GROUP, "v1alpha1", "gang", "podgroups", "too-big", {
        "metadata": {"annotations": {"kubesched.test/room": "4"}}})
    wait_for("the group to be bound once it fits", lambda: len(bound(cluster, "gang", "too-big")) == 4, timeout=90)
    delete_pods(cluster, "gang")


def test_an_elastic_quota_caps_its_namespace(cluster):
    give_the_worker_slots(cluster, 3)
    ensure_namespace(cluster, "quota")
    custom(cluster).create_namespaced_custom_object(GROUP, "v1alpha1", "quota", "elasticquotas", {
        "apiVersion": GROUP + "/v1alpha1", "kind": "ElasticQuota", "metadata": {"name": "quota"},
        "spec": {"min": {SLOT: "1"}, "max": {SLOT: "1"}}})
    slot_pods(cluster, "quota", "capped", 2)
    wait_for("one pod of the namespace to be bound", lambda: len(bound(cluster, "quota", "capped")) == 1, timeout=60)
    time.sleep(15)
    assert len(bound(cluster, "quota", "capped")) == 1  # the worker has room for both; the quota for one
    delete_pods(cluster, "quota")


def test_state_absent_removes_its_objects_and_keeps_a_crd_that_holds_objects(cluster):
    run = cluster.playbook("playbooks/deployment.yml", deployment_vars(cluster, kube_scheduler_deployment_state="absent"))
    assert "Left in place: elasticquotas.scheduling.x-k8s.io, podgroups.scheduling.x-k8s.io" in run.stdout, run.stdout[-3000:]
    apps = client.AppsV1Api(cluster.api())
    assert not [d.metadata.name for d in apps.list_namespaced_deployment(NAMESPACE).items
                if d.metadata.name.startswith(NAME)]
    extensions = client.ApiextensionsV1Api(cluster.api())
    names = {crd.metadata.name for crd in extensions.list_custom_resource_definition().items}
    assert {"podgroups.scheduling.x-k8s.io", "elasticquotas.scheduling.x-k8s.io"} <= names
    rbac = client.RbacAuthorizationV1Api(cluster.api())
    assert not [r.metadata.name for r in rbac.list_cluster_role().items if NAME in r.metadata.name]
    # Emptied, they go too.
    for namespace, plural in (("gang", "podgroups"), ("quota", "elasticquotas")):
        custom(cluster).delete_collection_namespaced_custom_object(GROUP, "v1alpha1", namespace, plural)
    run = cluster.playbook("playbooks/deployment.yml", deployment_vars(cluster, kube_scheduler_deployment_state="absent"))
    assert "Left in place" not in run.stdout
    wait_for("the CRDs to be removed", lambda: not {"podgroups.scheduling.x-k8s.io", "elasticquotas.scheduling.x-k8s.io"}
             & {crd.metadata.name for crd in extensions.list_custom_resource_definition().items}, timeout=60)
