# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A clean run prints no warning (a no-op run and a Check job used to end with "[WARNING]: Could
not match supplied host pattern, ignoring: kube_scheduler_<kind>_pending"), and an inventory whose masters group is
missing or empty fails at once, naming the group, instead of running nothing and exiting 0.

Real ansible-playbook with the real playbooks' plays (the masters check, the plan play's group_by, the apply play's
hosts); only the role includes, which need real masters (the Molecule scenarios run those), become a fact that says
whether the master is pending, and a line that says it was applied."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from conftest import rollout_plays

REPO = Path(__file__).resolve().parents[3]
MASTERS = ("ks-m1", "ks-m2", "ks-m3")


def _includes_the_role(task):
    """The plan's include of the role, alone or in the block that keeps why a master could not be planned."""
    return "ansible.builtin.include_role" in task or any(_includes_the_role(inner) for inner in task.get("block", []))


def playbook(kind, tmp_path):
    out = []
    for play in rollout_plays(kind):
        if "ansible.builtin.import_playbook" in play:
            out.append(play)
        elif any("ansible.builtin.group_by" in task for task in play["tasks"]):
            out.append(dict(play, become=False, tasks=[
                {"name": "Plan", "ansible.builtin.set_fact": {"kube_scheduler_plan": {"pending": "{{ inventory_hostname in pending }}"}}}]
                + [task for task in play["tasks"] if not _includes_the_role(task)]))
        elif all("kubesched.schedulers.rollout_lease" in task for task in play["tasks"]):
            out.append(play)  # the release of the clusters' rollout Leases, as it is (no kubeconfig: skipped)
        else:
            out.append(dict(play, become=False, tasks=[
                {"name": "Apply", "ansible.builtin.debug": {"msg": "applying {{ inventory_hostname }}"}}]))
    (tmp_path / "playbook.yml").write_text(yaml.safe_dump(out, sort_keys=False))


def run(ansible_playbook, tmp_path, group="kube_control_plane", extra=()):
    (tmp_path / "inventory.ini").write_text("[%s]\n" % group + "".join(
        "%s ansible_connection=local ansible_python_interpreter=%s\n" % (name, sys.executable) for name in MASTERS))
    return ansible_playbook(["-i", "inventory.ini", "playbook.yml"] + list(extra), cwd=tmp_path,
                            env={"ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp")})


@pytest.mark.parametrize("kind", ["systemd", "static_pod"])
@pytest.mark.parametrize("mode", [[], ["--check", "--diff"]])
def test_a_run_with_nothing_to_apply_prints_no_warning(kind, mode, tmp_path, ansible_playbook):
    playbook(kind, tmp_path)
    proc = run(ansible_playbook, tmp_path, extra=["-e", '{"pending": []}'] + mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stdout + proc.stderr
    assert "applying" not in proc.stdout


@pytest.mark.parametrize("kind", ["systemd", "static_pod"])
def test_pending_masters_are_applied_in_inventory_order_without_a_warning(kind, tmp_path, ansible_playbook):
    playbook(kind, tmp_path)
    proc = run(ansible_playbook, tmp_path, extra=["-e", '{"pending": ["ks-m3", "ks-m1"]}'])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stdout + proc.stderr
    assert re.findall(r'"msg": "applying (ks-m\d)"', proc.stdout) == ["ks-m1", "ks-m3"]


@pytest.mark.parametrize("kind", ["systemd", "static_pod", "verify", "upgrade_check"])
def test_a_masters_group_of_another_name_fails_at_once_naming_it(kind, tmp_path, ansible_playbook):
    if kind in ("systemd", "static_pod"):
        playbook(kind, tmp_path)
    else:
        (tmp_path / "playbook.yml").write_text((REPO / "playbooks" / ("%s.yml" % kind)).read_text().replace(
            "import_playbook: require_masters.yml", "import_playbook: %s/playbooks/require_masters.yml" % REPO))
    proc = run(ansible_playbook, tmp_path, group="masters", extra=["-e", '{"pending": ["ks-m1"]}'])
    assert proc.returncode != 0
    assert ("The inventory has no host in kube_control_plane, the masters group (the default, kubespray's name): "
            "nothing would run.") in proc.stdout
    assert "Groups with hosts in this inventory: masters." in proc.stdout
    assert "ks-m1" not in proc.stdout  # no master was planned or touched
    named = run(ansible_playbook, tmp_path, group="masters",
                extra=["-e", '{"pending": ["ks-m1"]}', "-e", "kube_scheduler_control_plane_group=masters", "--syntax-check"])
    assert named.returncode == 0, named.stdout + named.stderr


def test_naming_the_group_runs_the_playbook(tmp_path, ansible_playbook):
    playbook("systemd", tmp_path)
    proc = run(ansible_playbook, tmp_path, group="masters",
               extra=["-e", '{"pending": ["ks-m2"]}', "-e", "kube_scheduler_control_plane_group=masters"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.findall(r'"msg": "applying (ks-m\d)"', proc.stdout) == ["ks-m2"]
    assert "WARNING" not in proc.stdout + proc.stderr


def test_the_masters_group_default_is_written_once_and_the_users_group_variable_wins(tmp_path, ansible_playbook):
    """kube_control_plane is named once (roles/_control_plane, a role default the plays list); a value of the user's,
    in the inventory's group variables and -e (the only one a play's hosts: line sees), still wins over it."""
    # Code only: comments, and the argument specs' examples (hosts: kube_control_plane), may name the group.
    named = sorted(str(path.relative_to(REPO)) for top in ("roles", "playbooks") for path in (REPO / top).rglob("*.yml")
                   if path.name != "argument_specs.yml" and any(
                       "kube_control_plane" in line for line in path.read_text().splitlines()
                       if not line.strip().startswith("#")))
    assert named == ["roles/_control_plane/defaults/main.yml"]
    playbook("systemd", tmp_path)
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "group_vars" / "masters.yml").write_text("kube_scheduler_control_plane_group: masters\n")
    proc = run(ansible_playbook, tmp_path, group="masters",
               extra=["-e", '{"pending": ["ks-m2"]}', "-e", "kube_scheduler_control_plane_group=masters"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.findall(r'"msg": "applying (ks-m\d)"', proc.stdout) == ["ks-m2"]
