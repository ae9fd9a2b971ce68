"""The action plugin hands the library plain JSON types, whatever ansible-core 2.19 tagged on the task arguments."""
from __future__ import annotations

from ansible.parsing.utils.yaml import from_yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import plain

TEXT = """
profiles:
  - schedulerName: bin-packing
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
            resources: [{name: cpu, weight: 1}, {name: memory, weight: 1.5}]
    plugins: {multiPoint: {enabled: [{name: ImageLocality, weight: 0}]}}
leaderElection: {leaderElect: true, leaseDuration: null}
"""
JSON_TYPES = (dict, list, str, int, float, bool, type(None))


def _types(value, path="$"):
    yield path, type(value)
    if isinstance(value, dict):
        for key, item in value.items():
            yield path + ".<key>", type(key)
            yield from _types(item, "%s.%s" % (path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _types(item, "%s[%d]" % (path, index))


def test_tagged_values_become_exact_json_types_with_equal_values():
    tagged = from_yaml(TEXT, file_name="/playbook/vars.yml")
    assert any(t not in JSON_TYPES for dummy, t in _types(tagged)), "ansible-core no longer tags YAML values"
    untagged = plain(tagged)
    assert [(p, t) for p, t in _types(untagged) if t not in JSON_TYPES] == []
    assert untagged == tagged
    assert untagged["leaderElection"]["leaderElect"] is True
    weight = untagged["profiles"][0]["pluginConfig"][0]["args"]["scoringStrategy"]["resources"][1]["weight"]
    assert weight.__class__ is float


def test_tuples_become_lists():
    assert plain({"a": ("x", 1)}) == {"a": ["x", 1]}
