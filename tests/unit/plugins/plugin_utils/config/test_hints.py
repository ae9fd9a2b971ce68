# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One short hint with the fix after kube-scheduler's own line (config/hints.py), for errors the real pipeline
(process) reports: upstream's line stays first and exact, the hint names the field as the user wrote it."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.hints import with_hints

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def _lines(body, version="1.35"):
    result = process(content=HEADER + body, kubernetes_version=version)
    return with_hints(result.errors, yaml.safe_load(HEADER + body), version, "config", lambda error: error["message"])


@pytest.mark.parametrize("body, hint", [
    ("leaderElect:\n  leaseDuration: 15s\n",
     "  hint (config.leaderElect): did you mean leaderElection? (field names are case-sensitive)"),
    ("leaderElection:\n  leaseDuration: 15\n", "  hint (config.leaderElection.leaseDuration): write a duration with "
     "its unit, such as 15s (Go durations: 500ms, 15s, 1m30s)"),
    ("profiles:\n- schedulerName: a\n- schedulerName: a\n", "  hint (config.profiles[1].schedulerName): profiles[0] "
     "and profiles[1] are both named \"a\": give each profile a schedulerName of its own"),
    ("leaderElection:\n  renewDeadline: 2s\n", "  hint (config.leaderElection.renewDeadline): renewDeadline is 2s but "
     "retryPeriod x JitterFactor is 1.2 x 2s = 2.4s: make renewDeadline longer than 2.4s, or retryPeriod shorter "
     "than 1.666666666s"),
    ("profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeResourceFit\n",
     "  hint (config.profiles[0].plugins.score.enabled[0]): NodeResourceFit is not a plugin of kube-scheduler 1.35 "
     "(did you mean NodeResourcesFit?); an out-of-tree plugin is declared in extra_plugins"),
    ("enableProfiling: \"true\"\n", "  hint (config.enableProfiling): use a boolean, true without quotes: a survey or "
     "-e key=value gives text (convert it with | bool)"),
])
def test_upstreams_line_then_the_hint(body, hint):
    lines = _lines(body)
    assert len(lines) == 2 and not lines[0].startswith("  hint")
    assert lines[1] == hint


def test_a_removed_api_version_is_pointed_at_the_conversion():
    result = process(content="apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
                     kubernetes_version="1.35")
    lines = with_hints(result.errors, None, "1.35", "config", lambda error: error["message"])
    assert lines[1].startswith("  hint (config.apiVersion): convert the file to v1 with "
                               "kubesched.schedulers.scheduler_upgrade_check and convert: true")


def test_an_error_without_a_known_fix_gets_no_hint():
    assert _lines("percentageOfNodesToScore: 101\n") == [
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"]


def test_a_hint_that_cannot_be_made_never_hides_the_error():
    error = {"type": "Duplicate value", "field": "profiles[1].schedulerName", "message": "the line"}
    assert with_hints([error], {"profiles": "not a list"}, "1.35", "config", lambda found: found["message"]) == [
        "the line"]
