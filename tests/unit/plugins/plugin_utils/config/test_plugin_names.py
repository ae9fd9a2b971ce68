# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Strict plugin names (config/_plugin_names.py): a name kube-scheduler would ignore (in disabled or pluginConfig)
is an error with the closest known name when strict, and accepted as kube-scheduler accepts it when not."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._plugin_names import suggestion
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
DISABLED_TYPO = HEADER + "profiles:\n- plugins:\n    score:\n      disabled:\n      - name: NodeResourceFit\n"
ARGS_TYPO = HEADER + "profiles:\n- pluginConfig:\n  - name: DefaultPreemptio\n    args: {}\n"


def test_a_misspelt_disabled_plugin_is_an_error_when_strict_naming_the_closest():
    result = process(content=DISABLED_TYPO, kubernetes_version="1.35", strict=True)
    assert result.errors == [{
        "field": "profiles[0].plugins.score.disabled[0].name", "type": "Unknown plugin",
        "message": 'profiles[0].plugins.score.disabled[0].name: Unknown plugin: "NodeResourceFit": kube-scheduler 1.35 '
                   'has no plugin of this name, so nothing is disabled (did you mean NodeResourcesFit?); fix the name, '
                   'declare an out-of-tree plugin in extra_plugins, or set strict: false to accept it as kube-scheduler '
                   'does'}]


def test_a_misspelt_plugin_config_name_says_its_args_are_ignored():
    result = process(content=ARGS_TYPO, kubernetes_version="1.35", strict=True)
    assert [error["field"] for error in result.errors] == ["profiles[0].pluginConfig[0].name"]
    assert "so its args are ignored (did you mean DefaultPreemption?)" in result.errors[0]["message"]


def test_without_strict_the_names_pass_as_kube_scheduler_lets_them():
    assert process(content=DISABLED_TYPO, kubernetes_version="1.35").ok
    assert process(content=ARGS_TYPO, kubernetes_version="1.35").ok


def test_the_suggestion_of_a_removed_plugin_is_its_replacement():
    assert suggestion("EBSLimits", ["NodeVolumeLimits"]) == " (removed in Kubernetes 1.31: use NodeVolumeLimits)"
    assert suggestion("SelectorSpread", []) == " (removed in Kubernetes 1.27: use PodTopologySpread)"


def test_the_suggestion_ignores_case_and_is_empty_when_nothing_is_close():
    assert suggestion("nodename", ["NodeName"]) == " (did you mean NodeName?)"
    assert suggestion("Zebra", ["NodeName"]) == ""
