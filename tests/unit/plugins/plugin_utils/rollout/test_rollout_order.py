# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The apply order: each lease moves at most once (its holder last), or the plan says why no order can;
clusters side by side in waves, a canary cluster first; the fleet report after a wave."""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.rollout_order import (
    OrderError, cluster_of, fleet_report, master_view, order_cluster, waves)

DEFAULT = "kube-system/kube-scheduler"
BATCH = "kube-system/batch-scheduler"


def plan(pending=True, **leases):
    """A scheduler_rollout result: one instance per lease, {lease: (action, holder identity or None, held here)}."""
    instances = {}
    for index, (lease, (action, holder, here)) in enumerate(sorted(leases.items())):
        access = {"status": "allowed", "lease": lease.replace("__", "/"), "holder": holder, "held_here": here,
                  "holder_detail": "held by %s" % holder if holder else "unreadable"}
        instances["i%d" % index] = {"action": action, "lease_access": access}
    return {"pending": pending, "plan": {"instances": instances}}


def view(host, cluster="c", pending=True, holds=(), restarts=(DEFAULT,), reads=(DEFAULT,), holder_of=None):
    """One master: it restarts its instance of each lease in ``restarts``, keeps the others of ``reads`` running,
    and holds ``holds``."""
    leases = {}
    for lease in set(restarts) | set(reads) | set(holds):
        holder = (holder_of or {}).get(lease, "")
        if lease in holds:
            holder = "%s_0b5e" % host
        leases[lease.replace("/", "__")] = ("update" if lease in restarts else "none", holder, lease in holds)
    return master_view(host, plan(pending, **leases), cluster)


def test_the_holder_of_the_one_lease_goes_last_the_others_in_inventory_order():
    masters = [view("m1", holds=[DEFAULT]), view("m2", holder_of={DEFAULT: "m1_0b5e"}),
               view("m3", holder_of={DEFAULT: "m1_0b5e"})]
    result = order_cluster(masters)
    assert result["order"] == ["m2", "m3", "m1"]
    assert result["cycle"] is None and result["fallback"] is None
    assert result["leases"][DEFAULT] == ("held by m1: moves once, when it changes (after every other master that "
                                         "restarts it)")


def test_a_master_without_a_change_is_not_ordered_and_a_holder_that_does_not_restart_does_not_move_it():
    masters = [view("m1", holds=[DEFAULT], restarts=()), view("m2"), view("m3", pending=False)]
    result = order_cluster(masters)
    assert result["order"] == ["m1", "m2"]
    assert result["leases"][DEFAULT] == "held by m1, which does not restart it: it does not move"


def test_two_leases_on_one_master_and_a_second_holder_of_a_lease_only_it_restarts():
    # m3 holds both leases; m2 holds nothing; m1 holds a third lease only it runs: no master waits for m1.
    own = "kube-system/own"
    masters = [view("m1", holds=[own], restarts=(DEFAULT, BATCH, own), reads=(DEFAULT, BATCH, own)),
               view("m2", restarts=(DEFAULT, BATCH), reads=(DEFAULT, BATCH)),
               view("m3", holds=[DEFAULT, BATCH], restarts=(DEFAULT, BATCH), reads=(DEFAULT, BATCH))]
    result = order_cluster(masters)
    # m1 holds a lease too, so it goes after m2 (the holders last), and m3 after both (it holds leases m1 and m2
    # restart standbys of).
    assert result["order"] == ["m2", "m1", "m3"]
    assert "moves once" in result["leases"][DEFAULT] and "moves once" in result["leases"][own]


def test_holders_of_two_leases_that_stand_by_for_each_other_form_a_cycle_and_the_plan_says_why():
    masters = [view("m1", holds=[DEFAULT], restarts=(DEFAULT, BATCH), reads=(DEFAULT, BATCH)),
               view("m2", holds=[BATCH], restarts=(DEFAULT, BATCH), reads=(DEFAULT, BATCH)),
               view("m3", restarts=(DEFAULT, BATCH), reads=(DEFAULT, BATCH))]
    result = order_cluster(masters)
    assert result["order"] == ["m3", "m1", "m2"]
    assert result["cycle"].startswith("no order moves every lease at most once: m1 holds kube-system/kube-scheduler "
                                      "and must wait for m2; m2 holds kube-system/batch-scheduler and must wait for m1.")
    assert result["leases"][DEFAULT] == ("held by m1: moves when it changes, and may move again when m2 change")
    assert "moves once" in result["leases"][BATCH]


def test_unknown_holders_fall_back_to_inventory_order_and_say_why():
    masters = [master_view(host, plan(**{"kube-system__kube-scheduler": ("update", None, False)}), "c")
               for host in ("m1", "m2", "m3")]
    masters[0]["leases"][DEFAULT]["unknown"] = "the API server is unreachable from this master"
    result = order_cluster(masters)
    assert result["order"] == ["m1", "m2", "m3"]
    assert result["fallback"] == "inventory order: the lease holders could not be read (the API server is unreachable from this master)"
    no_check = order_cluster([master_view(host, {"pending": True, "plan": {"instances": {"a": {"action": "update"}}}}, "c")
                              for host in ("m1", "m2")])
    assert no_check["order"] == ["m1", "m2"] and no_check["fallback"].startswith("inventory order: no lease to read")


def test_a_lease_held_outside_the_rollout_or_unheld_imposes_nothing():
    masters = [view("m1", holder_of={DEFAULT: "kubeadm-host_1"}), view("m2", holder_of={DEFAULT: "kubeadm-host_1"})]
    result = order_cluster(masters)
    assert result["order"] == ["m1", "m2"]
    assert result["leases"][DEFAULT].startswith("held by kubeadm-host_1, not a master")
    assert "unheld" in order_cluster([view("m1"), view("m2")])["leases"][DEFAULT]


def fleet():
    return ([view("a1", "a"), view("a2", "a", holds=[DEFAULT]), view("a3", "a")]
            + [view("b1", "b", holds=[DEFAULT]), view("b2", "b")]
            + [view("c1", "c"), view("c2", "c", pending=False), view("c3", "c"), view("c4", "c", holds=[DEFAULT])])


def test_wave_k_is_the_kth_master_of_every_cluster_and_serial_is_the_wave_sizes():
    result = waves(fleet())
    assert result["waves"] == [["a1", "b2", "c1"], ["a3", "b1", "c3"], ["a2", "c4"]]
    assert result["serial"] == [3, 3, 2]
    assert result["order"] == ["a1", "b2", "c1", "a3", "b1", "c3", "a2", "c4"]
    assert "wave 1: a1, b2, c1" in result["lines"]
    assert "cluster a: apply order: a1, a3, a2" in result["lines"]


def test_a_canary_cluster_goes_first_alone_one_master_per_wave():
    result = waves(fleet(), canary="b")
    assert result["waves"] == [["b2"], ["b1"], ["a1", "c1"], ["a3", "c3"], ["a2", "c4"]]
    assert result["serial"] == [1, 1, 2, 2, 2]
    assert "wave 1: b2 (canary cluster b)" in result["lines"]
    with pytest.raises(OrderError, match=r"kube_scheduler_canary_cluster: Invalid value: 'd': no master .*: a, b, c\)"):
        waves(fleet(), canary="d")


@pytest.mark.parametrize("canary, form", [(["b"], "['b']: one cluster name, not a list of 1"),
                                          (("a", "b"), "['a', 'b']: one cluster name, not a list of 2"),
                                          (2, "2: one cluster name, not a number"), (True, "True: one cluster name, not a boolean"),
                                          (" b", "' b': one cluster name, not a name with spaces around it")])
def test_a_canary_that_is_not_one_name_is_refused_naming_its_form(canary, form):
    with pytest.raises(OrderError) as refused:
        waves(fleet(), canary=canary)
    assert str(refused.value).startswith("kube_scheduler_canary_cluster: Invalid value: " + form)


@pytest.mark.parametrize("unset", [None, "", []])
def test_an_empty_canary_is_none(unset):
    assert waves(fleet(), canary=unset)["canary"] is None


def test_an_empty_cluster_variable_is_unset():
    assert cluster_of("m1", [], "", [], "masters") == "masters"


def test_one_cluster_is_one_master_per_wave_as_serial_1_and_nothing_pending_is_no_wave():
    result = waves([view("m1", "k", holds=[DEFAULT]), view("m2", "k"), view("m3", "k")])
    assert result["waves"] == [["m2"], ["m3"], ["m1"]] and result["serial"] == [1, 1, 1]
    assert not [line for line in result["lines"] if line.startswith("wave")]
    idle = waves([view("m1", "k", pending=False)])
    assert idle["order"] == [] and idle["serial"] == [1]
    assert idle["lines"][0] == "apply order: nothing to change"


def test_the_fleet_report_after_a_failed_wave_names_done_failed_untouched_and_unchanged_per_cluster():
    result = waves(fleet())
    report = fleet_report(result, ["a3", "b1", "c3"], {"b1": "b1: the health gate failed:\n  timeout -- put back"})
    assert report["clusters"]["a"] == {"done": ["a1", "a3"], "failed and restored": [], "untouched": ["a2"],
                                       "no change": []}
    assert report["clusters"]["b"]["failed and restored"] == ["b1: b1: the health gate failed: timeout -- put back"]
    assert report["clusters"]["b"]["done"] == ["b2"]
    assert report["clusters"]["c"] == {"done": ["c1", "c3"], "failed and restored": [], "untouched": ["c4"],
                                       "no change": ["c2"]}
    assert report["lines"][-1] == "wave 2 of 3 failed: the fleet stops here (waves 3 to 3 not started)"
    assert report["stopped"] is True
    done = fleet_report(result, ["a2", "c4"], {})
    assert done["lines"][-1] == "wave 3 of 3 done: the fleet is done" and not done["stopped"]


def test_a_cluster_group_names_the_masters_cluster_beside_the_variable_and_the_default():
    groups = ["east", "west"]
    assert cluster_of("e1", ["kube_control_plane", "east"], None, groups, "kube_control_plane") == "east"
    # The variable agreeing with the group is fine; without groups it names the cluster as before.
    assert cluster_of("e1", ["east"], "east", groups, "d") == "east"
    assert cluster_of("e1", ["east"], "lab", None, "d") == "lab"
    assert cluster_of("e1", ["east"], None, [], "d") == "d"
    # A master in no listed group may still name its cluster with the variable.
    assert cluster_of("l1", ["lab"], "lab", groups, "d") == "lab"


@pytest.mark.parametrize("group_names, cluster, groups, message", [
    (["east", "west"], None, ["east", "west"],
     r"^kube_scheduler_cluster_groups: m1 is in 2 cluster groups \(east, west\): a master belongs to one cluster\. "
     r"Remove it from every group but its cluster's, .*Nothing was changed\.$"),
    (["east"], "west", ["east", "west"],
     r"^kube_scheduler_cluster: m1 sets 'west', but it is in the cluster group 'east' \(kube_scheduler_cluster_groups\): "
     r"a master belongs to one cluster\. Drop kube_scheduler_cluster for it \(its group names the cluster\) or set it "
     r"to 'east'\. Nothing was changed\.$"),
    (["kube_control_plane"], None, ["east", "west"],
     r"^kube_scheduler_cluster_groups: m1 is in none of the cluster groups \(east, west\) and has no "
     r"kube_scheduler_cluster: add it to its cluster's group"),
    ([], None, "east", r"^kube_scheduler_cluster_groups \(of m1\): Invalid value: 'east': a list of inventory group names"),
    ([], None, ["east", ""], r"Invalid value: \['east', ''\]"),
    ([], None, ["east", "east"], r"^kube_scheduler_cluster_groups \(of m1\): Duplicate value: 'east'"),
])
def test_a_master_named_into_two_clusters_or_none_is_refused_naming_the_variable_and_the_fix(
        group_names, cluster, groups, message):
    with pytest.raises(OrderError, match=message):
        cluster_of("m1", group_names, cluster, groups, "d")
