# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One instance spec: the docs of scheduler_instances and the roles' argument specs say what instances/_instance_spec.py says."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.modules import scheduler_instances
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances._instance_spec import INSTANCE_SPEC
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import FIELDS, resolve

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..")
KEYS = ("type", "default", "choices", "elements", "required", "no_log")


def shape(options, keys=KEYS):
    """The facts an option states, without its prose; unset keys and their Ansible defaults are the same."""
    defaults = {"required": False, "no_log": False}
    return dict((name, dict((key, option.get(key, defaults.get(key))) for key in keys)) for name, option in options.items())


def role_options(role, entry_point):
    with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")) as handle:
        specs = yaml.safe_load(handle)["argument_specs"]
    return specs[entry_point]["options"]["kube_scheduler_instances"]["options"]


@pytest.mark.parametrize("where,options,keys", [
    # Module docs have no no_log key; the action hides the whole result instead.
    ("scheduler_instances docs", yaml.safe_load(scheduler_instances.DOCUMENTATION)["options"]["instances"]["suboptions"],
     KEYS[:-1]),
    ("systemd role", role_options("systemd", "main"), KEYS),
    ("static_pod role", role_options("static_pod", "main"), KEYS),
])
def test_docs_and_argument_specs_say_what_the_spec_says(where, options, keys):
    assert shape(options, keys) == shape(INSTANCE_SPEC, keys), where


def test_the_model_validates_every_field_of_the_spec_and_nothing_else():
    assert sorted(FIELDS) == sorted(INSTANCE_SPEC)
    assert dict((field, default) for field, (_kind, default) in FIELDS.items()) == \
        dict((field, spec.get("default")) for field, spec in INSTANCE_SPEC.items())
    _resolved, errors, _warnings = resolve([{"name": "a", "default_scheduler": True, "colour": "blue"}], "1.34.2", "/etc/k")
    assert errors == ["kube_scheduler_instances[0].colour: unknown field; known fields are %s" % ", ".join(sorted(INSTANCE_SPEC))]


def test_config_and_config_content_are_exclusive_as_the_spec_says():
    _resolved, errors, _warnings = resolve([{"name": "a", "default_scheduler": True, "config": {},
                                             "config_content": "kind: KubeSchedulerConfiguration"}], "1.34.2", "/etc/k")
    assert errors == ["kube_scheduler_instances[0]: config and config_content are mutually exclusive: give one of them"]
