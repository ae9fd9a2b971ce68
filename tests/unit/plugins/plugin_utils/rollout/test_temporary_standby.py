# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make before break, on the controller: which instances get a temporary standby (from every
master's plan), and what the standby is (the new config and flags on a spare port, a short retry period)."""

from __future__ import annotations

import os
import sys

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.filter.rollout_order import rollout_waves
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.rollout_files import RolloutError, static_pod_host, systemd_host
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.static_pod_manifest import scheduler_container
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.temporary_standby import needed

sys.path.insert(0, os.path.dirname(__file__))
from test_rollout_order import DEFAULT, view  # noqa: E402  pylint: disable=wrong-import-position
from test_rollout_files import resolved_at, static_settings, systemd_settings  # noqa: E402  pylint: disable=wrong-import-position

VERSION = "1.37.2"
SYSTEMD, STATIC = systemd_settings(VERSION), static_settings(VERSION)


def resolved(*raw):
    return resolved_at(VERSION, *raw)


def default(**config):
    return resolved({"name": "kube-scheduler", "default_scheduler": True, "config": config})[0]


# --- which instances --------------------------------------------------------------------------------------------

def test_a_single_master_holding_its_lease_gets_one_and_the_plan_says_so():
    found, lines = needed([view("m1", holds=(DEFAULT,))])
    assert found == {"m1": ["i0"]}
    assert lines == ["m1: i0 holds lease kube-system/kube-scheduler and no other master stands by for it: a temporary "
                     "standby with the new config takes the lease while i0 is replaced (make before break), then hands "
                     "it back"]


def test_no_standby_where_another_master_stands_by_the_master_does_not_hold_the_lease_or_does_not_restart():
    # Three masters: the holder's lease has standbys on the others (leader last moves it once).
    assert needed([view("m1"), view("m2"), view("m3", holds=(DEFAULT,))]) == ({}, [])
    # One master that does not hold the lease (held outside, or unheld), or keeps its process: nothing moves.
    assert needed([view("m1", holder_of={DEFAULT: "elsewhere_1"})]) == ({}, [])
    assert needed([view("m1", holds=(DEFAULT,), restarts=())]) == ({}, [])
    assert needed([view("m1", holds=(DEFAULT,), pending=False)]) == ({}, [])


def test_the_master_variable_turns_it_off_and_clusters_are_judged_apart():
    plans = {"a1": view("a1", holds=(DEFAULT,)), "b1": view("b1", holds=(DEFAULT,)), "b2": view("b2")}
    hostvars = {}
    for host, master in plans.items():
        hostvars[host] = {"kube_scheduler_cluster": host[0], "kube_scheduler_plan": _plan_of(master)}
    result = rollout_waves(sorted(plans), hostvars, kind="static_pod")
    # b1 holds the lease, but b2 (same cluster) stands by for it; a1 is alone in cluster a.
    assert result["standbys"] == {"a1": ["i0"]}
    assert any(line.startswith("a1: i0 holds lease") for line in result["lines"])
    # systemd's default is off (a restart is shorter than the standby's hand-back); a master variable turns it on.
    assert rollout_waves(sorted(plans), hostvars, kind="systemd")["standbys"] == {}
    hostvars["a1"]["kube_scheduler_make_before_break"] = True
    assert rollout_waves(sorted(plans), hostvars, kind="systemd")["standbys"] == {"a1": ["i0"]}
    hostvars["a1"]["kube_scheduler_make_before_break"] = "false"
    assert rollout_waves(sorted(plans), hostvars, kind="static_pod")["standbys"] == {}
    hostvars["a1"]["kube_scheduler_make_before_break"] = "sometimes"
    with pytest.raises(Exception, match="kube_scheduler_make_before_break .of a1.: Invalid value: .sometimes.: must be true or false"):
        rollout_waves(sorted(plans), hostvars, kind="static_pod")


def _plan_of(master):
    """The scheduler_rollout answer a view was made from (test_rollout_order.view)."""
    instances = {}
    for lease, reading in master["leases"].items():
        instances[reading["instance"]] = {"action": "update" if reading["moves"] else "none", "lease_access": {
            "status": "allowed", "lease": lease, "holder": reading["holder"], "held_here": reading["held_here"]}}
    return {"pending": master["pending"], "plan": {"instances": instances}}


# --- what a standby is ------------------------------------------------------------------------------------------

def test_a_static_pod_standby_is_the_new_pod_on_the_spare_port_with_its_own_name_and_config_copy():
    instance = default(percentageOfNodesToScore=40)
    host, _drift = static_pod_host([instance], dict(STATIC, standbys=["kube-scheduler"]), {})
    entry = host["instances"][0]
    standby = entry["standby"]
    assert (standby["name"], standby["standby_for"], standby["port"]) == (
        "kubesched-standby-kube-scheduler", "kube-scheduler", 11259)
    assert standby["health_url"] == "https://127.0.0.1:11259/readyz"
    config, manifest = standby["files"]
    assert config["path"] == "/etc/kubernetes/schedulers/kubesched-standby-kube-scheduler.yaml"
    # The same new config the instance gets, which the plan's preflight checked, under the standby's mark.
    assert config["content"] == "# kubesched.schedulers/standby-for: kube-scheduler\n" + entry["files"][0]["content"]
    assert config["mode"] == "0600"
    assert manifest["path"] == "/etc/kubernetes/manifests/kubesched-standby-kube-scheduler.yaml"
    pod = yaml.safe_load(manifest["content"])
    assert pod["metadata"]["name"] == "kubesched-standby-kube-scheduler"
    # Not kubeadm's component label, and not the checksum that makes a manifest the role's own.
    assert pod["metadata"]["labels"] == {"kubesched.schedulers/standby-for": "kube-scheduler", "tier": "control-plane"}
    assert "annotations" not in pod["metadata"]
    container = scheduler_container(pod)
    command = container["command"]
    assert "--secure-port=11259" in command and "--leader-elect-retry-period=250ms" in command
    assert "--config=/etc/kubernetes/schedulers/kubesched-standby-kube-scheduler.yaml" in command
    assert [port["containerPort"] for port in container["ports"]] == [11259]
    volumes = dict((volume["name"], volume["hostPath"]["path"]) for volume in pod["spec"]["volumes"])
    assert volumes["kubesched-config"] == config["path"]
    # Where a later run looks for a standby a killed run left behind.
    assert entry["standby_leftover"] == {"paths": [manifest["path"], config["path"]], "port": 11259,
                                         "mark": "kubesched.schedulers/standby-for: kube-scheduler"}


def test_a_systemd_standby_is_a_runtime_unit_of_the_new_binary_never_in_the_unit_directory():
    instance = default()
    host = systemd_host([instance], dict(SYSTEMD, standbys=["kube-scheduler"], standby_port_offset=7))
    standby = host["instances"][0]["standby"]
    assert (standby["unit"], standby["port"]) == ("kubesched-standby-kube-scheduler.service", 10266)
    config, unit = standby["files"]
    assert (config["owner"], config["group"], config["mode"]) == ("root", "kube-scheduler", "0640")
    assert unit["path"] == "/run/systemd/system/kubesched-standby-kube-scheduler.service"
    assert unit["content"].startswith("# kubesched.schedulers/standby-for: kube-scheduler\n# Managed by Ansible")
    assert '"/opt/kube-scheduler/1.37.2/kube-scheduler"' in unit["content"]
    assert '"--secure-port=10266"' in unit["content"] and '"--leader-elect-retry-period=250ms"' in unit["content"]
    assert "User=kube-scheduler" in unit["content"]


def test_no_standby_spec_unless_asked_and_no_retry_flag_when_the_config_retries_as_often():
    host = systemd_host([default()], SYSTEMD)
    assert "standby" not in host["instances"][0]
    assert host["instances"][0]["standby_leftover"]["unit"] == "kubesched-standby-kube-scheduler.service"
    quick = default(leaderElection={"retryPeriod": "200ms", "renewDeadline": "1s", "leaseDuration": "2s"})
    unit = systemd_host([quick], dict(SYSTEMD, standbys=["kube-scheduler"]))["instances"][0]["standby"]["files"][1]
    assert "leader-elect-retry-period" not in unit["content"]


def test_an_absent_instance_is_still_looked_for_its_standby_on_both_kinds():
    # A killed run may have left the standby of an instance the operator has since set absent: its files must be
    # found by the same paths and mark, or its manifest (its runtime unit) keeps running with nothing managing it.
    gone = resolved({"name": "kube-scheduler", "default_scheduler": True, "state": "absent"})[0]
    pod = static_pod_host([gone], STATIC, {})[0]["instances"][0]
    unit = systemd_host([gone], SYSTEMD)["instances"][0]
    assert pod["state"] == unit["state"] == "absent"
    assert pod["standby_leftover"] == static_pod_host([default()], STATIC, {})[0]["instances"][0]["standby_leftover"]
    assert unit["standby_leftover"] == systemd_host([default()], SYSTEMD)["instances"][0]["standby_leftover"]


def test_a_standby_port_that_clashes_with_another_instance_or_leaves_the_range_is_refused_naming_the_variable():
    two = resolved({"name": "kube-scheduler", "default_scheduler": True},
                   {"name": "binpack", "secure_port": 11259, "config": {"profiles": [{"schedulerName": "binpack"}],
                                                                        "leaderElection": {"resourceName": "binpack"}}})
    with pytest.raises(RolloutError, match="kube_scheduler_standby_port_offset: Invalid value: 1000: .* would clash with "
                                           "instance binpack .port 11259.*kube_scheduler_make_before_break: false"):
        systemd_host(two, dict(SYSTEMD, standbys=["kube-scheduler"]))
    with pytest.raises(RolloutError, match="would listen on port 65559"):
        systemd_host([default()], dict(SYSTEMD, standbys=["kube-scheduler"], standby_port_offset=55300))
