# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine's typed plan and the mapping the module reports: the keys, their order (the module's JSON), what is
left out when there is nothing to say, and a reported plan read back as the same Plan."""

from __future__ import annotations

import json

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.plan import InstancePlan, Plan


def full():
    return Plan(link_changed=True, directories=["/etc/kubernetes/schedulers"], instances={
        "batch": InstancePlan("update", ["/etc/kubernetes/schedulers/batch.yaml"],
                              lease_access={"status": "allowed"}, preflight="accepted by /usr/local/bin/kube-scheduler"),
        "old": InstancePlan("remove", ["/etc/kubernetes/manifests/old.yaml"])},
        held=["batch"], stale_backups=["/var/lib/kubesched/old/backup"], standby_leftovers=["batch"])


def test_the_reported_form_has_the_modules_keys_in_the_modules_order():
    assert json.dumps(full().as_dict()) == json.dumps({
        "link_changed": True, "directories": ["/etc/kubernetes/schedulers"],
        "instances": {"batch": {"action": "update", "files": ["/etc/kubernetes/schedulers/batch.yaml"],
                                "lease_access": {"status": "allowed"},
                                "preflight": "accepted by /usr/local/bin/kube-scheduler"},
                      "old": {"action": "remove", "files": ["/etc/kubernetes/manifests/old.yaml"]}},
        "held": ["batch"], "stale_backups": ["/var/lib/kubesched/old/backup"], "standby_leftovers": ["batch"]})


def test_nothing_to_say_is_left_out_and_a_plan_reads_as_its_reported_form():
    plan = Plan(instances={"batch": InstancePlan()})
    assert plan.as_dict() == {"link_changed": False, "directories": [], "instances": {"batch": {"action": "none", "files": []}}}
    assert plan["instances"]["batch"]["action"] == "none" and "held" not in plan and dict(plan) == plan.as_dict()


def test_a_reported_plan_reads_back_as_the_same_plan():
    assert Plan.of(full().as_dict()) == full()
    plan = full()
    assert Plan.of(plan) is plan
