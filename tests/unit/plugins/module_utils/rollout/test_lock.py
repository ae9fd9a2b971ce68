# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One rollout at a time on a master: two runs' engines on one state directory (the real engine, its real files, a
fake strategy and gate as in test_engine.py), as two AWX jobs of one master would call them."""

from __future__ import annotations

import json
import multiprocessing
import os
import time

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.held_change import FILE_NAME as HELD
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import APPLY, COMMIT, PLAN, RESTORE, Engine
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import PreflightFailed, RolledBack
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.lock import FILE_NAME as LOCK, MasterLock, LockHeld

from test_engine import FakeStrategy, FakeWaiter, converge, instance, params, snapshot

FIRST = {"id": "1f1f1f1f1f1f1f1f", "started": "2026-12-07T09:00:00Z", "controller": "awx-job-101",
         "playbook": "/runner/project/playbooks/static_pod.yml", "job": "AWX job 101 (schedulers weight 3)"}
SECOND = {"id": "2e2e2e2e2e2e2e2e", "started": "2026-12-07T09:00:01Z", "controller": "awx-job-102",
          "playbook": "/runner/project/playbooks/static_pod.yml", "job": "AWX job 102 (schedulers weight 5)"}


class Clock(object):
    def __init__(self):
        self.now = time.time()

    def __call__(self):
        return self.now


def call(root, run, mode, waiter, config="a: 1\n", timeout=600, **extra):
    """One engine call of ``run`` on the master in ``root`` (what the action plugin sends: the run and its timeout)."""
    p = params(root, [instance(root, "one", 10259, config=config)], lock={"run": run, "timeout": timeout}, **extra)
    return Engine(p, FakeStrategy(), waiter).run(mode)


def lock_record(root):
    return json.loads((root / "state" / LOCK).read_text())


def test_a_second_run_is_refused_while_the_first_holds_its_change_and_never_adopts_it(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    waiter = FakeWaiter()
    call(tmp_path, FIRST, APPLY, waiter, config="a: 2\n")  # held for its last gate (the mirror pods, the metrics)
    in_flight = snapshot(tmp_path)

    for mode in (PLAN, APPLY, COMMIT, RESTORE):
        with pytest.raises(LockHeld) as refused:
            call(tmp_path, SECOND, mode, waiter, config="a: 3\n")
        message = str(refused.value)
        # Which run holds it: its id, start, controller, playbook and job, and when it last renewed the lock.
        for shown in ("another rollout holds this master", "run 1f1f1f1f1f1f1f1f", "started 2026-12-07T09:00:00Z",
                      "on controller awx-job-101", "playbook /runner/project/playbooks/static_pod.yml",
                      "AWX job 101", "which last renewed it at", "nothing was changed",
                      "kube_scheduler_rollout_lock_timeout (600 s)", str(tmp_path / "state" / LOCK)):
            assert shown in message
        # Not "a change an earlier run began was never gated": the first run's change is not taken for abandoned.
        assert "never gated" not in message and "never committed" not in message
        assert snapshot(tmp_path) == in_flight

    # The first run ends: its commit releases the lock, and the second run's plan goes ahead.
    assert call(tmp_path, FIRST, COMMIT, waiter)["committed"] == ["one"]
    assert not (tmp_path / "state" / LOCK).exists()
    planned = call(tmp_path, SECOND, PLAN, waiter, config="a: 3\n")
    assert planned["changed"] and "warnings" not in planned


def test_a_check_job_names_the_holder_and_writes_nothing(tmp_path):
    """A Check job's plan (the module turns an apply into a plan in check mode) fails as the real job would."""
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    waiter = FakeWaiter()
    call(tmp_path, FIRST, APPLY, waiter, config="a: 2\n")
    before = snapshot(tmp_path)
    with pytest.raises(PreflightFailed, match="another rollout holds this master: run 1f1f1f1f1f1f1f1f"):
        call(tmp_path, SECOND, PLAN, waiter, config="a: 3\n")
    assert snapshot(tmp_path) == before  # the lock record too: a plan never takes or renews it


def test_the_same_run_re_enters_renews_and_releases_at_its_commit(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    waiter, clock = FakeWaiter(), Clock()
    lock = MasterLock(str(tmp_path / "state"), FIRST, 600, clock)
    assert lock.take() == [] and lock_record(tmp_path)["run"] == FIRST
    clock.now += 500
    assert lock.take() == [] and lock_record(tmp_path)["renewed"] == clock.now  # renewed, not refused

    applied = call(tmp_path, FIRST, APPLY, waiter, config="a: 2\n")
    assert applied["applied"]["one"]["restarted"] and "warnings" not in applied
    assert lock_record(tmp_path)["run"] == FIRST and (tmp_path / "state" / HELD).exists()
    assert call(tmp_path, FIRST, PLAN, waiter, config="a: 2\n")["changed"]  # its own held change: pending
    call(tmp_path, FIRST, COMMIT, waiter)
    assert not (tmp_path / "state" / LOCK).exists()


def test_a_stale_lock_is_taken_over_with_a_warning_naming_its_run(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    waiter, clock = FakeWaiter(), Clock()
    MasterLock(str(tmp_path / "state"), FIRST, 600, clock).take()  # the first run died after taking it
    clock.now += 599
    with pytest.raises(LockHeld, match=r"\(599 s ago\)"):
        MasterLock(str(tmp_path / "state"), SECOND, 600, clock).take()
    clock.now += 2
    # A plan (a Check job's) only says so, and writes nothing.
    said = MasterLock(str(tmp_path / "state"), SECOND, 600, clock).check()
    assert "run 2e2e2e2e2e2e2e2e" in said[0] and said[0].endswith("will take it over at its apply")
    assert lock_record(tmp_path)["run"] == FIRST
    warnings = MasterLock(str(tmp_path / "state"), SECOND, 600, clock).take()
    assert len(warnings) == 1
    for shown in ("run 1f1f1f1f1f1f1f1f", "(601 s ago)", "was not renewed for more than "
                  "kube_scheduler_rollout_lock_timeout (600 s)", "taken for one that died",
                  "run 2e2e2e2e2e2e2e2e", "takes it over"):
        assert shown in warnings[0]
    assert lock_record(tmp_path)["run"] == SECOND
    with pytest.raises(LockHeld, match="run 2e2e2e2e2e2e2e2e"):
        MasterLock(str(tmp_path / "state"), FIRST, 600, clock).take()  # the first run, back late: refused


def test_a_holder_the_controller_found_dead_is_taken_over_at_once(tmp_path):
    clock = Clock()
    MasterLock(str(tmp_path / "state"), dict(FIRST, pid=4242), 600, clock).take()
    with pytest.raises(LockHeld) as refused:
        MasterLock(str(tmp_path / "state"), SECOND, 600, clock).take()
    assert refused.value.holder["id"] == FIRST["id"] and refused.value.holder["pid"] == 4242
    warnings = MasterLock(str(tmp_path / "state"), SECOND, 600, clock, take_over=FIRST["id"]).take()
    assert "ansible-playbook process on this controller is gone (pid 4242): run 2e2e2e2e2e2e2e2e" in warnings[0]
    assert lock_record(tmp_path)["run"] == SECOND
    # Only the holder named: another run's fresh lock is still refused.
    with pytest.raises(LockHeld):
        MasterLock(str(tmp_path / "state"), FIRST, 600, clock, take_over="someone-else").take()


def test_an_engine_takes_over_a_dead_runs_lock_and_its_change_with_a_warning(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    waiter = FakeWaiter()
    call(tmp_path, FIRST, APPLY, waiter, config="a: 2\n")  # the run is killed before its last gate
    record = lock_record(tmp_path)
    record["renewed"] -= 601
    (tmp_path / "state" / LOCK).write_text(json.dumps(record))

    applied = call(tmp_path, SECOND, APPLY, waiter, config="a: 3\n")

    assert any("run 1f1f1f1f1f1f1f1f" in w and "takes it over" in w for w in applied["warnings"])
    assert applied["applied"]["one"]["restarted"]
    assert lock_record(tmp_path)["run"] == SECOND


def test_an_apply_that_failed_and_was_restored_releases_the_lock(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    with pytest.raises(RolledBack):
        call(tmp_path, FIRST, APPLY, FakeWaiter(failing=[10259]), config="a: 2\n")
    assert not (tmp_path / "state" / LOCK).exists() and not (tmp_path / "state" / HELD).exists()
    applied = call(tmp_path, SECOND, APPLY, FakeWaiter(), config="a: 2\n", hold=False)
    assert applied["committed"] == ["one"] and "warnings" not in applied
    assert not (tmp_path / "state" / LOCK).exists()  # committed in the call: nothing held, nothing locked


def test_an_unreadable_lock_is_refused_while_fresh_and_taken_over_once_stale(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / LOCK).write_text('{"run": {"id": "3d3d')
    clock = Clock()
    with pytest.raises(LockHeld, match="cannot be read"):
        MasterLock(str(state), SECOND, 600, clock).take()
    clock.now += 601
    assert "cannot be read" in MasterLock(str(state), SECOND, 600, clock).take()[0]
    assert lock_record(tmp_path)["run"] == SECOND


def _take(state_dir, run_id, start, results):
    start.wait()
    try:
        MasterLock(state_dir, {"id": run_id}, 600).take()
        results.put(run_id)
    except LockHeld:
        results.put(None)


def test_two_engines_taking_the_lock_at_once_never_both_win(tmp_path):
    """Eight engine processes of eight runs released at one moment: the guard's flock lets exactly one take it."""
    context = multiprocessing.get_context("fork")
    for attempt in range(5):
        state_dir = str(tmp_path / ("state%d" % attempt))
        start, results = context.Event(), context.Queue()
        processes = [context.Process(target=_take, args=(state_dir, "run-%d" % n, start, results)) for n in range(8)]
        for process in processes:
            process.start()
        start.set()
        won = [results.get(timeout=30) for _process in processes]
        for process in processes:
            process.join()
        winners = [run for run in won if run is not None]
        assert len(winners) == 1
        with open(os.path.join(state_dir, LOCK)) as handle:
            assert json.load(handle)["run"]["id"] == winners[0]
        assert os.stat(os.path.join(state_dir, LOCK)).st_mode & 0o777 == 0o600
