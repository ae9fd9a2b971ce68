"""The attributes of the modules' docs: the collection's fragment (doc_fragments/attributes.py) says what its action
plugins share, and a module that writes sets its own check_mode and diff_mode. ansible-core merges the two one
attribute at a time, the module's keys winning (plugin_docs.merge_fragment), so an attribute a module sets must set
every key the fragment gives it, or the fragment's read-only words show in the module's docs."""
from __future__ import annotations

import importlib

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.doc_fragments.attributes import ModuleDocFragment

FRAGMENT = "kubesched.schedulers.attributes"
MODULES = ("placement_preview", "role_inputs", "scheduler_config", "scheduler_instances", "scheduler_rollout",
           "scheduler_upgrade_check")


def _documentation(name):
    module = importlib.import_module("ansible_collections.kubesched.schedulers.plugins.modules." + name)
    return yaml.safe_load(module.DOCUMENTATION)


@pytest.mark.parametrize("name", MODULES)
def test_every_action_plugin_module_extends_the_collection_attributes(name):
    assert FRAGMENT in _documentation(name)["extends_documentation_fragment"]


@pytest.mark.parametrize("name", MODULES)
def test_an_attribute_a_module_sets_itself_takes_nothing_from_the_fragment(name):
    shared = yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["attributes"]
    own = _documentation(name).get("attributes") or {}
    for attribute, values in own.items():
        assert sorted(set(shared.get(attribute, {})) - set(values)) == [], (name, attribute)
