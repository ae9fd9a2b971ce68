"""The scheduler_config action plugin: wrong-shaped input is a clean error, not a
traceback, and key material never appears in what it returns."""

from __future__ import annotations

import pytest

from action_harness import run_action

PROFILES = {"profiles": [{"schedulerName": "s"}]}


@pytest.mark.parametrize("plugins, message", [
    ([{"name": "Foo", "extension_points": 5}], "extra_plugins[0].extension_points: must be a list"),
    ([{"name": "Foo", "extension_points": "score"}], "extra_plugins[0].extension_points: must be a list"),
    ([{"name": "Foo", "args_kind": 5}], "extra_plugins[0].args_kind: Invalid value: 5"),
    (["*"], "extra_plugins[0].name: Invalid value: '*'"),
    ([{"name": "Foo", "extension_points": ["bogus"]}], "unknown extension points bogus"),
])
def test_wrong_shaped_extra_plugins(plugins, message):
    result = run_action("scheduler_config", {"config": PROFILES, "extra_plugins": plugins})
    assert result["failed"] and message in result["msg"]


def test_integer_keys_are_strings_as_in_kube_scheduler():
    config = dict(PROFILES)
    config[1] = 2
    result = run_action("scheduler_config", {"config": config})
    assert result["failed"] and 'unknown field "1"' in result["msg"]


@pytest.mark.parametrize("mode", [600, 384, True])
def test_integer_modes_are_refused_on_the_controller(mode):
    result = run_action("scheduler_config", {"config": PROFILES, "mode": mode, "dest": "/nonexistent/x.yaml"})
    assert result["failed"] and "mode must be a quoted string" in result["msg"]


def test_a_deep_mapping_is_refused_before_it_is_copied():
    deep = {}
    for _unused in range(5000):
        deep = {"x": deep}
    result = run_action("scheduler_config", {"config": dict(PROFILES, bogus=deep)})
    assert result["failed"] and "config: nested deeper than 100 levels" in result["msg"]


def test_a_deep_instance_list_is_refused_before_it_is_copied():
    deep = {}
    for _unused in range(5000):
        deep = {"x": deep}
    result = run_action("scheduler_instances", {"instances": [{"name": "a", "config": deep}],
                                                "kubernetes_version": "1.33.2", "config_dir": "/etc/k"})
    assert result["failed"] and "instances: nested deeper than 100 levels" in result["msg"]
