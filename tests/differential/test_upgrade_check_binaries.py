# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The upgrade check against the real kube-scheduler of each minor: what it says starts does start, what it says is
refused is refused, the plugin changes it reports are the difference of the binaries' own effective configs, and a
converted v1beta3 file is accepted by the binaries that refuse the original. A minor without a binary answers from
its recording (the corpus's upgrade_check family, recorded by make differential); one with neither is left out."""

from __future__ import annotations

import os
import sys

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.conversion import convert_to_v1
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.upgrade.upgrade_check import check_upgrade

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402  pylint: disable=wrong-import-position
import harness  # noqa: E402  pylint: disable=wrong-import-position
import recording  # noqa: E402  pylint: disable=wrong-import-position

harness.load_k8s_env()
# A minor takes part with its binary or, without one, with its recorded answers (recorded/<minor>.jsonl).
MINORS = [minor for minor in harness.BINARY_MINORS if harness.binary_path(minor) or recording.load(minor)]
CONFIGS = corpus.UPGRADE_CONFIGS

pytestmark = pytest.mark.skipif(len(MINORS) < 2, reason="needs the real kube-scheduler of two minors or their recorded "
                                                        "answers (make binaries; KUBE_SCHEDULER_BIN_1_30 ...)")


def _answer(minor, name, text):
    """The binary's outcome for a config of the upgrade_check family, from the binary when it is here."""
    text = harness.materialise(text)
    if harness.binary_path(minor):
        return harness.run_binary(minor, text)
    answer = recording.load(minor).answers.get(recording.case_key("upgrade_check", name, text))
    assert answer is not None, "no recorded answer of %r for %s: re-record with make differential" % (name, minor)
    return recording.outcome_of(answer)


# The oldest minor to every newer one, and the last step (1.37 to 1.38, the preview, now).
STEPS = {"oldest to every newer": (MINORS[0], MINORS[1:]), "last step": (MINORS[-2], MINORS[-1:])} \
    if len(MINORS) >= 2 else {}


@pytest.mark.parametrize("step", sorted(STEPS))
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_starts_and_plugin_changes_agree_with_the_binaries(name, step):
    text = harness.materialise(CONFIGS[name])
    current, targets = STEPS[step]
    report = check_upgrade(content=text, current_version=current, target_versions=targets)
    base = _answer(current, name, text)
    assert report["current"]["starts"] == base["ok"], base["error"]
    for minor in targets:
        binary = _answer(minor, name, text)
        target = report["targets"][minor]
        assert target["starts"] == binary["ok"], "%s on %s: %s" % (name, minor, binary["error"])
        if not (base["ok"] and binary["ok"]):
            continue
        # The binaries' own effective configs, through the same plugins view, give the same changes.
        before = harness._plugin_views(base["effective"], current)  # pylint: disable=protected-access
        after = harness._plugin_views(binary["effective"], minor)  # pylint: disable=protected-access
        for change in target["changes"]["plugins"]:
            if change["change"] not in ("appears", "disappears"):
                continue
            names_before = [p["name"] for p in before[change["profile"]].get(change["extension_point"], [])]
            names_after = [p["name"] for p in after[change["profile"]].get(change["extension_point"], [])]
            assert (change["plugin"] in names_after) == (change["change"] == "appears"), change
            assert (change["plugin"] in names_before) == (change["change"] == "disappears"), change


def test_a_converted_v1beta3_file_starts_where_the_original_does_not():
    converted = convert_to_v1(harness.materialise(corpus.UPGRADE_V1BETA3))
    assert converted["needs_human"] == []
    assert recording.portable(converted["converted"]) == corpus.upgrade_converted()
    for minor in (MINORS[0], MINORS[-1]):
        assert not _answer(minor, "v1beta3 original", corpus.UPGRADE_V1BETA3)["ok"]
        outcome = _answer(minor, "v1beta3 converted", converted["converted"])
        assert outcome["ok"], outcome["error"]
        profile = outcome["effective"]["profiles"][0]
        fit = next(c for c in profile["pluginConfig"] if c["name"] == "NodeResourcesFit")
        assert fit["args"]["scoringStrategy"]["type"] == "MostAllocated"
    assert yaml.safe_load(converted["converted"])["apiVersion"] == "kubescheduler.config.k8s.io/v1"
