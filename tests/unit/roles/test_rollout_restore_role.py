# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The static_pod role's restore and commit entry points through real ansible-core, as the rollout playbooks use
them: a gate after the engine's fails in a block, the rescue puts the master back from the change the apply step
held (written here by the engine itself) and fails naming the gate, its reason and what was put back."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.held_change import FILE_NAME
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import APPLY, Engine
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.lock import FILE_NAME as LOCK
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.strategies import StaticPodStrategy
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.run_identity import run_identity

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "controlplane"))
from cluster import free_port  # noqa: E402  pylint: disable=wrong-import-position,import-error

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  vars:
    kube_scheduler_version: "1.35.4"
    kube_scheduler_state_dir: "{{ work }}/state"
    kube_scheduler_health_timeout: 1
    kube_scheduler_health_settle: 0
  tasks:
    - name: A change and its gates
      block:
        - name: The metrics gate
          ansible.builtin.fail:
            msg: "Verification failed. No token may get /metrics for the metrics gate"
          when: gate_fails | bool

        - name: Commit
          ansible.builtin.include_role:
            name: kubesched.schedulers.static_pod
            tasks_from: commit
      rescue:
        - name: Put back
          ansible.builtin.include_role:
            name: kubesched.schedulers.static_pod
            tasks_from: restore
"""


class _Waiter(object):
    """The apply step's gate passes at once: this test is about what comes after it."""

    @staticmethod
    def listener(port):
        return None

    @staticmethod
    def port_holder(port):
        return None

    @staticmethod
    def wait_new_healthy(port, url, previous_pid, timeout, settle):
        return 4242, None, settle


def held_change(work, port, run=None):
    """The old files on the host, then the engine's apply of new ones: held in <state_dir>/static-pod."""
    for name in ("etc", "manifests"):
        (work / name).mkdir(parents=True)
    (work / "etc" / "one.yaml").write_text("old config\n")
    (work / "manifests" / "one.yaml").write_text("old manifest\n")
    files = [{"path": str(work / "etc" / "one.yaml"), "content": "new config\n", "owner": "root", "group": "root",
              "mode": "0600", "secret": False},
             {"path": str(work / "manifests" / "one.yaml"), "content": "new manifest\n", "owner": "root",
              "group": "root", "mode": "0600", "secret": False}]
    params = {"kind": "static_pod", "state_dir": str(work / "state" / "static-pod"), "directories": [], "link": None,
              "binary": None, "accounts": None, "read": [], "health_timeout": 1, "settle": 0,
              "instances": [{"name": "one", "state": "present", "unit": None, "port": port, "named_files": [],
                             "health_url": "https://127.0.0.1:%d/livez" % port, "files": files}]}
    if run is not None:
        params["lock"] = {"run": run, "timeout": 60}
    Engine(params, StaticPodStrategy(run=None), _Waiter()).run(APPLY)
    assert (work / "manifests" / "one.yaml").read_text() == "new manifest\n"


def gated(ansible_playbook, tmp_path, gate_fails, env=None, run=None, extra=None):
    """A change the engine applied and holds (for ``run``: another run's, locked), then the playbook's gate (failing
    or not), commit and rescue."""
    if os.geteuid() != 0:
        pytest.skip("the engine writes files owned by root")
    work = tmp_path / "work"
    if not work.exists():
        held_change(work, free_port(), run)
    (tmp_path / "pb.yml").write_text(PLAYBOOK)
    run = ansible_playbook([tmp_path / "pb.yml", "-e", json.dumps(dict({"work": str(work), "gate_fails": gate_fails},
                                                                       **(extra or {})))],
                           cwd=tmp_path, env=env)
    return work, run


def test_a_gate_that_fails_after_the_apply_puts_the_master_back_and_names_the_gate(ansible_playbook, tmp_path):
    work, run = gated(ansible_playbook, tmp_path, True, env={"ANSIBLE_CALLBACK_RESULT_FORMAT": "json"})
    output = run.stdout + run.stderr
    assert run.returncode == 2, output
    assert (work / "etc" / "one.yaml").read_text() == "old config\n"
    assert (work / "manifests" / "one.yaml").read_text() == "old manifest\n"
    assert not (work / "state" / "static-pod" / FILE_NAME).exists()
    # One line names the host, the failed gate, its reason and what was put back (the restored pod is not
    # answering here: nothing listens on its port, which the message says too).
    assert ("localhost: The metrics gate failed: Verification failed. No token may get /metrics for the metrics gate"
            " -- put back as it was before this change: Restored: the files of one from") in output
    assert "After restore one is STILL NOT HEALTHY" in output
    assert "The rollout stops at this master" in output and "Traceback" not in output


def test_a_gate_that_passes_commits_and_a_rerun_has_nothing_held(ansible_playbook, tmp_path):
    work, run = gated(ansible_playbook, tmp_path, False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "changed=0" in run.stdout  # releasing the backups changes nothing that runs
    assert (work / "manifests" / "one.yaml").read_text() == "new manifest\n"
    assert os.listdir(str(work / "state" / "static-pod")) == []


OTHER_RUN = {"id": "0a0a0a0a0a0a0a0a", "started": "2026-12-07T09:00:00Z", "controller": "awx-job-101",
             "playbook": "/runner/project/playbooks/static_pod.yml"}


def test_another_runs_held_change_is_neither_committed_nor_restored_until_its_lock_is_stale(ansible_playbook, tmp_path):
    """Two jobs of one master: the first holds its change for its last gate; this playbook, a second run, is
    refused at its commit and at its restore, naming the first; once the first run's lock is stale (the run died),
    the second takes it over, names itself (this controller, this playbook) and commits."""
    work, run = gated(ansible_playbook, tmp_path, False, run=OTHER_RUN)
    output = run.stdout + run.stderr
    assert run.returncode == 2, output
    assert ("another rollout holds this master: run 0a0a0a0a0a0a0a0a, started 2026-12-07T09:00:00Z, on controller "
            "awx-job-101, playbook /runner/project/playbooks/static_pod.yml, which last renewed it at") in output
    assert (work / "manifests" / "one.yaml").read_text() == "new manifest\n"  # neither committed nor put back
    assert (work / "state" / "static-pod" / FILE_NAME).exists()

    lock = work / "state" / "static-pod" / LOCK
    record = json.loads(lock.read_text())
    record["renewed"] -= 61
    lock.write_text(json.dumps(record))
    run = gated(ansible_playbook, tmp_path, False, extra={"kube_scheduler_rollout_lock_timeout": 60})[1]
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "run 0a0a0a0a0a0a0a0a" in output and "was not renewed for more than kube_scheduler_rollout_lock_timeout" in output
    assert ("on controller %s, playbook %s takes it over" % (socket.gethostname(), tmp_path / "pb.yml")) in output
    assert os.listdir(str(work / "state" / "static-pod")) == []


def test_a_killed_run_of_this_controller_is_taken_over_at_once(ansible_playbook, tmp_path):
    """A run killed on this controller (its ansible-playbook process gone), rerun from the same machine: its lock is
    known dead and taken over at once, with a warning, not after kube_scheduler_rollout_lock_timeout."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead = run_identity(playbooks=["/somewhere/static_pod.yml"], pid=process.pid)
    finally:
        process.kill()
        process.wait()
    work, run = gated(ansible_playbook, tmp_path, False, run=dead)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert ("belongs to a run whose ansible-playbook process on this controller is gone (pid %d)" % process.pid) in output
    assert os.listdir(str(work / "state" / "static-pod")) == []


@pytest.mark.parametrize("gate_fails, options", [(True, []), (False, []), (False, ["--check", "--diff"])],
                         ids=["restore", "commit", "check-job"])
def test_a_damaged_record_stops_the_commit_and_the_restore_naming_it_and_what_to_do(ansible_playbook, tmp_path,
                                                                                    gate_fails, options):
    if os.geteuid() != 0:
        pytest.skip("the engine writes files owned by root")
    work = tmp_path / "work"
    held_change(work, free_port())
    record = work / "state" / "static-pod" / FILE_NAME
    record.write_bytes(record.read_bytes()[:61])  # cut short: a disk error, a copy that stopped half-way
    (tmp_path / "pb.yml").write_text(PLAYBOOK)
    run = ansible_playbook([tmp_path / "pb.yml", "-e", json.dumps({"work": str(work), "gate_fails": gate_fails})]
                           + options, cwd=tmp_path)
    output = run.stdout + run.stderr
    assert run.returncode == 2, output
    assert "%s cannot be trusted: it is not JSON (" % record in output
    assert "then remove %s" % record in output
    assert "Traceback" not in output
    # Nothing was put back or released on a record that cannot be trusted.
    assert (work / "manifests" / "one.yaml").read_text() == "new manifest\n"
    assert (work / "state" / "static-pod" / "one" / "backup" / "index.json").exists()
