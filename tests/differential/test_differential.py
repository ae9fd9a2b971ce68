# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CI entry of the differential harness: the whole corpus through the library and the real kube-scheduler of
each minor in DIFF_MINORS (default "1.30 1.35", the oldest and newest binaries); one test per minor and family,
failing with the list of disagreements. The binaries come from the environment (KUBE_SCHEDULER_BIN_1_<minor>)
or from .build/k8s.env, which `make binaries` writes.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus  # noqa: E402  pylint: disable=wrong-import-position
import harness  # noqa: E402  pylint: disable=wrong-import-position
import run as runner  # noqa: E402  pylint: disable=wrong-import-position

MINORS = os.environ.get("DIFF_MINORS", "1.30 1.35").split()


harness.load_k8s_env()
_RESULTS = {}


def _results(minor):
    if harness.binary_path(minor) is None:
        pytest.skip("no kube-scheduler %s: run `make binaries` (KUBE_SCHEDULER_BIN_%s)" % (minor, minor.replace(".", "_")))
    if minor not in _RESULTS:
        _RESULTS[minor] = runner.run([minor], corpus.CI_FAMILIES, jobs=2)
    return _RESULTS[minor]


@pytest.mark.parametrize("family", corpus.CI_FAMILIES)
@pytest.mark.parametrize("minor", MINORS)
def test_library_agrees_with_the_binary(minor, family):
    results = [r for r in _results(minor) if r[1] == family]
    assert results, "family %s has no configs" % family
    bad = runner.disagreements(results)
    assert not bad, "%d of %d configs disagree with kube-scheduler %s:\n%s" % (
        len(bad), len(results), minor, "\n".join(bad))
