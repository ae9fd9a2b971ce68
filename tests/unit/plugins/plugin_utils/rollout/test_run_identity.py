# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One identity per ansible-playbook run: the same for every task (every worker of that process), another for any
other run, even one with the same pid later (the start time is part of it)."""

from __future__ import annotations

import multiprocessing
import os
import socket
import subprocess
import sys

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.run_identity import gone, run_identity


def _identity_in_a_worker(queue):
    queue.put(run_identity(playbooks=["/p/static_pod.yml"]))


def test_every_worker_of_one_run_has_its_identity_and_another_run_another():
    context = multiprocessing.get_context("fork")  # ansible-core forks its workers from the ansible-playbook process
    queue = context.Queue()
    workers = [context.Process(target=_identity_in_a_worker, args=(queue,)) for _n in range(2)]
    for worker in workers:
        worker.start()
    first, second = queue.get(timeout=30), queue.get(timeout=30)
    for worker in workers:
        worker.join()
    mine = run_identity(playbooks=["/p/static_pod.yml"], pid=os.getpid())
    assert first == second == mine
    assert mine["controller"] == socket.gethostname() and mine["playbook"] == "/p/static_pod.yml"
    assert mine["started"].endswith("Z") and len(mine["id"]) == 16

    # Another ansible-playbook process: another run.
    other = subprocess.run([sys.executable, "-c", "import os, sys, json; sys.path[:0] = %r; from ansible_collections."
                            "kubesched.schedulers.plugins.plugin_utils.rollout.run_identity import run_identity; "
                            "print(run_identity(pid=os.getpid())['id'])" % (sys.path,)],
                           check=True, capture_output=True, text=True).stdout.strip()
    assert other and other != mine["id"]


def test_an_awx_job_is_named():
    identity = run_identity({"awx_job_id": 101, "awx_job_template_name": "schedulers weight 3"}, ["/runner/pb.yml"])
    assert identity["job"] == "AWX job 101 (schedulers weight 3)"
    assert "job" not in run_identity({}, ["/runner/pb.yml"])


def test_a_run_of_this_controller_whose_process_is_gone_is_known_dead():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        identity = run_identity(pid=process.pid)
        assert not gone(identity)  # alive
    finally:
        process.kill()
        process.wait()
    assert gone(identity)
    assert not gone(dict(identity, controller="awx-job-102"))  # another controller's: cannot be asked
    assert not gone(run_identity(pid=os.getpid()))
    assert not gone(None) and not gone({"id": "x"})
