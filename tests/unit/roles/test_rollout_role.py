# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The steps the systemd and static_pod roles share, kept once in the internal role roles/_rollout: every entry point
has an argument spec and refuses to run unless one of the two roles called it; the two roles keep no copy of a shared
step. Through real ansible-playbook runs on localhost (test_rollout_restore_role.py runs its commit and restore
through the static_pod role on a change the real engine held)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

ROLES = Path(__file__).resolve().parents[3] / "roles"
SHARED = ROLES / "_rollout"
PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Call the shared step
      ansible.builtin.include_role:
        name: kubesched.schedulers._rollout
        tasks_from: {entry}
      vars: {inputs}
"""
INPUTS = {
    "resolve": {"_rollout_role": "systemd"},
    "serving_certs": {"_rollout_serving_certs": [], "_rollout_owner": "root", "_rollout_group": "root"},
    "serving_certs_plan": {"_rollout_serving_certs": [], "_rollout_owner": "root", "_rollout_group": "root"},
    "commit": {"_rollout_kind": "systemd", "_rollout_state_dir": "/var/lib/kubesched/systemd"},
    "restore": {"_rollout_kind": "static_pod", "_rollout_state_dir": "/var/lib/kubesched/static-pod",
                "_rollout_health_timeout": 10, "_rollout_health_settle": 0},
}


def entry_points():
    return sorted(path.stem for path in (SHARED / "tasks").glob("*.yml") if path.stem != "refuse_alone")


def test_every_entry_point_has_a_spec_and_starts_with_the_guard():
    specs = yaml.safe_load((SHARED / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    assert sorted(specs) == entry_points() == sorted(INPUTS)
    for entry in entry_points():
        first = yaml.safe_load((SHARED / "tasks" / (entry + ".yml")).read_text())[0]
        # serving_certs_plan starts with serving_certs, which starts with the guard.
        assert first["ansible.builtin.import_tasks"] in ("refuse_alone.yml", "serving_certs.yml"), entry
        assert set(INPUTS[entry]) == set(specs[entry]["options"])


def run_play(tmp_path, ansible_playbook, entry, inputs):
    (tmp_path / "play.yml").write_text(PLAY.format(entry=entry, inputs=inputs))
    return ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                             "play.yml"], cwd=tmp_path)


@pytest.mark.parametrize("entry", sorted(INPUTS))
def test_an_entry_point_refuses_to_run_from_a_play(entry, tmp_path, ansible_playbook):
    run = run_play(tmp_path, ansible_playbook, entry, INPUTS[entry])
    assert run.returncode != 0
    assert ("kubesched.schedulers._rollout is internal to the roles kubesched.schedulers.systemd and "
            "kubesched.schedulers.static_pod (called from a play)") in run.stdout
    assert "Refuse to run outside the systemd and static_pod roles" in run.stdout


def test_its_inputs_are_checked_against_the_spec_first(tmp_path, ansible_playbook):
    run = run_play(tmp_path, ansible_playbook, "commit", {"_rollout_kind": "docker"})
    assert run.returncode != 0
    assert "_rollout_kind" in run.stdout and "must be one of: systemd, static_pod" in run.stdout
    assert "missing required arguments: _rollout_state_dir" in run.stdout


def calls(tasks):
    for task in tasks or []:
        for key in ("block", "rescue", "always"):
            yield from calls(task.get(key))
        if task.get("ansible.builtin.include_role", {}).get("name") == "kubesched.schedulers._rollout":
            yield task


def test_the_host_roles_pass_each_entry_point_exactly_its_inputs():
    """The two roles include the shared steps without Ansible's validation (rolespec_validate: false: their inputs
    are fixed, and validating them again on every master cost controller CPU), so this checks them instead."""
    specs = yaml.safe_load((SHARED / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    found = set()
    for role in ("systemd", "static_pod"):
        for path in sorted((ROLES / role / "tasks").glob("*.yml")):
            for task in calls(yaml.safe_load(path.read_text())):
                include = task["ansible.builtin.include_role"]
                entry = include["tasks_from"]
                assert include["rolespec_validate"] is False, path
                assert set(task["vars"]) == set(specs[entry]["options"]), (path, entry)
                kinds = [value for name, value in task["vars"].items() if name in ("_rollout_kind", "_rollout_role")]
                assert kinds in ([], [role]), (path, entry)
                found.add((role, entry))
    assert found == {(role, entry) for role in ("systemd", "static_pod") for entry in specs}


@pytest.mark.parametrize("name", ["commit.yml", "restore.yml", "serving_certs.yml", "serving_certs_plan.yml",
                                  "preflight.yml", "resolve.yml"])
def test_the_host_roles_keep_no_copy_of_a_shared_step(name):
    """What was a copy in each role is the shared step, or a call of it."""
    for role in ("systemd", "static_pod"):
        path = ROLES / role / "tasks" / name
        if path.is_file():
            tasks = yaml.safe_load(path.read_text())
            assert [task["ansible.builtin.include_role"]["name"] for task in tasks] == ["kubesched.schedulers._rollout"]
