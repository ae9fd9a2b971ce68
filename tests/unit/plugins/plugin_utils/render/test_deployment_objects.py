# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deployment role's objects as the library lays them out (plugin_utils/render/deployment_objects.py) and its filter
(plugins/filter/deployment_objects.py): the order they are applied in, what differs between a Deployment and a
DaemonSet, scheduler-plugins' CRDs, RBAC and controller only when needed, survey strings as numbers and booleans.
tests/unit/roles/test_deployment_render.py renders them through the role with real ansible-core and checks them
against the OpenAPI schema of every version."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kubesched.schedulers.plugins.filter.deployment_objects import deployment_objects
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import constants
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.deployment_objects import objects

CRD_DIR = Path(__file__).resolve().parents[5] / "roles" / "deployment" / "files" / "scheduler-plugins"
LABELS = {"app.kubernetes.io/name": "kube-scheduler", "app.kubernetes.io/instance": "bin-packing",
          "app.kubernetes.io/managed-by": "kubesched.schedulers"}
CONTROL_PLANE_TOLERATION = {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}
SETTINGS = {
    "name": "bin-packing", "namespace": "schedulers", "kind": "Deployment", "replicas": 2, "lease_name": "bin-packing",
    "secure_port": 10259, "image": "registry.k8s.io/kube-scheduler:v1.35.4", "image_pull_policy": "IfNotPresent",
    "resources": {"requests": {"cpu": "100m"}}, "priority_class_name": "system-cluster-critical",
    "priority_classes": [], "run_as_user": 65532, "node_selector": {}, "tolerations": [],
    "spread_when_unsatisfiable": "ScheduleAnyway", "pdb_max_unavailable": 1, "wait_timeout": 300, "settle": 2,
    "labels": LABELS,
    "selector": {"app.kubernetes.io/instance": "bin-packing"}, "rbac_prefix": "kubesched:schedulers:bin-packing",
    "control_plane_selector": {"node-role.kubernetes.io/control-plane": ""},
    "control_plane_tolerations": [CONTROL_PLANE_TOLERATION], "controller": False,
    "controller_name": "bin-packing-controller", "controller_labels": {"app.kubernetes.io/name": "controller"},
    "controller_selector": {"app.kubernetes.io/name": "controller"},
    "controller_image": "registry.k8s.io/scheduler-plugins/controller:v0.34.7"}
CONFIG = {"checksum": "c" * 64, "profiles": ["bin-packing", "gpu"], "rendered": "profiles: []\n",
          "health_paths": {"liveness": "/livez", "readiness": "/readyz"},
          "effective": {"leaderElection": {"leaderElect": True}}}


def kinds(found):
    return [obj["kind"] for obj in found]


def one(found, kind):
    (obj,) = [obj for obj in found if obj["kind"] == kind]
    return obj


def test_a_deployment_is_applied_after_its_rbac_and_configmap_and_before_its_disruption_budget():
    found = objects(SETTINGS, CONFIG, {}, [])
    assert kinds(found) == ["ServiceAccount", "ClusterRoleBinding", "ClusterRoleBinding", "RoleBinding", "Role",
                            "RoleBinding", "ConfigMap", "Deployment", "PodDisruptionBudget"]
    spec = one(found, "Deployment")["spec"]
    assert (spec["replicas"], spec["strategy"]["rollingUpdate"]) == (2, {"maxSurge": 1, "maxUnavailable": 0})
    assert spec["template"]["spec"]["topologySpreadConstraints"][0]["matchLabelKeys"] == ["pod-template-hash"]
    assert [binding["roleRef"]["name"] for binding in found if binding["kind"] == "ClusterRoleBinding"] == [
        "system:kube-scheduler", "system:volume-scheduler"]


def test_a_daemonset_adds_the_control_plane_selector_and_only_the_tolerations_not_given_and_has_no_budget():
    own = {"key": "dedicated", "operator": "Exists"}
    found = objects(dict(SETTINGS, kind="DaemonSet", node_selector={"kubernetes.io/os": "linux"},
                         tolerations=[CONTROL_PLANE_TOLERATION, own]), CONFIG, {}, [])
    assert "PodDisruptionBudget" not in kinds(found) and "Deployment" not in kinds(found)
    spec = one(found, "DaemonSet")["spec"]
    assert "replicas" not in spec and spec["updateStrategy"]["type"] == "RollingUpdate"
    pod = spec["template"]["spec"]
    assert pod["nodeSelector"] == {"kubernetes.io/os": "linux", "node-role.kubernetes.io/control-plane": ""}
    assert pod["tolerations"] == [CONTROL_PLANE_TOLERATION, own]
    assert "topologySpreadConstraints" not in pod


def test_the_configmap_names_what_the_verify_role_reads_and_no_lease_without_leader_election():
    annotations = one(objects(SETTINGS, CONFIG, {}, []), "ConfigMap")["metadata"]["annotations"]
    assert annotations == {constants.CONFIG_CHECKSUM_ANNOTATION: "c" * 64,
                           constants.SCHEDULER_NAMES_ANNOTATION: "bin-packing,gpu",
                           constants.LEASE_ANNOTATION: "schedulers/bin-packing",
                           constants.DEPLOYMENT_ANNOTATION: "bin-packing",
                           constants.WORKLOAD_ANNOTATION: "Deployment/bin-packing"}
    alone = dict(CONFIG, effective={"leaderElection": {"leaderElect": False}})
    assert one(objects(SETTINGS, alone, {}, []), "ConfigMap")["metadata"]["annotations"][
        constants.LEASE_ANNOTATION] == ""


def test_a_redacted_configuration_is_written_from_the_hidden_one():
    redacted = dict(CONFIG, redacted=True, rendered="keyData: <redacted>\n")
    data = one(objects(SETTINGS, redacted, {"rendered": "keyData: c2VjcmV0\n"}, []), "ConfigMap")["data"]
    assert data == {"config.yaml": "keyData: c2VjcmV0\n"}


def test_probes_are_kubeadms_timings_on_the_health_paths_of_the_version():
    old = dict(CONFIG, health_paths={"liveness": "/healthz", "readiness": "/healthz"})
    container = one(objects(dict(SETTINGS, secure_port=10300), old, {}, []), "Deployment")["spec"]["template"][
        "spec"]["containers"][0]
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert container[probe] == dict(constants.PROBE_TIMINGS[probe],
                                        httpGet={"path": "/healthz", "port": 10300, "scheme": "HTTPS"})
    assert container["command"] == ["kube-scheduler", "--config=%s/config.yaml" % constants.POD_CONFIG_DIR,
                                    "--secure-port=10300"]


@pytest.mark.parametrize("given, expected", [(1, 1), ("1", 1), ("25%", "25%"), ("0", 0)])
def test_a_disruption_budget_takes_a_number_or_a_percentage_as_surveys_give_them(given, expected):
    budget = one(objects(dict(SETTINGS, pdb_max_unavailable=given), CONFIG, {}, []), "PodDisruptionBudget")
    assert budget["spec"]["maxUnavailable"] == expected


def test_priority_classes_come_first_with_survey_strings_as_numbers_and_booleans():
    classes = [{"name": "high", "value": "1000", "global_default": "yes", "description": "first",
                "preemption_policy": "Never"}, {"name": "low", "value": 5}]
    found = objects(dict(SETTINGS, priority_classes=classes), CONFIG, {}, [])
    assert kinds(found)[:2] == ["PriorityClass", "PriorityClass"]
    assert found[0] == {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                        "metadata": {"name": "high", "labels": LABELS}, "value": 1000, "globalDefault": True,
                        "description": "first", "preemptionPolicy": "Never"}
    assert (found[1]["value"], found[1]["globalDefault"], "description" in found[1]) == (5, False, False)


def test_scheduler_plugins_crds_rbac_and_controller_only_when_needed():
    needs = {"crds": ["podgroups.scheduling.x-k8s.io"], "controller": True,
             "rules": [{"apiGroups": ["scheduling.x-k8s.io"], "resources": ["podgroups"], "verbs": ["get"]}]}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "podgroups.scheduling.x-k8s.io", "labels": {"shipped": "yes"}}}
    found = objects(dict(SETTINGS, controller=True), dict(CONFIG, scheduler_plugins=needs), {}, [crd])
    assert found[0]["metadata"]["labels"] == dict({"shipped": "yes"}, **LABELS)
    assert crd["metadata"]["labels"] == {"shipped": "yes"}  # the CRD given is not changed
    roles = [obj for obj in found if obj["kind"] == "ClusterRole"]
    assert [role["metadata"]["name"] for role in roles] == ["kubesched:schedulers:bin-packing:scheduler-plugins",
                                                            "kubesched:schedulers:bin-packing:controller"]
    assert roles[0]["rules"] == needs["rules"]
    controller = [obj for obj in found if obj["kind"] == "Deployment"][-1]
    assert controller["metadata"]["name"] == "bin-packing-controller"
    # The controller runs wherever the user's selector says, not on the control-plane nodes a DaemonSet adds.
    assert controller["spec"]["template"]["spec"]["nodeSelector"] == {}
    plain = objects(SETTINGS, dict(CONFIG, scheduler_plugins=dict(needs, rules=[], controller=False)), {}, [])
    assert kinds(plain) == kinds(objects(SETTINGS, CONFIG, {}, []))


def test_the_filter_reads_the_crds_the_enabled_plugins_need_from_the_role_files():
    needs = {"crds": ["elasticquotas.scheduling.x-k8s.io", "podgroups.scheduling.x-k8s.io"], "rules": [],
             "controller": False}
    found = deployment_objects(SETTINGS, dict(CONFIG, scheduler_plugins=needs), {"skipped": True}, str(CRD_DIR))
    assert [obj["metadata"]["name"] for obj in found[:2]] == needs["crds"]
    assert all(obj["metadata"]["labels"] == LABELS for obj in found[:2])


@pytest.mark.parametrize("settings, config, real, words", [
    (dict((key, value) for key, value in SETTINGS.items() if key != "selector"), CONFIG, {}, "missing selector"),
    (SETTINGS, dict((key, value) for key, value in CONFIG.items() if key != "checksum"), {}, "missing config.checksum"),
    (SETTINGS, dict(CONFIG, redacted=True), {"skipped": True}, "the unredacted one was not given"),
    (SETTINGS, dict(CONFIG, scheduler_plugins={"crds": ["nothing.example.com"]}), {}, "cannot read the CRD"),
])
def test_the_filter_names_what_the_role_did_not_give(settings, config, real, words):
    with pytest.raises(AnsibleFilterError, match=words):
        deployment_objects(settings, config, real, str(CRD_DIR))
