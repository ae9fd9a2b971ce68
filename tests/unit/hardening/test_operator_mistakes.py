"""An operator's common mistakes, refused with upstream's line first and then one hint with the fix, naming the
user's variable: versions (one rule for every role and module), typos in variable and plugin names, divergent
configs behind one lease, and the messages of kube-scheduler that say what is wrong but not what to write."""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.filter.kube_release import kube_release
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.role_variables import check_role, known_variables
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import UnsupportedVersion, normalise
from action_harness import run_action

VAR = "kube_scheduler_instances[0].config"


def errors_of(config, version="1.35.4", **fields):
    _instances, errors, _warnings = resolve([dict({"name": "kube-scheduler", "default_scheduler": True,
                                                   "config": config}, **fields)], version, "/etc/kubernetes/schedulers")
    return errors


# --- one version rule ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("given", ["1.35.4", "v1.35.4", " v1.35.4 "])
def test_a_release_is_written_one_way_whatever_the_v(given):
    assert normalise(given, full=True) == "1.35.4"


def test_the_filter_and_the_instances_agree_on_v_prefixed_versions():
    assert kube_release("v1.35.4", "kube_scheduler_version") == "1.35.4"
    instances, errors, _warnings = resolve([{"name": "kube-scheduler", "default_scheduler": True}], "v1.35.4",
                                           "/etc/kubernetes/schedulers")
    assert errors == [] and instances[0]["image"] == "registry.k8s.io/kube-scheduler:v1.35.4"
    result = run_action("scheduler_instances", {"instances": [{"name": "kube-scheduler", "default_scheduler": True}],
                                                "kubernetes_version": "v1.35.4", "config_dir": "/etc/kubernetes/schedulers"})
    assert result["full_version"] == "1.35.4" and result["minor"] == "1.35"


def test_a_yaml_float_is_named_with_what_yaml_read():
    problems = check_role("systemd", {"kube_scheduler_version": 1.3}, [])[1]
    assert problems == ['kube_scheduler_version: YAML read 1.30 as the number 1.3, not a version: quote it, '
                        'kube_scheduler_version: "1.30" (or give the full release, such as "1.30.4")']


@pytest.mark.parametrize("action, args", [
    ("scheduler_instances", {"instances": [], "config_dir": "/etc/kubernetes/schedulers", "kubernetes_version": 1.3}),
    ("scheduler_config", {"config": {"profiles": [{"schedulerName": "a"}]}, "kubernetes_version": 1.3}),
    ("scheduler_upgrade_check", {"config": {"profiles": [{"schedulerName": "a"}]}, "current_version": 1.3,
                                 "target_versions": ["1.31"]}),
])
def test_every_action_names_the_yaml_float(action, args):
    result = run_action(action, args)
    assert result["failed"] and "YAML read 1.30 as the number 1.3" in result["msg"]


def test_a_minor_alone_names_no_release_for_the_roles():
    (problem,) = check_role("static_pod", {"kube_scheduler_version": "1.35"}, [])[1]
    assert problem.startswith("kube_scheduler_version: Invalid value: '1.35': a minor names no release")


@pytest.mark.parametrize("role, variable", [("systemd", "kube_scheduler_version"),
                                            ("deployment", "kube_scheduler_deployment_version")])
def test_no_role_defaults_a_version(role, variable, tmp_path):
    (problem,) = check_role(role, {variable: ""}, [])[1]
    assert problem.startswith(variable + ": Required value")


def test_verify_needs_a_version_for_its_instances():
    (problem,) = check_role("verify", {"kube_scheduler_verify_instances": [{"name": "a"}],
                                       "kube_scheduler_verify_version": ""}, [])[1]
    assert problem.startswith("kube_scheduler_verify_version: Required value")


def test_normalise_refuses_what_is_not_a_version():
    for value in (None, True, 135, "1.x", "1.29.0", "１.35.4"):
        with pytest.raises(UnsupportedVersion):
            normalise(value, full=True)


@pytest.mark.parametrize("given", ["vv0.34.7", "0.34", "v", "0.34.7.1", "V0.34.7", "０.34.7", 0.34, True])
def test_a_scheduler_plugins_release_follows_the_same_version_rule(given):
    """"v{{ release }}" of a release that has its v already gave "vv0.34.7", and an image that does not exist."""
    values = {"kube_scheduler_deployment_version": "1.34.7", "kube_scheduler_deployment_scheduler_plugins_version": given,
              "kube_scheduler_deployment_config": {"profiles": [{"schedulerName": "sp"}]}}
    (problem,) = check_role("deployment", values, [])[1]
    assert problem == ("kube_scheduler_deployment_scheduler_plugins_version: Invalid value: %s: not a scheduler-plugins "
                       "release like 0.34.7 or v0.34.7 (at most one v, then the release's three numbers); this "
                       "collection knows 0.33.5, 0.34.7" % repr(given))


@pytest.mark.parametrize("given", ["0.34.7", "v0.34.7", " v0.34.7 "])
def test_a_scheduler_plugins_release_is_written_one_way_whatever_the_v(given):
    values = {"kube_scheduler_deployment_version": "1.34.7", "kube_scheduler_deployment_scheduler_plugins_version": given,
              "kube_scheduler_deployment_config": {"profiles": [{"schedulerName": "sp"}]}}
    normalised, problems = check_role("deployment", values, [])
    assert problems == [] and normalised["kube_scheduler_deployment_scheduler_plugins_version"] == "0.34.7"


@pytest.mark.parametrize("action, args", [
    ("scheduler_config", {"config": {"profiles": [{"schedulerName": "sp"}]}, "kubernetes_version": "1.34.7",
                          "scheduler_plugins_version": "vv0.34.7"}),
    ("scheduler_upgrade_check", {"config": {"profiles": [{"schedulerName": "sp"}]}, "current_version": "1.34.7",
                                 "target_versions": ["1.35"], "scheduler_plugins_version": "vv0.34.7"}),
])
def test_every_module_takes_a_scheduler_plugins_release_by_the_same_rule(action, args):
    result = run_action(action, args)
    assert result["failed"] and result["msg"].startswith(
        "scheduler_plugins_version: Invalid value: 'vv0.34.7': not a scheduler-plugins release like 0.34.7")


# --- typos -----------------------------------------------------------------------------------------------------

def test_a_misspelled_role_variable_is_reported_with_the_closest_name():
    (problem,) = check_role("systemd", {}, ["kube_scheduler_instance", "kube_scheduler_version"])[1]
    assert problem.startswith("kube_scheduler_instance: unknown variable; did you mean kube_scheduler_instances?")


def test_another_tools_kube_scheduler_variables_are_left_alone():
    # kubespray's own variables share the prefix; they are not typos of ours.
    present = ["kube_scheduler_bind_address", "kube_scheduler_profiles", "kube_scheduler_node_selector"]
    assert check_role("systemd", {}, present)[1] == []
    assert not set(present) & known_variables()


def test_a_misspelled_plugin_config_is_an_error_with_the_closest_name():
    config = {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "NodeResourceFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}
    (error,) = errors_of(config)
    assert error.startswith(VAR + '.profiles[0].pluginConfig[0].name: Unknown plugin: "NodeResourceFit": '
                            'kube-scheduler 1.35 has no plugin of this name, so its args are ignored (did you mean '
                            'NodeResourcesFit?)')


def test_a_misspelled_disabled_plugin_is_an_error_with_the_closest_name():
    config = {"profiles": [{"schedulerName": "default-scheduler", "plugins": {
        "score": {"disabled": [{"name": "NodeResourcesBalancedAlocation"}]}}}]}
    (error,) = errors_of(config)
    assert "score.disabled[0].name: Unknown plugin" in error and "NodeResourcesBalancedAllocation?" in error


def test_strict_false_keeps_kube_schedulers_tolerance():
    config = {"profiles": [{"schedulerName": "default-scheduler",
                            "pluginConfig": [{"name": "NodeResourceFit", "args": {}}]}]}
    assert errors_of(config, strict=False) == []
    result = run_action("scheduler_config", {"config": config, "kubernetes_version": "1.35", "strict": False})
    assert not result.get("failed") and "NodeResourceFit is not a plugin" in result["warnings"][0]
    assert run_action("scheduler_config", {"config": config, "kubernetes_version": "1.35"})["failed"]


def test_declared_extra_plugins_are_known():
    config = {"profiles": [{"schedulerName": "default-scheduler",
                            "pluginConfig": [{"name": "Coscheduling", "args": {}}]}]}
    assert errors_of(config, extra_plugins=["Coscheduling"]) == []


def test_the_library_alone_keeps_kube_schedulers_verdict():
    """tests/differential compares process() with the real binaries: strict is off unless asked for."""
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "a", "pluginConfig": [{"name": "NodeResourceFit", "args": {}}]}]}
    assert process(config=config, kubernetes_version="1.35").ok
    assert not process(config=config, kubernetes_version="1.35", strict=True).ok


# --- one lease = one config ------------------------------------------------------------------------------------

def test_one_lease_one_config_across_masters():
    def instance(percentage):
        return [{"name": "kube-scheduler", "default_scheduler": True,
                 "config": {"percentageOfNodesToScore": percentage, "profiles": [{"schedulerName": "default-scheduler"}]}}]
    _instances, errors, _warnings = resolve(instance(50), "1.35.4", "/etc/kubernetes/schedulers",
                                            {"m2": instance(50), "m3": instance(70)})
    assert errors == ["kube_scheduler_instances: instance kube-scheduler shares the lease kube-system/kube-scheduler "
                      "with host m3 but its effective config.percentageOfNodesToScore differs: 50 here, 70 on m3; "
                      "replicas behind one lease must run one config (set it once, in group_vars)"]


def test_a_default_written_out_is_the_same_effective_config():
    written = [{"name": "kube-scheduler", "default_scheduler": True,
                "config": {"leaderElection": {"leaseDuration": "15s"}}}]
    implicit = [{"name": "kube-scheduler", "default_scheduler": True}]
    assert resolve(written, "1.35.4", "/etc/kubernetes/schedulers", {"m2": implicit})[1] == []


def test_different_flags_behind_one_lease_are_refused():
    mine = [{"name": "kube-scheduler", "default_scheduler": True, "extra_flags": {"v": 2}}]
    theirs = [{"name": "kube-scheduler", "default_scheduler": True, "extra_flags": {"v": 4}}]
    (error,) = resolve(mine, "1.35.4", "/etc/kubernetes/schedulers", {"m2": theirs})[1]
    assert "with host m2 but its effective flags differs" in error and "--v=4" in error


# --- messages: upstream's line, then the fix -------------------------------------------------------------------

@pytest.mark.parametrize("config, upstream, fix", [
    ({"profile": [{"schedulerName": "a"}]}, 'strict decoding error: unknown field "profile"', "did you mean profiles?"),
    ({"leaderElection": {"leaseDuration": 15}}, "of type string", "write a duration with its unit, such as 15s"),
    ({"leaderElection": {"renewDeadline": "9s", "retryPeriod": "9s"}},
     "renewDeadline must be greater than retryPeriod*JitterFactor", "1.2 x 9s = 10.8s"),
    ({"profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}, {"schedulerName": "a"}]},
     "profiles[2].schedulerName: Duplicate value", 'profiles[0] and profiles[2] are both named "a"'),
    ({"profiles": [{"schedulerName": "a", "plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}]},
     'Invalid value: "EBSLimits": was invalid in version "v1"', "removed in Kubernetes 1.31: use NodeVolumeLimits"),
    ({"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}, 'no kind "KubeSchedulerConfiguration" is registered',
     "kubesched.schedulers.scheduler_upgrade_check and convert: true"),
    ({"leaderElection": {"leaderElect": "true"}}, "cannot unmarshal string", "use a boolean, true without quotes"),
    ({"parallelism": "16"}, "cannot unmarshal string", "write the number 16 without quotes"),
    ({"profiles": [{"schedulerName": "a", "plugins": {"score": {"enabled": [{"name": "ImageLocalty"}]}}}]},
     'ScorePlugin "ImageLocalty" does not exist', "did you mean ImageLocality?"),
])
def test_upstreams_line_first_then_one_hint_naming_the_variable(config, upstream, fix):
    lines = errors_of(config)
    assert len(lines) == 2, lines
    assert lines[0].startswith(VAR + ".") and upstream in lines[0]
    assert lines[1].startswith("  hint (%s." % VAR) and fix in lines[1]


def test_scheduler_config_adds_the_hint_under_its_option_name():
    result = run_action("scheduler_config", {"config": {"profile": []}, "kubernetes_version": "1.35"})
    assert result["msg"] == ('strict decoding error: unknown field "profile"\n'
                             '  hint (config.profile): did you mean profiles? (field names are case-sensitive)')


def test_a_hint_never_hides_the_error():
    config = {"leaderElection": {"renewDeadline": "bogus"}}
    lines = errors_of(config)
    assert lines and lines[0].startswith(VAR + ".leaderElection.renewDeadline")


def test_the_deployment_config_is_refused_under_the_users_variable_with_the_hint():
    values = {"kube_scheduler_deployment_version": "1.35.4",
              "kube_scheduler_deployment_config": {"profiles": [{"schedulerName": "x"}],
                                                   "leaderElection": {"leaderElect": "true"}}}
    assert check_role("deployment", values, [])[1] == [
        "kube_scheduler_deployment_config.leaderElection.leaderElect: json: cannot unmarshal string into Go struct field "
        "LeaderElectionConfiguration.leaderElection.leaderElect of type bool",
        "  hint (kube_scheduler_deployment_config.leaderElection.leaderElect): use a boolean, true without quotes: a "
        "survey or -e key=value gives text (convert it with | bool)"]


def test_the_deployment_strict_variable_keeps_kube_schedulers_tolerance():
    values = {"kube_scheduler_deployment_version": "1.35.4", "kube_scheduler_deployment_config": {
        "profiles": [{"schedulerName": "x", "pluginConfig": [{"name": "NodeResourceFit", "args": {}}]}]}}
    (problem,) = check_role("deployment", values, [])[1]
    assert problem.startswith("kube_scheduler_deployment_config.profiles[0].pluginConfig[0].name: Unknown plugin")
    assert check_role("deployment", dict(values, kube_scheduler_deployment_strict="false"), [])[1] == []


GANG = {"profiles": [{"schedulerName": "gang", "plugins": {
    "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}}}]}
SCHEDULER_PLUGINS_HINT = ("Coscheduling is a plugin of scheduler-plugins (kubernetes-sigs/scheduler-plugins), not of "
                          "kube-scheduler %s: ")


def test_a_scheduler_plugins_plugin_without_the_release_names_the_option_and_the_releases_that_have_it():
    result = run_action("scheduler_config", {"config": GANG, "kubernetes_version": "1.34.7"})
    assert result["msg"].splitlines()[1] == (
        "  hint (config.profiles[0].plugins.queueSort.enabled[0]): " + SCHEDULER_PLUGINS_HINT % "1.34"
        + "set scheduler_plugins_version to a release that has it: 0.34.7 (built on Kubernetes 1.34.7), 0.33.5 (built "
        "on Kubernetes 1.33.5)")


def test_the_deployment_role_names_its_own_variable():
    values = {"kube_scheduler_deployment_version": "1.33.5", "kube_scheduler_deployment_config": GANG}
    assert check_role("deployment", values, [])[1][1] == (
        "  hint (kube_scheduler_deployment_config.profiles[0].plugins.queueSort.enabled[0]): "
        + SCHEDULER_PLUGINS_HINT % "1.33" + "set kube_scheduler_deployment_scheduler_plugins_version to a release that "
        "has it: 0.33.5 (built on Kubernetes 1.33.5), 0.34.7 (built on Kubernetes 1.34.7)")


def test_an_instance_is_told_which_role_runs_scheduler_plugins():
    lines = errors_of(GANG)
    assert lines[1].startswith("  hint (%s.profiles[0].plugins.queueSort.enabled[0]): " % VAR + SCHEDULER_PLUGINS_HINT
                               % "1.35" + "the deployment role runs it, with kube_scheduler_deployment_scheduler_"
                               "plugins_version set to a release that has it")


def test_a_declared_out_of_tree_coscheduling_is_the_operators_own():
    assert errors_of(GANG, extra_plugins=["Coscheduling"]) == []


def test_the_upgrade_check_failure_gives_the_fix_per_target():
    config = {"profiles": [{"schedulerName": "a", "plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}]}
    result = run_action("scheduler_upgrade_check", {"config": config, "current_version": "1.30",
                                                    "target_versions": ["1.31"], "fail_on_error": True})
    assert result["failed"]
    lines = result["msg"].splitlines()
    assert lines[0].startswith('the config would not start on 1.31 (profiles[0].plugins.filter.enabled[0]: Invalid '
                               'value: "EBSLimits"')
    assert lines[1:] == ["  hint (config.profiles[0].plugins.filter.enabled[0]): EBSLimits is not a plugin of "
                         "kube-scheduler 1.31 (removed in Kubernetes 1.31: use NodeVolumeLimits)"]
