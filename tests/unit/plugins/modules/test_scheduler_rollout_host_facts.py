# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scheduler_rollout's host side on its own (ansible.legacy.scheduler_rollout: conftest.py's host_side_env) through
real ansible-playbook on this machine: the systemd kind reports the host facts the systemd role needs (so planning a
master is one call, with no fact gathering) and refuses a host that systemd did not boot before it runs any
systemctl; the static_pod kind reads files and reports no host facts."""

from __future__ import annotations

import os
import platform
import sys
import textwrap

import pytest

PLAYBOOK = """\
- name: The rollout module on this host
  hosts: localhost
  gather_facts: false
  tasks:
    - name: systemd_plan
      ansible.legacy.scheduler_rollout:
        kind: systemd
        accounts: {user: root, group: root}
      ignore_errors: true
    - name: static_pod_read
      ansible.legacy.scheduler_rollout:
        kind: static_pod
        read: ["{{ work }}/manifest.yaml"]
"""


def run_on_localhost(work, playbook, ansible_playbook, **env):
    """``playbook`` run on this host (a manifest.yaml in ``work`` to read), reported by the JSON callback."""
    (work / "playbook.yml").write_text(playbook)
    (work / "manifest.yaml").write_text("kind: Pod\n")
    (work / "inventory.ini").write_text(textwrap.dedent(f"""\
        localhost ansible_connection=local ansible_python_interpreter={sys.executable}
        """))
    return ansible_playbook(["-i", "inventory.ini", "-e", "work=%s" % work, "playbook.yml"], cwd=work,
                            env=dict({"ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
                                      "ANSIBLE_LOCAL_TEMP": str(work / "tmp")}, **env))


@pytest.fixture(scope="module")
def results(tmp_path_factory, ansible_playbook, json_task_results, host_side_env):
    return json_task_results(run_on_localhost(tmp_path_factory.mktemp("rollout-host"), PLAYBOOK, ansible_playbook,
                                              **host_side_env))


def test_the_systemd_kind_reports_the_machine_and_whether_systemd_booted_the_host(results):
    answer = results["systemd_plan"]
    booted = os.path.isdir("/run/systemd/system")
    assert answer["host"] == {"machine": platform.machine(), "systemd": booted}
    if booted:
        assert not answer.get("failed") and answer["accounts"] == {"user_exists": True, "group_exists": True}
    else:
        assert answer["failed"] and not answer["changed"]
        assert "not booted with systemd" in answer["msg"] and "static_pod role" in answer["msg"]


def test_the_static_pod_kind_reads_files_and_needs_no_host_facts(results):
    answer = results["static_pod_read"]
    assert not answer.get("failed") and "host" not in answer
    read = answer["read"][next(iter(answer["read"]))]
    assert read["exists"] and read["content"] == "kind: Pod\n"
