"""The deployment role's rollback point, on a real cluster (conftest.py, realcluster.py): a run killed between its
apply and the end of its wait leaves the previous ConfigMap and Deployment in a Secret in the scheduler's namespace,
and the next run judges the rollout it belongs to.

Each run is killed as a lost session or an OOM kill would kill it: SIGKILL to ansible-playbook's process group, once
the API server has the new Deployment (the role's last write before its wait).

- A rollout that never gets ready (a mistyped image tag: nothing can pull it): the next plain run finds the point,
  gives the rollout its wait, puts back the previous ConfigMap and Deployment from the point, removes the point and
  fails, naming why and the pods' states; the previous pods kept running through it all.
- A good rollout (a config change): the next run finds it ready with its new config, commits it (the point goes) and
  says so; the run after changes nothing and leaves no point.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kubernetes import client

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import (
    CONFIG_CHECKSUM_ANNOTATION, ROLLBACK_POINT_LABEL)
from conftest import require_binaries
from cluster import wait_for  # tests/controlplane, on the path through realcluster
from realcluster import REPO, changed_count

require_binaries()

NAME = "e2e-killed"
NAMESPACE = "kube-system"
SELECTOR = "app.kubernetes.io/instance=%s" % NAME
PROFILE = {"profiles": [{"schedulerName": NAME}]}


def variables(cluster, **overrides):
    return cluster.deployment_vars(NAME, NAMESPACE, **dict(
        {"kube_scheduler_deployment_replicas": 1, "kube_scheduler_deployment_config": PROFILE,
         "kube_scheduler_deployment_wait_timeout": 120}, **overrides))


def points(cluster):
    return client.CoreV1Api(cluster.api()).list_namespaced_secret(
        NAMESPACE, label_selector="%s=%s" % (ROLLBACK_POINT_LABEL, NAME)).items


def deployment(cluster):
    return client.AppsV1Api(cluster.api()).read_namespaced_deployment(NAME, NAMESPACE)


def running_pods(cluster):
    return set(cluster.ready_pods(NAMESPACE, SELECTOR))


def killed_run(cluster, extra, applied):
    """playbooks/deployment.yml with ``extra``, in a process group of its own, killed (SIGKILL) once ``applied``
    (a test of the Deployment as the API server has it) holds: the role then waits for the new pods."""
    path = cluster.directory / "killed-deployment-vars.json"
    path.write_text(json.dumps(extra))
    playbook = subprocess.Popen(
        [str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(cluster.localhost_inventory()), "-e", "@%s" % path,
         "playbooks/deployment.yml"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO, start_new_session=True,
        env=dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0"))
    deadline = time.time() + 300
    while time.time() < deadline and playbook.poll() is None:
        if applied(deployment(cluster)):
            break
        time.sleep(0.2)
    if playbook.poll() is not None:
        raise AssertionError("the run ended before it could be killed: %s" % playbook.communicate()[0][-6000:])
    os.killpg(playbook.pid, signal.SIGKILL)
    # ansible-playbook's workers run in sessions of their own (setsid) and would go on with the role's wait, as a
    # controller that died would not: kill every process of this run (its command line names the vars file).
    subprocess.run(["pkill", "-KILL", "-f", str(path)], check=False)
    return playbook.communicate()[0]


@pytest.fixture(scope="module")
def converged(cluster):
    """The instance as each test of the module begins: converged by a first run (changed, no rollback point left).
    The first test leaves it so (the next run puts the previous objects back), the second starts from it and removes
    the instance at its end: one converging run serves both (a run of the role is about 20 module runs)."""
    first = cluster.playbook("playbooks/deployment.yml", variables(cluster))
    assert changed_count(first) > 0 and not points(cluster), "a converged rollout leaves a rollback point"


@pytest.mark.usefixtures("converged")
def test_a_killed_rollout_that_never_gets_ready_is_put_back_by_the_next_run_which_fails_naming_why(cluster):
    core = client.CoreV1Api(cluster.api())
    before_config = core.read_namespaced_config_map(NAME, NAMESPACE).data
    before_image = deployment(cluster).spec.template.spec.containers[0].image
    before_pods = wait_for("the first pod to be ready", lambda: running_pods(cluster), timeout=120)
    typo = "registry.k8s.io/kube-scheduler:v%s-typo" % cluster.version
    bad = variables(cluster, kube_scheduler_deployment_image=typo,
                    kube_scheduler_deployment_config=dict(PROFILE, percentageOfNodesToScore=20))
    output = killed_run(cluster, bad, lambda found: found.spec.template.spec.containers[0].image == typo)
    # What the killed run leaves: the new objects, and the point that holds the previous ones.
    assert len(points(cluster)) == 1, output[-4000:]
    assert "percentageOfNodesToScore: 20" in core.read_namespaced_config_map(NAME, NAMESPACE).data["config.yaml"]

    # The next plain run (the operator runs the same job again).
    run = cluster.playbook("playbooks/deployment.yml", dict(bad, kube_scheduler_deployment_wait_timeout=20), check=False)
    assert run.returncode != 0
    assert ("Deployment kube-system/%s failed: a rollout an earlier run applied and never confirmed (the run stopped "
            "before its pods were ready) is not ready: " % NAME) in run.stdout, run.stdout[-6000:]
    assert "The previous ConfigMap and Deployment were put back from the rollback point." in run.stdout
    assert re.search(r"Pods: .*%s-\S+ Pending (ErrImagePull|ImagePullBackOff)" % NAME, run.stdout), run.stdout[-6000:]
    assert core.read_namespaced_config_map(NAME, NAMESPACE).data == before_config
    assert deployment(cluster).spec.template.spec.containers[0].image == before_image
    assert not points(cluster)
    # The previous pod kept running through it all, and only it runs now.
    wait_for("only the previous pod to run", lambda: running_pods(cluster) == before_pods and not [
        pod for pod in core.list_namespaced_pod(NAMESPACE, label_selector=SELECTOR).items
        if pod.metadata.name not in before_pods], timeout=120)


@pytest.mark.usefixtures("converged")
def test_a_killed_rollout_that_gets_ready_is_committed_by_the_next_run(cluster):
    before = deployment(cluster).spec.template.metadata.annotations[CONFIG_CHECKSUM_ANNOTATION]
    good = variables(cluster, kube_scheduler_deployment_config=dict(PROFILE, percentageOfNodesToScore=30))
    output = killed_run(cluster, good, lambda found: found.spec.template.metadata.annotations.get(
        CONFIG_CHECKSUM_ANNOTATION) != before)
    assert len(points(cluster)) == 1, output[-4000:]

    run = cluster.playbook("playbooks/deployment.yml", good)
    assert ("Deployment kube-system/%s: a rollout an earlier run applied and never confirmed (the run stopped before "
            "its pods were ready) is ready with its new config: it is committed, and its rollback point was removed"
            % NAME) in run.stdout, run.stdout[-6000:]
    assert not points(cluster)
    config = client.CoreV1Api(cluster.api()).read_namespaced_config_map(NAME, NAMESPACE).data["config.yaml"]
    assert "percentageOfNodesToScore: 30" in config
    again = cluster.playbook("playbooks/deployment.yml", good)
    assert changed_count(again) == 0, again.stdout[-4000:]
    assert not points(cluster)
    cluster.playbook("playbooks/deployment.yml", variables(cluster, kube_scheduler_deployment_state="absent"))
