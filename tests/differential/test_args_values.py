# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plugin args as a refusal prints them, word for word as each binary printed them (recorded/<minor>.jsonl): args
of no registered kind stay a runtime.Unknown, printed by its String() up to 1.33 and as the JSON json.Marshal gives
from 1.34 on. The differential comparison itself checks verdicts and fields; this checks these values exactly."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus  # noqa: E402  pylint: disable=wrong-import-position
import harness  # noqa: E402  pylint: disable=wrong-import-position
import recording  # noqa: E402  pylint: disable=wrong-import-position

_MARK = ".pluginConfig.args: Invalid value: {"


@pytest.mark.parametrize("minor", [minor for minor in harness.BINARY_MINORS if minor >= "1.34"])
def test_unregistered_args_in_a_refusal_are_the_binarys_json(minor):
    recorded = recording.load(minor)
    if recorded is None:
        pytest.skip("no recorded/%s.jsonl" % minor)
    texts = dict((recording.case_key(family, name, text), text) for family, name, text in corpus.cases())
    checked, differ = 0, []
    for key, answer in sorted(recorded.answers.items()):
        error = answer.get("error") or ""
        if _MARK not in error or "\n" in error or key not in texts:
            continue
        line = error[1:-1].split(", profiles[")[0] if error.startswith("[") else error
        messages = [e["message"] for e in harness.run_library(minor, texts[key])["errors"]]
        checked += 1
        if not any(message == line or line.startswith(message) for message in messages):
            differ.append("%s: library %r, binary %r" % (key[1], messages[:2], line[:300]))
    assert checked, "no recorded refusal prints unregistered args on %s" % minor
    assert not differ, "\n".join(differ)
