# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout playbooks apply a master in one call when the engine's health gate is its last (the engine
commits in that call: kube_scheduler_rollout_hold false, no commit step), and keep the held change (apply, the
verify role's metrics gate, commit; restore in the rescue) when kube_scheduler_rollout_verify runs that gate.

Real ansible-playbook with the rollout engine's apply play (playbooks/_rollout_engine.yml, the one both playbooks
import: its block, its when and vars, its rescue); only the role includes, which need real masters (the Molecule
scenarios run those), become lines saying what each would do."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[3]


def apply_play(gate_fails):
    plays = yaml.safe_load((REPO / "playbooks" / "_rollout_engine.yml").read_text())
    (play,) = [play for play in plays if play.get("name", "").startswith("Apply")]
    (block,) = [task for task in play["tasks"] if "block" in task]

    def stub(task):
        if "block" in task:  # the rescue's own block (the restore's failure waits for its wave)
            return dict(task, block=[stub(t) for t in task["block"]], rescue=[stub(t) for t in task.get("rescue", [])])
        if "ansible.builtin.include_role" not in task:
            return task
        role = task["ansible.builtin.include_role"]
        step = role.get("tasks_from", role["name"].rsplit(".", 1)[-1])
        stubbed = dict((key, value) for key, value in task.items() if key != "ansible.builtin.include_role")
        if step == "verify":
            stubbed["ansible.builtin.assert"] = {"that": ["not gate_fails | bool"], "fail_msg": "the metrics gate refused"}
        else:
            stubbed["ansible.builtin.debug"] = {"msg": "%s hold={{ kube_scheduler_rollout_hold | default('unset') }}" % step}
        return stubbed

    block = dict(block, block=[stub(task) for task in block["block"]], rescue=[stub(task) for task in block["rescue"]])
    # The plan play's conversion of the run's own booleans, which the apply play reads.
    (plan,) = [play for play in plays if play.get("name", "").startswith("Plan")]
    (convert,) = [task for task in plan["tasks"] if task.get("name", "").startswith("Convert")]
    return [dict(play, hosts="kube_control_plane", serial=1, become=False, tasks=[convert, block],
                 vars={"gate_fails": gate_fails})]


def run(ansible_playbook, tmp_path, verify, gate_fails=False):
    (tmp_path / "playbook.yml").write_text(yaml.safe_dump(apply_play(gate_fails), sort_keys=False))
    (tmp_path / "inventory.ini").write_text(
        "[kube_control_plane]\nks-m1 ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable)
    proc = ansible_playbook(["-i", "inventory.ini", "playbook.yml", "-e", json.dumps({"kube_scheduler_rollout_verify": str(verify)})],
                            cwd=tmp_path, env={"ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp")})
    return proc, re.findall(r'"msg": "(\w+) hold=(\w+)"', proc.stdout)


def test_without_a_later_gate_one_apply_call_commits(tmp_path, ansible_playbook):
    proc, steps = run(ansible_playbook, tmp_path, verify=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert steps == [("apply", "False")]  # no commit step: the engine's apply call committed


def test_with_the_metrics_gate_the_change_is_held_for_it_then_committed(tmp_path, ansible_playbook):
    proc, steps = run(ansible_playbook, tmp_path, verify=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert steps == [("apply", "True"), ("commit", "unset")]


def test_a_metrics_gate_that_refuses_the_held_change_restores_it(tmp_path, ansible_playbook):
    proc, steps = run(ansible_playbook, tmp_path, verify=True, gate_fails=True)
    assert steps == [("apply", "True"), ("restore", "unset")], proc.stdout


def test_a_padded_verify_is_refused_naming_it_before_any_step(tmp_path, ansible_playbook):
    # | bool read "yes " as false: the metrics gate asked for was skipped and the change committed without it.
    proc, steps = run(ansible_playbook, tmp_path, verify="yes ")
    assert proc.returncode == 2 and steps == [], proc.stdout
    assert "kube_scheduler_rollout_verify: Invalid value: 'yes ': must be true or false" in proc.stdout + proc.stderr
