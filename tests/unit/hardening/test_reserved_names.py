"""A temporary standby's name space is the collection's: no instance takes it, and a file at a standby's path is
removed only when it carries the standby's mark (module_utils/_standby.py), never for its name alone.

The reproducer: instances ``batch`` and ``kubesched-standby-batch``; from the second run on the plan took the second
instance's config for a leftover standby of ``batch`` and the apply stopped and deleted it.
"""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve

VERSION = "1.37.2"


def named(name):
    return {"name": name, "config": {"leaderElection": {"leaderElect": True, "resourceName": name},
                                     "profiles": [{"schedulerName": name}]}}


@pytest.mark.parametrize("name", ["kubesched-standby-batch", "kubesched-standby-kube-scheduler", "kubesched-standby-x"])
def test_an_instance_named_as_a_standby_is_refused_naming_the_variable_and_the_fix(name):
    resolved, errors, _warnings = resolve([named("batch"), named(name)], VERSION, "/etc/kubernetes/schedulers")
    assert resolved == []
    message = "\n".join(errors)
    assert "kube_scheduler_instances[1].name: Invalid value: %r" % name in message
    assert "reserved for the temporary standbys" in message and "give the instance another name" in message


@pytest.mark.parametrize("name", ["kubesched-standby", "my-kubesched-standby-batch", "standby-batch"])
def test_names_outside_the_reserved_prefix_are_accepted(name):
    resolved, errors, _warnings = resolve([named(name)], VERSION, "/etc/kubernetes/schedulers")
    assert errors == [] and [instance["name"] for instance in resolved] == [name]
