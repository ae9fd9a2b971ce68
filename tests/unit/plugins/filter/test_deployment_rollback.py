# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deployment role's rollback point filters (plugins/filter/deployment_rollback.py): a point is used only when it
is the Secret the role writes and puts back nothing but the role's own ConfigMap and workload as the role renders
them. Every forged shape (cluster-admin RBAC, another namespace's objects, another name, another pod) and every
damaged record is refused by the filter, naming the Secret and the field, with no traceback and nothing to apply.
The objects are the role's own render (plugin_utils/render/deployment_objects.py), as the API server returns them."""

from __future__ import annotations

import base64
import copy
import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kubesched.schedulers.plugins.filter.deployment_rollback import (
    deployment_previous_objects, deployment_rollback_decision, deployment_rollback_point,
    deployment_rollback_point_checked)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import CONFIG_CHECKSUM_ANNOTATION
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render import deployment_objects

NAME, NAMESPACE = "batch", "team-a"
WHERE = "%s/%s-rollback-point" % (NAMESPACE, NAME)
LABELS = {"app.kubernetes.io/name": "kube-scheduler", "app.kubernetes.io/instance": NAME,
          "app.kubernetes.io/managed-by": "kubesched.schedulers"}
SELECTOR = {"app.kubernetes.io/name": "kube-scheduler", "app.kubernetes.io/instance": NAME}
# The role's settings (vars/main.yml __kube_scheduler_deployment_settings), as the filters get them.
SETTINGS = {
    "name": NAME, "namespace": NAMESPACE, "kind": "Deployment", "replicas": 2, "lease_name": NAME,
    "secure_port": 10259, "image": "registry.k8s.io/kube-scheduler:v1.35.4", "image_pull_policy": "IfNotPresent",
    "resources": {"requests": {"cpu": "100m"}}, "priority_class_name": "", "priority_classes": [],
    "run_as_user": 65532, "node_selector": {}, "tolerations": [], "spread_when_unsatisfiable": "ScheduleAnyway",
    "pdb_max_unavailable": 1, "wait_timeout": 300, "settle": 10, "labels": LABELS, "selector": SELECTOR,
    "rbac_prefix": "kubesched:%s:%s" % (NAMESPACE, NAME),
    "control_plane_selector": {"node-role.kubernetes.io/control-plane": ""},
    "control_plane_tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                                   "effect": "NoSchedule"}],
    "controller": False, "controller_name": NAME + "-controller", "controller_labels": {}, "controller_selector": {},
    "controller_image": "registry.k8s.io/scheduler-plugins/controller:v0.34.7"}


def config(checksum):
    return {"checksum": checksum, "profiles": [NAME], "rendered": "profiles: []\n",
            "health_paths": {"liveness": "/livez", "readiness": "/readyz"},
            "effective": {"leaderElection": {"leaderElect": True}}}


def as_read(obj, **status):
    """An object as k8s_info returns it: with the fields the API server sets, and defaults it fills in."""
    found = copy.deepcopy(obj)
    found["metadata"].update(uid="u-" + obj["kind"], resourceVersion="41", creationTimestamp="t", generation=3,
                             managedFields=[{"manager": "OpenAPI-Generator"}])
    if obj["kind"] != "ConfigMap":
        found["spec"]["template"]["spec"]["volumes"][0]["configMap"]["defaultMode"] = 420
        found["spec"]["template"]["spec"]["serviceAccount"] = NAME
        found["status"] = dict({"observedGeneration": 3}, **status)
    return found


PREVIOUS = [as_read(deployment_objects.config_map(SETTINGS, config("old"), {})),
            as_read(deployment_objects.workload(SETTINGS, config("old")))]
NEW = deployment_objects.workload(SETTINGS, config("new"))


def kept(previous=None):
    """The Secret the role keeps before its first write."""
    previous = deployment_previous_objects([{"resources": [obj]} for obj in PREVIOUS]) if previous is None else previous
    return deployment_rollback_point(previous, SETTINGS, [NEW], LABELS)


def record_of(secret):
    return json.loads(base64.b64decode(secret["data"]["rollback.json"]))


def with_record(record, secret=None):
    secret = copy.deepcopy(secret or kept())
    secret["data"]["rollback.json"] = base64.b64encode(json.dumps(record).encode()).decode()
    return secret


def forged(change):
    """The role's own point with its record changed by ``change`` (which edits the record in place)."""
    record = record_of(kept())
    change(record)
    return with_record(record)


def ready(checksum="new"):
    workload = as_read(deployment_objects.workload(SETTINGS, config(checksum)), replicas=2, updatedReplicas=2,
                       readyReplicas=2, availableReplicas=2)
    return [workload]


CLUSTER_ADMIN = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                 "metadata": {"name": NAME, "labels": LABELS},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
                 "subjects": [{"kind": "Group", "name": "system:authenticated", "apiGroup": "rbac.authorization.k8s.io"}]}


def coredns(record):
    workload = record["previous"][1]
    workload["metadata"].update(name="coredns", namespace="kube-system")
    workload["spec"]["template"]["spec"]["containers"][0]["image"] = "evil.example/coredns:1"


def pod_spec(record):
    return record["previous"][1]["spec"]["template"]["spec"]


def container(record):
    return pod_spec(record)["containers"][0]


TEMPLATE = "previous[1].spec.template.spec"
FORGED = {
    "cluster_admin_binding": (lambda r: r["previous"].append(CLUSTER_ADMIN), "previous[2].kind"),
    "cluster_admin_binding_instead_of_the_workload": (lambda r: r["previous"].__setitem__(1, CLUSTER_ADMIN),
                                                      "previous[1].kind"),
    "kube_system_coredns": (coredns, "previous[1].metadata.namespace"),
    "another_namespace": (lambda r: r["previous"][0]["metadata"].update(namespace="kube-system"),
                          "previous[0].metadata.namespace"),
    "another_name": (lambda r: r["previous"][1]["metadata"].update(name="other"), "previous[1].metadata.name"),
    "a_daemon_set_where_the_point_was_kept_for_a_deployment": (
        lambda r: r["previous"][1].update(kind="DaemonSet"), "previous[1].kind"),
    "a_second_config_map": (lambda r: r["previous"].__setitem__(1, copy.deepcopy(r["previous"][0])), "previous[1].kind"),
    "another_api_version": (lambda r: r["previous"][1].update(apiVersion="extensions/v1beta1"),
                            "previous[1].apiVersion"),
    "no_owner_label": (lambda r: r["previous"][0]["metadata"]["labels"].pop("app.kubernetes.io/managed-by"),
                       "previous[0].metadata.labels[app.kubernetes.io/managed-by]"),
    "another_owner_label": (lambda r: r["previous"][1]["metadata"]["labels"].update(
        {"app.kubernetes.io/instance": "other"}), "previous[1].metadata.labels[app.kubernetes.io/instance]"),
    "a_config_map_with_other_keys": (lambda r: r["previous"][0]["data"].update({"token": "x"}),
                                     "previous[0].data (its keys)"),
    "another_selector": (lambda r: r["previous"][1]["spec"]["selector"].update(matchLabels={"app": "x"}),
                         "previous[1].spec.selector"),
    "another_service_account": (lambda r: pod_spec(r).update(serviceAccountName="clusterrole-aggregation-controller",
                                                             serviceAccount="clusterrole-aggregation-controller"),
                                TEMPLATE + ".serviceAccountName"),
    "host_network": (lambda r: pod_spec(r).update(hostNetwork=True), TEMPLATE + ".hostNetwork"),
    "host_pid": (lambda r: pod_spec(r).update(hostPID=True), TEMPLATE + ".hostPID"),
    "host_path_volume": (lambda r: pod_spec(r)["volumes"].append({"name": "root", "hostPath": {"path": "/"}}),
                         TEMPLATE + ".volumes[1] (its keys)"),
    "another_config_map_mounted": (lambda r: pod_spec(r)["volumes"][0]["configMap"].update(name="kubeadm-config"),
                                   TEMPLATE + ".volumes[0].configMap.name"),
    "privileged": (lambda r: container(r)["securityContext"].update(privileged=True),
                   TEMPLATE + ".containers[0].securityContext.privileged"),
    "privilege_escalation": (lambda r: container(r)["securityContext"].update(allowPrivilegeEscalation=True),
                             TEMPLATE + ".containers[0].securityContext.allowPrivilegeEscalation"),
    "added_capabilities": (lambda r: container(r)["securityContext"]["capabilities"].update(add=["SYS_ADMIN"]),
                           TEMPLATE + ".containers[0].securityContext.capabilities.add"),
    "root": (lambda r: pod_spec(r)["securityContext"].update(runAsNonRoot=False),
             TEMPLATE + ".securityContext.runAsNonRoot"),
    "a_second_container": (lambda r: pod_spec(r)["containers"].append(copy.deepcopy(container(r))),
                           TEMPLATE + ".containers"),
    "an_init_container": (lambda r: pod_spec(r).update(initContainers=[{"name": "x", "image": "x"}]),
                          TEMPLATE + ".initContainers"),
    "the_records_namespace": (lambda r: r.update(namespace="kube-system"), ": namespace:"),
    "the_records_name": (lambda r: r.update(name="coredns"), ": name:"),
    "the_records_kind": (lambda r: r.update(kind="ClusterRoleBinding"), ": kind:"),
    "an_unknown_record_key": (lambda r: r.update(apply=[CLUSTER_ADMIN]), "the record's keys"),
    "three_objects": (lambda r: r["previous"].append(r["previous"][0]), "previous[2].kind"),
}


@pytest.mark.parametrize("case", sorted(FORGED))
def test_a_forged_rollback_point_is_refused_naming_the_secret_and_the_field(case):
    change, field = FORGED[case]
    secret = forged(change)
    for call in (lambda: deployment_rollback_point_checked([secret], SETTINGS),
                 lambda: deployment_rollback_decision([secret], [], [], SETTINGS),
                 lambda: deployment_rollback_decision([secret], ready(), [], SETTINGS)):
        with pytest.raises(AnsibleFilterError) as refused:
            call()
        message = str(refused.value)
        assert message.startswith("the rollback point Secret %s is refused: " % WHERE), message
        assert field in message, message
        assert "nothing was applied from it" in message, message


SECRETS = {
    "another_name": (lambda s: s["metadata"].update(name="batch-rollback-point-2"), "metadata.name"),
    "another_namespace": (lambda s: s["metadata"].update(namespace="kube-system"), "metadata.namespace"),
    "no_owner_label": (lambda s: s["metadata"]["labels"].pop("app.kubernetes.io/managed-by"),
                       "metadata.labels[app.kubernetes.io/managed-by]"),
    "another_workloads_point": (lambda s: s["metadata"]["labels"].update({"kubesched.schedulers/rollback-point": "x"}),
                                "metadata.labels[kubesched.schedulers/rollback-point]"),
    "another_type": (lambda s: s.update(type="kubernetes.io/service-account-token"), "type"),
    "a_second_key": (lambda s: s["data"].update(other="eA=="), "data (its keys)"),
}


@pytest.mark.parametrize("case", sorted(SECRETS))
def test_a_secret_that_is_not_the_one_the_role_writes_is_refused_by_name(case):
    change, field = SECRETS[case]
    secret = copy.deepcopy(kept())
    change(secret)
    with pytest.raises(AnsibleFilterError, match=r"the rollback point Secret \S+ is refused: %s" % field.replace(
            "[", r"\[").replace("]", r"\]").replace("(", r"\(").replace(")", r"\)")):
        deployment_rollback_point_checked([secret], SETTINGS)


def test_a_forged_point_beside_the_roles_own_is_refused_by_name():
    other = copy.deepcopy(kept())
    other["metadata"]["name"] = "grant-admin"
    with pytest.raises(AnsibleFilterError, match="Secret team-a/grant-admin is refused: metadata.name"):
        deployment_rollback_point_checked([kept(), other], SETTINGS)


def text(data):
    return base64.b64encode(data).decode()


@pytest.mark.parametrize("data, words", [
    ("not base64!", "cannot be read (data.rollback.json: "),
    (text(b'{"format": 1, "previous": [{"kind": "Con'), "cannot be read (data.rollback.json: Unterminated string"),
    (text(b"\xff\xfe"), "cannot be read (data.rollback.json: 'utf-8' codec can't decode"),
    (text(b'"a string"'), "holds no record this release reads (format null)"),
    (text(b'{"format": 2}'), "holds no record this release reads (format 2)"),
    (text(b'{"format": "1"}'), 'holds no record this release reads (format "1")'),
])
def test_a_damaged_record_cannot_be_read_and_says_so(data, words):
    secret = copy.deepcopy(kept())
    secret["data"]["rollback.json"] = data
    with pytest.raises(AnsibleFilterError) as refused:
        deployment_rollback_decision([secret], [], [], SETTINGS)
    assert str(refused.value).startswith("the rollback point Secret %s " % WHERE), str(refused.value)
    assert words in str(refused.value), str(refused.value)
    assert "delete it and run again" in str(refused.value)


@pytest.mark.parametrize("previous, field", [
    (["a string"], "previous[0]: must be a mapping, got str"),
    ([None, None], "previous[0]: must be a mapping, got NoneType"),
    ("x", "previous: must list at most the ConfigMap and the Deployment, got str"),
    ([{"kind": "ConfigMap", "apiVersion": "v1", "metadata": "x"}], "previous[0].metadata: must be a mapping, got str"),
])
def test_a_damaged_record_is_refused_by_field_not_a_traceback(previous, field):
    # Today's crash: 'str' object has no attribute 'get'.
    secret = forged(lambda record: record.update(previous=previous))
    with pytest.raises(AnsibleFilterError, match=field.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        deployment_rollback_decision([secret], [], [], SETTINGS)


def test_a_secret_without_a_record_is_refused_naming_it():
    secret = copy.deepcopy(kept())
    secret["data"] = "not a mapping"
    with pytest.raises(AnsibleFilterError, match="Secret team-a/batch-rollback-point is refused: data: must be a mapping"):
        deployment_rollback_point_checked([secret], SETTINGS)


def test_the_roles_own_point_is_read_as_it_was_written():
    assert deployment_rollback_point_checked([kept()], SETTINGS) == NAME + "-rollback-point"
    decision = deployment_rollback_decision([kept()], [], [], SETTINGS)
    assert decision["action"] == "restore"
    assert [(obj["kind"], obj["metadata"]["namespace"], obj["metadata"]["name"]) for obj in decision["previous"]] == [
        ("ConfigMap", NAMESPACE, NAME), ("Deployment", NAMESPACE, NAME)]
    restored = decision["previous"][1]
    assert "status" not in restored and "uid" not in restored["metadata"]
    assert restored["spec"]["template"]["metadata"]["annotations"][CONFIG_CHECKSUM_ANNOTATION] == "old"
    assert deployment_rollback_decision([kept()], ready(), [], SETTINGS)["action"] == "commit"
    # A DaemonSet's point, and a point of a rollout that replaced nothing.
    daemon = dict(SETTINGS, kind="DaemonSet")
    previous = [as_read(deployment_objects.workload(daemon, config("old")))]
    secret = deployment_rollback_point(deployment_previous_objects([{"resources": previous}]), daemon,
                                       [deployment_objects.workload(daemon, config("new"))], LABELS)
    assert [obj["kind"] for obj in deployment_rollback_decision([secret], [], [], daemon)["previous"]] == ["DaemonSet"]
    empty = deployment_rollback_point([], SETTINGS, [NEW], LABELS)
    assert deployment_rollback_decision([empty], [], [], SETTINGS)["previous"] == []
