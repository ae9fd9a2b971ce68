# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CI entry of the differential harness, with or without the binaries.

- The library against the recorded answers of the real kube-scheduler (recorded/<minor>.jsonl, written by
  `make differential`) for every minor the harness knows and every CI family: the same comparison as against the
  binary itself (verdict, field named, effective config as data, plugins view). A corpus case the recording does
  not hold (new, or changed since: the key has the sha256 of its text) fails: it has to be recorded. A minor with
  no recording is compared with its binary when there is one, and skipped naming its variable when not.
- The binaries of DIFF_MINORS (default "1.30 1.37", the oldest and the newest) that are present against the recording: the very binary the
  recording was made from (same sha256; the project's builds from tests/binaries are reproducible) that answers
  differently from what was recorded (a changed corpus, a stale recording) fails until the recording is redone and
  its diff reviewed, so a stale recording cannot hide. Another build of the release (an official download, one
  built by hand or with another Go: its error texts carry that Go's words) that answers differently is skipped,
  saying how it differs and how to build the recorded one. DIFF_RECHECK_EVERY=n (make test gives 4) re-checks every
  n-th recorded answer only: the binary the recording was made from answers the same configs the same way, so a
  sample shows that the harness and the binary still agree with it; `make differential` records them all again.
"""

from __future__ import annotations

import concurrent.futures
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus  # noqa: E402  pylint: disable=wrong-import-position
import harness  # noqa: E402  pylint: disable=wrong-import-position
import recording  # noqa: E402  pylint: disable=wrong-import-position
import run as runner  # noqa: E402  pylint: disable=wrong-import-position

DIFF_MINORS = os.environ.get("DIFF_MINORS", "1.30 1.37").split() + list(harness.SCHEDULER_PLUGINS_TARGETS)
# Every (target, family) compared: each Kubernetes minor with the CI families, each scheduler-plugins release with its own.
TARGET_FAMILIES = [(minor, family) for minor in harness.BINARY_MINORS for family in corpus.CI_FAMILIES] + [
    (target, "scheduler_plugins") for target in harness.SCHEDULER_PLUGINS_TARGETS]
RERECORD = "re-record with make differential and review the diff"
RECHECK_EVERY = max(1, int(os.environ.get("DIFF_RECHECK_EVERY") or 1))

harness.load_k8s_env()
_CASES = {}
_RECORDINGS = {}
_RESULTS = {}


def _variable(minor):
    return harness.binary_variable(minor)


def _cases(family, minor=None):
    key = (family, minor if family == "scheduler_plugins" else None)
    if key not in _CASES:
        _CASES[key] = runner.cases_of(minor, [family]) if minor else list(corpus.cases([family]))
    return _CASES[key]


def _recording(minor):
    if minor not in _RECORDINGS:
        _RECORDINGS[minor] = recording.load(minor)
    return _RECORDINGS[minor]


def _against_recording(minor, family):
    """[(name, comparison)] of the family's cases against the recorded answers; [name] the recording lacks."""
    recorded = _recording(minor)
    results, missing = [], []
    for fam, name, text in _cases(family, minor):
        answer = recorded.answers.get(recording.case_key(fam, name, text))
        if answer is None:
            missing.append(name)
            continue
        lib = harness.run_library(minor, text)
        results.append((minor, fam, name, text, harness.compare(minor, lib, recording.outcome_of(answer))))
    return results, missing


@pytest.mark.parametrize("minor,family", TARGET_FAMILIES)
def test_library_agrees_with_the_binary(minor, family):
    if _recording(minor) is not None:
        results, missing = _against_recording(minor, family)
        source = "the recorded answers of " + _recording(minor).describe()
        assert not missing, "%d %s configs of the corpus have no recorded answer for %s (new, or changed since it " \
            "was recorded): %s\n%s" % (len(missing), family, minor, RERECORD, "\n".join(missing[:20]))
    elif harness.binary_path(minor) is not None:
        if minor not in _RESULTS:
            _RESULTS[minor] = runner.run([minor], [f for m, f in TARGET_FAMILIES if m == minor], jobs=2)
        results = [r for r in _RESULTS[minor] if r[1] == family]
        source = "kube-scheduler %s (no recording yet: make differential writes it)" % minor
    else:
        pytest.skip("kube-scheduler %s: no recorded answers (recorded/%s.jsonl) and no binary (%s): run `make "
                    "binaries`, then make differential" % (minor, minor, _variable(minor)))
    assert results, "family %s has no configs" % family
    bad = runner.disagreements(results)
    assert not bad, "%d of %d configs disagree with %s:\n%s" % (len(bad), len(results), source, "\n".join(bad))


@pytest.mark.parametrize("minor", DIFF_MINORS)
def test_the_binary_answers_as_recorded(minor):
    if harness.binary_path(minor) is None:
        pytest.skip("kube-scheduler %s: no binary (%s), its recorded answers are not re-checked: run `make binaries`"
                    % (minor, _variable(minor)))
    recorded = _recording(minor)
    assert recorded is not None, "kube-scheduler %s is here (%s) but has no recording: %s" % (
        minor, harness.binary_path(minor), RERECORD)
    cases = [case for target, family in TARGET_FAMILIES if target == minor for case in _cases(family, minor)]
    keys = [recording.case_key(*case) for case in cases]
    missing = [key for key in keys if key not in recorded.answers]
    assert not missing, "%d CI configs have no recorded answer for %s: %s\n%s" % (
        len(missing), minor, RERECORD, "\n".join("%s %r" % key[:2] for key in missing[:20]))
    cases, keys = cases[::RECHECK_EVERY], keys[::RECHECK_EVERY]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda case: harness.run_binary(minor, case[2]), cases))
    changed = []
    for key, outcome in zip(keys, outcomes):
        live = recording.answer_of(outcome)
        if live != recorded.answers[key]:
            changed.append("%s %r: %s" % (key[0], key[1], recording.answer_difference(recorded.answers[key], live)))
    info = recording.binary_info(minor)
    if changed and info["sha256"] != recorded.info["sha256"]:
        # Another build than the recording's (an official download, a hand-built binary, another Go): its error
        # texts carry its own Go's words, so its differences are not the release's. The recording stays the
        # reference; the library is compared with it either way (test_library_agrees_with_the_binary).
        pytest.skip("kube-scheduler %s at %s is another build (sha256 %s, %s) than the recording's %s: %d of %d answers "
                    "differ, first: %s. Not compared: build the pinned release (make binaries builds it from "
                    "tests/binaries/modules) or, to make this build the reference, %s"
                    % (minor, harness.binary_path(minor), info["sha256"][:16], info["go"], recorded.describe(),
                       len(changed), len(cases), changed[0], RERECORD))
    assert not changed, "kube-scheduler %s (%s, sha256 %s) answers %d of %d configs differently from the recording " \
        "of %s: %s\n%s" % (minor, info["version"], info["sha256"][:16], len(changed), len(cases), recorded.describe(),
                           RERECORD, "\n".join(changed[:30]))
