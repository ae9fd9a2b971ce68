# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kube_scheduler_flags.flags_for(minor) against the flags the real kube-scheduler of that minor lists in its
``--help`` (every flag set it registers). The upgrade scan refuses a static pod's flag its target minor does not
have, so a flag missing from the table would stop a sound upgrade, and an extra one would let a broken one through.
Skipped for a minor without a binary (KUBE_SCHEDULER_BIN_1_<minor>)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.kube_scheduler_flags import flags_for

harness.load_k8s_env()
_FLAG = re.compile(r"^\s+(?:-\w, )?--([a-z0-9][a-z0-9-]*)", re.M)


def help_flags(binary):
    proc = subprocess.run([binary, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60,
                          check=False)
    return set(_FLAG.findall(proc.stdout.decode("utf-8", "replace")))


@pytest.mark.parametrize("minor", harness.BINARY_MINORS)
def test_flags_are_the_binarys(minor):
    binary = harness.binary_path(minor)
    if binary is None:
        pytest.skip("no kube-scheduler %s (KUBE_SCHEDULER_BIN_%s)" % (minor, minor.replace(".", "_")))
    listed = help_flags(binary)
    assert len(listed) > 50, "could not read the flags of %s --help" % binary
    ours = set(flags_for(minor))
    assert (sorted(ours - listed), sorted(listed - ours)) == ([], [])
