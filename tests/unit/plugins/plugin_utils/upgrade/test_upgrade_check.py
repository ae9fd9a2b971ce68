# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The upgrade check and the v1beta2/v1beta3 conversion on the library's own models of each minor."""

from __future__ import annotations

import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.conversion import convert_to_v1
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.upgrade.upgrade_check import check_upgrade

EBS = {"profiles": [{"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}]}
V1BETA3 = """apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1beta3
      kind: NodeResourcesFitArgs
      scoringStrategy:
        type: MostAllocated
"""


def test_a_plugin_the_target_removed_is_an_error_there_with_the_field():
    report = check_upgrade(config=EBS, current_version="1.30.12", target_versions=["1.31", "1.35"])
    assert report["current"]["starts"] and not report["ok"]
    for minor in ("1.31", "1.35"):
        target = report["targets"][minor]
        assert not target["starts"] and "changes" not in target
        assert any(e["field"].startswith("profiles[0].plugins.filter.enabled") for e in target["errors"]), target["errors"]


def test_changes_are_the_difference_of_the_two_effective_configs():
    report = check_upgrade(config={}, current_version="1.30", target_versions=["1.35"])
    changes = report["targets"]["1.35"]["changes"]
    view_30 = process(config={}, kubernetes_version="1.30").plugins["default-scheduler"]
    view_35 = process(config={}, kubernetes_version="1.35").plugins["default-scheduler"]
    for change in changes["plugins"]:
        names_30 = [p["name"] for p in view_30.get(change["extension_point"], [])]
        names_35 = [p["name"] for p in view_35.get(change["extension_point"], [])]
        if change["change"] == "appears":
            assert change["plugin"] in names_35 and change["plugin"] not in names_30
        if change["change"] == "disappears":
            assert change["plugin"] in names_30 and change["plugin"] not in names_35
    assert {"plugin": "EBSLimits", "change": "disappears"}.items() <= next(
        c for c in changes["plugins"] if c.get("plugin") == "EBSLimits").items()
    assert any(c["path"].endswith("pluginConfig[name=DynamicResources]") and c["change"] == "added" for c in changes["defaults"])


def test_a_changed_default_arg_names_its_path_and_both_values():
    report = check_upgrade(config={}, current_version="1.35", target_versions=["1.30"])
    removed = [c for c in report["targets"]["1.30"]["changes"]["defaults"] if c["change"] == "removed"]
    assert any(c["path"].endswith("pluginConfig[name=DynamicResources]") for c in removed)


def test_v1beta3_converts_to_v1_apiversions_everywhere_and_then_starts():
    converted = convert_to_v1(V1BETA3)
    data = yaml.safe_load(converted["converted"])
    assert data["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert data["profiles"][0]["pluginConfig"][0]["args"]["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert converted["needs_human"] == [] and len(converted["changes"]) == 2
    assert not process(content=V1BETA3, kubernetes_version="1.30").ok
    report = check_upgrade(content=V1BETA3, current_version="1.30", target_versions=["1.35"], convert=True)
    assert report["current"]["starts"] and report["ok"] and report["converted"]["from"].endswith("v1beta3")


def test_v1beta2_lists_what_needs_a_human_and_the_weights_v1beta3_changed():
    text = V1BETA3.replace("v1beta3", "v1beta2") + "  plugins:\n    score:\n      enabled:\n      - name: NodeLabel\n"
    converted = convert_to_v1(text)
    assert converted["needs_human"] == [
        "profiles[0].plugins.score.enabled[0].name: NodeLabel was removed in v1beta3; express node preferences with "
        "NodeAffinity (nodeAffinity in the pods or NodeAffinityArgs.addedAffinity)"]
    assert any("InterPodAffinity 2, NodeAffinity 2, TaintToleration 3" in change for change in converted["changes"])


def test_an_unknown_apiversion_is_not_converted():
    converted = convert_to_v1({"apiVersion": "kubescheduler.config.k8s.io/v1alpha1", "kind": "KubeSchedulerConfiguration"})
    assert converted["converted"] is None and "cannot be converted" in converted["needs_human"][0]
