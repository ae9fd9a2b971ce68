# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scheduler_rollout's host side (ansible.legacy.scheduler_rollout, real ansible-playbook on this machine): a
static-pod read call that speculates plans with the input the last apply kept (module_utils/rollout/last_render.py)
and answers exactly what a plan call given that input answers, with the checksum the controller compares; a kept
input that is missing, damaged or not one the module takes is no answer and no failure."""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout import last_render

PORT = 47291  # nothing listens there: the instance is not running, which the plan reports


def plan_input(work):
    """What the controller would keep for one static-pod instance whose config differs on the master (so the plan
    has a diff to show), the lease and the master's kube-scheduler not asked."""
    return {"kind": "static_pod", "directories": [], "health_check": True, "instances": [{
        "name": "kube-scheduler", "state": "present", "port": PORT,
        "health_url": "https://127.0.0.1:%d/livez" % PORT,
        "files": [{"path": str(work / "config" / "kube-scheduler.yaml"), "content": "profiles: []\n",
                   "owner": "root", "group": "root", "mode": "0600", "secret": False},
                  {"path": str(work / "manifests" / "kube-scheduler.yaml"), "content": "kind: Pod\n",
                   "owner": "root", "group": "root", "mode": "0600", "secret": False}]}]}


def per_call(state_dir):
    return {"mode": "plan", "state_dir": str(state_dir), "hold": True, "health_timeout": 5, "settle": 0,
            "lock": {"run": {"id": "test-run"}, "timeout": 3600}}


@pytest.fixture(scope="module")
def results(tmp_path_factory, ansible_playbook, json_task_results, host_side_env):
    if os.geteuid() != 0:
        pytest.skip("the kept input is root's file (written with owner root): run as root, as CI does")
    work = tmp_path_factory.mktemp("last-render")
    for name in ("config", "manifests", "kept", "damaged", "foreign", "none", "binary"):
        (work / name).mkdir()
    (work / "config" / "kube-scheduler.yaml").write_text("profiles: [old]\n")
    body = plan_input(work)
    last_render.save(str(work / "kept"), body)
    last_render.save(str(work / "damaged"), body)
    damaged = work / "damaged" / last_render.FILE_NAME
    damaged.write_bytes(damaged.read_bytes()[:-40])  # cut short
    last_render.save(str(work / "foreign"), dict(body, instances=[{"name": "x", "files": "not a list"}]))
    # A kept input whose changed config the master's kube-scheduler would check: a binary that leaves a mark.
    binary = work / "kube-scheduler"
    binary.write_text("#!/bin/sh\ntouch %s\necho 'Kubernetes v1.35.4'\n" % (work / "binary-ran"))
    binary.chmod(0o755)
    instance = dict(body["instances"][0], preflight={"config": "profiles: []\n", "binary": str(binary),
                                                     "version": "1.35.4"})
    last_render.save(str(work / "binary"), dict(body, instances=[instance]))
    read = {"kind": "static_pod", "mode": "read", "manifest_dir": str(work / "manifests"),
            "manifest_names": ["kube-scheduler"]}
    tasks = [{"name": "own_call", "ansible.legacy.scheduler_rollout": dict(body, **per_call(work / "kept"))}]
    for name in ("kept", "damaged", "foreign", "none", "binary"):
        tasks.append({"name": name, "ansible.legacy.scheduler_rollout": dict(read, speculate=per_call(work / name))})
    tasks.append({"name": "plain_read", "ansible.legacy.scheduler_rollout": read})
    (work / "playbook.yml").write_text(json.dumps([{"name": "host side", "hosts": "localhost", "gather_facts": False,
                                                    "tasks": tasks}]))
    (work / "inventory.ini").write_text(textwrap.dedent(f"""\
        localhost ansible_connection=local ansible_python_interpreter={sys.executable}
        """))
    proc = ansible_playbook(["-i", "inventory.ini", "playbook.yml"], cwd=work,
                            env=dict({"ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
                                      "ANSIBLE_LOCAL_TEMP": str(work / "tmp")}, **host_side_env))
    return json_task_results(proc), body, work


def _without_invocation(result):
    return dict((key, value) for key, value in result.items() if key not in ("invocation", "_ansible_no_log", "action"))


def test_the_read_call_answers_what_the_plan_call_given_the_kept_input_answers(results):
    tasks, body, _work = results
    own = _without_invocation(tasks["own_call"])
    assert not own.get("failed") and own["plan"]["instances"]["kube-scheduler"]["action"] == "update"
    speculated = tasks["kept"]["speculated"]
    assert speculated["input"] == last_render.digest(body)  # the controller's checksum of the same input
    assert speculated["answer"] == own
    # The read itself is the read call's, as without a kept input.
    plain = _without_invocation(tasks["plain_read"])
    assert _without_invocation(dict(tasks["kept"], speculated=None)) == dict(plain, speculated=None)


@pytest.mark.parametrize("name", ["damaged", "foreign", "none"])
def test_a_kept_input_that_is_missing_damaged_or_not_the_modules_is_no_answer_and_no_failure(results, name):
    tasks, _body, _work = results
    assert not tasks[name].get("failed") and "speculated" not in tasks[name]
    assert tasks[name]["manifest_dir"]["path"].endswith("/manifests")


def test_a_kept_input_on_which_the_master_would_run_its_kube_scheduler_is_left_to_the_plans_own_call(results):
    # The binary runs only for an input the controller rendered itself, never for one read back from the master.
    tasks, _body, work = results
    assert not tasks["binary"].get("failed") and "speculated" not in tasks["binary"]
    assert not (work / "binary-ran").exists()
