# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plugin args rules, ported from upstream validation_pluginargs_test.go (case names are upstream's; they call
the validators with a nil path, as here with ""). Expected (type, field) pairs are upstream's; full messages
follow validation_pluginargs.go and apimachinery's IsQualifiedName / labels.NewRequirement texts.
"""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _validation_pluginargs as validation_pluginargs

DEFAULT_STRATEGY = {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
QUALIFIED = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
             "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def _pairs(errors):
    return [(e.type, e.field) for e in errors]


INVALID, REQUIRED, DUPLICATE = "Invalid value", "Required value", "Duplicate value"
NOT_SUPPORTED, FORBIDDEN = "Unsupported value", "Forbidden"


@pytest.mark.parametrize("name, args, want", [
    ("valid args (default)", {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}, []),
    ("negative minCandidateNodesPercentage", {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100},
     [(INVALID, "minCandidateNodesPercentage")]),
    ("minCandidateNodesPercentage over 100", {"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100},
     [(INVALID, "minCandidateNodesPercentage")]),
    ("percentage 100, absolute 0 (boundaries)", {"minCandidateNodesPercentage": 100, "minCandidateNodesAbsolute": 0},
     []),
    ("negative minCandidateNodesAbsolute", {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1},
     [(INVALID, "minCandidateNodesAbsolute")]),
    ("all zero", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     [(INVALID, "minCandidateNodesPercentage"), (INVALID, "minCandidateNodesAbsolute")]),
    ("both negative", {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
     [(INVALID, "minCandidateNodesPercentage"), (INVALID, "minCandidateNodesAbsolute")]),
])
def test_default_preemption_args(name, args, want):
    assert _pairs(validation_pluginargs.validate_default_preemption_args("", args)) == want


def test_default_preemption_messages():
    errors = validation_pluginargs.validate_default_preemption_args("", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0})
    assert [e.message for e in errors] == [
        "minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
        "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage"]


@pytest.mark.parametrize("name, weight, want", [
    ("valid args", 10, []), ("lower boundary", 0, []), ("upper boundary", 100, []),
    ("hardPodAffinityWeight less than min", -1, [(INVALID, "hardPodAffinityWeight")]),
    ("hardPodAffinityWeight more than max", 101, [(INVALID, "hardPodAffinityWeight")]),
])
def test_inter_pod_affinity_args(name, weight, want):
    assert _pairs(validation_pluginargs.validate_inter_pod_affinity_args("", {"hardPodAffinityWeight": weight})) == want


def _constraint(**kwargs):
    constraint = {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}
    constraint.update(kwargs)
    return constraint


@pytest.mark.parametrize("name, args, want", [
    ("valid config",
     {"defaultConstraints": [_constraint(), _constraint(maxSkew=2, topologyKey="zone", whenUnsatisfiable="ScheduleAnyway")],
      "defaultingType": "List"}, []),
    ("maxSkew less than zero", {"defaultConstraints": [_constraint(maxSkew=-1)], "defaultingType": "List"},
     [(INVALID, "defaultConstraints[0].maxSkew")]),
    ("maxSkew zero", {"defaultConstraints": [_constraint(maxSkew=0)], "defaultingType": "List"},
     [(INVALID, "defaultConstraints[0].maxSkew")]),
    ("empty topology key", {"defaultConstraints": [_constraint(topologyKey="")], "defaultingType": "List"},
     [(REQUIRED, "defaultConstraints[0].topologyKey")]),
    ("whenUnsatisfiable is empty", {"defaultConstraints": [_constraint(whenUnsatisfiable="")],
                                    "defaultingType": "List"},
     [(REQUIRED, "defaultConstraints[0].whenUnsatisfiable")]),
    ("whenUnsatisfiable contains unsupported action",
     {"defaultConstraints": [_constraint(whenUnsatisfiable="unknown action")], "defaultingType": "List"},
     [(NOT_SUPPORTED, "defaultConstraints[0].whenUnsatisfiable")]),
    ("duplicated constraints", {"defaultConstraints": [_constraint(), _constraint(maxSkew=2)],
                                "defaultingType": "List"},
     [(DUPLICATE, "defaultConstraints[1]")]),
    ("label selector present", {"defaultConstraints": [_constraint(topologyKey="key",
                                                                   labelSelector={"matchLabels": {"a": "b"}})],
                                "defaultingType": "List"},
     [(FORBIDDEN, "defaultConstraints[0].labelSelector")]),
    ("list default constraints, no constraints", {"defaultingType": "List"}, []),
    ("system default constraints", {"defaultingType": "System"}, []),
    ("wrong constraints", {"defaultingType": "unknown"}, [(NOT_SUPPORTED, "defaultingType")]),
    ("system default constraints, but has constraints", {"defaultConstraints": [_constraint(topologyKey="key")],
                                                         "defaultingType": "System"},
     [(INVALID, "defaultingType")]),
])
def test_pod_topology_spread_args(name, args, want):
    assert _pairs(validation_pluginargs.validate_pod_topology_spread_args("", args)) == want


def test_pod_topology_spread_messages():
    errors = validation_pluginargs.validate_pod_topology_spread_args("args", {
        "defaultingType": "Lst", "defaultConstraints": [_constraint(whenUnsatisfiable="Never"), _constraint(
            whenUnsatisfiable="Never", topologyKey="a/b/c")]})
    assert [e.message for e in errors] == [
        'args.defaultingType: Unsupported value: "Lst": supported values: "System", "List"',
        'args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Never": supported values: "DoNotSchedule", '
        '"ScheduleAnyway"',
        "args.defaultConstraints[1].topologyKey: Invalid value: \"a/b/c\": a qualified name " + QUALIFIED
        + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        'args.defaultConstraints[1].whenUnsatisfiable: Unsupported value: "Never": supported values: "DoNotSchedule", '
        '"ScheduleAnyway"',
    ]


@pytest.mark.parametrize("name, resources, want", [
    ("valid config", [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}], []),
    ("invalid config", [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}],
     [(INVALID, "resources[0].weight")]),
    ("repeated resources", [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}],
     [(DUPLICATE, "resources[1].name")]),
])
def test_balanced_allocation_args(name, resources, want):
    assert _pairs(validation_pluginargs.validate_balanced_allocation_args("", {"resources": resources})) == want


def _affinity(required_expr=None, preferred_fields=None, weight=1):
    affinity = {}
    if required_expr is not None:
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": required_expr}]}
    if preferred_fields is not None:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": weight, "preference": {"matchFields": preferred_fields}}]
    return {"addedAffinity": affinity}


REQ = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
PREF = "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0]"


@pytest.mark.parametrize("name, args, want", [
    ("empty", {}, []),
    ("valid added affinity", _affinity([{"key": "label-1", "operator": "In", "values": ["label-1-val"]}],
                                       [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]), []),
    ("invalid added affinity", _affinity([{"key": "invalid/label/key", "operator": "In", "values": ["label-1-val"]}],
                                         [{"key": "metadata.name", "operator": "In", "values": ["node-1", "node-2"]}]),
     [(INVALID, REQ + ".key"), (INVALID, PREF + ".values")]),
    ("preferred term with weight 0 is skipped", _affinity(None, [{"key": "k", "operator": "Foo"}], weight=0), []),
    ("unsupported operator", _affinity([{"key": "k", "operator": "Foo"}]), [(NOT_SUPPORTED, REQ + ".operator")]),
    ("In needs values", _affinity([{"key": "k", "operator": "In"}]), [(INVALID, REQ + ".values")]),
    ("Exists takes no values", _affinity([{"key": "k", "operator": "Exists", "values": ["a"]}]),
     [(INVALID, REQ + ".values")]),
    ("Gt needs one integer", _affinity([{"key": "k", "operator": "Gt", "values": ["x"]}]),
     [(INVALID, REQ + ".values[0]")]),
    ("Gt with one integer", _affinity([{"key": "k", "operator": "Gt", "values": ["10"]}]), []),
    ("matchFields operator", _affinity(None, [{"key": "metadata.name", "operator": "Exists"}]),
     [(NOT_SUPPORTED, PREF + ".operator")]),
])
def test_node_affinity_args(name, args, want):
    assert _pairs(validation_pluginargs.validate_node_affinity_args("", args)) == want


def test_node_affinity_messages():
    errors = validation_pluginargs.validate_node_affinity_args("", _affinity([{"key": "k", "operator": "In"}, {"key": "k", "operator": "X"}]))
    assert [e.message for e in errors] == [
        REQ + ".values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
        REQ[:-3] + '[1].operator: Unsupported value: "X": supported values: "In", "NotIn", "Exists", "DoesNotExist", '
                   '"Gt", "Lt"']


@pytest.mark.parametrize("name, args, gate, want", [
    ("zero is a valid config", {"bindTimeoutSeconds": 0}, False, []),
    ("positive value is valid config", {"bindTimeoutSeconds": 10}, False, []),
    ("negative value is invalid config", {"bindTimeoutSeconds": -10}, False, [(INVALID, "bindTimeoutSeconds")]),
    ("[gate=off] shape should be nil when the feature is off", {"bindTimeoutSeconds": 10}, False, []),
    ("[gate=off] error if the shape is not nil when the feature is off",
     {"bindTimeoutSeconds": 10, "shape": [{"utilization": 1, "score": 1}, {"utilization": 3, "score": 3}]}, False,
     [(INVALID, "shape")]),
    ("[gate=on] shape should not be empty", {"bindTimeoutSeconds": 10, "shape": []}, True, [(REQUIRED, "shape")]),
    ("[gate=on] shape points must be sorted in increasing order",
     {"bindTimeoutSeconds": 10, "shape": [{"utilization": 3, "score": 3}, {"utilization": 1, "score": 1}]}, True,
     [(INVALID, "shape[1].utilization")]),
    ("[gate=on] shape point: invalid utilization and score",
     {"bindTimeoutSeconds": 10, "shape": [{"utilization": -1, "score": 1}, {"utilization": 10, "score": -1},
                                          {"utilization": 20, "score": 11}, {"utilization": 101, "score": 1}]}, True,
     [(INVALID, "shape[0].utilization"), (INVALID, "shape[1].score"), (INVALID, "shape[2].score"),
      (INVALID, "shape[3].utilization")]),
])
def test_volume_binding_args(name, args, gate, want):
    assert _pairs(validation_pluginargs.validate_volume_binding_args("", args, "StorageCapacityScoring", gate)) == want


@pytest.mark.parametrize("name, args, expect", [
    ("IgnoredResources: too long value", {"ignoredResources": ["longvalue" + "a" * 64]},
     "name part must be no more than 63 characters"),
    ("IgnoredResources: name is empty", {"ignoredResources": ["example.com/"]}, "name part must be non-empty"),
    ("IgnoredResources: name has too many slash", {"ignoredResources": ["example.com/aaa/bbb"]},
     "a qualified name must consist of alphanumeric characters"),
    ("IgnoredResources: valid args", {"ignoredResources": ["example.com"]}, None),
    ("IgnoredResourceGroups: valid args", {"ignoredResourceGroups": ["example.com"]}, None),
    ("IgnoredResourceGroups: illegal args", {"ignoredResourceGroups": ["example.com/"]}, "name part must be non-empty"),
    ("IgnoredResourceGroups: name is too long", {"ignoredResourceGroups": ["a" * 64]},
     "name part must be no more than 63 characters"),
    ("IgnoredResourceGroups: name cannot be contain slash", {"ignoredResourceGroups": ["example.com/aa"]},
     "resource group name can't contain '/'"),
])
def test_fit_args(name, args, expect):
    args = dict(args, scoringStrategy=DEFAULT_STRATEGY)
    errors = validation_pluginargs.validate_node_resources_fit_args("", args)
    if expect is None:
        assert errors == []
    else:
        assert any(expect in e.message for e in errors)


def test_fit_args_without_scoring_strategy_are_not_checked_further():
    # ValidateNodeResourcesFitArgs checks scoringStrategy only when it is set (defaulting always sets it).
    assert validation_pluginargs.validate_node_resources_fit_args("", {}) == []


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
@pytest.mark.parametrize("name, resources, want", [
    ("default config", None, []),
    ("multi valid resources", [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 10}], []),
    ("upper boundary", [{"name": "cpu", "weight": 100}], []),
    ("weight less than min", [{"name": "cpu", "weight": 0}], [(INVALID, "scoringStrategy.resources[0].weight")]),
    ("weight greater than max", [{"name": "cpu", "weight": 101}], [(INVALID, "scoringStrategy.resources[0].weight")]),
    ("multi invalid resources", [{"name": "cpu", "weight": 0}, {"name": "memory", "weight": 101}],
     [(INVALID, "scoringStrategy.resources[0].weight"), (INVALID, "scoringStrategy.resources[1].weight")]),
])
def test_least_and_most_allocated_scoring_strategy(strategy, name, resources, want):
    # Upstream's field paths in these tests predate the scoringStrategy prefix; the prefix follows the source.
    args = {"scoringStrategy": {"type": strategy, "resources": resources}}
    assert _pairs(validation_pluginargs.validate_node_resources_fit_args("", args)) == want


SHAPE = "scoringStrategy.requestedToCapacityRatio.shape"  # our field; upstream's message says scoringStrategy.shape


@pytest.mark.parametrize("name, resources, shape, want", [
    ("no shapes", None, None, [(REQUIRED, SHAPE)]),
    ("weight greater than max", [{"name": "cpu", "weight": 101}], [{"utilization": 30, "score": 3}],
     [(INVALID, "scoringStrategy.resources[0].weight")]),
    ("valid shapes", None, [{"utilization": 30, "score": 3}], []),
    ("utilization less than min", None, [{"utilization": -1, "score": 3}], [(INVALID, SHAPE + "[0].utilization")]),
    ("utilization greater than max", None, [{"utilization": 101, "score": 3}], [(INVALID, SHAPE + "[0].utilization")]),
    ("duplicated utilization values", None, [{"utilization": 10, "score": 3}, {"utilization": 10, "score": 3}],
     [(INVALID, SHAPE + "[1].utilization")]),
    ("non-increasing utilization values", None, [{"utilization": 10, "score": 3}, {"utilization": 20, "score": 3},
                                                 {"utilization": 15, "score": 3}],
     [(INVALID, SHAPE + "[2].utilization")]),
    ("score less than min", None, [{"utilization": 10, "score": -1}], [(INVALID, SHAPE + "[0].score")]),
    ("score greater than max", None, [{"utilization": 10, "score": 11}], [(INVALID, SHAPE + "[0].score")]),
    ("score boundaries", None, [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}], []),
])
def test_requested_to_capacity_ratio_scoring_strategy(name, resources, shape, want):
    args = {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": resources,
                                "requestedToCapacityRatio": {"shape": shape}}}
    assert _pairs(validation_pluginargs.validate_node_resources_fit_args("", args)) == want


def test_requested_to_capacity_ratio_shape_is_checked_whatever_the_type():
    # v1.30.12-v1.35.4: a shape under a MostAllocated strategy is checked (and accepted when valid); upstream's
    # message says scoringStrategy.shape, our field names requestedToCapacityRatio.shape.
    errors = validation_pluginargs.validate_node_resources_fit_args("", {"scoringStrategy": {
        "type": "MostAllocated", "requestedToCapacityRatio": {"shape": []}}})
    assert [e.message for e in errors] == [
        "scoringStrategy.shape: Required value: at least one point must be specified"]
    assert [e.field for e in errors] == ["scoringStrategy.requestedToCapacityRatio.shape"]
    assert validation_pluginargs.validate_node_resources_fit_args("", {"scoringStrategy": {
        "type": "LeastAllocated", "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}]}}}) == []


def test_requested_to_capacity_ratio_without_param_would_panic():
    # Validation passes, then NewFit dereferences the nil RequestedToCapacityRatio: every binary 1.30-1.35 panics
    # (noderesources/fit.go). The library refuses with the field instead.
    args = {"scoringStrategy": {"type": "RequestedToCapacityRatio"}}
    assert validation_pluginargs.validate_node_resources_fit_args("", args) == []
    panic = validation_pluginargs.fit_args_panic("", args)
    assert panic.field == "scoringStrategy.requestedToCapacityRatio"
    assert "panics" in panic.message
    assert validation_pluginargs.fit_args_panic("", {"scoringStrategy": {"type": "MostAllocated"}}) is None


@pytest.mark.parametrize("args, filter_gate, binding_gates, want", [
    ({"filterTimeout": "0s"}, True, False, []),
    ({"filterTimeout": "-1s"}, True, False, [(INVALID, "filterTimeout")]),
    ({"filterTimeout": "1s"}, False, False, [(FORBIDDEN, "filterTimeout")]),
    ({"bindingTimeout": "1s"}, True, True, []),
    ({"bindingTimeout": "999ms"}, True, True, [(INVALID, "bindingTimeout")]),
    ({"bindingTimeout": "10m"}, True, False, [(FORBIDDEN, "bindingTimeout")]),
])
def test_dynamic_resources_args(args, filter_gate, binding_gates, want):
    assert _pairs(validation_pluginargs.validate_dynamic_resources_args("", args, filter_gate, binding_gates)) == want
