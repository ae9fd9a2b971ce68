# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout filters as the playbooks and the verify role call them, on hostvars: a cluster per inventory group
(kube_scheduler_cluster_groups) beside kube_scheduler_cluster; the masters the verify role compares a master with
(its cluster's, not the play's); the metrics gate across clusters, each through its own API server."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kubesched.schedulers.plugins.filter.rollout_order import (
    rollout_cluster_hosts, rollout_clusters, rollout_waves)

LEASE = "kube-system/kube-scheduler"


def plan(host, holder):
    return {"pending": True, "plan": {"instances": {"kube-scheduler": {"action": "update", "lease_access": {
        "status": "allowed", "lease": LEASE, "holder": "%s_4f1c" % holder, "held_here": host == holder}}}}}


def fleet(**extra):
    """east: e1 e2 (e1 holds the lease), west: w1 w2 (w2 holds it), as inventory groups named in
    kube_scheduler_cluster_groups; ``extra``: {host: more variables}."""
    hostvars = {}
    for group, hosts, holder in (("east", ["e1", "e2"], "e1"), ("west", ["w1", "w2"], "w2")):
        for host in hosts:
            hostvars[host] = dict({"group_names": ["kube_control_plane", group], "kube_scheduler_plan": plan(host, holder),
                                   "kube_scheduler_cluster_groups": ["east", "west"]}, **extra.get(host, {}))
    return hostvars


def test_cluster_groups_make_waves_as_kube_scheduler_cluster_does():
    result = rollout_waves(["e1", "e2", "w1", "w2"], fleet())
    assert result["waves"] == [["e2", "w1"], ["e1", "w2"]] and result["serial"] == [2, 2]
    assert "cluster east: apply order: e2, e1" in result["lines"]
    by_variable = dict((host, dict(vars_, group_names=["kube_control_plane"], kube_scheduler_cluster=host[0],
                                   kube_scheduler_cluster_groups=[])) for host, vars_ in fleet().items())
    assert rollout_waves(["e1", "e2", "w1", "w2"], by_variable)["waves"] == [["e2", "w1"], ["e1", "w2"]]


def test_a_master_in_two_cluster_groups_or_with_a_conflicting_variable_stops_the_plan():
    two = fleet(w1={"group_names": ["kube_control_plane", "east", "west"]})
    with pytest.raises(AnsibleFilterError, match=r"w1 is in 2 cluster groups \(east, west\)"):
        rollout_waves(["e1", "e2", "w1", "w2"], two)
    conflict = fleet(e2={"kube_scheduler_cluster": "west"})
    with pytest.raises(AnsibleFilterError, match=r"^kube_scheduler_cluster: e2 sets 'west', but it is in the cluster group 'east'"):
        rollout_waves(["e1", "e2", "w1", "w2"], conflict)


def test_the_verify_role_compares_a_master_with_its_own_clusters_masters_only():
    hostvars = fleet()
    assert rollout_clusters(["e1", "w2"], hostvars) == {"e1": "east", "w2": "west"}
    assert rollout_cluster_hosts(["e2", "w1", "e1", "w2"], "w1", hostvars) == ["w1", "w2"]
    # No cluster named: every host is the masters group's one cluster, as before.
    plain = {"m1": {"group_names": ["kube_control_plane"]}, "m2": {"group_names": ["kube_control_plane"]}}
    assert rollout_cluster_hosts(["m1", "m2"], "m2", plain) == ["m1", "m2"]


def test_the_metrics_gate_across_clusters_needs_each_clusters_own_api_server():
    hosts = ["e1", "e2", "w1", "w2"]
    with pytest.raises(AnsibleFilterError, match=(
            r"^kube_scheduler_rollout_verify: the metrics gate of cluster east and of cluster west would read the same "
            r"API server \(kube_scheduler_verify_api_host localhost, kube_scheduler_verify_k8s_kubeconfig \(the default, "
            r"~/.kube/config\), kube_scheduler_verify_k8s_context \(its current one\)\): set "
            r"kube_scheduler_verify_k8s_kubeconfig \(or _context\) in each cluster's group variables")):
        rollout_waves(hosts, fleet(), gate=True)
    same = dict((host, {"kube_scheduler_verify_k8s_kubeconfig": "/k/fleet.conf"}) for host in hosts)
    with pytest.raises(AnsibleFilterError, match=r"kube_scheduler_verify_k8s_kubeconfig /k/fleet.conf"):
        rollout_waves(hosts, fleet(**same), gate=True)
    own = dict((host, {"kube_scheduler_verify_k8s_kubeconfig": "/k/%s.conf" % host[0]}) for host in hosts)
    assert rollout_waves(hosts, fleet(**own), gate=True)["waves"] == [["e2", "w1"], ["e1", "w2"]]
    contexts = dict((host, {"kube_scheduler_verify_k8s_context": host[0]}) for host in hosts)
    assert rollout_waves(hosts, fleet(**contexts), gate=True)["serial"] == [2, 2]
    # One cluster with a change is gated through its API server as before, whatever the variables.
    one = fleet()
    one["w1"]["kube_scheduler_plan"] = one["w2"]["kube_scheduler_plan"] = {"pending": False, "plan": {}}
    assert rollout_waves(hosts, one, gate=True)["order"] == ["e2", "e1"]
