"""AWX-style jobs: playbooks/deployment.yml driven through ansible-runner the way AWX drives a job template (a
private data dir with env/extravars, env/envvars, env/cmdline, inventory/hosts and project/), extra vars as a survey
gives them (numbers and booleans as strings), on the end-to-end suite's real cluster (conftest.py, realcluster.py: a
control plane of the scheduler's minor, kubeadm-like masters and a worker with real kubelets).

Jobs, in order: a Check job (--check --diff) reports its changes and makes none; the real job applies a DaemonSet
whose pods run on every master; a job whose new pods never become ready (a mistyped image tag) fails, puts the
previous objects back, and its runner_on_failed event carries the reason; a removal job (state absent) takes the
DaemonSet and its pods away and leaves the lease its scheduler wrote.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from conftest import require_binaries
from realcluster import REPO, scheduler_version
from cluster import wait_for  # tests/controlplane, on the path through realcluster

require_binaries()
ansible_runner = pytest.importorskip("ansible_runner")

NAME, NAMESPACE = "awx-scheduler", "kube-system"
# What an AWX survey sends: every answer a string, numbers and booleans included.
SURVEY = {
    "kube_scheduler_deployment_name": NAME,
    "kube_scheduler_deployment_kind": "DaemonSet",
    "kube_scheduler_deployment_version": scheduler_version(os.environ.get("KUBE_SCHEDULER_BIN", "")),
    "kube_scheduler_deployment_replicas": "2",
    "kube_scheduler_deployment_secure_port": "10300",
    "kube_scheduler_deployment_pdb_max_unavailable": "1",
    "kube_scheduler_deployment_wait": "true",
    "kube_scheduler_deployment_wait_timeout": "150",
}


@pytest.fixture(scope="module")
def api_server(cluster):
    """The session's real cluster: the admin kubeconfig path and an API client."""
    return cluster.admin_kubeconfig, cluster.api()


def awx_job(tmp_path, name, kubeconfig, extravars, cmdline=""):
    """One job as AWX runs it: a private data dir and ansible_runner.run; returns the runner."""
    data = tmp_path / name
    for sub in ("env", "inventory", "project"):
        (data / sub).mkdir(parents=True)
    shutil.copy(REPO / "playbooks" / "deployment.yml", data / "project" / "deployment.yml")
    (data / "inventory" / "hosts").write_text(yaml.safe_dump({"all": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}))
    (data / "env" / "extravars").write_text(yaml.safe_dump(extravars))
    (data / "env" / "envvars").write_text(yaml.safe_dump({
        "K8S_AUTH_KUBECONFIG": str(kubeconfig),
        "ANSIBLE_COLLECTIONS_PATH": os.environ.get("ANSIBLE_COLLECTIONS_PATH", str(REPO / ".build" / "collections")),
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        "ANSIBLE_NOCOLOR": "1"}))
    if cmdline:
        (data / "env" / "cmdline").write_text(cmdline)
    return ansible_runner.run(private_data_dir=str(data), playbook="deployment.yml", quiet=True, timeout=600)


def excerpt(runner, events=("runner_on_ok", "runner_item_on_ok", "runner_on_failed", "playbook_on_stats")):
    """The events an AWX job page shows, in short (printed for the report; pytest -s shows them)."""
    lines = []
    for event in runner.events:
        if event.get("event") not in events:
            continue
        data = event.get("event_data", {})
        res = data.get("res", {})
        if event["event"] == "runner_item_on_ok":
            item = res.get("item") or {}
            lines.append(json.dumps({"event": event["event"], "task": data.get("task"), "changed": res.get("changed"),
                                     "item": "%s %s" % (item.get("kind"), (item.get("metadata") or {}).get("name")),
                                     "diff": sorted(res.get("diff") or {})}))
            continue
        lines.append(json.dumps({"event": event["event"], "task": data.get("task"), "changed": res.get("changed"),
                                 "msg": res.get("msg"),
                                 **({"stats": {k: data[k] for k in ("ok", "changed", "failures")}}
                                    if event["event"] == "playbook_on_stats" else {})}, default=str))
    return "\n".join(lines)


def test_a_check_job_reports_changes_and_makes_none(tmp_path, api_server):
    kubeconfig, api = api_server
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    runner = awx_job(tmp_path, "check", kubeconfig, SURVEY, cmdline="--check --diff")
    print("\n--- Check job events\n" + excerpt(runner))
    assert (runner.status, runner.rc) == ("successful", 0), excerpt(runner)
    assert runner.stats["changed"].get("localhost", 0) > 0
    applied = [e["event_data"] for e in runner.events if e.get("event") == "runner_item_on_ok"
               and e["event_data"].get("task_action") == "kubernetes.core.k8s"
               and e["event_data"].get("task") == "Apply the objects"]
    # Every object would be created, each with its --diff, and the job says so.
    assert len(applied) >= 8 and all(item["res"]["changed"] for item in applied)
    assert all(item["res"].get("diff") for item in applied)
    with pytest.raises(client.ApiException) as missing:
        client.CoreV1Api(api).read_namespaced_config_map(NAME, NAMESPACE)
    assert missing.value.status == 404
    with pytest.raises(client.ApiException):
        client.AppsV1Api(api).read_namespaced_daemon_set(NAME, NAMESPACE)


def test_the_job_applies_the_daemonset_from_survey_strings(tmp_path, api_server):
    kubeconfig, api = api_server
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    runner = awx_job(tmp_path, "run", kubeconfig, SURVEY)
    assert (runner.status, runner.rc) == ("successful", 0), excerpt(runner)
    assert runner.stats["failures"] == {}
    daemonset = client.AppsV1Api(api).read_namespaced_daemon_set(NAME, NAMESPACE)
    pod = daemonset.spec.template.spec
    assert pod.node_selector == {"node-role.kubernetes.io/control-plane": ""}
    assert pod.containers[0].ports[0].container_port == 10300
    # No PodDisruptionBudget for a DaemonSet: the disruption controller cannot count its pods, so one would never
    # allow a disruption (this cluster said SyncFailed: "daemonsets.apps does not implement the scale subresource").
    with pytest.raises(client.ApiException) as missing:
        client.PolicyV1Api(api).read_namespaced_pod_disruption_budget(NAME, NAMESPACE)
    assert missing.value.status == 404
    # Its pods run on every master (the control-plane taint tolerated), and one of them leads.
    pods = client.CoreV1Api(api).list_namespaced_pod(NAMESPACE, label_selector="app.kubernetes.io/instance=" + NAME)
    running = {p.metadata.name: p.spec.node_name for p in pods.items if p.status.phase == "Running"}
    assert len(running) == len(client.CoreV1Api(api).list_node(
        label_selector="node-role.kubernetes.io/control-plane").items) == 2, running
    lease = wait_for("the DaemonSet's scheduler to lead", lambda: client.CoordinationV1Api(api).read_namespaced_lease(
        NAME, NAMESPACE).spec.holder_identity, timeout=60)
    assert lease.split("_")[0] in running
    # The same job again changes nothing.
    again = awx_job(tmp_path, "again", kubeconfig, SURVEY)
    assert again.status == "successful" and again.stats["changed"].get("localhost", 0) == 0, excerpt(again)


def test_a_failed_job_carries_the_reason_and_puts_the_previous_objects_back(tmp_path, api_server):
    kubeconfig, api = api_server
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    before = client.CoreV1Api(api).read_namespaced_config_map(NAME, NAMESPACE).data["config.yaml"]
    # A mistyped image tag: nothing can pull it, so the new pods never become ready.
    failing = dict(SURVEY, kube_scheduler_deployment_wait_timeout="20",
                   kube_scheduler_deployment_image="registry.k8s.io/kube-scheduler:v%s-typo"
                   % SURVEY["kube_scheduler_deployment_version"])
    runner = awx_job(tmp_path, "failing", kubeconfig, failing)
    print("\n--- Failed job events\n" + excerpt(runner))
    assert (runner.status, runner.rc) == ("failed", 2)
    assert runner.stats["failures"] == {"localhost": 1}
    failed = [e["event_data"] for e in runner.events if e.get("event") == "runner_on_failed"
              and not e["event_data"].get("ignore_errors")]
    reason = failed[-1]["res"]["msg"]
    assert failed[-1]["task"] == "Fail with the reason"
    assert "DaemonSet kube-system/%s failed" % NAME in reason
    assert "Put back the previous ConfigMap and DaemonSet" in reason
    assert client.CoreV1Api(api).read_namespaced_config_map(NAME, NAMESPACE).data["config.yaml"] == before
    image = client.AppsV1Api(api).read_namespaced_daemon_set(NAME, NAMESPACE).spec.template.spec.containers[0].image
    assert image == "registry.k8s.io/kube-scheduler:v%s" % SURVEY["kube_scheduler_deployment_version"]


def test_a_removal_job_takes_the_daemonset_and_its_pods_away(tmp_path, api_server):
    kubeconfig, api = api_server
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    runner = awx_job(tmp_path, "absent", kubeconfig, dict(SURVEY, kube_scheduler_deployment_state="absent"))
    assert (runner.status, runner.rc) == ("successful", 0), excerpt(runner)
    assert runner.stats["changed"].get("localhost", 0) > 0
    with pytest.raises(client.ApiException) as gone:
        client.AppsV1Api(api).read_namespaced_daemon_set(NAME, NAMESPACE)
    assert gone.value.status == 404
    # The role waits for the DaemonSet's deletion (wait: true); its pods terminate behind it.
    wait_for("the DaemonSet's pods to be gone", lambda: not client.CoreV1Api(api).list_namespaced_pod(
        NAMESPACE, label_selector="app.kubernetes.io/instance=" + NAME).items, timeout=90)
    # The lease is the scheduler's own record, not one of the role's objects: it stays (released by the stopping
    # scheduler, so without a holder now).
    assert client.CoordinationV1Api(api).read_namespaced_lease(NAME, NAMESPACE).metadata.name == NAME
