"""End to end on a real cluster (conftest.py, realcluster.py): the deployment and verify roles as an operator runs
them. The extra scheduler's Deployment really runs on the real kubelets, from the kube-scheduler image of the
scheduler's minor, with the role's ConfigMap and ServiceAccount (its DaemonSet, on every tainted master, and the
DaemonSet's removal: test_awx_jobs.py, as AWX jobs on the same cluster); the cluster's default scheduler is kubeadm's
static pod on each master. Everything is read back from the API server: pods, leases, Scheduled events.
"""
from __future__ import annotations

import base64
import datetime
import json
import re
import subprocess

import pytest
from kubernetes import client

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster import metrics_access
from conftest import require_binaries
from realcluster import changed_count
from cluster import wait_for  # tests/controlplane, on the path through realcluster

require_binaries()

NAME = "e2e-scheduler"
NAMESPACE = "kube-system"
SELECTOR = "app.kubernetes.io/instance=%s" % NAME


def deployment_vars(cluster, **overrides):
    return cluster.deployment_vars(NAME, NAMESPACE, **dict(
        {"kube_scheduler_deployment_replicas": 2, "kube_scheduler_deployment_wait_timeout": 150}, **overrides))


def verify_vars(cluster, **overrides):
    values = {
        "kube_scheduler_version": cluster.version,
        # kubeadm's scheduler on each master: health from the master, its lease, a pod it binds.
        "kube_scheduler_instances": [{"name": "kube-scheduler", "default_scheduler": True}],
        "kube_scheduler_verify_timeout": 60,
        "kube_scheduler_verify_k8s_kubeconfig": str(cluster.admin_kubeconfig),
    }
    values.update(overrides)
    return values


def lease_of(cluster, namespace, name):
    try:
        return client.CoordinationV1Api(cluster.api()).read_namespaced_lease(name, namespace)
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def held(cluster, namespace, name):
    lease = lease_of(cluster, namespace, name)
    return lease if lease and lease.spec.holder_identity else None


def events_of(cluster, namespace):
    """events.k8s.io/v1 Events as plain data: the typed client refuses the kubelet's, whose eventTime is null."""
    answer = client.EventsV1Api(cluster.api()).list_namespaced_event(namespace, _preload_content=False)
    return json.loads(answer.data)["items"]


def running_pods(cluster, selector=SELECTOR):
    """The scheduler's pods that are Running and Ready, by name."""
    return cluster.ready_pods(NAMESPACE, selector)


def test_deployment_role_rolls_out_real_pods_and_is_idempotent(cluster):
    first = cluster.playbook("playbooks/deployment.yml", deployment_vars(cluster))
    assert changed_count(first) > 0
    apps = client.AppsV1Api(cluster.api())
    deployment = apps.read_namespaced_deployment(NAME, NAMESPACE)
    assert deployment.status.ready_replicas == 2, deployment.status
    pods = running_pods(cluster)
    assert len(pods) == 2
    for pod in pods.values():
        assert pod.spec.containers[0].image == "registry.k8s.io/kube-scheduler:v%s" % cluster.version
        assert pod.spec.node_name in cluster.workers  # no toleration: the masters' taint keeps it off them
    second = cluster.playbook("playbooks/deployment.yml", deployment_vars(cluster))
    assert changed_count(second) == 0, second.stdout[-4000:]


def test_each_scheduler_holds_its_own_lease(cluster):
    default = wait_for("kubeadm's scheduler to hold the default lease",
                       lambda: held(cluster, "kube-system", "kube-scheduler"), timeout=60)
    assert default.spec.holder_identity.split("_")[0] in cluster.masters
    own = wait_for("the Deployment's scheduler to hold its lease", lambda: held(cluster, NAMESPACE, NAME), timeout=60)
    assert own.spec.holder_identity.split("_")[0] in running_pods(cluster)
    # Renewed within the lease duration (15s by default), i.e. actively held.
    age = datetime.datetime.now(datetime.timezone.utc) - own.spec.renew_time
    assert age.total_seconds() < own.spec.lease_duration_seconds


def reader_token(cluster, namespace="monitoring", name="prometheus"):
    """The objects playbooks/metrics_access.yml creates for its reader (metrics_access.reader_objects: the
    ServiceAccount, the metrics-reader ClusterRole and binding, the token Secret), then the token
    kube-controller-manager writes into that Secret."""
    from kubernetes import dynamic  # pylint: disable=import-outside-toplevel
    core = client.CoreV1Api(cluster.api())
    resources = dynamic.DynamicClient(cluster.api()).resources
    for obj in [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}] + \
            metrics_access.reader_objects(name, namespace):
        try:
            resources.get(api_version=obj["apiVersion"], kind=obj["kind"]).create(
                body=obj, namespace=obj["metadata"].get("namespace"))
        except dynamic.exceptions.ConflictError:
            pass
    secret = wait_for("the reader's token", lambda: (core.read_namespaced_secret(
        metrics_access.token_secret_name(name), namespace).data or {}).get("token"), timeout=60)
    return base64.b64decode(secret).decode()


def scrape_from_node(node, url, token=None):
    """(status, body) of GET ``url`` from ``node``, the only host that routes to its pods (a cni0 bridge per node).
    The pods serve kube-scheduler's self-signed in-memory certificate: curl -k. The token goes on stdin, never on a
    command line."""
    header = 'read -r t; exec curl -sk -m 10 -w "\\n%%{http_code}" %s %s' % (
        '-H "Authorization: Bearer $t"' if token else "", url)
    answer = subprocess.run(["podman", "exec", "-i", node, "sh", "-c", header], input=(token or "") + "\n",
                            capture_output=True, text=True, check=True).stdout
    body, status = answer.rsplit("\n", 1)
    return int(status), body


def attempts_of(text, profile):
    """result -> value of scheduler_schedule_attempts_total for one profile."""
    return {labels["result"]: float(value) for labels, value in (
        (dict(re.findall(r'(\w+)="([^"]*)"', match.group(1))), match.group(2)) for match in re.finditer(
            r'^scheduler_schedule_attempts_total\{([^}]*)\} (\S+)$', text, re.MULTILINE)) if labels["profile"] == profile}


def test_a_pod_for_the_in_cluster_scheduler_is_bound_by_it_and_runs(cluster):
    core = client.CoreV1Api(cluster.api())
    try:
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="e2e")))
    except client.ApiException as exc:
        if exc.status != 409:
            raise
    pod = core.create_namespaced_pod("e2e", client.V1Pod(
        metadata=client.V1ObjectMeta(name="probe"),
        spec=client.V1PodSpec(scheduler_name=NAME, termination_grace_period_seconds=0,
                              containers=[client.V1Container(name="pause", image="registry.k8s.io/pause:3.10")])))
    wait_for("the probe pod to run", lambda: core.read_namespaced_pod("probe", "e2e").status.phase == "Running",
             timeout=60)
    events = wait_for("the Scheduled event", lambda: [
        e for e in events_of(cluster, "e2e") if e["reason"] == "Scheduled" and e["regarding"]["uid"] == pod.metadata.uid],
        timeout=15)
    assert events[0]["reportingController"] == NAME
    core.delete_namespaced_pod("probe", "e2e", grace_period_seconds=0)

    # Each pod's /metrics, from the node that runs it, with the reader's token (200, the binding of the
    # metrics-reader ClusterRole) and without (refused). The pods delegate authentication and authorization to the
    # API server as their own ServiceAccount, through its binding to system:kube-scheduler: no auth-delegator.
    token = reader_token(cluster)
    leader = held(cluster, NAMESPACE, NAME).spec.holder_identity.split("_")[0]
    pods = running_pods(cluster)
    assert leader in pods
    sample = []  # kept beside the cluster's files, for docs/docsite/rst/metrics.rst
    for name, running in pods.items():
        (port,) = [p.container_port for p in running.spec.containers[0].ports if p.name == "https"]
        url = "https://%s:%d/metrics" % (running.status.pod_ip, port)
        status, body = scrape_from_node(running.spec.node_name, url, token)
        assert status == 200, (name, status, body[:500])
        assert "# TYPE scheduler_pending_pods gauge" in body, (name, body[:500])
        if name == leader:  # the holder bound the probe pod; a standby tries none
            assert attempts_of(body, NAME).get("scheduled", 0) >= 1, (name, attempts_of(body, NAME))
        sample += ["# %s %s (leader: %s) with the reader's token: %d" % (name, url, name == leader, status)] + [
            line for line in body.splitlines() if line.startswith(("scheduler_schedule_attempts_total{",
                                                                   "scheduler_pending_pods{"))]
        status, body = scrape_from_node(running.spec.node_name, url)
        assert status in (401, 403), (name, status, body[:500])
        sample += ["# without a token: %d %s" % (status, body.strip())]
    (cluster.directory / "deployment-metrics-sample.txt").write_text("\n".join(sample) + "\n")


def survey(**values) -> list[str]:
    """Extra vars as an AWX survey or `-e key=value` passes them: every value a string."""
    return [argument for key, value in values.items() for argument in ("-e", "%s=%s" % (key, value))]


def test_verify_role_proves_every_scheduler_on_real_nodes(cluster):
    # Survey strings: "true" must mean true (health checked, Deployments discovered), "60" sixty.
    run = cluster.playbook("playbooks/verify.yml", verify_vars(cluster), masters=True, options=survey(
        kube_scheduler_verify_health="true", kube_scheduler_verify_discover_deployments="true",
        kube_scheduler_verify_timeout="60"))
    summary = run.stdout[run.stdout.index("Summary"):]
    for scheduler, lease in (("default-scheduler", "kube-system/kube-scheduler"), (NAME, "%s/%s" % (NAMESPACE, NAME))):
        line = [entry for entry in summary.splitlines() if entry.strip().startswith('"%s ' % scheduler)]
        assert line and " ok " in line[0] and lease in line[0], summary[:3000]
    for master in cluster.masters:
        assert master in summary
    assert client.CoreV1Api(cluster.api()).list_namespaced_pod("kubesched-verify").items == []


def test_verify_audits_the_real_leases_and_flags_a_foreign_contender(cluster):
    """Kubeadm's scheduler holds kube-system/kube-scheduler as a master (its host name), the Deployment's
    replicas hold theirs as their pod names: both pass the audit. A lease this inventory's instance expects, held by
    an identity of no master, is a foreign contender (a Check job: no test pod, the leases are read)."""
    renewed = datetime.datetime.now(datetime.timezone.utc)
    coordination = client.CoordinationV1Api(cluster.api())
    try:
        coordination.delete_namespaced_lease("e2e-ghost", "kube-system")
    except client.ApiException as exc:
        if exc.status != 404:
            raise
    coordination.create_namespaced_lease("kube-system", client.V1Lease(
        metadata=client.V1ObjectMeta(name="e2e-ghost"), spec=client.V1LeaseSpec(
            holder_identity="intruder_6b1f0c2e-0000-4000-8000-000000000001", lease_duration_seconds=3600,
            acquire_time=renewed, renew_time=renewed)))
    ghost = {"name": "ghost", "secure_port": 10300,
             "config": {"leaderElection": {"resourceName": "e2e-ghost"}, "profiles": [{"schedulerName": "ghost"}]}}
    options = ["--check"] + survey(kube_scheduler_verify_health="false", kube_scheduler_verify_lease_audit_fail="true")
    run = cluster.playbook("playbooks/verify.yml", verify_vars(
        cluster, kube_scheduler_instances=[{"name": "kube-scheduler", "default_scheduler": True}, ghost]),
        masters=True, check=False, options=options)
    assert run.returncode != 0, run.stdout[-4000:]
    audit = run.stdout[run.stdout.index('"LEASE '):]
    table = audit.split("]", 1)[0].splitlines()[1:]
    rows = dict((line.strip().strip('",').split()[0], line.strip().strip('",')) for line in table if "/" in line)
    assert "Lease kube-system/e2e-ghost: foreign contender: held by intruder_6b1f0c2e" in run.stdout, audit[:3000]
    assert rows["kube-system/kube-scheduler"].split()[1].rsplit("_", 1)[0] in cluster.masters, audit[:3000]
    assert " ok " in rows["kube-system/kube-scheduler"] and " ok " in rows["%s/%s" % (NAMESPACE, NAME)], audit[:3000]
    coordination.delete_namespaced_lease("e2e-ghost", "kube-system")


def test_verify_role_fails_naming_a_scheduler_that_does_not_schedule(cluster):
    run = cluster.playbook("playbooks/verify.yml", verify_vars(
        cluster, kube_scheduler_verify_schedulers=["default-scheduler", "nobody-scheduler"]), masters=True,
        check=False, options=survey(kube_scheduler_verify_timeout="6", kube_scheduler_verify_health="false"))
    assert run.returncode != 0
    assert "Scheduler nobody-scheduler did not schedule: not bound within 6s" in run.stdout, run.stdout[-4000:]
    assert "Scheduler default-scheduler did not schedule" not in run.stdout
    assert "Query the health endpoints" not in run.stdout


def test_a_config_change_rolls_the_pods(cluster):
    before = set(running_pods(cluster))
    changed = {"percentageOfNodesToScore": 40, "profiles": [{"schedulerName": NAME}]}
    cluster.playbook("playbooks/deployment.yml", deployment_vars(cluster, kube_scheduler_deployment_config=changed))
    after = running_pods(cluster)
    assert len(after) == 2 and not set(after) & before, (before, set(after))
    config = client.CoreV1Api(cluster.api()).read_namespaced_config_map(NAME, NAMESPACE).data["config.yaml"]
    assert "percentageOfNodesToScore: 40" in config
    wait_for("the new pods to hold the lease",
             lambda: held(cluster, NAMESPACE, NAME).spec.holder_identity.split("_")[0] in after, timeout=60)


def test_a_rollout_that_does_not_become_ready_puts_back_the_previous_objects_and_pods(cluster):
    core, apps = client.CoreV1Api(cluster.api()), client.AppsV1Api(cluster.api())
    before_config = core.read_namespaced_config_map(NAME, NAMESPACE).data
    before_template = apps.read_namespaced_deployment(NAME, NAMESPACE).spec.template
    before_pods = set(running_pods(cluster))
    # A mistyped image tag: nothing can pull it, the new pods never become ready.
    run = cluster.playbook("playbooks/deployment.yml", deployment_vars(
        cluster, kube_scheduler_deployment_image="registry.k8s.io/kube-scheduler:v%s-typo" % cluster.version,
        kube_scheduler_deployment_wait_timeout=20), check=False)
    assert run.returncode != 0
    assert "Put back the previous ConfigMap and Deployment" in run.stdout, run.stdout[-4000:]
    # The failure names the new pods and why they wait (read by the workload's selector).
    assert re.search(r"Pods: .*%s-\S+ Pending (ErrImagePull|ImagePullBackOff)" % NAME, run.stdout), run.stdout[-4000:]
    assert core.read_namespaced_config_map(NAME, NAMESPACE).data == before_config
    template = apps.read_namespaced_deployment(NAME, NAMESPACE).spec.template
    assert template.spec.containers[0].image == before_template.spec.containers[0].image
    # The previous pods kept running through it all (maxUnavailable and the PDB), and only they run now.
    wait_for("only the previous pods to run", lambda: set(running_pods(cluster)) == before_pods and not [
        p for p in core.list_namespaced_pod(NAMESPACE, label_selector=SELECTOR).items
        if p.metadata.name not in before_pods], timeout=90)


def test_check_mode_shows_the_change_and_changes_nothing(cluster):
    core = client.CoreV1Api(cluster.api())
    before = core.read_namespaced_config_map(NAME, NAMESPACE).data
    run = cluster.playbook("playbooks/deployment.yml", deployment_vars(
        cluster, kube_scheduler_deployment_config={"parallelism": 4, "profiles": [{"schedulerName": NAME}]}),
        options=["--check", "--diff"])
    assert changed_count(run) > 0
    assert "parallelism: 4" in run.stdout
    assert core.read_namespaced_config_map(NAME, NAMESPACE).data == before


def test_state_absent_removes_its_objects_and_pods_and_nothing_else(cluster):
    cluster.playbook("playbooks/deployment.yml", deployment_vars(cluster, kube_scheduler_deployment_state="absent"))
    core, apps = client.CoreV1Api(cluster.api()), client.AppsV1Api(cluster.api())
    rbac = client.RbacAuthorizationV1Api(cluster.api())
    gone = [
        lambda: core.read_namespaced_service_account(NAME, NAMESPACE),
        lambda: core.read_namespaced_config_map(NAME, NAMESPACE),
        lambda: apps.read_namespaced_deployment(NAME, NAMESPACE),
        lambda: client.PolicyV1Api(cluster.api()).read_namespaced_pod_disruption_budget(NAME, NAMESPACE),
        lambda: rbac.read_cluster_role_binding("kubesched:%s:%s:kube-scheduler" % (NAMESPACE, NAME)),
        lambda: rbac.read_namespaced_role("kubesched:%s:%s:leader-election" % (NAMESPACE, NAME), NAMESPACE),
    ]
    for read in gone:
        with pytest.raises(client.ApiException) as raised:
            read()
        assert raised.value.status == 404
    wait_for("its pods to be gone", lambda: not core.list_namespaced_pod(NAMESPACE, label_selector=SELECTOR).items,
             timeout=60)
    # Built-in objects it only referred to, the lease its scheduler wrote, and kubeadm's schedulers stay.
    assert rbac.read_cluster_role("system:kube-scheduler")
    assert rbac.read_namespaced_role("extension-apiserver-authentication-reader", "kube-system")
    assert lease_of(cluster, NAMESPACE, NAME) is not None
    assert held(cluster, "kube-system", "kube-scheduler")
