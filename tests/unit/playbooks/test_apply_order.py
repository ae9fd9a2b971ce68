# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The playbooks apply to the masters with a change in inventory order (the first master goes first, as a canary),
even when the masters finish planning in another order: group_by adds hosts in the order they finish, so the apply
play's hosts pattern must not take the group's order. Real ansible-playbook, the real playbooks' apply-play pattern."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
MASTERS = ("ks-m1", "ks-m2", "ks-m3")


@pytest.mark.parametrize("kind", ["systemd", "static_pod"])
def test_masters_with_a_change_are_applied_in_inventory_order(kind, tmp_path, ansible_playbook):
    plays = yaml.safe_load((REPO / "playbooks" / ("%s.yml" % kind)).read_text())
    plan_play, apply_play = [play for play in plays if "ansible.builtin.import_playbook" not in play]
    (group_by,) = [task["ansible.builtin.group_by"] for task in plan_play["tasks"] if "ansible.builtin.group_by" in task]
    playbook = [
        # m1 plans longest (12 s more than m3, 6 s more than m2: wide enough that starting the forks late on a loaded
        # machine cannot reorder them), so it joins the group last.
        {"name": "Plan", "hosts": "kube_control_plane", "gather_facts": False, "strategy": "free",
         "tasks": [{"name": "Plan", "ansible.builtin.command": "sleep {{ plan_seconds }}", "changed_when": False},
                   {"name": "Group", "ansible.builtin.group_by": {"key": group_by["key"]}}]},
        {"name": "Group order", "hosts": group_by["key"], "gather_facts": False,
         "tasks": [{"name": "Group order", "ansible.builtin.debug": {"msg": "grouped {{ inventory_hostname }}"}}]},
        {"name": "Apply", "hosts": apply_play["hosts"], "serial": apply_play["serial"], "gather_facts": False,
         "tasks": [{"name": "Apply", "ansible.builtin.debug": {"msg": "applying {{ inventory_hostname }}"}}]},
    ]
    (tmp_path / "playbook.yml").write_text(yaml.safe_dump(playbook, sort_keys=False))
    (tmp_path / "inventory.ini").write_text("[kube_control_plane]\n" + "".join(
        "%s ansible_connection=local ansible_python_interpreter=%s plan_seconds=%d\n" % (name, sys.executable, 6 * (2 - i))
        for i, name in enumerate(MASTERS)))
    proc = ansible_playbook(["-i", "inventory.ini", "-f", "3", "playbook.yml"], cwd=tmp_path,
                            env={"ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    grouped = re.findall(r'"msg": "grouped (ks-m\d)"', proc.stdout)
    applied = re.findall(r'"msg": "applying (ks-m\d)"', proc.stdout)
    # The check below means something only when the group is not in inventory order (it is in finishing order; on a
    # machine loaded enough to start the forks seconds apart, m2 once finished after m1: any order but m1, m2, m3
    # still proves the point).
    assert sorted(grouped) == list(MASTERS) and grouped != list(MASTERS), grouped
    assert applied == list(MASTERS)
