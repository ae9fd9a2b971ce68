# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One boolean: every boolean variable of every role and of every playbook is converted once, by the input model's
one rule (plugin_utils/inputs/kinds.py boolean), and the role or playbook decides with that conversion.

ansible-core reads booleans two ways: its argument specs strip and accept y/t/on/1 ("yes " is true), its bool filter
does not strip ("yes " is false, "y" is false). So the rule accepts only the spellings both read alike - true and
false, or as text true/false/yes/no in any case with nothing around it - and role_inputs refuses every other, naming
the variable, the value and the accepted spellings. Walked over every `type: bool` variable of every role's
argument specs and every boolean a playbook's header documents, with hostile spellings; and no role or playbook
reads a variable of ours through `| bool`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from ansible.module_utils.parsing.convert_bool import boolean as argument_spec_boolean
from ansible.plugins.filter.core import to_bool

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs import kinds
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.role_variables import (
    BOOLEAN_KINDS, ROLE_VARIABLES, booleans, check_role)
from action_harness import run_action

REPO = Path(__file__).resolve().parents[3]
ROLES = REPO / "roles"


def bool_variables(role):
    """The role's variables its argument specs give as type bool (every entry point)."""
    specs = yaml.safe_load((ROLES / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    return sorted({name for spec in specs.values() for name, option in (spec.get("options") or {}).items()
                   if option.get("type") == "bool"})


EVERY = [(role, name) for role in sorted(ROLE_VARIABLES) for name in bool_variables(role)]
# What a survey, -e key=value or a hand edit gives: padded, the argument spec's extra words, numbers, near misses.
HOSTILE = ["yes ", " true", "true\n", "no\t", "y", "n", "t", "f", "on", "off", "1", "0", "", " ", "tru", "yes please",
           "\u00a0yes", "ｙｅｓ", 1, 0, 1.0, None, [], {}, ["true"]]
ACCEPTED = {True: True, False: False, "true": True, "false": False, "yes": True, "no": False, "TRUE": True,
            "False": False, "Yes": True, "NO": False}


def test_every_bool_variable_of_every_role_is_found():
    # Both ways: the argument specs' bool variables are exactly the input model's boolean ones.
    assert set(EVERY) == {(role, name) for role, variables in ROLE_VARIABLES.items()
                          for name, kind in variables.items() if kind is kinds.boolean}
    assert ("deployment", "kube_scheduler_deployment_profiling") in EVERY
    assert ("static_pod", "kube_scheduler_profiling") in EVERY and ("systemd", "kube_scheduler_profiling") in EVERY


@pytest.mark.parametrize("role, name", EVERY)
def test_every_bool_variable_has_the_one_rule(role, name):
    assert ROLE_VARIABLES[role][name] is kinds.boolean


@pytest.mark.parametrize("role, name", EVERY)
def test_a_padded_or_unknown_spelling_is_refused_naming_the_variable_the_value_and_the_spellings(role, name):
    for value in HOSTILE:
        normalised, problems = check_role(role, {name: value}, [])
        assert name not in normalised, (name, value)
        (problem,) = [line for line in problems if line.startswith(name + ":")]
        assert kinds.shown(value) in problem, problem
        assert "true or false (as text also yes or no, in any case, with nothing around it)" in problem, problem


@pytest.mark.parametrize("role, name", EVERY)
def test_an_accepted_spelling_means_what_every_reading_of_ansible_core_makes_of_it(role, name):
    for value, meaning in ACCEPTED.items():
        normalised, problems = check_role(role, {name: value}, [])
        assert problems == [] and normalised[name] is meaning, (value, problems)
        # The argument spec (run before role_inputs) and the bool filter agree on every spelling the rule accepts.
        assert argument_spec_boolean(value) is meaning and to_bool(value) is meaning, value
        assert booleans(role, normalised) == {name: meaning}


def test_the_issues_padded_yes_is_refused_where_ansible_core_reads_it_two_ways():
    assert argument_spec_boolean("yes ") is True and to_bool("yes ") is False  # why one rule is needed
    _normalised, problems = check_role("deployment", {"kube_scheduler_deployment_profiling": "yes "}, [])
    assert problems == ["kube_scheduler_deployment_profiling: Invalid value: 'yes ': must be true or false (as text "
                        "also yes or no, in any case, with nothing around it)"]


@pytest.mark.parametrize("name", ["kube_scheduler_deployment_pod_monitor",
                                  "kube_scheduler_deployment_scheduler_plugins_controller"])
def test_auto_or_a_boolean_by_the_same_rule(name):
    assert check_role("deployment", {name: "Auto"}, [])[0][name] == "auto"
    assert check_role("deployment", {name: "no"}, [])[0][name] is False
    for value in ("auto ", "yes ", "on", 1):
        (problem,) = check_role("deployment", {name: value}, [])[1]
        assert problem.startswith("%s: Invalid value: %s: must be auto or true or false" % (name, kinds.shown(value)))


def test_role_inputs_returns_the_converted_booleans_the_role_reads():
    result = run_action("role_inputs", {"role": "deployment"}, task_vars={
        "inventory_hostname": "localhost", "kube_scheduler_deployment_profiling": "Yes",
        "kube_scheduler_deployment_wait": False, "kube_scheduler_deployment_pod_monitor": "auto",
        "kube_scheduler_deployment_name": "batch"})
    assert not result.get("failed"), result
    assert result["booleans"] == {"kube_scheduler_deployment_profiling": True, "kube_scheduler_deployment_wait": False,
                                  "kube_scheduler_deployment_pod_monitor": "auto"}
    refused = run_action("role_inputs", {"role": "deployment"}, task_vars={
        "inventory_hostname": "localhost", "kube_scheduler_deployment_profiling": "yes "})
    assert refused["failed"] and "kube_scheduler_deployment_profiling: Invalid value: 'yes '" in refused["msg"]


def test_every_host_of_a_run_once_check_gets_its_own_booleans():
    hostvars = {"m1": {"kube_scheduler_profiling": "true"}, "m2": {"kube_scheduler_profiling": "no"}}
    result = run_action("role_inputs", {"role": "systemd", "all_hosts": True}, task_vars={
        "inventory_hostname": "m1", "kube_scheduler_profiling": "true", "hostvars": hostvars,
        "ansible_play_hosts_all": ["m1", "m2"]})
    assert not result.get("failed"), result
    assert result["hosts"] == {"m1": {"kube_scheduler_profiling": True}, "m2": {"kube_scheduler_profiling": False}}


# `| bool` on a variable of ours would be a second conversion, by another rule. What may still use it: the roles' own
# derived values (__*, computed from converted ones).
USER_BOOL = re.compile(r"\b(?<!__)(kube_scheduler_[a-z0-9_]+)\s*(?:\|\s*default\([^)]*\)\s*)?\|\s*bool\b")
PLAYBOOKS = sorted((REPO / "playbooks").glob("*.yml"))
# A boolean a playbook's header documents: "kube_scheduler_rollout_verify: true", "-e kube_scheduler_upgrade_convert=true".
DOCUMENTED_BOOLEAN = re.compile(r"\b(kube_scheduler_[a-z0-9_]+)(?::\s*|=)(?:true|false)\b")


def header(path):
    """The playbook's own documentation: the comment lines it starts with."""
    lines = path.read_text().splitlines()[1:]
    end = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    return "\n".join(lines[:end])


def playbook_booleans():
    """The booleans the playbooks document for the user (their headers), which no role checks: playbook -> names."""
    role_variables = {name for variables in ROLE_VARIABLES.values() for name in variables}
    found = {path.name: sorted(set(DOCUMENTED_BOOLEAN.findall(header(path))) - role_variables) for path in PLAYBOOKS}
    return {name: names for name, names in found.items() if names}


PLAYBOOK_BOOLEANS = playbook_booleans()
EVERY_PLAYBOOK_BOOLEAN = sorted({(playbook, name) for playbook, names in PLAYBOOK_BOOLEANS.items() for name in names})


def test_every_boolean_a_playbook_documents_is_found():
    assert PLAYBOOK_BOOLEANS == {"_rollout_engine.yml": ["kube_scheduler_rollout_verify"],
                                 "upgrade_check.yml": ["kube_scheduler_upgrade_convert"],
                                 "upgrade_scan.yml": ["kube_scheduler_upgrade_convert",
                                                      "kube_scheduler_upgrade_scan_fail"]}


@pytest.mark.parametrize("playbook, name", EVERY_PLAYBOOK_BOOLEAN)
def test_a_playbook_reads_its_booleans_only_through_the_one_rule(playbook, name):
    """Every line of the playbook that reads the variable converts it by the one rule (kinds.boolean, through the
    boolean_input filter), naming it; the rest of the playbook reads the conversion."""
    text = "\n".join(line for line in (REPO / "playbooks" / playbook).read_text().splitlines()
                     if not line.lstrip().startswith(("#", "- name:")))
    conversions = re.findall(r"\b%s\s*\|\s*default\((?:true|false)\)\s*\|\s*kubesched\.schedulers\.boolean_input\('%s'\)"
                             % (name, name), text)
    assert conversions, (playbook, name)
    # Each conversion names the variable twice (read, and named for the refusal): no other read.
    assert len(re.findall(r"\b%s\b" % name, text)) == 2 * len(conversions), (playbook, name)


@pytest.mark.parametrize("name", sorted({name for _playbook, name in EVERY_PLAYBOOK_BOOLEAN}
                                        | {"kube_scheduler_rollout_hold"}))
def test_the_playbooks_booleans_and_the_hold_have_the_one_rule(name):
    from ansible_collections.kubesched.schedulers.plugins.filter.boolean_input import boolean_input
    from ansible.errors import AnsibleFilterError
    for value in HOSTILE:
        with pytest.raises(AnsibleFilterError) as refused:
            boolean_input(value, name)
        assert str(refused.value).startswith("%s: Invalid value: %s: must be true or false (as text also yes or no, "
                                             "in any case, with nothing around it)" % (name, kinds.shown(value)))
    for value, meaning in ACCEPTED.items():
        assert boolean_input(value, name) is meaning and to_bool(value) is meaning, value


def test_no_role_or_playbook_reads_a_variable_of_ours_through_bool():
    found = []
    for path in sorted(list(ROLES.rglob("*.yml")) + list(ROLES.rglob("*.j2")) + PLAYBOOKS):
        if path.name == "argument_specs.yml":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            found.extend("%s:%d: %s" % (path.relative_to(REPO), number, name) for name in USER_BOOL.findall(line))
    assert found == []


def test_the_kinds_the_roles_read_converted_are_the_booleans():
    kinds_in_use = {kind for variables in ROLE_VARIABLES.values() for kind in variables.values()}
    assert set(BOOLEAN_KINDS) <= kinds_in_use
