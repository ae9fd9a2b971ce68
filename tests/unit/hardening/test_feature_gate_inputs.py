"""--feature-gates as an operator may give it: twice under two spellings, and with kube-scheduler's AllAlpha and
AllBeta. What a binary refuses at start is refused before anything is written, naming the variable and the fix."""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances import resolve
from action_harness import run_action

CONFIG_DIR = "/etc/kubernetes/schedulers"


def instance(extra_flags, **fields):
    return [dict({"name": "kube-scheduler", "default_scheduler": True, "extra_flags": extra_flags}, **fields)]


# --- one flag, one spelling -------------------------------------------------------------------------------------

@pytest.mark.parametrize("extra_flags, keys, flag", [
    ({"--feature-gates": "StorageCapacityScoring=true", "feature-gates": "StorageCapacityScoring=false"},
     "--feature-gates and feature-gates", "--feature-gates"),
    ({"v": 2, "--v": 3}, "--v and v", "--v"),
    ({"-v": 2, "v": 3, "--v": 4}, "--v and -v and v", "--v"),
])
def test_a_flag_given_twice_is_refused_naming_both_keys(extra_flags, keys, flag):
    _resolved, errors, _warnings = resolve(instance(extra_flags), "1.37.2", CONFIG_DIR)
    assert errors == ["kube_scheduler_instances[0].extra_flags: %s name one flag, %s: keep one of them (kube-scheduler "
                      "would get both on its command line and run with the last)" % (keys, flag)]


def test_the_doubled_gate_is_refused_before_the_config_is_checked_with_either_value():
    """The reproducer: VolumeBinding's shape is valid with the first value and refused with the last (the one the
    binary keeps); the refusal is the doubled flag, not a verdict on one of the two."""
    config = {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": "VolumeBinding", "args": {
        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}]}]}
    extra = {"--feature-gates": "StorageCapacityScoring=true", "feature-gates": "StorageCapacityScoring=false"}
    result = run_action("scheduler_instances", {"instances": instance(extra, config=config), "kubernetes_version": "1.37.2",
                                                "config_dir": CONFIG_DIR})
    assert result["failed"] and result["errors"] == [
        "kube_scheduler_instances[0].extra_flags: --feature-gates and feature-gates name one flag, --feature-gates: "
        "keep one of them (kube-scheduler would get both on its command line and run with the last)"]
    assert "Traceback" not in result["msg"] and "instances" not in result


def test_one_spelling_gives_one_flag_on_the_command_line():
    resolved, errors, _warnings = resolve(instance({"--v": 3, "feature-gates": "StorageCapacityScoring=false"}),
                                          "1.37.2", CONFIG_DIR)
    assert errors == []
    flags = resolved[0]["flags"]
    assert [flag for flag in flags if flag.startswith("--v=")] == ["--v=3"]
    assert [flag for flag in flags if flag.startswith("--feature-gates=")] == ["--feature-gates=StorageCapacityScoring=false"]
