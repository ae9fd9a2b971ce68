# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deployment role's rollback point in a real kube-apiserver: a forged point is refused and nothing is applied.

A real kube-apiserver (1.35, `make binaries`) and etcd run as local processes (tests/controlplane/local_apiserver.py).
Someone who may write Secrets in the scheduler's namespace (team-a) writes a rollback point with the role's name and
labels: one holding a ClusterRoleBinding of cluster-admin, one holding kube-system's coredns with another image, one
whose record is cut short. The deployment role (real ansible-playbook, kubernetes.core, not a Check job) finds each,
fails naming the Secret and the field, and applies nothing: no ClusterRoleBinding, coredns as it was, none of the
role's own objects, the Secret left for inspection. The role's own point, made from objects the API server stored and
read back through the kubernetes client as kubernetes.core reads them, passes the same check.

Without the binaries the module is skipped with a line naming the variables.
"""
from __future__ import annotations

import base64
import copy
import json
import sys
from pathlib import Path

import pytest

from ansible_collections.kubesched.schedulers.plugins.filter.deployment_rollback import (
    deployment_previous_objects, deployment_rollback_decision, deployment_rollback_point,
    deployment_rollback_point_checked)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render import deployment_objects

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "controlplane"))
from local_apiserver import LocalApiServer, missing_binaries  # noqa: E402  pylint: disable=wrong-import-position

if missing_binaries():
    pytest.skip("the rollback point test needs real binaries (make binaries): missing "
                + ", ".join(missing_binaries()), allow_module_level=True)

VERSION = "1.35.4"
NAMESPACE = "team-a"
COREDNS_IMAGE = "registry.k8s.io/coredns/coredns:v1.12.1"


def labels(name):
    return {"app.kubernetes.io/name": "kube-scheduler", "app.kubernetes.io/instance": name,
            "app.kubernetes.io/managed-by": "kubesched.schedulers"}


def settings(name):
    """The role's settings (vars/main.yml) with its defaults, for the objects it renders."""
    return {"name": name, "namespace": NAMESPACE, "kind": "Deployment", "replicas": 1, "lease_name": name,
            "secure_port": 10259, "image": "registry.k8s.io/kube-scheduler:v" + VERSION,
            "image_pull_policy": "IfNotPresent", "resources": {}, "priority_class_name": "", "priority_classes": [],
            "run_as_user": 65532, "node_selector": {}, "tolerations": [], "spread_when_unsatisfiable": "ScheduleAnyway",
            "pdb_max_unavailable": 1, "wait_timeout": 300, "settle": 10, "labels": labels(name),
            "selector": {"app.kubernetes.io/name": "kube-scheduler", "app.kubernetes.io/instance": name},
            "rbac_prefix": "kubesched:%s:%s" % (NAMESPACE, name), "control_plane_selector": {},
            "control_plane_tolerations": [], "controller": False}


def config(checksum):
    return {"checksum": checksum, "profiles": ["s"], "rendered": "profiles: []\n",
            "health_paths": {"liveness": "/livez", "readiness": "/readyz"}, "effective": {}}


def coredns(image=COREDNS_IMAGE):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "coredns", "namespace": "kube-system", "labels": {"k8s-app": "kube-dns"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"k8s-app": "kube-dns"}}, "template": {
                "metadata": {"labels": {"k8s-app": "kube-dns"}},
                "spec": {"containers": [{"name": "coredns", "image": image}]}}}}


CLUSTER_ADMIN = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                 "metadata": {"name": "team-a-admin"},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
                 "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": NAMESPACE}]}


def point_secret(name, record=None, text=None):
    """A rollback point as anyone who may create Secrets in team-a can write it: the role's name and labels."""
    secret = deployment_rollback_point([], settings(name), [deployment_objects.workload(settings(name), config("new"))],
                                       labels(name))
    if record is not None or text is not None:
        data = json.dumps(record).encode() if text is None else text
        secret["data"]["rollback.json"] = base64.b64encode(data).decode()
    return secret


def forged_record(name, previous):
    return {"format": 1, "kind": "Deployment", "name": name, "namespace": NAMESPACE, "config_checksum": "new",
            "previous": previous}


# case: (the role's name, the point it finds, what the failure names)
FORGED = {
    "cluster_admin": ("batch", lambda: point_secret("batch", forged_record("batch", [CLUSTER_ADMIN])),
                      "Secret team-a/batch-rollback-point is refused: previous[0].kind: Unsupported value: "
                      "\"ClusterRoleBinding\""),
    "kube_system_coredns": ("dns", lambda: point_secret("dns", forged_record("dns", [coredns("evil.example/dns:1")])),
                            "Secret team-a/dns-rollback-point is refused: previous[0].metadata.namespace: Invalid "
                            "value: \"kube-system\": must be \"team-a\""),
    "damaged": ("cut", lambda: point_secret("cut", text=b'{"format": 1, "previous": [{"kind": "Con'),
                "Secret team-a/cut-rollback-point cannot be read (data.rollback.json: Unterminated string"),
}

PLAY = """
- name: {case}
  hosts: localhost
  gather_facts: false
  vars: {vars}
  tasks:
    - name: Run the deployment role
      block:
        - name: The role
          ansible.builtin.include_role:
            name: kubesched.schedulers.deployment
        - name: Keep that it passed
          ansible.builtin.set_fact:
            {fact}: {{passed: true}}
      rescue:
        - name: Keep the failure and the task that failed
          ansible.builtin.set_fact:
            {fact}:
              task: "{{{{ ansible_failed_task.name }}}}"
              msg: "{{{{ ansible_failed_result.msg | default('') }}}}"
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with LocalApiServer(tmp_path_factory.mktemp("apiserver")) as server:
        server.namespaces("default", "kube-system", NAMESPACE)
        yield server


def resources(api):
    from kubernetes import dynamic  # pylint: disable=import-outside-toplevel
    return dynamic.DynamicClient(api.client).resources


def create(api, obj):
    resource = resources(api).get(api_version=obj["apiVersion"], kind=obj["kind"])
    return resource.create(body=obj, namespace=obj["metadata"].get("namespace")).to_dict()


def read(api, api_version, kind, name, namespace=None):
    """The object as kubernetes.core's k8s_info returns it (the dynamic client's dict), or None."""
    from kubernetes.dynamic.exceptions import NotFoundError  # pylint: disable=import-outside-toplevel
    try:
        return resources(api).get(api_version=api_version, kind=kind).get(name=name, namespace=namespace).to_dict()
    except NotFoundError:
        return None


@pytest.fixture(scope="module")
def role_runs(api, tmp_path_factory, case_plays):
    create(api, coredns())
    for _name, secret, _words in FORGED.values():
        create(api, secret())
    common = {"kube_scheduler_deployment_version": VERSION, "kube_scheduler_deployment_namespace": NAMESPACE,
              "kube_scheduler_deployment_wait": False, "kube_scheduler_deployment_pod_monitor": False,
              "kube_scheduler_deployment_k8s_kubeconfig": str(api.kubeconfig)}
    run, results = case_plays(tmp_path_factory.mktemp("rollback-point"), PLAY, {
        case: dict(common, kube_scheduler_deployment_name=name,
                   kube_scheduler_deployment_lease_name=name,
                   kube_scheduler_deployment_config={"profiles": [{"schedulerName": name + "-scheduler"}]})
        for case, (name, _secret, _words) in FORGED.items()}, timeout=900)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-3000:]
    return results


@pytest.mark.parametrize("case", sorted(FORGED))
def test_the_role_refuses_a_forged_point_naming_it_and_applies_nothing(api, role_runs, case):
    name, _secret, words = FORGED[case]
    result = role_runs[case]
    assert "task" in result, "the role used the forged point of case %s: %s" % (case, result)
    assert result["task"] == "Refuse a rollback point that is not this role's own or would put back anything else", result
    assert words in result["msg"], result["msg"]
    # Nothing of the point, nothing of the role: the run stopped before its first write.
    assert read(api, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "team-a-admin") is None
    image = read(api, "apps/v1", "Deployment", "coredns", "kube-system")["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == COREDNS_IMAGE
    for api_version, kind in (("v1", "ServiceAccount"), ("v1", "ConfigMap"), ("apps/v1", "Deployment")):
        assert read(api, api_version, kind, name, NAMESPACE) is None, (kind, name)
    assert read(api, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "kubesched:%s:%s:kube-scheduler"
                % (NAMESPACE, name)) is None
    # The point stays for the operator to look at.
    assert read(api, "v1", "Secret", name + "-rollback-point", NAMESPACE) is not None


def test_the_roles_own_point_of_stored_objects_passes_and_a_forged_one_read_back_does_not(api):
    name = "own"
    stored = [create(api, deployment_objects.config_map(settings(name), config("old"), {})),
              create(api, deployment_objects.workload(settings(name), config("old")))]
    reads = [{"resources": [read(api, obj["apiVersion"], obj["kind"], name, NAMESPACE)]} for obj in stored]
    own = deployment_rollback_point(deployment_previous_objects(reads), settings(name),
                                    [deployment_objects.workload(settings(name), config("new"))], labels(name))
    create(api, own)
    secret = read(api, "v1", "Secret", name + "-rollback-point", NAMESPACE)
    assert deployment_rollback_point_checked([secret], settings(name)) == name + "-rollback-point"
    decision = deployment_rollback_decision([secret], [], [], settings(name))
    assert [(obj["kind"], obj["metadata"]["name"]) for obj in decision["previous"]] == [
        ("ConfigMap", name), ("Deployment", name)]
    # The same point with the pod run by another ServiceAccount, as written back into the cluster and read again.
    record = json.loads(base64.b64decode(secret["data"]["rollback.json"]))
    record["previous"][1]["spec"]["template"]["spec"]["serviceAccountName"] = "default"
    forged = copy.deepcopy(own)
    forged["metadata"]["name"] = name + "-rollback-point"
    forged["data"]["rollback.json"] = base64.b64encode(json.dumps(record).encode()).decode()
    resources(api).get(api_version="v1", kind="Secret").replace(body=dict(
        forged, metadata=dict(forged["metadata"], resourceVersion=secret["metadata"]["resourceVersion"])),
        namespace=NAMESPACE)
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel
    with pytest.raises(AnsibleFilterError, match=r"Secret team-a/own-rollback-point is refused: "
                       r"previous\[1\]\.spec\.template\.spec\.serviceAccountName"):
        deployment_rollback_decision([read(api, "v1", "Secret", name + "-rollback-point", NAMESPACE)], [], [],
                                     settings(name))


def test_removing_the_scheduler_removes_only_its_own_point_and_names_the_secrets_it_left(api, tmp_path, case_plays):
    # A stopped run's point (the role's own), and two Secrets with the point's label that are not it: a copy of it
    # under another name (someone's evidence, or a decoy), and one at another name holding a ClusterRoleBinding.
    name = "gone"
    own = point_secret(name)
    create(api, own)
    copied = copy.deepcopy(own)
    copied["metadata"]["name"] = "gone-kept-by-team-a"
    create(api, copied)
    forged = point_secret(name, forged_record(name, [CLUSTER_ADMIN]))
    forged["metadata"]["name"] = "gone-forged"
    create(api, forged)
    run, results = case_plays(tmp_path, PLAY, {"absent": {
        "kube_scheduler_deployment_state": "absent", "kube_scheduler_deployment_name": name,
        "kube_scheduler_deployment_lease_name": name, "kube_scheduler_deployment_version": VERSION,
        "kube_scheduler_deployment_namespace": NAMESPACE, "kube_scheduler_deployment_wait": False,
        "kube_scheduler_deployment_pod_monitor": False, "kube_scheduler_deployment_k8s_kubeconfig": str(api.kubeconfig),
        "kube_scheduler_deployment_config": {"profiles": [{"schedulerName": name + "-scheduler"}]}}}, timeout=600)
    assert run.returncode == 0 and results["absent"] == {"passed": True}, run.stdout[-5000:] + run.stderr[-3000:]
    assert read(api, "v1", "Secret", name + "-rollback-point", NAMESPACE) is None
    assert read(api, "v1", "Secret", "gone-kept-by-team-a", NAMESPACE) is not None
    assert read(api, "v1", "Secret", "gone-forged", NAMESPACE) is not None
    out = run.stdout
    assert "Left in place, not this role's rollback point" in out, out[-5000:]
    assert "the rollback point Secret team-a/gone-kept-by-team-a is refused: metadata.name: Invalid value" in out, \
        out[-5000:]
    assert "the rollback point Secret team-a/gone-forged is refused: metadata.name" in out, out[-5000:]
    # Names and fields only: nothing of a point's content.
    assert "cluster-admin" not in out and own["data"]["rollback.json"] not in out
