"""The static_pod role's mirror-pod gate is a gate: a mirror pod that was Ready with the new checksum and then
restarted its container inside the settle fails it, naming the pod; one that stayed Ready with the same container
passes.

A real kube-apiserver (1.35, `make binaries`) with etcd (tests/controlplane/local_apiserver.py) holds the mirror pod;
its status is what a kubelet would report (written through the status subresource, as the kubelet does). The role's
tasks (roles/static_pod/tasks/mirror_pods.yml) run in real ansible-playbook with kubernetes.core. Without the binaries
the module is skipped with a line naming the variables.
"""
from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "controlplane"))
from local_apiserver import LocalApiServer, missing_binaries  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import CHECKSUM_ANNOTATION  # noqa: E402

if missing_binaries():
    pytest.skip("the mirror-pod gate test needs real binaries (make binaries): missing "
                + ", ".join(missing_binaries()), allow_module_level=True)

NODE = "node1"
CHECKSUM = "c" * 64
SETTLE = 5
PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: The role's mirror-pod gate after the engine's
      ansible.builtin.include_role:
        name: kubesched.schedulers.static_pod
        tasks_from: mirror_pods
        rolespec_validate: false
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with LocalApiServer(tmp_path_factory.mktemp("apiserver")) as server:
        server.namespaces("kube-system")
        yield server


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def running(container_id, restarts):
    return {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now()}],
            "containerStatuses": [{"name": "kube-scheduler", "containerID": container_id, "restartCount": restarts,
                                   "ready": True, "started": True, "image": "registry.k8s.io/kube-scheduler:v1.35.4",
                                   "imageID": "", "state": {"running": {"startedAt": now()}}}]}


def mirror_pod(api, name):
    """A mirror pod as the kubelet shows it: Ready, with the new manifest's checksum."""
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    core = client.CoreV1Api(api.client)
    core.create_namespaced_pod("kube-system", {
        "metadata": {"name": "%s-%s" % (name, NODE), "annotations": {CHECKSUM_ANNOTATION: CHECKSUM}},
        "spec": {"nodeName": NODE,
                 "containers": [{"name": "kube-scheduler", "image": "registry.k8s.io/kube-scheduler:v1.35.4"}]}})
    core.patch_namespaced_pod_status("%s-%s" % (name, NODE), "kube-system", {"status": running("containerd://first", 0)})
    return core


def gate(api, tmp_path, name, during_settle=None, hold=True):
    """The role's mirror-pod tasks for instance ``name``, with ``during_settle`` called once they wait for the
    settle; returns (rc, output)."""
    (tmp_path / "pb.yml").write_text(PLAYBOOK)
    extra = {"kube_scheduler_version": "1.35.4", "kube_scheduler_static_pod_api_kubeconfig": str(api.kubeconfig),
             "kube_scheduler_static_pod_node_name": NODE, "kube_scheduler_rollout_hold": hold,
             "kube_scheduler_health_timeout": 10, "kube_scheduler_health_settle": SETTLE,
             "kube_scheduler_applied": {"applied": {name: {"restarted": True}}, "drift": {name: {"checksum": CHECKSUM}}}}
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0", PYTHONUNBUFFERED="1")
    playbook = Path(sys.executable).with_name("ansible-playbook")
    with subprocess.Popen([str(playbook), "pb.yml", "-e", json.dumps(extra)], cwd=tmp_path, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as run:
        lines = []
        for line in run.stdout:
            lines.append(line)
            if during_settle and "Let each mirror pod run for the settle" in line:
                during_settle()
                during_settle = None
        run.wait(timeout=120)
    return run.returncode, "".join(lines)


def test_a_mirror_pod_whose_container_restarts_inside_the_settle_fails_the_gate(api, tmp_path):
    core = mirror_pod(api, "restarts")

    def restart():
        # The kubelet restarted the container: a new container ID, one more restart, Ready again.
        core.patch_namespaced_pod_status("restarts-%s" % NODE, "kube-system",
                                         {"status": running("containerd://second", 1)})

    rc, output = gate(api, tmp_path, "restarts", during_settle=restart)
    assert rc == 2, output
    assert "The mirror pod restarts-%s did not stay Ready for the %ss settle" % (NODE, SETTLE) in output, output
    assert '"restarts": [0]' in output and '"restarts": [1]' in output, output


def test_a_mirror_pod_that_stays_ready_with_the_same_container_passes(api, tmp_path):
    mirror_pod(api, "stays")
    rc, output = gate(api, tmp_path, "stays")
    assert rc == 0, output
    assert "The mirror pod stays-%s did not stay Ready" % NODE not in output, output
    assert "ok: [localhost] => (item=stays)" in output, output  # read again after the settle


def test_a_padded_hold_is_refused_naming_it_never_read_as_false(api, tmp_path):
    # | bool read "yes " as false: the change held for a later gate was committed after the mirror pods.
    mirror_pod(api, "padded")
    rc, output = gate(api, tmp_path, "padded", hold="yes ")
    assert rc == 2, output
    assert "kube_scheduler_rollout_hold: Invalid value: 'yes ': must be true or false" in output, output
