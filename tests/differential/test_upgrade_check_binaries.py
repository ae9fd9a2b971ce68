# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The upgrade check against the real kube-scheduler of each minor: what it says starts does start, what it says is
refused is refused, the plugin changes it reports are the difference of the binaries' own effective configs, and a
converted v1beta3 file is accepted by the binaries that refuse the original. A minor without a binary is skipped."""

from __future__ import annotations

import os
import sys

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.conversion import convert_to_v1
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.upgrade_check import check_upgrade

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402  pylint: disable=wrong-import-position

harness.load_k8s_env()
MINORS = [minor for minor in harness.BINARY_MINORS if harness.binary_path(minor)]
HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection:\n  kubeconfig: @KUBECONFIG@\n"
CONFIGS = {
    "defaults": HEAD + "profiles:\n- schedulerName: default-scheduler\n",
    "removed volume-limit plugin": HEAD + "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    filter:\n"
                                          "      enabled:\n      - name: EBSLimits\n",
    "two profiles, bin packing": HEAD + "profiles:\n- schedulerName: default-scheduler\n- schedulerName: bin-packing\n"
                                        "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
                                        "        type: MostAllocated\n",
}
V1BETA3 = HEAD.replace("/v1\n", "/v1beta3\n", 1) + (
    "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
    "      apiVersion: kubescheduler.config.k8s.io/v1beta3\n      kind: NodeResourcesFitArgs\n"
    "      scoringStrategy:\n        type: MostAllocated\n")

pytestmark = pytest.mark.skipif(len(MINORS) < 2, reason="needs the real kube-scheduler of two minors (make binaries)")


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_starts_and_plugin_changes_agree_with_the_binaries(name):
    text = harness.materialise(CONFIGS[name])
    current, targets = MINORS[0], MINORS[1:]
    report = check_upgrade(content=text, current_version=current, target_versions=targets)
    base = harness.run_binary(current, text)
    assert report["current"]["starts"] == base["ok"], base["error"]
    for minor in targets:
        binary = harness.run_binary(minor, text)
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
    original = harness.materialise(V1BETA3)
    converted = convert_to_v1(original)
    assert converted["needs_human"] == []
    for minor in (MINORS[0], MINORS[-1]):
        assert not harness.run_binary(minor, original)["ok"]
        outcome = harness.run_binary(minor, converted["converted"])
        assert outcome["ok"], outcome["error"]
        profile = outcome["effective"]["profiles"][0]
        fit = next(c for c in profile["pluginConfig"] if c["name"] == "NodeResourcesFit")
        assert fit["args"]["scoringStrategy"]["type"] == "MostAllocated"
    assert yaml.safe_load(converted["converted"])["apiVersion"] == "kubescheduler.config.k8s.io/v1"
