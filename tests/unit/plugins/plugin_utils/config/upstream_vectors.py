"""Upstream expectations shared by several test files, never derived from our own code."""

from __future__ import annotations

import json
import os

# What the real kube-scheduler binaries wrote (tests/differential/README.md, "Recorded answers").
RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "differential", "recorded")


def recorded_default_multipoint(minor):
    """The default multiPoint enabled list [(name, weight)] that the real kube-scheduler of ``minor`` wrote for a
    minimal config (``--write-config-to``; the "base" line of tests/differential/recorded/<minor>.jsonl)."""
    with open(os.path.join(RECORDED, minor + ".jsonl"), encoding="utf-8") as handle:
        for line in handle:
            entry = json.loads(line)
            if "base" in entry:
                enabled = entry["base"]["profiles"][0]["plugins"]["multiPoint"]["enabled"]
                return tuple((plugin["name"], plugin["weight"]) for plugin in enabled)
    raise LookupError("no base config recorded for %s" % minor)


# pkg/scheduler/apis/config/v1/defaults_test.go, TestSchedulerDefaults "two profiles" (1.31-1.33), expects the
# default multiPoint list getDefaultPlugins() gives a profile: kube-scheduler v1.31.8 wrote it (1.32 and 1.33 write
# the same list: test_plugin_registry.py).
MULTIPOINT_1_31_TO_1_33 = recorded_default_multipoint("1.31")
