"""The one input model (plugins/plugin_utils/inputs/kinds.py, role_variables.py): every role variable and module option
that reaches a file, a path, a unit, a command line, a manifest or an in-cluster object is refused on the
controller, with its own name in the message. One test per example of the hostile run; the action plugins run
in-process as ansible-core runs them, and a refusal must leave the host uncontacted (no module call)."""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.role_variables import check_role
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.systemd_unit import systemd_unit
from action_harness import run_action
from systemd_unit import parse

INJECTION = "/usr/local/bin/kube-scheduler\"\nExecStartPre=+/bin/true\n#"
VERSION = "1.35.4"


def role_problems(role, **values):
    return check_role(role, values, list(values))[1]


def resolved(instances, peers=None, version=VERSION):
    return resolve(instances, version, "/etc/kubernetes/schedulers", peers)


def rollout_args(**changes):
    instances, errors, _warnings = resolved([{"name": "kube-scheduler", "default_scheduler": True}])
    assert errors == []
    args = {"kind": "systemd", "instances": instances, "kubernetes_version": VERSION,
            "config_dir": "/etc/kubernetes/schedulers", "state_dir": "/var/lib/kubesched/systemd",
            "binary_path": "/opt/kube-scheduler/1.35.4/kube-scheduler"}
    args.update(changes)
    return args


def test_the_binary_link_injection_would_add_a_root_exec_start_pre_line():
    """The reproducer: quoting escapes \\ " % $, not newlines, so the value ends the ExecStart line."""
    instances, _errors, _warnings = resolved([{"name": "kube-scheduler", "default_scheduler": True}])
    entries = parse(systemd_unit(instances[0], INJECTION, "kube-scheduler", "kube-scheduler"))
    assert ("Service", "ExecStartPre", "+/bin/true") in entries


def test_the_binary_link_injection_is_refused_by_the_role_with_the_variable_name():
    (problem,) = role_problems("systemd", kube_scheduler_binary_link=INJECTION)
    assert problem.startswith("kube_scheduler_binary_link: Invalid value: ")
    assert "must not contain control characters" in problem


def test_the_binary_link_injection_is_refused_by_scheduler_rollout_before_the_host():
    result = run_action("scheduler_rollout", rollout_args(binary_link=INJECTION))
    assert result["failed"] and "binary_link: Invalid value" in result["msg"]
    assert result["_module_calls"] == []


@pytest.mark.parametrize("role, variable", [
    ("systemd", "kube_scheduler_unit_dir"),
    ("systemd", "kube_scheduler_state_dir"),
    ("systemd", "kube_scheduler_config_dir"),
    ("systemd", "kube_scheduler_binary_link"),
    ("systemd", "kube_scheduler_system_user"),
    ("static_pod", "kube_scheduler_static_pod_state_dir"),
    ("deployment", "kube_scheduler_deployment_name"),
    ("verify", "kube_scheduler_verify_namespace"),
])
def test_an_empty_survey_field_is_refused_not_planned_at_the_root(role, variable):
    (problem,) = role_problems(role, **{variable: ""})
    assert problem.startswith(variable + ": Required value: must not be empty")


def test_an_empty_unit_dir_never_reaches_the_host():
    result = run_action("scheduler_rollout", rollout_args(unit_dir=""))
    assert result["failed"] and "unit_dir: Required value" in result["msg"] and result["_module_calls"] == []


@pytest.mark.parametrize("value", ["/etc/kubernetes/x/../manifests", "/etc/kubernetes/./schedulers",
                                   "/etc//kubernetes", "etc/kubernetes", "/"])
def test_paths_must_be_absolute_and_normalised(value):
    (problem,) = role_problems("static_pod", kube_scheduler_config_dir=value)
    assert problem.startswith("kube_scheduler_config_dir: Invalid value: ")


def test_config_dir_and_manifest_dir_must_not_coincide_or_nest():
    same = role_problems("static_pod", kube_scheduler_config_dir="/etc/kubernetes/manifests",
                         kube_scheduler_manifest_dir="/etc/kubernetes/manifests/")
    assert same and "kube_scheduler_config_dir" in same[0] and "kube_scheduler_manifest_dir" in same[0]
    nested = role_problems("systemd", kube_scheduler_state_dir="/etc/kubernetes/schedulers/state",
                           kube_scheduler_config_dir="/etc/kubernetes/schedulers")
    assert nested and "overlaps" in nested[0]


def test_the_binary_link_must_live_outside_the_managed_directories():
    (problem,) = role_problems("systemd", kube_scheduler_binary_link="/etc/systemd/system/kube-scheduler",
                               kube_scheduler_unit_dir="/etc/systemd/system")
    assert problem.startswith("kube_scheduler_binary_link: Invalid value") and "kube_scheduler_unit_dir" in problem


def test_a_kubeconfig_at_the_instances_own_config_path_is_refused():
    _instances, errors, _warnings = resolved([{"name": "batch", "default_scheduler": True,
                                               "kubeconfig": "/etc/kubernetes/schedulers/batch.yaml",
                                               "kubeconfig_content": "token: SECRET-TOKEN"}])
    assert errors and errors[0].startswith("kube_scheduler_instances[0].kubeconfig: Invalid value")
    assert "config file of instance batch" in errors[0] and "SECRET-TOKEN" not in "".join(errors)


def two_instances_sharing_one_kubeconfig_path(second_content):
    """The default scheduler and a gpu scheduler with a lease of its own, both naming /etc/kubernetes/shared.conf:
    the first with the content "a: 1", the second with SECOND_CONTENT. resolved()'s answer."""
    lease = {"leaderElection": {"leaderElect": True, "resourceName": "gpu", "resourceNamespace": "kube-system"},
             "profiles": [{"schedulerName": "gpu"}]}
    return resolved([
        {"name": "kube-scheduler", "default_scheduler": True, "kubeconfig": "/etc/kubernetes/shared.conf",
         "kubeconfig_content": "a: 1"},
        {"name": "gpu", "secure_port": 10260, "config": lease, "kubeconfig": "/etc/kubernetes/shared.conf",
         "kubeconfig_content": second_content}])


def test_two_instances_writing_different_kubeconfigs_to_one_path_are_refused():
    _instances, errors, _warnings = two_instances_sharing_one_kubeconfig_path("a: 2")
    assert errors == ["kube_scheduler_instances[1].kubeconfig_content: instance gpu writes another kubeconfig to "
                      "/etc/kubernetes/shared.conf than instance kube-scheduler (the last would silently win): one "
                      "path holds one content. Give kubeconfig_content once (one variable that both instances use: "
                      "the file is written once and stays while either uses it), or give each content a kubeconfig "
                      "path of its own"]


def test_two_instances_with_one_kubeconfig_content_for_one_path_are_accepted():
    instances, errors, _warnings = two_instances_sharing_one_kubeconfig_path("a: 1")
    assert errors == []
    assert [instance["kubeconfig"] for instance in instances] == ["/etc/kubernetes/shared.conf"] * 2


def test_a_host_path_with_dot_dot_is_refused_before_the_api_server_sees_it():
    _instances, errors, _warnings = resolved([{"name": "kube-scheduler", "default_scheduler": True,
                                               "kubeconfig": "/etc/kubernetes/pki/../scheduler.conf"}])
    assert errors == ["kube_scheduler_instances[0].kubeconfig: Invalid value: '/etc/kubernetes/pki/../scheduler.conf': "
                      "must be a normalised path, without '.', '..' or '//' (write /etc/kubernetes/scheduler.conf)"]


@pytest.mark.parametrize("variable, value, words", [
    ("kube_scheduler_deployment_secure_port", 0, "must be a port number between 1 and 65535"),
    ("kube_scheduler_deployment_secure_port", "65536", "between 1 and 65535"),
    ("kube_scheduler_deployment_run_as_user", 0, "uid 0 is root: the pod runs with runAsNonRoot: true"),
    ("kube_scheduler_deployment_run_as_user", "0", "uid 0 is root"),
    ("kube_scheduler_deployment_pdb_max_unavailable", "1e3", "a whole number such as 1 or a percentage"),
    ("kube_scheduler_deployment_pdb_max_unavailable", "150%", "a percentage"),
    ("kube_scheduler_deployment_namespace", "Kube-System", "DNS-1123 label"),
    ("kube_scheduler_deployment_name", "a" * 64, "at most 63 characters"),
    ("kube_scheduler_deployment_node_selector", {"a b": "x"}, "label key"),
    ("kube_scheduler_deployment_node_selector", {"k": "a\nb"}, "label value"),
    ("kube_scheduler_deployment_image", "registry/x:1 --privileged", "image reference"),
    ("kube_scheduler_deployment_resources", {"requests": {"cpu": "100 m"}}, "must be a quantity"),
    ("kube_scheduler_deployment_resources", {"request": {"cpu": "1"}}, "requests and limits"),
    ("kube_scheduler_deployment_tolerations", [{"key": "a", "operator": "Exists", "value": "x"}],
     "must be empty when operator is Exists"),
    ("kube_scheduler_deployment_tolerations", [{"key": "a", "effect": "NoSchedule", "tolerationSeconds": 5}],
     "tolerationSeconds needs effect NoExecute"),
    ("kube_scheduler_deployment_tolerations", [{"operator": "Equal", "value": "x"}], "an empty key needs operator Exists"),
    ("kube_scheduler_deployment_priority_classes", [{"name": "system-batch", "value": 1}], "system- prefix is reserved"),
    ("kube_scheduler_deployment_priority_classes", [{"name": "batch", "value": 2000000000}], "between -2147483648 and 1000000000"),
    # What the API server's container-resources and PriorityClass admission refuse
    # (tests/unit/roles/test_apiserver_dry_run.py asks the real kube-apiserver about the same values).
    ("kube_scheduler_deployment_resources", {"requests": {"gpu": "1"}}, "must be cpu, memory, ephemeral-storage"),
    ("kube_scheduler_deployment_resources", {"requests": {"memory": "1Gi"}, "limits": {"memory": "1G"}},
     "must be less than or equal to the memory limit of '1G'"),
    ("kube_scheduler_deployment_resources", {"requests": {"example.com/dev": "1"}}, "needs a limit equal"),
    ("kube_scheduler_deployment_resources", {"limits": {"example.com/dev": "500m"}}, "must be a whole number"),
    ("kube_scheduler_deployment_resources", {"requests": {"cpu": "-1"}}, "must be a quantity"),
    ("kube_scheduler_deployment_priority_classes", [{"name": "a", "value": 1, "global_default": True},
                                                    {"name": "b", "value": 1, "global_default": "yes"}],
     "one default PriorityClass"),
])
def test_values_the_api_server_or_the_kubelet_would_refuse_later(variable, value, words):
    problems = role_problems("deployment", **{variable: value})
    assert len(problems) == 1 and problems[0].startswith(variable) and words in problems[0]


def test_a_configuration_larger_than_a_configmap_holds_is_refused():
    config = {"profiles": [{"schedulerName": "big", "plugins": {"score": {"enabled": [{"name": "Big"}]}},
                            "pluginConfig": [{"name": "Big", "args": {"blob": "x" * (1 << 20)}}]}]}
    problems = role_problems("deployment", kube_scheduler_deployment_config=config,
                             kube_scheduler_deployment_version="1.35.4",
                             kube_scheduler_deployment_extra_plugins=[{"name": "Big", "extension_points": ["score"]}])
    assert len(problems) == 1 and problems[0].startswith(
        "kube_scheduler_deployment_config: Too long: the rendered configuration is 1048") and "at most 1048576" in problems[0]


@pytest.mark.parametrize("variable, value, words", [
    ("kube_scheduler_verify_schedulers", ["batch,default-scheduler"], "kube_scheduler_verify_schedulers[0]: Invalid"),
    ("kube_scheduler_verify_schedulers", [{"name": "x", "lease": "x"}], '[0].lease: Invalid value'),
    ("kube_scheduler_verify_schedulers", [{"name": "x", "leas": "kube-system/x"}], "unknown fields leas"),
    ("kube_scheduler_verify_schedulers", "x", "must be a list of scheduler names"),
])
def test_the_verify_roles_schedulers_are_names_a_pod_can_select(variable, value, words):
    problems = role_problems("verify", **{variable: value})
    assert len(problems) == 1 and problems[0].startswith(variable) and words in problems[0]


@pytest.mark.parametrize("value, expected", [("1", 1), ("25%", "25%"), (0, 0)])
def test_survey_numbers_and_percentages_are_accepted(value, expected):
    normalised, problems = check_role("deployment", {"kube_scheduler_deployment_pdb_max_unavailable": value}, [])
    assert problems == [] and normalised["kube_scheduler_deployment_pdb_max_unavailable"] == expected


def test_a_secure_port_of_zero_is_refused_for_an_instance():
    _instances, errors, _warnings = resolved([{"name": "kube-scheduler", "default_scheduler": True, "secure_port": 0}])
    assert errors[0].startswith("kube_scheduler_instances[0].secure_port: Invalid value: 0")


def test_a_one_mebibyte_flag_value_is_refused_with_linux_s_limit():
    _instances, errors, _warnings = resolved([{"name": "kube-scheduler", "default_scheduler": True,
                                               "extra_flags": {"vmodule": "x" * (1 << 20)}}])
    assert errors == ["kube_scheduler_instances[0].extra_flags.vmodule: Too long: 1048586 bytes, but Linux "
                      "accepts at most 131071 bytes in one command-line argument; put large settings into the config "
                      "instead"]


def test_a_scheduler_name_with_a_comma_is_refused_for_instances_and_deployments():
    config = {"profiles": [{"schedulerName": "batch,default-scheduler"}]}
    _instances, errors, _warnings = resolved([{"name": "kube-scheduler", "default_scheduler": True, "config": config}])
    assert errors[0].startswith("kube_scheduler_instances[0].config.profiles[0].schedulerName: Invalid value: "
                                "'batch,default-scheduler': kube-scheduler reports its bindings as events whose "
                                "reportingController is the schedulerName")
    (problem,) = role_problems("deployment", kube_scheduler_deployment_config=config)
    assert problem.startswith("kube_scheduler_deployment_config.profiles[0].schedulerName: Invalid value")


def test_a_lease_name_the_api_server_would_refuse():
    config = {"leaderElection": {"leaderElect": True, "resourceName": "Batch_Lease", "resourceNamespace": "kube-system"},
              "profiles": [{"schedulerName": "batch"}]}
    _instances, errors, _warnings = resolved([{"name": "batch", "config": config}])
    assert errors[0].startswith("kube_scheduler_instances[0].config.leaderElection.resourceName: Invalid value: "
                                "'Batch_Lease': must be a DNS-1123 subdomain")


def test_the_deployment_may_not_take_the_default_lease():
    (problem,) = role_problems("deployment", kube_scheduler_deployment_namespace="kube-system",
                               kube_scheduler_deployment_lease_name="kube-scheduler")
    assert problem.startswith("kube_scheduler_deployment_lease_name: Invalid value: 'kube-scheduler'")


def test_rollout_options_are_checked_with_the_same_kinds():
    result = run_action("scheduler_rollout", rollout_args(user="root\nExecStartPre=+/bin/true", health_timeout=0,
                                                          config_dir="/etc/kubernetes/schedulers/../manifests"))
    assert result["failed"] and result["_module_calls"] == []
    for words in ("user: Invalid value", "health_timeout: Invalid value: 0",
                  "config_dir: Invalid value: '/etc/kubernetes/schedulers/../manifests'"):
        assert words in result["msg"]


def test_hand_made_rollout_instances_cannot_smuggle_a_line_into_the_unit():
    args = rollout_args()
    args["instances"][0]["flags"] = args["instances"][0]["flags"] + ["--v=2\nExecStartPre=+/bin/true"]
    result = run_action("scheduler_rollout", args)
    assert result["failed"] and "instances[0].flags[5]: Invalid value" in result["msg"]
    assert result["_module_calls"] == []


def test_scheduler_config_refuses_a_dest_that_is_not_a_normalised_path():
    result = run_action("scheduler_config", {"config": {"profiles": [{"schedulerName": "a"}]},
                                             "kubernetes_version": "1.35", "dest": "/etc/kubernetes/../x.yaml"})
    assert result["failed"] and result["msg"].startswith("dest: Invalid value") and result["_module_calls"] == []


# --- filter arguments that reach a manifest or kubeadm's ClusterConfiguration ---------------------------------

def _kubeadm_instance():
    instances, errors, _warnings = resolved([{"name": "kube-scheduler", "default_scheduler": True}])
    assert errors == []
    return instances[0]


def test_filters_take_the_one_version_rule():
    from ansible.errors import AnsibleFilterError
    from ansible_collections.kubesched.schedulers.plugins.filter.kubeadm_scheduler_patch import kubeadm_scheduler_patch
    from ansible_collections.kubesched.schedulers.plugins.filter.kube_release import kube_release
    from ansible_collections.kubesched.schedulers.plugins.filter.static_pod_manifest import FilterModule

    instance = _kubeadm_instance()
    assert kubeadm_scheduler_patch(instance, "v1.35.4")["apiVersion"] == "kubeadm.k8s.io/v1beta4"
    with pytest.raises(ValueError, match="YAML read 1.30 as the number 1.3"):
        kubeadm_scheduler_patch(instance, 1.3)
    with pytest.raises(AnsibleFilterError, match="kube_scheduler_version: YAML read 1.30"):
        kube_release(1.3, "kube_scheduler_version")
    manifest = FilterModule().filters()["static_pod_manifest_yaml"]
    assert "image: registry.k8s.io/kube-scheduler:v1.35.4" in manifest(instance, "v1.35.4", "0" * 64)
    with pytest.raises(AnsibleFilterError, match="checksum: Invalid value"):
        manifest(instance, "1.35.4", "0" * 63 + "\n")
    with pytest.raises(AnsibleFilterError, match="image: Invalid value"):
        manifest(instance, "1.35.4", "0" * 64, None, "registry/x:1\nprivileged: true")


def test_the_kubeadm_patch_refuses_a_host_path_the_api_server_would_refuse():
    from ansible_collections.kubesched.schedulers.plugins.filter.kubeadm_scheduler_patch import (
        KubeadmPatchError, kubeadm_scheduler_patch)

    instance = dict(_kubeadm_instance(), kubeconfig="/etc/kubernetes/pki/../scheduler.conf")
    with pytest.raises(KubeadmPatchError, match=r"kubeconfig: Invalid value: .*must be a normalised path"):
        kubeadm_scheduler_patch(instance, "1.35.4")
