"""tests/support/suite.sh and summary.sh, run as make test runs them: a failed suite's summary line is followed by
the lines of its output that say what failed, since CI shows only the end of make test's long output."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SUPPORT = REPO / "tests" / "support"

PYTEST_LIKE = r"""
echo "tests/unit/test_a.py ..F"
echo "E   assert 1 == 2"
echo "=========================== short test summary info ==========================="
echo "FAILED tests/unit/test_a.py::test_three - assert 1 == 2"
echo "ERROR tests/unit/test_b.py::test_four - TimeoutError"
exit 1
"""


def suite(results, name, script):
    return subprocess.run([str(SUPPORT / "suite.sh"), name, "--", "bash", "-c", script], capture_output=True,
                          text=True, env=dict(os.environ, SUITE_RESULTS=str(results)), check=False)


def summary(results):
    return subprocess.run([str(SUPPORT / "summary.sh")], capture_output=True, text=True,
                          env=dict(os.environ, SUITE_RESULTS=str(results)), check=False)


def test_a_failed_suite_is_summarised_with_what_failed_and_a_passed_one_in_a_line(tmp_path):
    failed = suite(tmp_path, "unit-x", PYTEST_LIKE)
    passed = suite(tmp_path, "x-lint", "echo 'TASK [one] fatal: [m1]: is only a word here'; exit 0")
    assert (failed.returncode, passed.returncode) == (1, 0)
    # The suite's own output still reaches its chain's log, whole.
    assert "E   assert 1 == 2" in failed.stdout and "short test summary info" in failed.stdout
    report = summary(tmp_path)
    assert report.returncode == 1
    lines = report.stdout.splitlines()
    at = next(index for index, line in enumerate(lines) if line.startswith("failed unit-x (exit 1) in "))
    assert lines[at + 1:at + 3] == ["    FAILED tests/unit/test_a.py::test_three - assert 1 == 2",
                                    "    ERROR tests/unit/test_b.py::test_four - TimeoutError"]
    assert lines[at + 3].startswith("passed x-lint in ")
    assert lines[-1] == "suites: 1 passed, 1 failed, 0 skipped"


def test_a_failed_test_of_the_unit_target_is_named_in_the_summary(tmp_path):
    # Real pytest with the unit target's own options: its short summary must print the FAILED line suite.sh keeps
    # (pytest's -r option replaces its default "fE": with -rs alone a failed test was only an F in the progress).
    options = re.search(r"^unit: .*\n\t.*?/pytest (.+?) -m ", (REPO / "Makefile").read_text(), re.M).group(1)
    (tmp_path / "test_failing.py").write_text("def test_fails():\n    assert 1 == 2\n\n\ndef test_passes():\n    pass\n")
    results = tmp_path / "results"
    run = suite(results, "unit-x", "cd %s && %s -m pytest %s test_failing.py" % (
        shlex.quote(str(tmp_path)), shlex.quote(sys.executable), options))
    assert run.returncode == 1, run.stdout
    lines = summary(results).stdout.splitlines()
    at = next(index for index, line in enumerate(lines) if line.startswith("failed unit-x (exit 1) in "))
    assert lines[at + 1] == "    FAILED test_failing.py::test_fails - assert 1 == 2", lines


def test_every_pytest_run_of_make_test_reports_its_failures_and_errors():
    # Each pytest command line of the Makefile and of the scripts make test runs, and the options a target hands
    # run-e2e.sh in E2E_TESTS (given after its own, so their -r wins): an -r option keeps f and E.
    for path in [REPO / "Makefile"] + sorted(SUPPORT.glob("*.sh")):
        for line in path.read_text().splitlines():
            if re.search(r"\bpytest -p |\bE2E_TESTS=\"", line):
                for chars in re.findall(r"(?:^|\s|\")-r([a-zA-Z]+)", line):
                    assert "f" in chars and "E" in chars, (path.name, line)


def test_molecules_and_ansibles_failure_lines_are_kept_and_at_most_twenty(tmp_path):
    script = ("for i in $(seq 30); do echo \"fatal: [m$i]: FAILED! => {}\"; done; "
              "echo 'CRITICAL Ansible return code was 2'; exit 2")
    suite(tmp_path, "molecule-x", script)
    lines = summary(tmp_path).stdout.splitlines()
    kept = [line for line in lines if line.startswith("    ")]
    assert kept == ["    fatal: [m%d]: FAILED! => {}" % i for i in range(1, 21)]
