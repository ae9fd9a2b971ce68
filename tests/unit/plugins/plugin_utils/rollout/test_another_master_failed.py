# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Another master failed its plan: why a master's pending change was held back, its change named part by part,
every master that could not be planned named with the reason its plan call answered."""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.another_master_failed import (
    another_master_failed, failure_reason, pending_summary)

CONFIG = "/etc/kubernetes/schedulers/kube-scheduler.yaml"
MANIFEST = "/etc/kubernetes/manifests/kube-scheduler.yaml"


def plan(**body):
    return {"pending": True, "plan": dict({"instances": {}}, **body)}


def test_each_instance_with_a_change_is_named_with_its_action_and_files():
    found = plan(instances={"kube-scheduler": {"action": "update", "files": [CONFIG, MANIFEST]},
                            "batch": {"action": "start", "files": []},
                            "idle": {"action": "none", "files": []}})
    assert pending_summary(found) == ["batch: start", "kube-scheduler: update (%s, %s)" % (CONFIG, MANIFEST)]


def test_the_other_parts_of_a_pending_change_are_named_too():
    found = plan(instances={"kube-scheduler": {"action": "none", "files": [], "lease_access": {"will_create": True}}},
                 directories=["/etc/kubernetes/schedulers"], link_changed=True, held=["kube-scheduler"],
                 standby_leftovers=["kube-scheduler"], stale_backups=["/var/lib/kubesched/static-pod/a/backup", "/b"])
    assert pending_summary(found) == [
        "kube-scheduler: create the lease Role and RoleBinding", "directories: /etc/kubernetes/schedulers",
        "the binary link", "a change an earlier run left (kube-scheduler), to gate again",
        "a temporary standby an earlier run left (kube-scheduler)", "2 backup(s) to remove"]
    assert pending_summary(None) == [] and pending_summary({"plan": None}) == []


@pytest.mark.parametrize("result, reason", [
    ({"unreachable": True, "msg": "Failed to connect to the host via ssh: ssh: connect to host 192.0.2.12 port 22:\n"
      "Connection timed out"}, "unreachable: Failed to connect to the host via ssh: ssh: connect to host 192.0.2.12 "
                               "port 22: Connection timed out"),
    ({"unreachable": True, "msg": "Task failed: Failed to connect to the host via ssh: No route to host"},
     "unreachable: Failed to connect to the host via ssh: No route to host"),
    ({"failed": True, "msg": "kube-scheduler: secure port 10271 is taken"}, "kube-scheduler: secure port 10271 is taken"),
    ({"failed": True, "msg": "x" * 400}, "x" * 297 + "..."),
    ({"changed": False, "pending": True}, None),  # the plan call answered: it failed at another step
    (None, None),  # it failed before the plan call
])
def test_the_reason_is_the_plan_calls_own_answer_when_it_got_that_far(result, reason):
    assert failure_reason(result) == reason


def test_the_message_names_the_change_the_masters_that_failed_and_the_way_on():
    found = plan(instances={"kube-scheduler": {"action": "update", "files": [CONFIG]}})
    message = another_master_failed("m1", found, [("m2", "unreachable: no route"), ("m3", None)])
    assert message == (
        "m1: its pending change was not applied: kube-scheduler: update (%s). The rollout changes no master while a "
        "master of the run could not be planned (the order and the lease handovers depend on every master's plan): "
        "m2 (unreachable: no route); m3 (it failed before its plan answered; its own output above says why). Fix "
        "m2, m3 and run again, or leave them out of the run (--limit)." % CONFIG)
    assert another_master_failed("m1", found, [("m2", "no")], check_mode=True).startswith(
        "m1: its pending change would not be applied: kube-scheduler: update")
    assert "leave it out of the run" in another_master_failed("m1", found, [("m2", "no")])


def test_nothing_failed_is_no_reason_to_hold_back():
    with pytest.raises(ValueError, match="no master failed"):
        another_master_failed("m1", plan(), [])
