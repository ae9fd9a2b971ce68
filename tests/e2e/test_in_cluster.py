"""End to end: the deployment and verify roles against a real kube-apiserver on loopback (see conftest.py).

Without a kubelet (and without kube-controller-manager) the Deployment's pods never exist, so the in-cluster
scheduler runs here as a local process with exactly what its pods would have: the config from the role's ConfigMap
and the identity of the role's ServiceAccount (a TokenRequest token in place of the mounted one, since
clientConnection.kubeconfig is empty in the ConfigMap for in-cluster use). Its lease is therefore taken only if the
role's RBAC is right. The cluster's default scheduler runs as a systemd-mode instance would: resolved by
kubesched.schedulers.scheduler_instances and started with the resolved flags and config file.
"""
from __future__ import annotations

import datetime
import json

import pytest
import yaml
from kubernetes import client

from cluster import NOT_READY_TAINT, free_port, wait_for, write_kubeconfig
from conftest import BINARIES, changed_count, require_binaries

require_binaries()

NAME = "e2e-scheduler"
NAMESPACE = "kube-system"
TOLERATE_NOT_READY = [dict(NOT_READY_TAINT, operator="Exists")]
INSTANCE_PLAYBOOK = """
- name: Resolve the default scheduler instance and write its configuration, as the systemd role does
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Resolve
      kubesched.schedulers.scheduler_instances:
        instances: "{{ kube_scheduler_instances }}"
        kubernetes_version: "{{ kube_scheduler_version }}"
        config_dir: "{{ e2e_config_dir }}"
      register: resolved
    - name: Write the configuration
      kubesched.schedulers.scheduler_config:
        content: "{{ item.config_rendered }}"
        kubernetes_version: "{{ kube_scheduler_version }}"
        dest: "{{ item.config_path }}"
      loop: "{{ resolved.instances }}"
    - name: Hand the resolved instances to the test
      ansible.builtin.copy:
        content: "{{ resolved.instances | to_json }}"
        dest: "{{ e2e_config_dir }}/instances.json"
        mode: "0600"
"""


def deployment_vars(cluster, **overrides):
    values = {
        "kube_scheduler_version": cluster.version,
        "kube_scheduler_deployment_name": NAME,
        "kube_scheduler_deployment_namespace": NAMESPACE,
        "kube_scheduler_deployment_replicas": 2,
        # No kube-controller-manager, so no ReplicaSet and no pod: a rollout cannot complete here.
        "kube_scheduler_deployment_wait": False,
        "kube_scheduler_deployment_k8s_kubeconfig": str(cluster.admin_kubeconfig),
    }
    values.update(overrides)
    return values


def verify_vars(cluster, instances, **overrides):
    values = {
        "kube_scheduler_version": cluster.version,
        "kube_scheduler_instances": instances,
        "kube_scheduler_verify_tolerations": TOLERATE_NOT_READY,
        "kube_scheduler_verify_timeout": 30,
        "kube_scheduler_verify_k8s_kubeconfig": str(cluster.admin_kubeconfig),
        "kube_scheduler_control_plane_group": "localhost",
    }
    values.update(overrides)
    return values


@pytest.fixture(scope="module")
def default_instance(cluster):
    """The cluster's default scheduler as a systemd-mode instance on this 'master'."""
    port = free_port()
    config_dir = cluster.directory / "schedulers"
    config_dir.mkdir()
    instances = [{"name": "kube-scheduler", "default_scheduler": True, "secure_port": port,
                  "kubeconfig": str(cluster.scheduler_kubeconfig),
                  "config": {"clientConnection": {"kubeconfig": str(cluster.scheduler_kubeconfig)}}}]
    playbook = cluster.directory / "instance.yml"
    playbook.write_text("---" + INSTANCE_PLAYBOOK)
    cluster.playbook(str(playbook), {"kube_scheduler_instances": instances, "kube_scheduler_version": cluster.version,
                                     "e2e_config_dir": str(config_dir)})
    resolved = json.loads((config_dir / "instances.json").read_text())[0]
    process = cluster.processes.start("default-scheduler", [BINARIES["KUBE_SCHEDULER_BIN"]] + resolved["flags"])
    yield instances, resolved
    cluster.processes.stop(process)


def api(cluster):
    return cluster.api()


def lease_of(cluster, namespace, name):
    try:
        return client.CoordinationV1Api(api(cluster)).read_namespaced_lease(name, namespace)
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def held(cluster, namespace, name):
    lease = lease_of(cluster, namespace, name)
    return lease if lease and lease.spec.holder_identity else None


def test_deployment_role_applies_its_objects_and_is_idempotent(cluster):
    first = cluster.playbook("playbooks/deployment.yml", deployment_vars(cluster))
    assert changed_count(first) > 0
    rbac = client.RbacAuthorizationV1Api(api(cluster))
    role = rbac.read_namespaced_role("kubesched:%s:%s:leader-election" % (NAMESPACE, NAME), NAMESPACE)
    assert role.rules[0].resource_names == [NAME]
    apps = client.AppsV1Api(api(cluster))
    assert apps.read_namespaced_deployment(NAME, NAMESPACE).spec.replicas == 2
    second = cluster.playbook("playbooks/deployment.yml", deployment_vars(cluster))
    assert changed_count(second) == 0, second.stdout[-4000:]


@pytest.fixture(scope="module")
def in_cluster_scheduler(cluster):
    """The Deployment's scheduler, run locally with its ConfigMap and its ServiceAccount's identity."""
    core = client.CoreV1Api(api(cluster))
    config = yaml.safe_load(core.read_namespaced_config_map(NAME, NAMESPACE).data["config.yaml"])
    assert config["clientConnection"]["kubeconfig"] == ""
    token = core.create_namespaced_service_account_token(NAME, NAMESPACE, client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=["https://kubernetes.default.svc.cluster.local"],
                                       expiration_seconds=3600))).status.token
    kubeconfig = write_kubeconfig(cluster.directory / "in-cluster.conf", cluster.server, cluster.certs.ca_file,
                                  {"token": token})
    config["clientConnection"]["kubeconfig"] = str(kubeconfig)
    config_file = cluster.directory / "in-cluster-config.yaml"
    config_file.write_text(yaml.safe_dump(config))
    process = cluster.processes.start(NAME, [
        BINARIES["KUBE_SCHEDULER_BIN"], "--config=%s" % config_file, "--bind-address=127.0.0.1",
        "--secure-port=%d" % free_port(), "--authentication-kubeconfig=%s" % kubeconfig,
        "--authorization-kubeconfig=%s" % kubeconfig])
    yield process
    cluster.processes.stop(process)


def test_each_scheduler_holds_its_own_lease(cluster, default_instance, in_cluster_scheduler):
    del default_instance, in_cluster_scheduler
    default = wait_for("the default lease", lambda: held(cluster, "kube-system", "kube-scheduler"),
                       timeout=60, processes=cluster.processes)
    own = wait_for("the in-cluster scheduler's lease", lambda: held(cluster, NAMESPACE, NAME),
                   timeout=60, processes=cluster.processes)
    assert default.spec.holder_identity != own.spec.holder_identity
    # Renewed within the lease duration (15s by default), i.e. actively held.
    age = datetime.datetime.now(datetime.timezone.utc) - own.spec.renew_time
    assert age.total_seconds() < own.spec.lease_duration_seconds


def test_a_pod_for_the_in_cluster_scheduler_is_bound_by_it(cluster, in_cluster_scheduler):
    del in_cluster_scheduler
    core = client.CoreV1Api(api(cluster))
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="e2e")))
    # Its own ServiceAccount: the namespace's `default` one would come from kube-controller-manager, which is not here
    # (and on a real cluster comes asynchronously); admission refuses a pod whose ServiceAccount does not exist.
    core.create_namespaced_service_account("e2e", client.V1ServiceAccount(
        metadata=client.V1ObjectMeta(name="probe"), automount_service_account_token=False))
    pod = core.create_namespaced_pod("e2e", client.V1Pod(
        metadata=client.V1ObjectMeta(name="probe"),
        spec=client.V1PodSpec(scheduler_name=NAME, service_account_name="probe", automount_service_account_token=False,
                              tolerations=[client.V1Toleration(**t) for t in TOLERATE_NOT_READY],
                              containers=[client.V1Container(name="pause", image="registry.k8s.io/pause:3.10")])))
    node = wait_for("the pod to be bound", lambda: core.read_namespaced_pod("probe", "e2e").spec.node_name,
                    timeout=30, processes=cluster.processes)
    assert node.startswith("node-")
    events = wait_for("the Scheduled event", lambda: [
        e for e in client.EventsV1Api(api(cluster)).list_namespaced_event("e2e").items
        if e.reason == "Scheduled" and e.regarding.uid == pod.metadata.uid], timeout=15)
    assert events[0].reporting_controller == NAME


def survey(**values) -> list[str]:
    """Extra vars as an AWX survey or `-e key=value` passes them: every value a string."""
    return [argument for key, value in values.items() for argument in ("-e", "%s=%s" % (key, value))]


def test_verify_role_proves_every_scheduler(cluster, default_instance, in_cluster_scheduler):
    del in_cluster_scheduler
    instances, resolved = default_instance
    # Survey strings: "true" must mean true (health checked, Deployments discovered), "30" thirty.
    run = cluster.playbook("playbooks/verify.yml", verify_vars(cluster, instances), options=survey(
        kube_scheduler_verify_health="true", kube_scheduler_verify_discover_deployments="true",
        kube_scheduler_verify_timeout="30"))
    summary = run.stdout[run.stdout.index("Summary"):]
    for scheduler, lease in (("default-scheduler", "kube-system/kube-scheduler"), (NAME, "%s/%s" % (NAMESPACE, NAME))):
        line = [entry for entry in summary.splitlines() if entry.strip().startswith('"%s ' % scheduler)]
        assert line and " ok " in line[0] and lease in line[0], summary[:3000]
    assert resolved["health_url"] in summary
    # The pods are deleted at once (grace period 0, nothing runs them), the namespace stays for the next run.
    assert client.CoreV1Api(api(cluster)).list_namespaced_pod("kubesched-verify").items == []


def test_verify_role_fails_naming_a_scheduler_that_does_not_schedule(cluster, default_instance):
    instances, resolved = default_instance
    # Survey strings again: "false" must mean false (ansible-core 2.19 refuses a string as a conditional).
    run = cluster.playbook("playbooks/verify.yml", verify_vars(
        cluster, instances, kube_scheduler_verify_schedulers=["default-scheduler", "nobody-scheduler"]),
        check=False, options=survey(kube_scheduler_verify_timeout="6", kube_scheduler_verify_health="false",
                                    kube_scheduler_verify_tolerate_control_plane="false"))
    assert run.returncode != 0
    assert "Scheduler nobody-scheduler did not schedule: not bound within 6s" in run.stdout, run.stdout[-4000:]
    assert "Scheduler default-scheduler did not schedule" not in run.stdout
    # Health off: no endpoint queried, no health table.
    assert "Query the health endpoints" not in run.stdout and resolved["health_url"] not in run.stdout


def test_a_rollout_that_does_not_become_ready_puts_back_the_previous_objects(cluster):
    core, apps = client.CoreV1Api(api(cluster)), client.AppsV1Api(api(cluster))
    before_config = core.read_namespaced_config_map(NAME, NAMESPACE).data
    before_template = apps.read_namespaced_deployment(NAME, NAMESPACE).spec.template.metadata.annotations
    changed = {"percentageOfNodesToScore": 40, "profiles": [{"schedulerName": NAME}]}
    run = cluster.playbook("playbooks/deployment.yml", deployment_vars(
        cluster, kube_scheduler_deployment_config=changed, kube_scheduler_deployment_wait=True,
        kube_scheduler_deployment_wait_timeout=5), check=False)
    assert run.returncode != 0
    assert "Put back the previous ConfigMap and Deployment" in run.stdout
    assert core.read_namespaced_config_map(NAME, NAMESPACE).data == before_config
    assert apps.read_namespaced_deployment(NAME, NAMESPACE).spec.template.metadata.annotations == before_template


def test_check_mode_shows_the_change_and_changes_nothing(cluster):
    core = client.CoreV1Api(api(cluster))
    before = core.read_namespaced_config_map(NAME, NAMESPACE).data
    run = cluster.playbook("playbooks/deployment.yml", deployment_vars(
        cluster, kube_scheduler_deployment_config={"parallelism": 4, "profiles": [{"schedulerName": NAME}]}),
        options=["--check", "--diff"])
    assert changed_count(run) > 0
    assert "parallelism: 4" in run.stdout
    assert core.read_namespaced_config_map(NAME, NAMESPACE).data == before


def test_state_absent_removes_its_objects_and_nothing_else(cluster):
    cluster.playbook("playbooks/deployment.yml", deployment_vars(cluster, kube_scheduler_deployment_state="absent"))
    core, apps = client.CoreV1Api(api(cluster)), client.AppsV1Api(api(cluster))
    rbac = client.RbacAuthorizationV1Api(api(cluster))
    gone = [
        lambda: core.read_namespaced_service_account(NAME, NAMESPACE),
        lambda: core.read_namespaced_config_map(NAME, NAMESPACE),
        lambda: apps.read_namespaced_deployment(NAME, NAMESPACE),
        lambda: client.PolicyV1Api(api(cluster)).read_namespaced_pod_disruption_budget(NAME, NAMESPACE),
        lambda: rbac.read_cluster_role_binding("kubesched:%s:%s:kube-scheduler" % (NAMESPACE, NAME)),
        lambda: rbac.read_namespaced_role("kubesched:%s:%s:leader-election" % (NAMESPACE, NAME), NAMESPACE),
    ]
    for read in gone:
        with pytest.raises(client.ApiException) as raised:
            read()
        assert raised.value.status == 404
    # Built-in objects it only referred to, and the lease its scheduler wrote, stay.
    assert rbac.read_cluster_role("system:kube-scheduler")
    assert rbac.read_namespaced_role("extension-apiserver-authentication-reader", "kube-system")
    assert lease_of(cluster, NAMESPACE, NAME) is not None
