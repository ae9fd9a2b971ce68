# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout engine's host side under its former name, through real ansible-playbook: kubesched.schedulers.rollout
is meta/runtime.yml's deprecated redirect to scheduler_rollout's host side, so a task of that name runs it with the
host's options, as before, and warns naming the release that removes it; the host side takes its own options
alone, and a task of the new name takes a task's alone (its action plugin)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_scheduler_rollout_host_facts import run_on_localhost

PLAYBOOK = """\
- name: The rollout engine's host side by its former name
  hosts: localhost
  gather_facts: false
  tasks:
    - name: former_name_reads
      kubesched.schedulers.rollout:
        kind: static_pod
        read: ["{{ work }}/manifest.yaml"]
    - name: former_name_refuses_a_task_option
      kubesched.schedulers.rollout:
        kind: static_pod
        apply: true
      ignore_errors: true
    - name: new_name_refuses_a_host_option
      kubesched.schedulers.scheduler_rollout:
        kind: static_pod
        state_dir: "{{ work }}/state"
        mode: plan
      ignore_errors: true
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory, ansible_playbook, json_task_results):
    proc = run_on_localhost(tmp_path_factory.mktemp("rollout-former-name"), PLAYBOOK, ansible_playbook,
                            ANSIBLE_DEPRECATION_WARNINGS="1")
    return proc, json_task_results(proc)


def test_the_former_name_runs_the_host_side_and_warns_that_it_goes_in_2_0_0(run):
    proc, results = run
    answer = results["former_name_reads"]
    assert not answer.get("failed") and answer["read"][next(iter(answer["read"]))]["content"] == "kind: Pod\n"
    output = " ".join((proc.stdout + proc.stderr).split())
    assert "kubesched.schedulers.rollout" in output and "2.0.0" in output and "deprecat" in output.lower()


def test_the_host_side_refuses_an_option_only_a_task_gives_as_it_always_did(run):
    answer = run[1]["former_name_refuses_a_task_option"]
    assert answer["failed"]
    assert answer["msg"].startswith("Unsupported parameters for (kubesched.schedulers.rollout) module: apply. "
                                    "Supported parameters include: ")
    assert "mode" in answer["msg"] and "finish" not in answer["msg"]


def test_a_task_of_the_new_name_refuses_an_option_only_the_host_takes(run):
    answer = run[1]["new_name_refuses_a_host_option"]
    assert answer["failed"] and "mode" in answer["msg"] and "scheduler_rollout" in answer["msg"]


def test_this_is_the_one_test_that_reaches_the_host_side_by_its_former_name():
    # The others run it as ansible.legacy.scheduler_rollout (conftest.py's host_side_env): once the redirect goes
    # (2.0.0), this file goes with it and no other test breaks.
    tests = Path(__file__).resolve().parents[3]
    users = sorted(str(path.relative_to(tests)) for path in tests.rglob("*.py")
                   if re.search(r"kubesched\.schedulers\.rollout\s*:", path.read_text(encoding="utf-8")))
    assert users == ["unit/plugins/modules/test_scheduler_rollout_former_name.py"]
