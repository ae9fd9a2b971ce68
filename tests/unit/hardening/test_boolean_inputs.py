# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One boolean: every boolean variable of every role is converted once, by the input model's one rule
(plugin_utils/inputs/kinds.py boolean), and the role renders and decides with that conversion.

ansible-core reads booleans two ways: its argument specs strip and accept y/t/on/1 ("yes " is true), its bool filter
does not strip ("yes " is false, "y" is false). So the rule accepts only the spellings both read alike - true and
false, or as text true/false/yes/no in any case with nothing around it - and role_inputs refuses every other, naming
the variable, the value and the accepted spellings. Walked over every `type: bool` variable of every role's
argument specs, with hostile spellings; and no role reads a role variable through `| bool` again."""

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


# `| bool` on a role variable would be a second conversion. What may still use it: the roles' own derived values
# (__*, computed from converted ones) and the playbooks' own variables, which no role checks.
ROLE_BOOL = re.compile(r"\b(kube_scheduler_[a-z0-9_]+)\s*(?:\|\s*default\([^)]*\)\s*)?\|\s*bool\b")
# The rollout's hold is set by the playbooks and by the static_pod role itself (block vars), after role_inputs ran:
# the value it reads is theirs, a boolean they wrote; a user's own value was refused by the one rule first.
SET_BY_THE_COLLECTION = {"kube_scheduler_rollout_hold"}
PLAYBOOK_VARIABLES = {"kube_scheduler_rollout_verify", "kube_scheduler_upgrade_convert",
                      "kube_scheduler_upgrade_scan_fail"}


def test_no_role_reads_a_role_variable_through_bool_again():
    role_variables = {name for variables in ROLE_VARIABLES.values() for name in variables}
    found = []
    for path in sorted(list(ROLES.rglob("*.yml")) + list(ROLES.rglob("*.j2")) + list((REPO / "playbooks").glob("*.yml"))):
        if path.name == "argument_specs.yml":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            for name in ROLE_BOOL.findall(line):
                if name in role_variables and name not in SET_BY_THE_COLLECTION:
                    found.append("%s:%d: %s" % (path.relative_to(REPO), number, name))
                assert name in role_variables or name in PLAYBOOK_VARIABLES, (path, number, name)
    assert found == []


def test_the_kinds_the_roles_read_converted_are_the_booleans():
    kinds_in_use = {kind for variables in ROLE_VARIABLES.values() for kind in variables.values()}
    assert set(BOOLEAN_KINDS) <= kinds_in_use
