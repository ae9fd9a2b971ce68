"""A temporary standby's name space is the collection's: no instance takes it, and a file at a standby's path is
removed only when it carries the standby's mark (module_utils/rollout/standbys.py), never for its name alone. So is the
preflight's static pod's, and no instance takes the name of another component of the master (its unit or manifest).

The reproducer: instances ``batch`` and ``kubesched-standby-batch``; from the second run on the plan took the second
instance's config for a leftover standby of ``batch`` and the apply stopped and deleted it.
"""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import OTHER_COMPONENTS
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


@pytest.mark.parametrize("name", ["kubesched-preflight-batch-4711", "kubesched-preflight-x"])
def test_an_instance_named_as_the_preflights_static_pod_is_refused(name):
    resolved, errors, _warnings = resolve([named(name)], VERSION, "/etc/kubernetes/schedulers")
    assert resolved == [] and len(errors) == 1
    assert errors[0].startswith("kube_scheduler_instances[0].name: Invalid value: %r: " % name)
    assert "reserved for the preflight's own static pod" in errors[0] and "give the instance another name" in errors[0]


@pytest.mark.parametrize("name", list(OTHER_COMPONENTS))
@pytest.mark.parametrize("state", ["present", "absent"])
def test_an_instance_named_as_another_component_of_the_master_is_refused(name, state):
    """An instance etcd, absent, once made the systemd apply stop and remove etcd.service (the engine tells no unit
    file apart from the roles'); present, it replaced the unit with kube-scheduler's."""
    resolved, errors, _warnings = resolve([dict(named(name), state=state)], VERSION, "/etc/kubernetes/schedulers")
    assert resolved == []
    assert errors == ["kube_scheduler_instances[0].name: Invalid value: %r: the name of another component of the master "
                      "(its unit %s.service, its static pod %s.yaml): an instance of that name would replace it, or stop "
                      "and remove it with state: absent; give the instance another name" % (name, name, name)]


@pytest.mark.parametrize("name", ["kubelet-scheduler", "etcd2", "scheduler-etcd", "kube-scheduler", "kubesched-preflight",
                                  "my-kubesched-preflight-x"])
def test_names_beside_the_reserved_ones_are_accepted(name):
    resolved, errors, _warnings = resolve([dict(named(name), default_scheduler=name == "kube-scheduler")], VERSION,
                                          "/etc/kubernetes/schedulers")
    assert errors == [] and [instance["name"] for instance in resolved] == [name]
