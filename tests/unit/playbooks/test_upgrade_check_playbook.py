# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/upgrade_check.yml as an operator runs it before an upgrade: real ansible-playbook, local masters."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import REPO


def inventory(tmp_path, instances):
    path = tmp_path / "inventory.yml"
    masters = {"m1": {"ansible_connection": "local"}, "m2": {"ansible_connection": "local"}}
    path.write_text(yaml.safe_dump({"all": {
        "children": {"kube_control_plane": {"hosts": masters}},
        "vars": {"kube_scheduler_version": "1.30.12", "kube_scheduler_instances": instances,
                 "ansible_python_interpreter": "auto_silent"}}}))
    return path


def run(ansible_playbook, tmp_path, instances, targets):
    return ansible_playbook([
        "-i", inventory(tmp_path, instances), REPO / "playbooks" / "upgrade_check.yml",
        "-e", json.dumps({"kube_scheduler_upgrade_to": targets})], env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default"})


def test_a_config_that_stops_on_the_target_fails_the_check_naming_instance_minor_and_field(ansible_playbook, tmp_path):
    instances = [
        {"name": "kube-scheduler", "default_scheduler": True},
        {"name": "legacy", "config": {"leaderElection": {"resourceName": "legacy"}, "profiles": [
            {"schedulerName": "legacy", "plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}]}},
        {"name": "gone", "state": "absent"},
    ]
    proc = run(ansible_playbook, tmp_path, instances, ["1.31", "1.35"])
    out = proc.stdout
    assert proc.returncode == 2, out
    assert "legacy would not start on 1.31, 1.35" in out
    assert "profiles[0].plugins.filter.enabled" in out
    # The default scheduler starts on both; the report says which default plugins leave in 1.31.
    assert "plugin EBSLimits disappears in default-scheduler.filter" in out
    assert "ok: [m1] => (item=gone)" not in out and "gone: now" not in out  # being removed: not checked
    # m2 has the same instances: checked once, on m1.
    assert "ok: [m2] => (item=kube-scheduler)" not in out


def test_configs_that_start_everywhere_pass(ansible_playbook, tmp_path):
    proc = run(ansible_playbook, tmp_path, [{"name": "kube-scheduler", "default_scheduler": True}], "1.35")
    assert proc.returncode == 0, proc.stdout
    assert "-> 1.35: starts" in proc.stdout


@pytest.mark.parametrize("playbook, name", [("upgrade_check.yml", "kube_scheduler_upgrade_convert"),
                                            ("upgrade_scan.yml", "kube_scheduler_upgrade_convert"),
                                            ("upgrade_scan.yml", "kube_scheduler_upgrade_scan_fail")])
def test_a_padded_boolean_of_the_playbook_is_refused_naming_it_before_anything_is_read(
        ansible_playbook, tmp_path, playbook, name):
    # | bool read "yes " as false: no conversion asked for, or a scan that only reports when asked to fail.
    proc = ansible_playbook([
        "-i", inventory(tmp_path, [{"name": "kube-scheduler", "default_scheduler": True}]), REPO / "playbooks" / playbook,
        "-e", json.dumps({"kube_scheduler_upgrade_to": "1.35", name: "yes "})],
        env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default"})
    assert proc.returncode == 2, proc.stdout
    assert "%s: Invalid value: 'yes ': must be true or false" % name in proc.stdout, proc.stdout
    assert "Require the target minors" not in proc.stdout, proc.stdout
