"""needs_node_facts: the roles gather a master's network facts only when resolving its instances needs them.

The property, against the real resolve(): where needs_node_facts says no, resolving without the node's facts gives
exactly what resolving with them gives (the facts would change nothing); where it says yes, resolving without them
fails or resolves differently (skipping the facts would break or weaken the instance). And the roles' filter is the
library's function."""
from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.filter.needs_node_facts import FilterModule
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import needs_node_facts, resolve

NODE = {"address": "10.20.0.7", "addresses": ["10.20.0.7", "fd00::7"], "names": ["master-1", "master-1.example"]}
CASES = [
    {},
    {"bind_address": "127.0.0.1"},
    {"bind_address": "::1"},
    {"bind_address": "127.0.0.1", "serving_cert": True},
    {"bind_address": "node"},
    {"bind_address": "node", "serving_cert": False},
    {"bind_address": "0.0.0.0"},
    {"bind_address": "10.20.0.7"},
    {"bind_address": "10.20.0.7", "serving_cert": False},
    {"serving_cert": False},
]


def resolved(instance, node):
    extra = dict({"name": "extra", "secure_port": 10300, "config": {
        "leaderElection": {"resourceName": "extra"}, "profiles": [{"schedulerName": "extra"}]}}, **instance)
    instances, errors, _warnings = resolve([extra], "1.35.4", "/etc/kubernetes/schedulers", node=node)
    return instances, errors


@pytest.mark.parametrize("instance", CASES, ids=[str(case) for case in CASES])
def test_the_facts_are_gathered_exactly_when_resolving_needs_them(instance):
    with_facts = resolved(instance, NODE)
    assert with_facts[1] == [], with_facts
    needed = needs_node_facts([{"name": "kube-scheduler", "default_scheduler": True}, instance])
    assert needed == (resolved(instance, None) != with_facts)


def test_the_cases_cover_both_answers():
    answers = {needs_node_facts([case]) for case in CASES}
    assert answers == {True, False}


@pytest.mark.parametrize("malformed", [None, "node", {"bind_address": "node"}, [None, 3, "x"],
                                       [{"bind_address": "not an address"}]])
def test_a_malformed_list_is_left_to_resolve(malformed):
    assert needs_node_facts(malformed) is False


def test_the_filter_is_the_library_function():
    assert FilterModule().filters()["needs_node_facts"] is needs_node_facts
