# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deployment role's Check job with kube_scheduler_rollout_preview: true, on real parts: a real kube-apiserver
and etcd (tests/controlplane/local_apiserver.py) play the cluster, holding the scheduler's ConfigMap with
LeastAllocated and pods waiting for that scheduler name; the role (real ansible-playbook, kubernetes.core, --check)
proposes MostAllocated and prints the real preview's table before anything is applied, and applies nothing. Without
the binaries, a required preview fails the run naming the variable.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "controlplane"))
from local_apiserver import LocalApiServer, missing_binaries  # noqa: E402  pylint: disable=wrong-import-position
from preview_binaries import real_binaries, scheduler_plugins_scheduler, serve_scheduler_plugins_objects  # noqa: E402  pylint: disable=wrong-import-position

MINOR, BINARIES = real_binaries(("1.35",))
if MINOR is None or missing_binaries():
    pytest.skip("no real binaries: %s" % (BINARIES if MINOR is None else ", ".join(missing_binaries())),
                allow_module_level=True)

VERSION = "1.35.4"
NAMESPACE = "team-a"
NAME = "packer"


def strategy(kind, *plugins):
    """A profile of scoring strategy ``kind``, with scheduler-plugins' ``plugins`` enabled, if any."""
    profile = {"schedulerName": NAME, "pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": kind}}}]}
    if plugins:
        profile["plugins"] = {"multiPoint": {"enabled": [{"name": name} for name in plugins]}}
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [profile]}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with LocalApiServer(tmp_path_factory.mktemp("apiserver")) as server:
        from kubernetes import client  # pylint: disable=import-outside-toplevel
        core = client.CoreV1Api(server.client)
        server.namespaces("default", "kube-system", NAMESPACE, "apps")
        serve_scheduler_plugins_objects(server, REPO)  # for the scheduler-plugins case's PodGroups
        server.ready_nodes(dict(("node-%d" % index, {}) for index in range(3)), {"cpu": "4", "memory": "8Gi", "pods": "110"})
        for index in range(4):
            core.create_namespaced_pod("apps", {"metadata": {"name": "batch-%d" % index}, "spec": {
                "schedulerName": NAME, "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                                       "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}]}})
        # The ConfigMap the role wrote before: the scheduler runs LeastAllocated now.
        core.create_namespaced_config_map(NAMESPACE, {"metadata": {"name": NAME}, "data": {
            "config.yaml": yaml.safe_dump(dict(strategy("LeastAllocated"), leaderElection={
                "leaderElect": True, "resourceNamespace": NAMESPACE, "resourceName": NAME}))}})
        yield server


def check_job(api, tmp_path, ansible_playbook, **extra):
    variables = dict({"kube_scheduler_deployment_version": VERSION, "kube_scheduler_deployment_namespace": NAMESPACE,
                      "kube_scheduler_deployment_name": NAME, "kube_scheduler_deployment_lease_name": NAME,
                      "kube_scheduler_deployment_pod_monitor": False,
                      "kube_scheduler_deployment_k8s_kubeconfig": str(api.kubeconfig),
                      "kube_scheduler_deployment_config": {"profiles": strategy("MostAllocated")["profiles"]},
                      "kube_scheduler_rollout_preview": True, "ansible_python_interpreter": sys.executable}, **extra)
    (tmp_path / "vars.yml").write_text(yaml.safe_dump(variables))
    proc = ansible_playbook(["-i", "localhost,", "--check", "-e", "@vars.yml", str(REPO / "playbooks" / "deployment.yml")],
                            cwd=tmp_path, timeout=900, env={"ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp")})
    print(proc.stdout + proc.stderr)
    return proc


def shown(proc):
    found = re.search(r"TASK \[kubesched.schedulers.deployment : Show the placement previews, per scheduler name\].*?"
                      r"\n(.*?\n})\n", proc.stdout, re.S)
    return json.loads(found.group(1).split(" => ", 1)[1])["msg"]


# Three runs of two configurations through the role's Check job: make preview-tests (the action plugin's fidelity
# test keeps the real preview in make test, and the test below the role's preview task).
@pytest.mark.slow_preview
def test_a_check_job_prints_the_real_preview_of_the_changed_scheduler_name_and_applies_nothing(api, tmp_path, ansible_playbook):
    proc = check_job(api, tmp_path, ansible_playbook, kube_scheduler_rollout_preview_required=True,
                     kube_scheduler_rollout_preview_binaries={"etcd": BINARIES["etcd"],
                                                              "kube_apiserver": BINARIES["kube-apiserver"],
                                                              "kube_scheduler": BINARIES["kube-scheduler"]})
    assert proc.returncode == 0
    lines = shown(proc)
    assert lines[0] == "scheduler name %s (ConfigMap %s/%s):" % (NAME, NAMESPACE, NAME)
    table = "\n".join(lines[1:])
    used = re.search(r"nodes used\s+(\S+)\s+(\S+)\s+(\S+)", table)
    # Nothing serves the name in the cluster now; LeastAllocated spreads the 4 pods over the 3 nodes, MostAllocated
    # packs them onto fewer.
    assert used and used.group(1) == "0" and used.group(2) == "3" and int(used.group(3).split("-")[0]) < 3, table
    # The preview came before anything was applied, and the Check job applied nothing.
    assert proc.stdout.index("Show the placement previews") < proc.stdout.rindex("TASK [kubesched.schedulers.deployment : Apply the objects]")
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    held = client.CoreV1Api(api.client).read_namespaced_config_map(NAME, NAMESPACE).data["config.yaml"]
    assert "LeastAllocated" in held and "MostAllocated" not in held


@pytest.mark.slow_preview
def test_a_scheduler_plugins_scheduler_is_previewed_by_its_release(api, tmp_path, ansible_playbook):
    """kube_scheduler_deployment_scheduler_plugins_version reaches the preview: the proposed profile enables
    scheduler-plugins' CapacityScheduling, which only that release's scheduler accepts."""
    scheduler = scheduler_plugins_scheduler("0.34.7")
    if not scheduler:
        pytest.skip("no scheduler-plugins 0.34.7 scheduler (make binaries)")
    proc = check_job(api, tmp_path, ansible_playbook, kube_scheduler_rollout_preview_required=True,
                     kube_scheduler_deployment_version="1.34.7",
                     kube_scheduler_deployment_scheduler_plugins_version="0.34.7",
                     kube_scheduler_deployment_config={"profiles": strategy("MostAllocated", "CapacityScheduling")["profiles"]},
                     kube_scheduler_rollout_preview_binaries={"etcd": BINARIES["etcd"],
                                                              "kube_apiserver": BINARIES["kube-apiserver"],
                                                              "kube_scheduler": scheduler})
    assert proc.returncode == 0
    table = "\n".join(shown(proc)[1:])
    used = re.search(r"nodes used\s+(\S+)\s+(\S+)\s+(\S+)", table)
    assert used and used.group(2) == "3" and int(used.group(3).split("-")[0]) < 3, table


def test_a_required_preview_without_its_binaries_fails_the_check_job_naming_the_variable(api, tmp_path, ansible_playbook):
    proc = check_job(api, tmp_path, ansible_playbook, kube_scheduler_rollout_preview_required=True)
    assert proc.returncode == 2
    assert shown(proc)[0].startswith("WARNING: the placement preview of scheduler name %s (ConfigMap %s/%s) did not "
                                     "run: kube_scheduler_rollout_preview_binaries: Required value" % (NAME, NAMESPACE, NAME))
    assert re.search(r"fatal: \[localhost\]: FAILED! => .*kube_scheduler_rollout_preview_required: the placement preview "
                     r"did not run for scheduler name packer", proc.stdout)
