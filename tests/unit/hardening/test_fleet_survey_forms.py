"""The fleet's variables in every form an AWX survey gives them (text, multi-select list, integer, empty), through
ansible-playbook and the rollout_waves filter as the playbooks call it: values reach the filter as ansible-core's
lazy containers, which are neither hashable nor plain. Each is used or refused naming the variable and its form;
never a traceback; a kubeconfig given as a mapping (kubernetes.core's documented form) plans, and its content is
never shown."""

from __future__ import annotations

import json
import sys

import pytest
import yaml

PLAN = {"pending": True, "plan": {"instances": {}}}


def kubeconfig(server, token):
    return {"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "c", "cluster": {"server": server}}],
            "users": [{"name": "u", "user": {"token": token}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}], "current-context": "c"}


# case -> (its masters' host variables (two east, two west), the call's canary, gate); every case's masters are a
# group of their own in one inventory.
def _fleet(east=None, west=None, **common):
    hosts = {}
    for cluster, extra in (("east", east), ("west", west)):
        for number in (1, 2):
            hosts[cluster[0] + str(number)] = dict(common, **(extra or {}))
    return hosts


BY_VARIABLE = {"east": {"kube_scheduler_cluster": "east"}, "west": {"kube_scheduler_cluster": "west"}}
CASES = {
    "canary_text": (_fleet(**BY_VARIABLE), "east", False),
    "canary_multi_select": (_fleet(**BY_VARIABLE), ["east"], False),
    "canary_multi_select_two": (_fleet(**BY_VARIABLE), ["east", "west"], False),
    "canary_integer": (_fleet(**BY_VARIABLE), 5, False),
    "canary_empty": (_fleet(**BY_VARIABLE), "", False),
    "canary_empty_list": (_fleet(**BY_VARIABLE), [], False),
    "cluster_multi_select": (_fleet(east={"kube_scheduler_cluster": ["east"]}, west={"kube_scheduler_cluster": "west"}),
                             None, False),
    "cluster_integer": (_fleet(east={"kube_scheduler_cluster": 1}, west={"kube_scheduler_cluster": 2}), None, False),
    "cluster_empty": (_fleet(east={"kube_scheduler_cluster": ""}, west={"kube_scheduler_cluster": ""}), None, False),
    "groups_text": (_fleet(kube_scheduler_cluster_groups="east,west"), None, False),
    "groups_integer": (_fleet(kube_scheduler_cluster_groups=2), None, False),
    "groups_empty": (_fleet(kube_scheduler_cluster_groups=""), None, False),
    "make_before_break_integer": (_fleet(kube_scheduler_make_before_break=1, **BY_VARIABLE), None, False),
    "make_before_break_multi_select": (_fleet(kube_scheduler_make_before_break=["true"], **BY_VARIABLE), None, False),
    # kubernetes.core's kubeconfig as a mapping, one per cluster: the metrics gate reads each cluster's API server.
    "gate_kubeconfig_mappings": (_fleet(
        east={"kube_scheduler_cluster": "east",
              "kube_scheduler_verify_k8s_kubeconfig": kubeconfig("https://127.0.0.1:6443", "east-token-0123456789")},
        west={"kube_scheduler_cluster": "west",
              "kube_scheduler_verify_k8s_kubeconfig": kubeconfig("https://127.0.0.2:6443", "west-token-0123456789")}),
        None, True),
    "gate_one_kubeconfig_mapping": (_fleet(
        east={"kube_scheduler_cluster": "east"}, west={"kube_scheduler_cluster": "west"},
        kube_scheduler_verify_k8s_kubeconfig=kubeconfig("https://127.0.0.1:6443", "one-token-0123456789")), None, True),
}

PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
{tasks}
"""
TASK = """
    - name: {case}
      ansible.builtin.set_fact:
        kube_scheduler_rollout: >-
          {{{{ groups['{case}'] | kubesched.schedulers.rollout_waves(hostvars, {case}_canary | default(none),
             'kube_control_plane', {gate}, 'systemd') }}}}
      ignore_errors: true
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory, ansible_playbook, json_task_results):
    work = tmp_path_factory.mktemp("fleet")
    inventory = {"all": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                         "children": {}}}
    extra = {}
    for case, (hosts, canary, _gate) in CASES.items():
        group = dict((case + "-" + host, dict(variables, kube_scheduler_plan=PLAN))
                     for host, variables in hosts.items())
        if any("kube_scheduler_cluster_groups" in variables for variables in hosts.values()):
            # Inventory groups named east and west hold this case's masters.
            inventory["all"]["children"].setdefault("east", {"hosts": {}})["hosts"].update(
                dict((name, None) for name in group if "-e" in name))
            inventory["all"]["children"].setdefault("west", {"hosts": {}})["hosts"].update(
                dict((name, None) for name in group if "-w" in name))
        inventory["all"]["children"][case] = {"hosts": group}
        if canary is not None:
            extra[case + "_canary"] = canary  # as a survey gives it: an extra variable
    (work / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (work / "extra.json").write_text(json.dumps(extra))
    (work / "play.yml").write_text(PLAY.format(tasks="".join(
        TASK.format(case=case, gate="true" if gate else "false") for case, (_hosts, _canary, gate) in CASES.items())))
    proc = ansible_playbook(["-vvv", "-i", "inventory.yml", "-e", "@extra.json", "play.yml"], cwd=work, env=dict(
        ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_LOCAL_TEMP=str(work / "tmp")))
    output = proc.stdout + proc.stderr
    return json_task_results(proc), output


def refusal(results, case):
    result = results[0][case]
    assert result.get("failed"), (case, result)
    return result["msg"]


def waves(results, case):
    result = results[0][case]
    assert not result.get("failed"), (case, result.get("msg"))
    return result["ansible_facts"]["kube_scheduler_rollout"]["waves"]


def test_no_form_gives_a_traceback_or_shows_a_token(results):
    _results, output = results
    assert "Traceback" not in output and "unhashable" not in output and "_AnsibleLazyTemplate" not in output
    assert "token-0123456789" not in output


@pytest.mark.parametrize("case, form", [("canary_multi_select", "['east']: one cluster name, not a list of 1"),
                                        ("canary_multi_select_two", "['east', 'west']: one cluster name, not a list of 2"),
                                        ("canary_integer", "5: one cluster name, not a number")])
def test_a_canary_that_is_not_one_name_is_refused_naming_the_variable_and_its_form(results, case, form):
    message = refusal(results, case)
    assert "kube_scheduler_canary_cluster: Invalid value: %s" % form in message
    assert "Nothing was changed." in message


def test_the_multi_select_refusal_says_what_to_change_in_the_survey(results):
    assert "an AWX multi-select survey question gives a list; make it a multiple-choice question with one answer" \
        in refusal(results, "canary_multi_select")


def test_a_canary_as_text_goes_first(results):
    assert waves(results, "canary_text") == [["canary_text-e1"], ["canary_text-e2"], ["canary_text-w1"], ["canary_text-w2"]]


@pytest.mark.parametrize("case", ["canary_empty", "canary_empty_list", "cluster_empty", "groups_empty"])
def test_an_unanswered_question_is_an_unset_variable(results, case):
    assert waves(results, case)


@pytest.mark.parametrize("case, words", [
    ("cluster_multi_select", "kube_scheduler_cluster (of cluster_multi_select-e1): must be a value, got a list"),
    ("cluster_integer", "kube_scheduler_cluster (of cluster_integer-e1): must be a value, got a number"),
    ("groups_text", "kube_scheduler_cluster_groups (of groups_text-e1): Invalid value: 'east,west': a list of "
                    "inventory group names"),
    ("groups_integer", "kube_scheduler_cluster_groups (of groups_integer-e1): Invalid value: 2: a list of inventory "
                       "group names"),
    ("make_before_break_integer", "kube_scheduler_make_before_break (of make_before_break_integer-e1): Invalid "
                                  "value: 1: must be true or false"),
    ("make_before_break_multi_select", "kube_scheduler_make_before_break (of make_before_break_multi_select-e1): "
                                       "Invalid value: ['true']: must be true or false"),
])
def test_a_fleet_variable_in_a_wrong_form_is_refused_naming_it_and_the_host(results, case, words):
    assert words in refusal(results, case)


def test_two_clusters_with_their_kubeconfig_as_a_mapping_plan(results):
    assert waves(results, "gate_kubeconfig_mappings") == [
        ["gate_kubeconfig_mappings-e1", "gate_kubeconfig_mappings-w1"],
        ["gate_kubeconfig_mappings-e2", "gate_kubeconfig_mappings-w2"]]


def test_one_mapping_for_both_clusters_is_refused_without_its_content(results):
    message = refusal(results, "gate_one_kubeconfig_mapping")
    assert "the metrics gate of cluster east and of cluster west would read the same API server" in message
    assert "kube_scheduler_verify_k8s_kubeconfig (a mapping; its content is not shown)" in message
    assert "one-token" not in message and "127.0.0.1:6443" not in message
