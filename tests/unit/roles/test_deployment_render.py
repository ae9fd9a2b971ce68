"""The deployment role's objects, rendered by real ansible-core (tasks_from render.yml, no API server) and checked
against the Kubernetes OpenAPI schema of each target version (kubernetes-validate, strict) and against the upstream
facts the role exists for: the documented in-cluster RBAC, a lease of its own, kubeadm's probes per version. Both
workload kinds (Deployment, DaemonSet on the control-plane nodes), and variables given as AWX surveys give them."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import constants
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import SUPPORTED_MINORS

CASE_PLAY = """
- name: {case}
  hosts: localhost
  gather_facts: false
  vars: {vars}
  tasks:
    - name: Render
      block:
        - name: Render the role's objects
          ansible.builtin.include_role:
            name: kubesched.schedulers.deployment
            tasks_from: render.yml
        - name: Keep them
          ansible.builtin.set_fact:
            {fact}: "{{{{ __kube_scheduler_deployment_objects }}}}"
      rescue:
        - name: Keep the failure
          ansible.builtin.set_fact:
            {fact}: "{{{{ ansible_failed_result.msg }}}}"
"""

SP = {"kube_scheduler_deployment_version": "1.34.7", "kube_scheduler_deployment_scheduler_plugins_version": "0.34.7"}
GANG_PROFILE = {"schedulerName": "gang", "plugins": {
    "multiPoint": {"enabled": [{"name": "Coscheduling"}, {"name": "CapacityScheduling"}]},
    "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}}}
CASES = {"v" + minor.replace(".", "_"): {"kube_scheduler_deployment_version": minor + ".0"}
         for minor in SUPPORTED_MINORS}
CASES.update({"ds_v" + minor.replace(".", "_"): {
    "kube_scheduler_deployment_version": minor + ".0", "kube_scheduler_deployment_kind": "DaemonSet"}
    for minor in SUPPORTED_MINORS})
# As an AWX survey or -e key=value gives them: every boolean and number a string.
SURVEY = {
    "kube_scheduler_deployment_replicas": "3",
    "kube_scheduler_deployment_secure_port": "10300",
    "kube_scheduler_deployment_run_as_user": "1000",
    "kube_scheduler_deployment_pdb_max_unavailable": "1",
    "kube_scheduler_deployment_wait": "false",
    "kube_scheduler_deployment_wait_timeout": "120",
    "kube_scheduler_deployment_settle": "15",
    "kube_scheduler_deployment_priority_classes": [
        {"name": "survey-high", "value": "1000", "global_default": "no"},
        {"name": "survey-default", "value": "5", "global_default": "yes"}],
}
CASES.update({
    "survey_strings": SURVEY,
    "survey_strings_daemonset": dict(SURVEY, kube_scheduler_deployment_kind="DaemonSet",
                                     kube_scheduler_deployment_pdb_max_unavailable="25%"),
    "survey_one_replica": {"kube_scheduler_deployment_replicas": "1"},
    "ds_custom": {
        "kube_scheduler_deployment_kind": "DaemonSet",
        "kube_scheduler_deployment_replicas": 1,
        "kube_scheduler_deployment_node_selector": {"kubernetes.io/os": "linux"},
        "kube_scheduler_deployment_tolerations": [
            {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "dedicated", "operator": "Equal", "value": "scheduler", "effect": "NoExecute"}]},
    "ds_score_50": {"kube_scheduler_deployment_kind": "DaemonSet", "kube_scheduler_deployment_config": {
        "percentageOfNodesToScore": 50, "profiles": [{"schedulerName": "kubesched-scheduler"}]}},
    "ds_score_60": {"kube_scheduler_deployment_kind": "DaemonSet", "kube_scheduler_deployment_config": {
        "percentageOfNodesToScore": 60, "profiles": [{"schedulerName": "kubesched-scheduler"}]}},
    "ds_election_off": {"kube_scheduler_deployment_kind": "DaemonSet", "kube_scheduler_deployment_config": {
        "leaderElection": {"leaderElect": False}, "profiles": [{"schedulerName": "x"}]}},
    "bad_kind": {"kube_scheduler_deployment_kind": "StatefulSet"},
    "one_replica": {"kube_scheduler_deployment_replicas": 1},
    "one_replica_no_election": {"kube_scheduler_deployment_replicas": 1,
                                "kube_scheduler_deployment_config": {
                                    "leaderElection": {"leaderElect": False},
                                    "profiles": [{"schedulerName": "solo"}]}},
    "custom": {
        "kube_scheduler_deployment_name": "bin-packing",
        "kube_scheduler_deployment_namespace": "schedulers",
        "kube_scheduler_deployment_lease_name": "bin-packing-lease",
        "kube_scheduler_deployment_replicas": 3,
        "kube_scheduler_deployment_tolerations": [
            {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}],
        "kube_scheduler_deployment_node_selector": {"node-role.kubernetes.io/control-plane": ""},
        "kube_scheduler_deployment_priority_classes": [
            {"name": "batch-high", "value": 100000, "description": "batch jobs first",
             "preemption_policy": "Never"},
            {"name": "batch-low", "value": 10, "global_default": True}],
        "kube_scheduler_deployment_config": {
            "percentageOfNodesToScore": 50,
            "profiles": [{"schedulerName": "bin-packing", "pluginConfig": [{
                "name": "NodeResourcesFit",
                "args": {"scoringStrategy": {"type": "MostAllocated",
                                             "resources": [{"name": "cpu", "weight": 1}]}}}]}]}},
    "custom_score_60": {"kube_scheduler_deployment_config": {
        "percentageOfNodesToScore": 60, "profiles": [{"schedulerName": "kubesched-scheduler"}]}},
    "custom_score_50_again": {"kube_scheduler_deployment_config": {
        "percentageOfNodesToScore": 50, "profiles": [{"schedulerName": "kubesched-scheduler"}]}},
    "custom_score_50": {"kube_scheduler_deployment_config": {
        "percentageOfNodesToScore": 50, "profiles": [{"schedulerName": "kubesched-scheduler"}]}},
    # Refused before anything is applied.
    "default_lease": {"kube_scheduler_deployment_lease_name": "kube-scheduler"},
    "foreign_lease_in_config": {"kube_scheduler_deployment_config": {
        "leaderElection": {"resourceName": "kube-scheduler"}, "profiles": [{"schedulerName": "x"}]}},
    "election_off_with_replicas": {"kube_scheduler_deployment_replicas": 2, "kube_scheduler_deployment_config": {
        "leaderElection": {"leaderElect": False}, "profiles": [{"schedulerName": "x"}]}},
    "kubeconfig_in_config": {"kube_scheduler_deployment_config": {
        "clientConnection": {"kubeconfig": "/etc/kubernetes/scheduler.conf"}, "profiles": [{"schedulerName": "x"}]}},
    "default_scheduler_name": {"kube_scheduler_deployment_config": {"profiles": [{"schedulerName": "default-scheduler"}]}},
    "no_profiles": {"kube_scheduler_deployment_config": {"parallelism": 8}},
    "invalid_config": {"kube_scheduler_deployment_config": {
        "percentageOfNodesToScore": 150, "profiles": [{"schedulerName": "x"}]}},
    # The input model (role_inputs), as an AWX survey or a careless inventory gives the values.
    "run_as_root": {"kube_scheduler_deployment_run_as_user": "0"},
    "pdb_exponent": {"kube_scheduler_deployment_pdb_max_unavailable": "1e3"},
    "port_zero": {"kube_scheduler_deployment_secure_port": 0},
    "comma_in_scheduler_name": {"kube_scheduler_deployment_config": {"profiles": [{"schedulerName": "a,b"}]}},
    "misspelled_variable": {"kube_scheduler_deployment_replica": 3},
    "empty_survey_name": {"kube_scheduler_deployment_name": ""},
    "survey_boolean_in_config": {"kube_scheduler_deployment_config": {
        "leaderElection": {"leaderElect": "true"}, "profiles": [{"schedulerName": "x"}]}},
    "v_prefixed_version": {"kube_scheduler_deployment_version": "v1.35.4"},
    # The settle is the workload's minReadySeconds, which the API server wants below progressDeadlineSeconds.
    "settle_as_long_as_the_wait": {"kube_scheduler_deployment_settle": 120, "kube_scheduler_deployment_wait_timeout": 120},
    "settle_from_the_host_roles": {"kube_scheduler_health_settle": "7"},
    # scheduler-plugins: what the enabled plugins need, and only that.
    "sp_gang": dict(SP, kube_scheduler_deployment_config={"profiles": [GANG_PROFILE]}),
    "sp_controller_off": dict(SP, kube_scheduler_deployment_scheduler_plugins_controller="false",
                              kube_scheduler_deployment_config={"profiles": [GANG_PROFILE]}),
    "sp_allocatable_only": dict(SP, kube_scheduler_deployment_config={"profiles": [{
        "schedulerName": "allocatable", "plugins": {"score": {"enabled": [{"name": "NodeResourcesAllocatable"}]}}}]}),
    "sp_wrong_minor": dict(SP, kube_scheduler_deployment_version="1.35.4",
                           kube_scheduler_deployment_config={"profiles": [GANG_PROFILE]}),
    "sp_bad_args": dict(SP, kube_scheduler_deployment_config={"profiles": [dict(GANG_PROFILE, pluginConfig=[
        {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": -1}}])]}),
    # Profiling: off unless the variable or the config turns it on (CIS 1.4.1).
    "profiling_on": {"kube_scheduler_deployment_profiling": "true"},
    "profiling_survey_yes": {"kube_scheduler_deployment_profiling": "Yes"},
    # Read as true by ansible-core's argument spec, as false by its bool filter: refused by the one rule.
    "profiling_padded": {"kube_scheduler_deployment_profiling": "yes "},
    "wait_as_on": {"kube_scheduler_deployment_wait": "on"},
    "profiling_in_config": {"kube_scheduler_deployment_config": {
        "enableProfiling": True, "profiles": [{"schedulerName": "kubesched-scheduler"}]}},
    "profiling_off_in_config": {"kube_scheduler_deployment_profiling": True, "kube_scheduler_deployment_config": {
        "enableProfiling": False, "profiles": [{"schedulerName": "kubesched-scheduler"}]}},
    # One version rule with kube_scheduler_version: one optional v ("v{{ release }}" of "v0.34.7" is refused).
    "sp_v_release": dict(SP, kube_scheduler_deployment_scheduler_plugins_version=" v0.34.7 ",
                         kube_scheduler_deployment_config={"profiles": [GANG_PROFILE]}),
    "sp_vv_release": dict(SP, kube_scheduler_deployment_scheduler_plugins_version="vv0.34.7",
                          kube_scheduler_deployment_config={"profiles": [GANG_PROFILE]}),
})


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, case_plays):
    """Every case in one ansible-playbook run (one play per case): {case: objects list or error text}."""
    # The release is required (no built-in default): the cases without one run the role as an inventory with
    # kube_scheduler_version would.
    run, results = case_plays(
        tmp_path_factory.mktemp("rendered"), CASE_PLAY,
        {case: dict({"kube_scheduler_version": "1.34.2"}, **values) for case, values in CASES.items()})
    assert run.returncode == 0, run.stdout + run.stderr
    return results


def objects_of(rendered, case):
    result = rendered[case]
    assert isinstance(result, list), "case %s failed: %s" % (case, result)
    return result


def one(objects, kind, name=None):
    found = [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    assert len(found) == 1, (kind, name, [o["metadata"]["name"] for o in found])
    return found[0]


def workload(objects):
    found = [o for o in objects if o["kind"] in ("Deployment", "DaemonSet")]
    assert len(found) == 1, [o["kind"] for o in found]
    return found[0]


def container_of(objects):
    return workload(objects)["spec"]["template"]["spec"]["containers"][0]


def scheduler_config_of(objects):
    return yaml.safe_load(one(objects, "ConfigMap")["data"]["config.yaml"])


@pytest.mark.parametrize("case", [c for c in CASES if c.startswith(("v1_", "ds_v1_"))] + [
    "custom", "one_replica_no_election", "ds_custom", "survey_strings", "survey_strings_daemonset", "sp_gang"])
def test_every_object_matches_the_openapi_schema_of_its_version(rendered, case, skip_without_openapi_schemas):
    version = CASES[case].get("kube_scheduler_deployment_version", "1.34.0")
    skip_without_openapi_schemas(version)
    problems = []
    for obj in objects_of(rendered, case):
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            problems.append("%s %s: %s at %s" % (obj["kind"], obj["metadata"]["name"], exc.message, list(exc.path)))
    assert problems == []


def test_the_schema_check_catches_a_wrong_field(rendered):
    deployment = json.loads(json.dumps(one(objects_of(rendered, "v1_34"), "Deployment")))
    deployment["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["httpGet"]["paht"] = "/livez"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, "1.34.0", strict=True)


def test_the_documented_in_cluster_rbac(rendered):
    # kubernetes.io "Configure Multiple Schedulers" and kube-scheduler.md: system:kube-scheduler and
    # system:volume-scheduler, extension-apiserver-authentication-reader in kube-system.
    objects = objects_of(rendered, "custom")
    subject = [{"kind": "ServiceAccount", "name": "bin-packing", "namespace": "schedulers"}]
    assert one(objects, "ServiceAccount")["metadata"] == {
        "name": "bin-packing", "namespace": "schedulers", "labels": one(objects, "ServiceAccount")["metadata"]["labels"]}
    cluster_roles = sorted(b["roleRef"]["name"] for b in objects if b["kind"] == "ClusterRoleBinding")
    assert cluster_roles == ["system:kube-scheduler", "system:volume-scheduler"]
    assert all(b["subjects"] == subject for b in objects if b["kind"] in ("ClusterRoleBinding", "RoleBinding"))
    reader = [b for b in objects if b["kind"] == "RoleBinding"
              and b["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                   "name": "extension-apiserver-authentication-reader"}]
    assert [b["metadata"]["namespace"] for b in reader] == ["kube-system"]


def test_the_role_grants_get_and_update_on_exactly_its_own_lease(rendered):
    # system:kube-scheduler may create any Lease but get/update only "kube-scheduler".
    objects = objects_of(rendered, "custom")
    role = one(objects, "Role")
    assert role["metadata"]["namespace"] == "schedulers"
    assert role["rules"] == [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                              "resourceNames": ["bin-packing-lease"], "verbs": ["get", "update"]}]
    binding = [b for b in objects if b["kind"] == "RoleBinding" and b["roleRef"]["kind"] == "Role"
               and b["roleRef"]["name"] == role["metadata"]["name"]]
    assert [b["metadata"]["namespace"] for b in binding] == ["schedulers"]
    election = scheduler_config_of(objects)["leaderElection"]
    assert (election["resourceNamespace"], election["resourceName"]) == ("schedulers", "bin-packing-lease")


def test_keys_and_probe_timings_are_the_collections_constants(rendered):
    """The ConfigMap's annotations, the pods' checksum and kubeadm's probe timings come from plugin_utils/core/constants.py
    (the static_pod role's manifests use the same timings)."""
    objects = objects_of(rendered, "v" + SUPPORTED_MINORS[-1].replace(".", "_"))
    config_map = one(objects, "ConfigMap")["metadata"]["annotations"]
    assert set(config_map) == {constants.CONFIG_CHECKSUM_ANNOTATION, constants.SCHEDULER_NAMES_ANNOTATION,
                               constants.LEASE_ANNOTATION, constants.DEPLOYMENT_ANNOTATION, constants.WORKLOAD_ANNOTATION}
    assert list(workload(objects)["spec"]["template"]["metadata"]["annotations"]) == [
        constants.CONFIG_CHECKSUM_ANNOTATION]
    container = container_of(objects)
    for probe, timings in constants.PROBE_TIMINGS.items():
        assert dict((key, value) for key, value in container[probe].items() if key != "httpGet") == timings, probe


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_probes_follow_the_version(rendered, minor):
    # kubeadm (manifests.go): /livez and /readyz from 1.31, /healthz before; HTTPS on the secure port.
    container = container_of(objects_of(rendered, "v" + minor.replace(".", "_")))
    new = int(minor.split(".")[1]) >= 31
    paths = {probe: container[probe]["httpGet"]["path"]
             for probe in ("livenessProbe", "readinessProbe", "startupProbe")}
    assert paths == ({"livenessProbe": "/livez", "readinessProbe": "/readyz", "startupProbe": "/livez"} if new
                     else {"livenessProbe": "/healthz", "readinessProbe": "/healthz", "startupProbe": "/healthz"})
    assert {container[p]["httpGet"]["scheme"] for p in paths} == {"HTTPS"}
    assert {container[p]["httpGet"]["port"] for p in paths} == {10259}
    assert container["image"] == "registry.k8s.io/kube-scheduler:v%s.0" % minor


def test_leader_election_is_forced_on_with_more_than_one_replica(rendered):
    assert scheduler_config_of(objects_of(rendered, "custom"))["leaderElection"]["leaderElect"] is True
    assert one(objects_of(rendered, "custom"), "Deployment")["spec"]["replicas"] == 3
    # One replica: left to the configuration (upstream default true), and may be turned off.
    assert "leaderElect" not in scheduler_config_of(objects_of(rendered, "one_replica"))["leaderElection"]
    solo = objects_of(rendered, "one_replica_no_election")
    assert scheduler_config_of(solo)["leaderElection"]["leaderElect"] is False
    assert one(solo, "ConfigMap")["metadata"]["annotations"][constants.LEASE_ANNOTATION] == ""


@pytest.mark.parametrize("case, words", [
    ("default_lease", ["kube-system/kube-scheduler"]),
    ("foreign_lease_in_config", ["kube_scheduler_deployment_lease_name"]),
    ("election_off_with_replicas", ["leader election cannot be off with 2 replicas"]),
    ("kubeconfig_in_config", ["clientConnection.kubeconfig must stay empty", "/etc/kubernetes/scheduler.conf"]),
    ("default_scheduler_name", ["default-scheduler"]),
    ("ds_election_off", ["leader election cannot be off with a DaemonSet"]),
    ("bad_kind", ["kube_scheduler_deployment_kind: Unsupported value", "StatefulSet", "\"Deployment\", \"DaemonSet\""]),
    ("no_profiles", ["default-scheduler"]),
    ("invalid_config", ["percentageOfNodesToScore", "150"]),
    ("run_as_root", ["kube_scheduler_deployment_run_as_user: Invalid value: '0': uid 0 is root"]),
    ("pdb_exponent", ["kube_scheduler_deployment_pdb_max_unavailable: Invalid value: '1e3'"]),
    ("port_zero", ["kube_scheduler_deployment_secure_port: Invalid value: 0"]),
    ("comma_in_scheduler_name", ["kube_scheduler_deployment_config.profiles[0].schedulerName: Invalid value: 'a,b'"]),
    ("misspelled_variable", ["kube_scheduler_deployment_replica: unknown variable; did you mean "
                             "kube_scheduler_deployment_replicas?"]),
    ("empty_survey_name", ["kube_scheduler_deployment_name: Required value: must not be empty"]),
    ("profiling_padded", ["kube_scheduler_deployment_profiling: Invalid value: 'yes ': must be true or false (as "
                          "text also yes or no, in any case, with nothing around it)"]),
    ("wait_as_on", ["kube_scheduler_deployment_wait: Invalid value: 'on'"]),
    ("survey_boolean_in_config", ["cannot unmarshal string", "hint (kube_scheduler_deployment_config.leaderElection"
                                  ".leaderElect): use a boolean"]),
    ("settle_as_long_as_the_wait", ["kube_scheduler_deployment_settle: Invalid value: 120: must be less than "
                                    "kube_scheduler_deployment_wait_timeout (120)"]),
])
def test_refused_before_anything_is_applied(rendered, case, words):
    error = rendered[case]
    assert isinstance(error, str), "case %s rendered objects" % case
    for word in words:
        assert word in error


def test_a_v_prefixed_version_gives_the_same_image_tag(rendered):
    assert container_of(objects_of(rendered, "v_prefixed_version"))["image"] == "registry.k8s.io/kube-scheduler:v1.35.4"


def test_the_pods_use_the_service_account_and_the_configmap_without_a_kubeconfig(rendered):
    objects = objects_of(rendered, "custom")
    config = scheduler_config_of(objects)
    assert config["clientConnection"]["kubeconfig"] == ""
    assert config["percentageOfNodesToScore"] == 50
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "bin-packing"
    mount = pod["containers"][0]["volumeMounts"][0]
    volume = [v for v in pod["volumes"] if v["name"] == mount["name"]][0]
    assert volume["configMap"]["name"] == one(objects, "ConfigMap")["metadata"]["name"]
    assert "--config=%s/config.yaml" % mount["mountPath"] in pod["containers"][0]["command"]
    assert pod["containers"][0]["command"][0] == "kube-scheduler"


def test_non_root_spread_and_a_disruption_budget_matching_the_pods(rendered):
    objects = objects_of(rendered, "custom")
    deployment = one(objects, "Deployment")
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector.items() <= labels.items()
    assert one(objects, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"] == selector
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert pod["spec"]["securityContext"]["runAsUser"] != 0
    assert pod["spec"]["containers"][0]["securityContext"]["allowPrivilegeEscalation"] is False
    spread = pod["spec"]["topologySpreadConstraints"]
    assert [(s["topologyKey"], s["labelSelector"]["matchLabels"]) for s in spread] == [
        ("kubernetes.io/hostname", selector)]
    assert pod["spec"]["priorityClassName"] == "system-cluster-critical"
    assert pod["spec"]["tolerations"][0]["key"] == "node-role.kubernetes.io/control-plane"


def test_priority_classes_from_the_variable(rendered):
    objects = objects_of(rendered, "custom")
    high, low = one(objects, "PriorityClass", "batch-high"), one(objects, "PriorityClass", "batch-low")
    assert (high["value"], high["globalDefault"], high["preemptionPolicy"], high["description"]) == (
        100000, False, "Never", "batch jobs first")
    assert (low["value"], low["globalDefault"]) == (10, True)
    kinds = [o["kind"] for o in objects]
    assert kinds.index("PriorityClass") < kinds.index("Deployment")
    assert "PriorityClass" not in [o["kind"] for o in objects_of(rendered, "v1_34")]


def test_the_checksum_annotation_follows_the_configuration(rendered):
    def checksum(case):
        objects = objects_of(rendered, case)
        annotation = one(objects, "Deployment")["spec"]["template"]["metadata"]["annotations"]
        text = one(objects, "ConfigMap")["data"]["config.yaml"]
        assert annotation[constants.CONFIG_CHECKSUM_ANNOTATION] == hashlib.sha256(text.encode()).hexdigest()
        return annotation[constants.CONFIG_CHECKSUM_ANNOTATION]

    assert checksum("custom_score_50") == checksum("custom_score_50_again")
    assert checksum("custom_score_50") != checksum("custom_score_60")


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_the_daemonset_runs_on_every_control_plane_node(rendered, minor):
    objects = objects_of(rendered, "ds_v" + minor.replace(".", "_"))
    daemonset = one(objects, "DaemonSet")
    assert "Deployment" not in [o["kind"] for o in objects]
    pod = daemonset["spec"]["template"]["spec"]
    # kubeadm labels control-plane nodes node-role.kubernetes.io/control-plane="" and taints them NoSchedule.
    assert pod["nodeSelector"] == {"node-role.kubernetes.io/control-plane": ""}
    assert pod["tolerations"] == [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists",
                                   "effect": "NoSchedule"}]
    assert "topologySpreadConstraints" not in pod and "replicas" not in daemonset["spec"]
    assert daemonset["spec"]["updateStrategy"] == {
        "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    # A pod per control-plane node: leader election is always on, on the scheduler's own lease.
    election = scheduler_config_of(objects)["leaderElection"]
    assert election["leaderElect"] is True
    assert (election["resourceNamespace"], election["resourceName"]) == ("kube-system", "kubesched-scheduler")


def test_the_daemonset_has_the_same_rbac_lease_and_configmap_as_the_deployment(rendered):
    deployment, daemonset = objects_of(rendered, "v1_34"), objects_of(rendered, "ds_v1_34")

    def others(objects):
        return [o for o in objects if o["kind"] not in ("Deployment", "DaemonSet", "ConfigMap", "PodDisruptionBudget")]
    assert others(deployment) == others(daemonset)
    config_map = one(daemonset, "ConfigMap")
    assert config_map["metadata"]["annotations"][constants.WORKLOAD_ANNOTATION] == "DaemonSet/kubesched-scheduler"
    assert one(deployment, "ConfigMap")["metadata"]["annotations"][constants.WORKLOAD_ANNOTATION] == (
        "Deployment/kubesched-scheduler")
    assert workload(daemonset)["spec"]["template"]["spec"]["containers"] == (
        workload(deployment)["spec"]["template"]["spec"]["containers"])
    assert one(deployment, "PodDisruptionBudget")["spec"]["selector"] == workload(deployment)["spec"]["selector"]
    # No budget for a DaemonSet: the disruption controller cannot count its pods (no scale subresource), so the
    # budget would never allow a disruption (a real 1.35 cluster reports SyncFailed; tests/e2e/test_awx_jobs.py).
    assert [o for o in daemonset if o["kind"] == "PodDisruptionBudget"] == []


def test_the_daemonset_keeps_the_user_s_selector_and_tolerations(rendered):
    pod = workload(objects_of(rendered, "ds_custom"))["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"kubernetes.io/os": "linux", "node-role.kubernetes.io/control-plane": ""}
    # The control-plane toleration the user already gave is not repeated.
    assert [t["key"] for t in pod["tolerations"]] == ["node-role.kubernetes.io/control-plane", "dedicated"]


def test_the_daemonset_rolls_out_on_a_config_change(rendered):
    def checksum(case):
        objects = objects_of(rendered, case)
        annotation = one(objects, "DaemonSet")["spec"]["template"]["metadata"]["annotations"]
        text = one(objects, "ConfigMap")["data"]["config.yaml"]
        assert annotation[constants.CONFIG_CHECKSUM_ANNOTATION] == hashlib.sha256(text.encode()).hexdigest()
        return annotation[constants.CONFIG_CHECKSUM_ANNOTATION]

    assert checksum("ds_score_50") != checksum("ds_score_60")


def test_survey_strings_become_numbers_and_booleans(rendered):
    objects = objects_of(rendered, "survey_strings")
    deployment = one(objects, "Deployment")
    assert deployment["spec"]["replicas"] == 3
    assert deployment["spec"]["progressDeadlineSeconds"] == 120
    assert deployment["spec"]["minReadySeconds"] == 15
    assert workload(objects_of(rendered, "survey_strings_daemonset"))["spec"]["minReadySeconds"] == 15
    pod = deployment["spec"]["template"]["spec"]
    assert (pod["securityContext"]["runAsUser"], pod["securityContext"]["runAsGroup"]) == (1000, 1000)
    container = pod["containers"][0]
    assert container["ports"][0]["containerPort"] == 10300
    assert container["livenessProbe"]["httpGet"]["port"] == 10300
    assert "--secure-port=10300" in container["command"]
    assert one(objects, "PodDisruptionBudget")["spec"]["maxUnavailable"] == 1
    high, default = one(objects, "PriorityClass", "survey-high"), one(objects, "PriorityClass", "survey-default")
    assert (high["value"], high["globalDefault"], default["value"], default["globalDefault"]) == (1000, False, 5, True)
    assert scheduler_config_of(objects)["leaderElection"]["leaderElect"] is True
    assert "leaderElect" not in scheduler_config_of(objects_of(rendered, "survey_one_replica"))["leaderElection"]


ROLE = Path(__file__).resolve().parents[3] / "roles" / "deployment"


def test_every_boolean_and_number_variable_is_converted_where_it_is_used():
    # ansible-core 2.19 refuses a string as a conditional ("Conditionals must have a boolean result"), and a survey
    # gives strings: every use of an int variable goes through | int; a bool variable is read only as role_inputs
    # converted it (__kube_scheduler_deployment_booleans), never through a second | bool.
    spec = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    typed = {name: option["type"] for name, option in spec.items() if option.get("type") in ("bool", "int")}
    assert {"kube_scheduler_deployment_wait", "kube_scheduler_deployment_replicas"} <= set(typed)
    files = [p for p in ROLE.rglob("*") if p.suffix in (".yml", ".j2") and p.parent.name in ("tasks", "templates", "vars")]
    unconverted = []
    for path in files:
        text = path.read_text()
        for name, kind in typed.items():
            for match in re.finditer(r"\b%s\b(?!:)" % name, text):
                after = text[match.end():match.end() + 12]
                if kind == "bool":
                    if not text[:match.start()].endswith("__kube_scheduler_deployment_booleans."):
                        unconverted.append("%s: %s %r" % (path.name, name, after))
                elif not re.match(r"\s*\|\s*%s\b" % kind, after) and not after.startswith(" ~ '"):
                    unconverted.append("%s: %s %r" % (path.name, name, after))
    assert unconverted == []


CRDS = Path(__file__).resolve().parents[3] / "roles" / "deployment" / "files" / "scheduler-plugins"


def test_a_gang_scheduler_gets_its_crds_rbac_and_controller(rendered):
    objects = objects_of(rendered, "sp_gang")
    crds = [o for o in objects if o["kind"] == "CustomResourceDefinition"]
    assert [c["metadata"]["name"] for c in crds] == ["elasticquotas.scheduling.x-k8s.io", "podgroups.scheduling.x-k8s.io"]
    # Applied first (the scheduler's informers list their kinds), as the release ships them.
    assert objects[:2] == crds
    for crd in crds:
        shipped = yaml.safe_load((CRDS / (crd["metadata"]["name"] + ".yaml")).read_text())
        assert crd["spec"] == shipped["spec"]
    container = container_of([o for o in objects if o["metadata"]["name"] == "kubesched-scheduler" or o["kind"] != "Deployment"])
    assert container["image"] == "registry.k8s.io/scheduler-plugins/kube-scheduler:v0.34.7"
    rules = one(objects, "ClusterRole", "kubesched:kube-system:kubesched-scheduler:scheduler-plugins")["rules"]
    assert {"scheduling.x-k8s.io"} == {group for rule in rules for group in rule["apiGroups"]}
    binding = one(objects, "ClusterRoleBinding", "kubesched:kube-system:kubesched-scheduler:scheduler-plugins")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "kubesched-scheduler", "namespace": "kube-system"}]
    controller = one(objects, "Deployment", "kubesched-scheduler-controller")
    spec = controller["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == "kubesched-scheduler-controller"
    assert spec["containers"][0]["image"] == "registry.k8s.io/scheduler-plugins/controller:v0.34.7"
    assert "--enableLeaderElection" in spec["containers"][0]["args"]
    lease = one(objects, "Role", "kubesched:kube-system:kubesched-scheduler:controller-leader-election")
    assert any(rule.get("resourceNames") == ["sched-plugins-controllers"] for rule in lease["rules"])


@pytest.mark.parametrize("case, profiling", [("v1_35", False), ("custom", False), ("profiling_on", True),
                                             ("profiling_survey_yes", True),
                                             ("profiling_in_config", True), ("profiling_off_in_config", False)])
def test_profiling_is_off_unless_the_variable_or_the_config_turns_it_on(rendered, case, profiling):
    assert scheduler_config_of(objects_of(rendered, case))["enableProfiling"] is profiling


def test_a_v_prefixed_release_gives_the_same_images(rendered):
    objects = objects_of(rendered, "sp_v_release")
    images = sorted(container["image"] for o in objects if o["kind"] == "Deployment"
                    for container in o["spec"]["template"]["spec"]["containers"])
    assert images == ["registry.k8s.io/scheduler-plugins/controller:v0.34.7",
                      "registry.k8s.io/scheduler-plugins/kube-scheduler:v0.34.7"]


def test_only_what_the_enabled_plugins_need(rendered):
    kinds = [(o["kind"], o["metadata"]["name"]) for o in objects_of(rendered, "sp_allocatable_only")]
    assert not [k for k in kinds if k[0] == "CustomResourceDefinition" or "controller" in k[1] or "scheduler-plugins" in k[1]]
    off = objects_of(rendered, "sp_controller_off")
    assert [o for o in off if o["kind"] == "CustomResourceDefinition"]
    assert not [o for o in off if "controller" in o["metadata"]["name"]]


@pytest.mark.parametrize("case,words", [
    ("sp_wrong_minor", "scheduler-plugins 0.34.7 is built on Kubernetes 1.34.7, not 1.35"),
    ("sp_bad_args", "permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0"),
    ("sp_vv_release", "kube_scheduler_deployment_scheduler_plugins_version: Invalid value: 'vv0.34.7': not a "
                      "scheduler-plugins release like 0.34.7 or v0.34.7"),
])
def test_a_scheduler_plugins_config_is_refused_before_anything_is_applied(rendered, case, words):
    assert isinstance(rendered[case], str) and words in rendered[case], rendered[case]


@pytest.mark.parametrize("crd", sorted(p.name for p in CRDS.glob("*.yaml")))
def test_the_shipped_crds_are_those_of_every_known_release(crd):
    """Where Go has the releases' modules (make binaries fetched them), each shipped CRD is the release's own."""
    import subprocess  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.scheduler_plugins import RELEASES  # pylint: disable=import-outside-toplevel
    source = {"podgroups.scheduling.x-k8s.io.yaml": "coscheduling/crd.yaml",
              "elasticquotas.scheduling.x-k8s.io.yaml": "capacityscheduling/crd.yaml"}[crd]
    try:
        cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("no go: the releases' modules are not here")
    compared = 0
    for release in RELEASES:
        upstream = Path(cache) / ("sigs.k8s.io/scheduler-plugins@v" + release) / "manifests" / source
        if upstream.exists():
            assert yaml.safe_load((CRDS / crd).read_text()) == yaml.safe_load(upstream.read_text()), release
            compared += 1
    if not compared:
        pytest.skip("no scheduler-plugins module in %s (make binaries fetches them)" % cache)


def test_a_new_pod_counts_as_ready_only_once_it_stayed_ready_for_the_settle(rendered):
    """The workload's minReadySeconds is the settle: the host roles' by default, else 2 seconds."""
    assert workload(objects_of(rendered, "v1_35"))["spec"]["minReadySeconds"] == 2
    assert workload(objects_of(rendered, "ds_v1_35"))["spec"]["minReadySeconds"] == 2
    assert workload(objects_of(rendered, "settle_from_the_host_roles"))["spec"]["minReadySeconds"] == 7
