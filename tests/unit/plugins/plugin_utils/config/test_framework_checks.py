# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks kube-scheduler does when it builds the profiles (framework.go NewFramework, profile.NewMap) and the
leader-election rule of client-go's NewLeaderElector. Messages are the fmt.Errorf texts of those sources,
wrapped by scheduler.New ("initializing profiles: ") and NewMap ("creating profile for scheduler name X: ").
"""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._framework_checks import check_leader_election
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import SUPPORTED_MINORS

PREFIX = "initializing profiles: creating profile for scheduler name a: "


@pytest.mark.parametrize("point, go_type", [
    ("preEnqueue", "PreEnqueuePlugin"), ("queueSort", "QueueSortPlugin"), ("preFilter", "PreFilterPlugin"),
    ("filter", "FilterPlugin"), ("postFilter", "PostFilterPlugin"), ("preScore", "PreScorePlugin"),
    ("score", "ScorePlugin"), ("reserve", "ReservePlugin"), ("permit", "PermitPlugin"), ("preBind", "PreBindPlugin"),
    ("bind", "BindPlugin"), ("postBind", "PostBindPlugin"),
])
def test_unknown_plugin_per_extension_point(run, messages, fields, point, go_type):
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    %s:\n      enabled: [{name: NoSuchPlugin}]\n" % point)
    assert messages(result) == [PREFIX + '%s "NoSuchPlugin" does not exist' % go_type]
    assert fields(result) == ["profiles[0].plugins.%s.enabled[0]" % point]


def test_unknown_plugin_in_multipoint_is_reported_at_the_first_extension_point(run, messages):
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n      enabled: [{name: Typo}]\n")
    assert messages(result) == [PREFIX + 'PreFilterPlugin "Typo" does not exist']


def test_plugin_that_does_not_extend_the_point(run, messages):
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    score:\n      enabled: [{name: PrioritySort}]\n")
    assert messages(result) == [PREFIX + 'plugin "PrioritySort" does not extend ScorePlugin plugin']


def test_plugin_twice_at_one_point(run, messages):
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    filter:\n"
                 "      enabled: [{name: NodeName}, {name: NodeName}]\n")
    assert messages(result) == [PREFIX + 'plugin "NodeName" already registered as "FilterPlugin"']


def test_plugin_twice_in_multipoint(run, messages, fields):
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n"
                 "      enabled: [{name: Coscheduling}, {name: Coscheduling}]\n",
                 extra_plugins=[{"name": "Coscheduling", "extension_points": ["queueSort", "preFilter", "permit"]}])
    assert messages(result) == [PREFIX + 'plugin "Coscheduling" already registered as "PreFilterPlugin"']


def test_default_plugin_relisted_in_multipoint_overrides_it(run):
    # mergePluginSet replaces the default entry in place: no double registration.
    assert run("profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n"
               "      enabled: [{name: ImageLocality, weight: 5}]\n").ok


def test_queue_sort_disabled_leaves_none(run, messages, fields):
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      disabled: [{name: '*'}]\n")
    assert messages(result) == [
        PREFIX + 'only one queue sort plugin required for profile with scheduler name "a", but got 0']
    assert fields(result) == ["profiles[0].plugins.queueSort"]


def test_second_queue_sort_plugin(run, messages):
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      enabled: [{name: Coscheduling}]\n",
                 extra_plugins=[{"name": "Coscheduling", "extension_points": ["queueSort"]}])
    assert messages(result) == [
        PREFIX + 'only one queue sort plugin required for profile with scheduler name "a", but got 2']


def test_replacing_the_queue_sort_plugin(run):
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      enabled: [{name: Coscheduling}]\n"
                 "      disabled: [{name: '*'}]\n",
                 extra_plugins=[{"name": "Coscheduling", "extension_points": ["queueSort", "permit"]}])
    assert result.ok, result.errors


def test_different_queue_sort_through_multipoint(run, messages):
    # Validation compares the queueSort sets (both empty); cfgValidator compares the built frameworks.
    result = run("""
        profiles:
        - schedulerName: a
        - schedulerName: b
          plugins:
            multiPoint:
              enabled: [{name: CustomSort}]
              disabled: [{name: PrioritySort}]
        """, extra_plugins=[{"name": "CustomSort", "extension_points": ["queueSort"]}])
    assert messages(result) == ['initializing profiles: different queue sort plugins for profile "b": "CustomSort", '
                                'first: "PrioritySort"']


def test_no_bind_plugin(run, messages, fields):
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    bind:\n      disabled: [{name: DefaultBinder}]\n")
    assert messages(result) == [PREFIX + 'at least one bind plugin is needed for profile with scheduler name "a"']
    assert fields(result) == ["profiles[0].plugins.bind"]


def test_framework_stops_at_the_first_failing_profile(run, messages):
    result = run("""
        profiles:
        - schedulerName: a
          plugins: {score: {enabled: [{name: Nope1}]}}
        - schedulerName: b
          plugins: {score: {enabled: [{name: Nope2}]}}
        """)
    assert messages(result) == [PREFIX + 'ScorePlugin "Nope1" does not exist']


def _only_image_locality(weight):
    return ("profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n      disabled: [{name: '*'}]\n"
            "      enabled: [{name: PrioritySort}, {name: DefaultBinder}, {name: ImageLocality, weight: %d}]\n" % weight)


@pytest.mark.parametrize("weight, ok", [(1, True), (2 ** 31 - 1, True)])
def test_single_score_plugin_weights_up_to_int32_fit(run, weight, ok):
    assert run(_only_image_locality(weight)).ok is ok


@pytest.mark.parametrize("weight, ok", [(-1, False), (0, True), (1, True)])
def test_negative_weight_before_another_score_plugin_overflows(run, messages, fields, weight, ok):
    # getScoreWeights: MaxTotalScore - totalPriority wraps around once totalPriority is negative.
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    score:\n"
                 "      enabled: [{name: ImageLocality, weight: %d}]\n" % weight)
    if ok:
        assert result.ok, result.errors
    else:
        assert messages(result) == [PREFIX + "total score of Score plugins could overflow"]
        assert fields(result) == ["profiles[0].plugins.score.enabled[0].weight"]


def test_negative_weight_of_the_last_score_plugin_passes(run):
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n      disabled: [{name: '*'}]\n"
                 "      enabled: [{name: PrioritySort}, {name: DefaultBinder}, {name: ImageLocality, weight: -5}]\n")
    assert result.ok, result.errors


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
def test_node_resources_fit_args_are_checked_by_its_constructor(run, messages, fields, version):
    result = run("""
        profiles:
        - schedulerName: a
          pluginConfig:
          - name: NodeResourcesFit
            args:
              scoringStrategy:
                type: BestFit
                resources: [{name: cpu, weight: 101}]
        """, version=version)
    assert messages(result) == [
        PREFIX + 'initializing plugin "NodeResourcesFit": [scoringStrategy.type: Unsupported value: "BestFit": '
                 'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio", '
                 'scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range '
                 '(0, 100]]']
    assert fields(result)[0] == "profiles[0].pluginConfig[0].args.scoringStrategy.type"


def test_node_resources_fit_args_of_a_disabled_plugin_are_not_checked(run):
    result = run("""
        profiles:
        - schedulerName: a
          plugins: {multiPoint: {disabled: [{name: NodeResourcesFit}]}}
          pluginConfig:
          - name: NodeResourcesFit
            args: {scoringStrategy: {type: BestFit}}
        """)
    assert result.ok, result.errors


@pytest.mark.parametrize("version, ok", [("1.30", True)] + [(v, False) for v in SUPPORTED_MINORS[1:]])
def test_ebs_limits_per_version(run, version, ok):
    # v1.31.8 already refuses it in an enabled list (validation), v1.30.12 accepts it.
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    filter:\n      enabled: [{name: EBSLimits}]\n",
                 version=version)
    assert result.ok is ok


@pytest.mark.parametrize("version, ok", [("1.30", True), ("1.31", True)] + [(v, False) for v in SUPPORTED_MINORS[2:]])
def test_ebs_limits_in_multipoint_per_version(run, version, ok):
    # Validation does not look at multiPoint: v1.31.8 still registers the plugin and accepts it there,
    # v1.32.5 and later no longer know it.
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n      enabled: [{name: EBSLimits}]\n",
                 version=version)
    assert result.ok is ok


@pytest.mark.parametrize("version, ok", [("1.30", False), ("1.31", False)] + [(v, True) for v in SUPPORTED_MINORS[2:]])
def test_default_preemption_at_pre_enqueue_per_version(run, version, ok):
    # v1.32.5 and v1.33.3 accept DefaultPreemption in preEnqueue.enabled, v1.30.12 and v1.31.8 refuse it.
    result = run("profiles:\n- schedulerName: a\n  plugins:\n    preEnqueue:\n"
                 "      enabled: [{name: DefaultPreemption}]\n", version=version)
    assert result.ok is ok


@pytest.mark.parametrize("renew, retry, ok", [
    ("10s", "2s", True),
    ("2400ms", "2s", False),  # renewDeadline must be greater than 1.2 * retryPeriod
    ("2400000001ns", "2s", True),
])
def test_leader_election_jitter_rule(renew, retry, ok):
    errors = check_leader_election({"leaderElect": True, "leaseDuration": "15s", "renewDeadline": renew,
                                    "retryPeriod": retry})
    if ok:
        assert errors == []
    else:
        assert [e.message for e in errors] == [
            "couldn't create leader elector: renewDeadline must be greater than retryPeriod*JitterFactor"]


def test_leader_election_rule_only_when_leader_elect(run):
    assert run("leaderElection:\n  leaderElect: false\n  renewDeadline: 2s\n  retryPeriod: 2s\n").ok
    assert not run("leaderElection:\n  renewDeadline: 2s\n  retryPeriod: 2s\n").ok
