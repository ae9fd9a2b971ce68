# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health gate (_health.wait_for_new_healthy) is a gate: a new process passes it only once it has answered at
every look for the whole settle, without a break and as the same process, and a first answer within the timeout
still gets its whole settle. First on a fake clock (what the port and the health URL show, second by second), then
on a real kube-scheduler 1.35 (KUBE_SCHEDULER_BIN_1_35: it serves /livez without an API server) that answers and
is then killed before its settle ends."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils import _health

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests" / "controlplane"))
from cluster import free_port  # noqa: E402  pylint: disable=wrong-import-position,import-error

PORT = 10259
URL = "https://127.0.0.1:%d/livez" % PORT
SCHEDULER_VARIABLE = "KUBE_SCHEDULER_BIN_1_35"


class Timeline(object):
    """A fake clock and what the port shows on it: ``spans`` of (from, to, pid, healthy); outside them nothing
    listens. Each sleep moves the clock on."""

    def __init__(self, spans):
        self.now = 1000.0
        self.start = self.now
        self.spans = spans

    def at(self):
        elapsed = self.now - self.start
        for begin, end, pid, healthy in self.spans:
            if begin <= elapsed < end:
                return pid, healthy
        return None, False

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds

    def elapsed(self):
        return self.now - self.start


@pytest.fixture
def timeline(monkeypatch):
    def make(spans):
        line = Timeline(spans)
        monkeypatch.setattr(_health, "listener_pid", lambda port: line.at()[0])
        monkeypatch.setattr(_health, "health_error", lambda url, timeout=5: None if line.at()[1] else "%s: 503" % url)
        return line
    return make


def gate(line, timeout, settle, previous_pid=None):
    return _health.wait_for_new_healthy(PORT, URL, previous_pid, timeout, settle, clock=line.clock, sleep=line.sleep)


def test_a_process_that_answers_past_the_timeout_but_dies_within_its_settle_fails_the_gate(timeline):
    """health_timeout 6, settle 30, a process answering from 1 s until it dies at 11.9 s: the gate once passed it at
    the timeout (its settle cut to what was left of the timeout)."""
    line = timeline([(1, 11.9, 4242, True)])
    pid, error, healthy_for = gate(line, timeout=6, settle=30)
    assert error == ("process 4242 answered for 11s of its 30s settle, then no process listens on port %d" % PORT)
    assert pid is None and healthy_for == pytest.approx(11, abs=0.01)
    assert line.elapsed() == pytest.approx(12, abs=0.01)  # it fails at the break, not at timeout + settle


def test_a_first_answer_within_the_timeout_gets_its_whole_settle(timeline):
    line = timeline([(5.5, 1e9, 4242, True)])
    pid, error, healthy_for = gate(line, timeout=6, settle=30)
    assert (pid, error) == (4242, None)
    assert healthy_for >= 30 and line.elapsed() == pytest.approx(35.5, abs=0.01)


def test_a_new_process_starts_the_count_again(timeline):
    """A crash loop: each process answers a little, then another takes the port; the last one holds."""
    line = timeline([(1, 3, 4242, True), (3, 1e9, 4343, True)])
    pid, error, healthy_for = gate(line, timeout=60, settle=5)
    assert (pid, error) == (4343, None)
    assert healthy_for == pytest.approx(5, abs=0.01) and line.elapsed() == pytest.approx(8, abs=0.01)


def test_a_break_of_the_same_process_starts_the_count_again(timeline):
    line = timeline([(1, 3, 4242, True), (3, 4, 4242, False), (4, 1e9, 4242, True)])
    pid, error, healthy_for = gate(line, timeout=60, settle=5)
    assert (pid, error) == (4242, None) and line.elapsed() == pytest.approx(9, abs=0.01)


def test_a_crash_loop_whose_processes_never_hold_for_the_settle_fails_saying_how_long_the_last_held(timeline):
    spans = [(start, start + 2, 5000 + start, True) for start in range(1, 200, 3)]
    line = timeline(spans)
    pid, error, healthy_for = gate(line, timeout=11, settle=5)
    assert error == "process 5010 answered for 2s of its 5s settle, then no process listens on port %d" % PORT
    assert pid is None and healthy_for == pytest.approx(2, abs=0.01)
    assert line.elapsed() == pytest.approx(12, abs=0.01)


def test_another_process_after_the_timeout_fails_the_gate_naming_both(timeline):
    line = timeline([(5, 8, 4242, True), (8, 1e9, 4343, True)])
    pid, error, _healthy_for = gate(line, timeout=6, settle=10)
    assert (pid, error) == (4343, "process 4242 answered for 3s of its 10s settle, then process 4343 took port %d"
                            % PORT)


def test_a_first_answer_after_the_timeout_does_not_count(timeline):
    line = timeline([(7, 1e9, 4242, True)])
    assert gate(line, timeout=6, settle=1) == (None, "no process listens on port %d" % PORT, 0.0)


def test_no_answer_in_time_fails_with_the_last_error_and_the_earlier_break(timeline):
    line = timeline([(1, 2, 4242, True), (2, 1e9, 4242, False)])
    pid, error, healthy_for = gate(line, timeout=6, settle=5)
    assert (pid, healthy_for) == (4242, 0.0)
    assert error == ("%s: 503; earlier, process 4242 answered for 1s of its 5s settle, then %s: 503" % (URL, URL))


def test_the_previous_process_never_counts(timeline):
    line = timeline([(0, 3, 4141, True), (3, 1e9, 4242, True)])
    pid, error, _healthy_for = gate(line, timeout=60, settle=2, previous_pid=4141)
    assert (pid, error) == (4242, None) and line.elapsed() == pytest.approx(5, abs=0.01)


def test_no_settle_passes_at_the_first_answer(timeline):
    line = timeline([(2, 1e9, 4242, True)])
    assert gate(line, timeout=6, settle=0) == (4242, None, 0.0)


# --- on a real kube-scheduler -------------------------------------------------------------------------------------

@pytest.fixture
def scheduler():
    """A real kube-scheduler on a free port, its API server unreachable (it serves /livez all the same), answering
    before the fixture returns; stopped at the end."""
    binary = os.environ.get(SCHEDULER_VARIABLE)
    if not binary:
        pytest.skip("%s is not set: no real kube-scheduler 1.35 to gate (make binaries)" % SCHEDULER_VARIABLE)
    port = free_port()
    proc = subprocess.Popen([binary, "--secure-port=%d" % port, "--bind-address=127.0.0.1",  # pylint: disable=consider-using-with
                             "--master=http://127.0.0.1:1", "--leader-elect=false"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = "https://127.0.0.1:%d/livez" % port
    deadline = time.monotonic() + 60
    while _health.probe(port, url) != (proc.pid, None):
        assert proc.poll() is None and time.monotonic() < deadline, "kube-scheduler never answered on %d" % port
        time.sleep(0.2)
    yield proc, port, url
    proc.kill()
    proc.wait()


def test_a_real_kube_scheduler_killed_before_its_settle_ends_fails_the_gate(scheduler):
    """It answers from the start; the timeout (3 s) ends while it answers; it is killed 5 s in, its settle (8 s)
    not over: the gate fails, saying how long it answered. (Before, the gate passed it at the timeout.) The timeout
    leaves the gate's first look (a scan of /proc for the port's owner, then a TLS request) up to 3 s: on a machine as
    loaded as make test's, a 1 s timeout once ended before that look did, and the gate rightly refused a process it
    saw first after its deadline."""
    proc, port, url = scheduler
    killer = threading.Timer(5, proc.kill)
    killer.start()
    try:
        started = time.monotonic()
        pid, error, healthy_for = _health.wait_for_new_healthy(port, url, None, 3, 8)
        took = time.monotonic() - started
    finally:
        killer.cancel()
    assert error is not None and error.startswith("process %d answered for " % proc.pid), error
    assert "of its 8s settle, then " in error, error
    assert 2 <= healthy_for < 8 and took < 8, (healthy_for, took)
    # None once the port is free; 0 when the gate looked while the kernel still listed the killed process's socket
    # and its file descriptors were already gone (seen once in make test).
    assert pid in (None, 0, proc.pid)


def test_a_real_kube_scheduler_that_keeps_answering_passes_after_its_settle(scheduler):
    """The same, not killed: the gate watches it for its whole settle past the timeout, and says so."""
    proc, port, url = scheduler
    started = time.monotonic()
    pid, error, healthy_for = _health.wait_for_new_healthy(port, url, None, 3, 4)
    assert (pid, error) == (proc.pid, None)
    assert healthy_for >= 4 and time.monotonic() - started >= 4
