"""tests/support/hosts-lock.sh, which every Makefile target that makes test hosts runs under: a second run waits for
the first instead of removing the first's hosts (fixed names) under it; the targets make test starts inside its own
run pass through; the command does not inherit the lock, so a process that outlives it cannot hold it."""
from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
LOCK = REPO / "tests" / "support" / "hosts-lock.sh"


def start(lock, script):
    """hosts-lock.sh on ``script`` with its lock file at ``lock``, as a target started outside any held run (make test
    itself runs under the lock, and its tests inherit the hold: this one must not)."""
    env = dict(os.environ, KUBESCHED_HOSTS_LOCK=str(lock))
    env.pop("KUBESCHED_HOSTS_LOCK_HELD", None)
    return subprocess.Popen([str(LOCK), "bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def test_a_second_run_waits_for_the_first_saying_for_whom(tmp_path):
    lock, marks = tmp_path / "hosts.lock", tmp_path / "marks"
    first = start(lock, "echo first-start >> %s; sleep 2; echo first-end >> %s" % (marks, marks))
    deadline = time.monotonic() + 20
    while not (marks.exists() and "first-start" in marks.read_text()):
        assert time.monotonic() < deadline, "the first run never started"
        time.sleep(0.05)
    second = start(lock, "echo second >> %s" % marks)
    second_out, second_err = second.communicate(timeout=60)
    first.communicate(timeout=60)
    assert (first.returncode, second.returncode) == (0, 0), second_out + second_err
    assert marks.read_text().split() == ["first-start", "first-end", "second"]
    assert "another run holds the test hosts (pid %d in " % first.pid in second_err, second_err
    assert "waiting for it to end" in second_err


def test_the_command_does_not_inherit_the_lock_and_its_exit_code_is_the_runs(tmp_path):
    lock = tmp_path / "hosts.lock"
    run = start(lock, "ls -l /proc/$$/fd; exit 3")
    out, _err = run.communicate(timeout=60)
    assert run.returncode == 3
    assert str(lock) not in out, out
    # Released: a later run takes it at once, without a word.
    later = start(lock, "true")
    assert later.communicate(timeout=10) == ("", "") and later.returncode == 0


def test_a_target_started_inside_a_held_run_passes_through(tmp_path):
    lock = tmp_path / "hosts.lock"
    outer = start(lock, "%s bash -c 'echo inner ran'" % LOCK)
    out, err = outer.communicate(timeout=30)
    assert (outer.returncode, out.strip(), err) == (0, "inner ran", "")


def test_every_makefile_target_that_makes_test_hosts_runs_under_the_lock():
    """The scripts that make podman hosts or real-node clusters, wherever a recipe runs them."""
    makes_hosts = re.compile(r"run-test\.sh|run-e2e\.sh|run-molecule\.sh|tests/demo/(run|clean)\.sh|tests/e2e_plugins"
                             r"|benchmarks/(rollout_vs_naive|lease_gaps|fleet)\.py")
    recipe = (REPO / "Makefile").read_text().replace("\\\n", " ")
    lines = [line for line in recipe.splitlines() if line.startswith("\t") and makes_hosts.search(line)]
    assert len(lines) >= 11, lines
    unlocked = [line for line in lines if "$(HOSTS_LOCK) " not in line.split(makes_hosts.search(line).group(0))[0]]
    assert not unlocked, unlocked
    # And `make` alone lists the targets rather than start the whole suite.
    listing = subprocess.run(["make", "-s"], cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert listing.returncode == 0 and listing.stdout.startswith("help: "), listing.stdout[:500] + listing.stderr
    assert "\ntest: everything CI runs" in listing.stdout
