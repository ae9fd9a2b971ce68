"""Hostile configuration text is refused before it is expanded, quickly and in little memory.

The alias rule is go-yaml v2's (kube-scheduler refuses the 592-byte bomb with "yaml: document contains excessive
aliasing", checked against the real v1.33 binary); nesting, size and value limits are this collection's, stricter
than kube-scheduler's 10000 levels because no configuration needs more than a dozen.
"""

from __future__ import annotations

import time

import pytest

import hostile
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import yaml_limits
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.role_variables import check_role
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import parse_text

VERSION = "1.33"


def first_error(text):
    start = time.process_time()  # CPU time: a busy machine stretches the clock, not the work
    result = process(content=text, kubernetes_version=VERSION)
    assert time.process_time() - start < 5
    assert result.errors
    return result.errors[0]["message"]


def test_the_592_byte_alias_bomb_is_refused_like_kube_scheduler_does():
    text = hostile.alias_bomb()
    assert len(text) == 592
    assert first_error(text) == "yaml: document contains excessive aliasing"


def test_the_alias_bomb_in_an_instance_config_content_is_refused():
    _resolved, errors, _warnings = resolve([{"name": "a", "default_scheduler": True,
                                             "config_content": hostile.alias_bomb()}], "1.33.2", "/etc/k")
    assert errors == ["kube_scheduler_instances[0].config_content: yaml: document contains excessive aliasing"]


@pytest.mark.parametrize("depth", [101, 326, 10001, 200000])
@pytest.mark.parametrize("as_json", [False, True])
def test_absurd_nesting_is_a_clear_error_not_a_recursion_error(depth, as_json):
    assert "nesting deeper than 100 levels" in first_error(hostile.nested(depth, json=as_json))


def test_nesting_up_to_the_limit_is_accepted():
    result = process(content=hostile.nested(90), kubernetes_version=VERSION)
    assert result.errors == []


@pytest.mark.parametrize("depth", [101, 5000, 100000])
def test_absurd_nesting_of_a_mapping_is_refused_before_it_is_copied(depth):
    _resolved, errors, _warnings = resolve([{"name": "a", "default_scheduler": True,
                                             "config": hostile.nested_dict(depth)}], "1.33.2", "/etc/k")
    assert errors and "config: nested deeper than 100 levels" in errors[0]


def test_a_5_mb_config_is_refused_by_its_size_at_once():
    assert "more than the 1048576 bytes (1 MiB)" in first_error(hostile.big(5 * 1000 * 1000))


def test_more_values_than_the_limit_are_refused_before_parsing():
    assert "more than 50000 values" in first_error(hostile.flat(50001))
    assert "more than 50000 values" in first_error(hostile.fan(120000))


def test_moderate_aliasing_is_accepted_as_kube_scheduler_accepts_it():
    # 45 aliases of a 1000-value list: go-yaml's ratio stays under 0.99 (kube-scheduler v1.33 accepts fan(51000)).
    result = process(content=hostile.fan(45000), kubernetes_version=VERSION)
    assert result.errors == []


def test_a_recursive_anchor_is_refused():
    assert first_error(hostile.HEAD + "      a: &a [1, *a]\n") == "yaml: anchor 'a' value contains itself"


def test_go_yaml_alias_ratio():
    assert not yaml_limits.excessive_aliasing(1000, 900)
    assert yaml_limits.excessive_aliasing(1001, 1000)
    assert not yaml_limits.excessive_aliasing(400000, 396000)
    assert yaml_limits.excessive_aliasing(4000000, 400001)
    assert yaml_limits.allowed_alias_ratio(2200000) == pytest.approx(0.545)


def test_the_text_is_parsed_once(monkeypatch):
    """One pure-Python loader for an instance's config_content (the limits scan runs on libyaml's events)."""
    import yaml
    loaders = []
    original = yaml.SafeLoader.__init__

    def counting(self, stream):
        loaders.append(stream)
        original(self, stream)

    monkeypatch.setattr(yaml.SafeLoader, "__init__", counting)
    text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    _resolved, errors, _warnings = resolve([{"name": "a", "default_scheduler": True, "config_content": text}],
                                           "1.33.2", "/etc/k")
    assert errors == []
    assert loaders == [text]
    assert parse_text(text)[2] is None


def test_ten_thousand_instances_are_refused_at_once_with_the_cap_and_the_fix():
    """10000 instances used to be resolved (23 s) before anything said no."""
    start = time.process_time()
    _resolved, errors, _warnings = resolve(hostile.many_instances(10000), "1.35.4", "/etc/kubernetes/schedulers")
    assert time.process_time() - start < 1
    assert errors == ["kube_scheduler_instances: Too many: 10000 items, but at most 100 are allowed: instances on one "
                      "master (each is a kube-scheduler process with its own port, config and lease); give one "
                      "instance several profiles instead"]


def test_the_most_instances_allowed_resolve():
    resolved, errors, _warnings = resolve(hostile.many_instances(100), "1.35.4", "/etc/kubernetes/schedulers")
    assert errors == [] and len(resolved) == 100


def _target_load_packing(multiplier):
    """kube_scheduler_deployment_config with scheduler-plugins' TargetLoadPacking enabled and its multiplier."""
    return {"profiles": [{"schedulerName": "trimaran", "plugins": {"score": {"enabled": [{"name": "TargetLoadPacking"}]}},
                          "pluginConfig": [{"name": "TargetLoadPacking", "args": {
                              "defaultRequestsMultiplier": multiplier,
                              "metricProvider": {"type": "Prometheus", "address": "http://prometheus:9090"}}}]}]}


@pytest.mark.parametrize("unit", ["9", "1_", "1e", ".9"])
def test_a_mebibyte_float_is_refused_as_parsefloat_does_in_linear_time(unit, shortest_time):
    """TargetLoadPacking's defaultRequestsMultiplier of 120,000 digits and an x once ran past a minute in
    role_inputs (a backtracking pattern): scheduler-plugins refuses it with strconv.ParseFloat's words, and so does
    the role, at once, whatever the length."""
    # Four times the text, about four times as long in one pass (sixteen in a quadratic one).
    times = []
    for size in (1 << 18, 1 << 20):
        multiplier = unit * (size // len(unit)) + "x"
        values = {"kube_scheduler_deployment_version": "1.34.7",
                  "kube_scheduler_deployment_scheduler_plugins_version": "0.34.7",
                  "kube_scheduler_deployment_config": _target_load_packing(multiplier)}
        seconds, (_normalised, problems) = shortest_time(lambda values=values: check_role("deployment", values, []))
        times.append(seconds)
        assert len(problems) == 2 and problems[0].startswith(
            "kube_scheduler_deployment_config.profiles[0].pluginConfig[0].args.defaultRequestsMultiplier: ")
        assert problems[0].endswith('unable to parse DefaultRequestsMultiplier: strconv.ParseFloat: parsing "%s": '
                                    "invalid syntax" % multiplier)
        assert problems[1] == ("  hint (kube_scheduler_deployment_config.profiles[0].pluginConfig[0].args."
                               "defaultRequestsMultiplier): write a number as text, such as \"1.5\" (Go's float "
                               "syntax: digits, an optional point and exponent; at most about 1.8e308)")
    assert times[1] < 5 and (times[1] < 0.5 or times[1] / times[0] < 12), times
