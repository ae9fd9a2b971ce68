# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout engine is all-or-nothing. Every file and directory spec is checked before the first
byte is written, and a failed gate puts directories back (modes, and the directories it made) as well as files.
The engine on a temp dir (fake strategy and waiter, as test_engine.py), then the real module through
ansible-playbook on localhost, with the real health gate against a port nothing listens on."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import spec_problems
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import RolloutFailed

sys.path.insert(0, os.path.dirname(__file__))
from test_engine import converge, engine, instance, params, snapshot  # noqa: E402  pylint: disable=wrong-import-position

sys.path.insert(0, str(Path(__file__).resolve().parents[5] / "tests" / "controlplane"))
from cluster import free_port  # noqa: E402  pylint: disable=wrong-import-position,import-error


def tree(root):
    """Every file (content, mode) and every directory (mode) under root: what 'nothing changed' compares."""
    found = snapshot(root)
    for directory, dirs, _files in os.walk(str(root)):
        for name in dirs:
            path = os.path.join(directory, name)
            found[os.path.relpath(path, str(root)) + "/"] = stat.S_IMODE(os.stat(path).st_mode)
    return found


@pytest.mark.parametrize("field,value,words", [
    ("mode", "u=rw,g=r", "must be an octal mode"),
    ("mode", "0999", "must be an octal mode"),
    ("path", "relative/one.service", "must be an absolute, normalised path"),
    ("path", "/etc/x/../one.service", "must be an absolute, normalised path"),
    ("owner", "", "must be the name of a user or group"),
])
def test_a_bad_spec_in_the_last_file_refuses_the_call_before_the_first_file_is_written(tmp_path, field, value, words):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    before = tree(tmp_path)
    changed = params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n")])
    changed["instances"][0]["files"][1][field] = value
    problems = spec_problems(changed)
    assert len(problems) == 1 and "instances[0].files[1].%s" % field in problems[0] and words in problems[0]
    eng = engine(changed)
    with pytest.raises(RolloutFailed, match="nothing was changed: instances\\[0\\]\\.files\\[1\\]"):
        eng.apply({"link_changed": False, "directories": [],
                   "instances": {"one": {"action": "update", "files": [f["path"] for f in changed["instances"][0]["files"]]}}})
    assert tree(tmp_path) == before  # the first file is not rewritten, no backup is left
    assert eng.strategy.calls == []


def test_an_owner_missing_on_the_host_refuses_the_call_before_the_first_write(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    before = tree(tmp_path)
    changed = params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n")])
    changed["instances"][0]["files"][1]["content"] = "[Service]\nExecStart=/bin/two\n"
    changed["instances"][0]["files"][1]["owner"] = "no-such-user-k8s"
    eng = engine(changed)
    plan, _diff, _changed = eng.plan()
    with pytest.raises(RolloutFailed, match="nothing was changed: .*owner no-such-user-k8s:root does not exist"):
        eng.apply(plan)
    assert tree(tmp_path) == before


def test_one_path_twice_with_two_contents_is_refused():
    p = params("/r", [instance("/r", "one", 10259), instance("/r", "two", 10260, config="a: 2\n")])
    p["instances"][1]["files"][0]["path"] = "/r/etc/one.yaml"
    assert [problem for problem in spec_problems(p)
            if "(instance two): also instances[0].files[0] (instance one) with another content" in problem]


def test_a_failed_gate_puts_back_the_directory_mode_and_removes_the_directories_it_made(tmp_path):
    schedulers = tmp_path / "etc"
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    os.chmod(str(schedulers), 0o755)
    before = tree(tmp_path)
    directories = [{"path": str(schedulers), "owner": "root", "group": "root", "mode": "0700"},
                   {"path": str(tmp_path / "state" / "adopted"), "owner": "root", "group": "root", "mode": "0700"}]
    changed = params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n")], directories=directories)
    # The adopted manifest goes between the config and the unit or manifest (written last), as rollout_files orders it.
    adopted = {"path": str(tmp_path / "state" / "adopted" / "one.yaml"), "content": "kubeadm's\n", "owner": "root",
               "group": "root", "mode": "0600", "secret": False}
    changed["instances"][0]["files"].insert(1, adopted)
    eng = engine(changed, failing={10259})
    plan, _diff, _changed = eng.plan()
    assert sorted(plan["directories"]) == sorted(d["path"] for d in directories)
    with pytest.raises(RolloutFailed) as failure:
        eng.apply(plan)
    assert "directory %s back to 0755" % schedulers in str(failure.value)
    after = tree(tmp_path)
    # Backups stay for the operator (kubeadm's rule); everything else is as it was, state/adopted gone.
    assert {k: v for k, v in after.items() if not k.startswith("state/one/")} == \
        {k: v for k, v in before.items() if not k.startswith("state/one/")}
    assert "state/adopted/" not in after


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Apply
      ansible.legacy.scheduler_rollout:
        kind: static_pod
        mode: apply
        state_dir: "{{ work }}/state"
        health_timeout: 2
        settle: 0
        directories: "{{ directories }}"
        instances:
          - name: one
            port: "{{ port }}"
            health_url: "https://127.0.0.1:{{ port }}/livez"
            files:
              - {path: "{{ work }}/etc/one.yaml", content: "new\\n", mode: "0644"}
              - {path: "{{ work }}/manifests/one.yaml", content: "new\\n", mode: "{{ last_mode }}"}
      register: applied
      ignore_errors: true
    - name: Result
      ansible.builtin.copy:
        content: "{{ applied | to_json }}"
        dest: "{{ work }}/result.json"
        mode: "0600"
"""


def run_playbook(ansible_playbook, host_side_env, tmp_path, last_mode, directories):
    work = tmp_path / "work"
    (work / "etc").mkdir(parents=True)
    (work / "manifests").mkdir()
    (work / "etc" / "one.yaml").write_text("old\n")
    (work / "manifests" / "one.yaml").write_text("old\n")
    os.chmod(str(work / "etc"), 0o755)
    before = tree(work)
    (tmp_path / "pb.yml").write_text(PLAYBOOK)
    extra = {"work": str(work), "port": free_port(), "last_mode": last_mode,
             "directories": [dict(d, path=str(work / d["path"])) for d in directories]}
    run = ansible_playbook([tmp_path / "pb.yml", "-vvv", "-e", json.dumps(extra)], cwd=tmp_path, env=host_side_env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    result = json.loads((work / "result.json").read_text())
    os.unlink(str(work / "result.json"))
    return result, before, tree(work)


def test_through_ansible_playbook_a_symbolic_mode_changes_nothing(ansible_playbook, host_side_env, tmp_path):
    result, before, after = run_playbook(ansible_playbook, host_side_env, tmp_path, "u=rw,g=r", [])
    assert result["failed"] and result["rolled_back"] is False
    assert result["msg"].startswith("nothing was changed: instances[0].files[1].mode 'u=rw,g=r'")
    assert after == before


def test_through_ansible_playbook_a_failed_real_gate_restores_files_and_directories(ansible_playbook, host_side_env, tmp_path):
    directories = [{"path": "etc", "mode": "0700"}, {"path": "state/adopted", "mode": "0700"}]
    result, before, after = run_playbook(ansible_playbook, host_side_env, tmp_path, "0600", directories)
    assert result["failed"] and result["rolled_back"] is True
    assert "gave no healthy answer" in result["msg"] and "back to 0755" in result["msg"]
    assert {k: v for k, v in after.items() if not k.startswith("state/")} == before
    assert "state/adopted/" not in after
