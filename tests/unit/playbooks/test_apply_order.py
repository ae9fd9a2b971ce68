# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The apply play's order and waves, with real ansible-playbook and the real playbooks' plays: every task
of them as it is, only the role includes (which need real masters: the Molecule scenarios run those) become small
stand-ins - the plan sets the master's plan from the inventory (its change, who holds which lease), the apply step
says which masters share its batch and fails where the inventory says so, the restore fails naming the reason as the
roles' restore does.

- One cluster: the lease holder goes last, one master at a time, whatever order the masters finished planning in.
- A master that cannot be planned (refused on it, or unreachable) holds back every other master's change: each master
  with a change names it and the masters that failed, with their reason, and fails; no master is applied.
- A fleet: each batch is one wave (the k-th master of every cluster), a canary cluster first and alone; a master that
  fails is put back and fails after its wave, the other clusters' masters of that wave finish, the per-cluster report
  names done, failed and restored, untouched and unchanged masters, and the next wave does not start.
- A master that cannot be reached (ssh to a closed loopback port): at the plan, no master changes; lost in the middle
  of its apply, it is named unreachable, the masters before it are done and the ones after it are not touched.
"""

from __future__ import annotations

import json
import re
import sys

import pytest
import yaml

from conftest import rollout_plays

LEASE = "kube-system/kube-scheduler"

# A master that cannot be reached: ssh to a port of the loopback that nothing listens on.
LOST = {"ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": 1,
        "ansible_ssh_common_args": "-o ConnectTimeout=5 -o BatchMode=yes -o StrictHostKeyChecking=no"}
STAND_INS = {
    # The plan call's answer is registered as the role's is, also when it fails or its master is unreachable.
    # raw, not a module: the stand-ins reach each master through its connection (the lost one's ssh is refused)
    # without starting a Python there, in Check jobs too.
    "plan": [{"name": "Reach the master (stand-in)", "ansible.builtin.raw": "true", "check_mode": False,
              "changed_when": False, "register": "kube_scheduler_plan"},
             {"name": "Plan refused (stand-in)", "ansible.builtin.fail": {"msg": "{{ fail_plan }}"},
              "when": "fail_plan is defined", "register": "kube_scheduler_plan"},
             {"name": "Plan (stand-in)", "ansible.builtin.set_fact": {"kube_scheduler_plan": "{{ fake_plan }}"}}],
    "apply": [
        {"name": "Apply (stand-in)", "ansible.builtin.debug": {
            "msg": "applying {{ inventory_hostname }} in batch {{ ansible_play_batch | join(',') }}"}},
        {"name": "Standbys (stand-in)", "ansible.builtin.debug": {
            "msg": "standbys of {{ inventory_hostname }}: {{ kube_scheduler_rollout_standbys | join(',') }}"}},
        # A master lost in the middle of its apply (powered off, its network gone): its connection is refused.
        {"name": "Reach the master during its apply (stand-in)", "ansible.builtin.raw": "true", "check_mode": False,
         "changed_when": False, "vars": LOST,
         "when": "lost_at_apply | default(false)"},
        {"name": "Health gate (stand-in)", "ansible.builtin.fail": {"msg": "the new process never answered health"},
         "when": "fail_apply | default(false)"},
        # Without a later gate the engine's apply call commits: no commit step follows.
        {"name": "Commit in the apply call (stand-in)", "ansible.builtin.debug": {"msg": "committed {{ inventory_hostname }}"},
         "when": "not kube_scheduler_rollout_hold | bool"}],
    "commit": [{"name": "Commit (stand-in)", "ansible.builtin.debug": {"msg": "committed {{ inventory_hostname }}"}}],
    # The verify role's metrics gate: it proves the master through its cluster's API server (the kubeconfig of its
    # cluster's group) and fails where the inventory says so.
    "verify": [
        {"name": "Metrics gate (stand-in)", "ansible.builtin.fail": {
            "msg": "Verification failed through {{ kube_scheduler_verify_k8s_kubeconfig }}"}, "when": "fail_verify | default(false)"},
        {"name": "Metrics gate passed (stand-in)", "ansible.builtin.debug": {
            "msg": "verified {{ inventory_hostname }} through {{ kube_scheduler_verify_k8s_kubeconfig }}"}}],
    "restore": [{"name": "Restore (stand-in)", "ansible.builtin.fail": {
        "msg": "{{ inventory_hostname }}: {{ ansible_failed_task.name }} failed: {{ ansible_failed_result.msg }} -- put "
               "back as it was before this change. The rollout stops at this master."}}],
}


def _stand_in(tasks, tmp_path):
    out = []
    for task in tasks:
        task = dict(task)
        for key in ("block", "rescue", "always"):
            if key in task:
                task[key] = _stand_in(task[key], tmp_path)
        include = task.pop("ansible.builtin.include_role", None)
        if include is not None:
            task["ansible.builtin.include_tasks"] = str(tmp_path / ("%s.yml" % include.get("tasks_from", "verify")))
        out.append(task)
    return out


def playbook(kind, tmp_path):
    for name, tasks in STAND_INS.items():
        (tmp_path / ("%s.yml" % name)).write_text(yaml.safe_dump(tasks, sort_keys=False))
    plays = [play for play in rollout_plays(kind) if "ansible.builtin.import_playbook" not in play]
    assert len(plays) == 3  # plan, apply, release the clusters' rollout Leases
    plays = [dict(play, become=False, tasks=_stand_in(play["tasks"], tmp_path)) for play in plays]
    (tmp_path / "playbook.yml").write_text(yaml.safe_dump(plays, sort_keys=False))


def fake_plan(host, holds, pending=True):
    """A master's plan: it changes (restarts) its one instance, whose lease ``holds`` names the holder of."""
    return {"pending": pending, "plan": {"instances": {"kube-scheduler": {"action": "update" if pending else "none",
            "files": ["/etc/kubernetes/schedulers/kube-scheduler.yaml"] if pending else [],
            "lease_access": {"status": "allowed", "lease": LEASE, "holder": "%s_4f1c" % holds,
                             "held_here": holds == host, "holder_detail": "held by %s_4f1c" % holds}}}}}


def inventory(tmp_path, clusters, failing=(), unchanged=(), groups=False, group_vars=None, host_vars=None):
    """clusters: {cluster: ([masters in inventory order], the lease holder)}; the masters plan in reverse order.
    ``groups``: each cluster an inventory group listed in kube_scheduler_cluster_groups (else kube_scheduler_cluster
    per master); ``group_vars``: {cluster: its group's variables}."""
    hosts, children = {}, {}
    for cluster, (masters, holder) in clusters.items():
        for name in masters:
            hosts[name] = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                           "fake_plan": fake_plan(name, holder, name not in unchanged), "fail_apply": name in failing}
            hosts[name].update((host_vars or {}).get(name, {}))
            if len(clusters) > 1 and not groups:
                hosts[name]["kube_scheduler_cluster"] = cluster
        if groups:
            children[cluster] = {"hosts": dict((name, {}) for name in masters), "vars": (group_vars or {}).get(cluster, {})}
    document = {"all": {"children": {"kube_control_plane": {"hosts": hosts}}}}
    if groups:
        document["all"]["vars"] = {"kube_scheduler_cluster_groups": list(clusters)}
        document["all"]["children"].update(children)
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(document, sort_keys=False))


def run(ansible_playbook, tmp_path, extra=()):
    proc = ansible_playbook(["-i", "inventory.yml", "-f", "10", "playbook.yml"] + list(extra), cwd=tmp_path,
                            env={"ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp")})
    print(proc.stdout + proc.stderr)
    applied = re.findall(r'"msg": "applying (\S+) in batch (\S+)"', proc.stdout)
    return proc, applied


@pytest.mark.parametrize("kind", ["systemd", "static_pod"])
def test_one_cluster_changes_the_lease_holder_last_one_master_at_a_time(kind, tmp_path, ansible_playbook):
    playbook(kind, tmp_path)
    inventory(tmp_path, {"one": (["ks-m1", "ks-m2", "ks-m3"], "ks-m1")})
    proc, applied = run(ansible_playbook, tmp_path)
    assert proc.returncode == 0
    assert applied == [("ks-m2", "ks-m2"), ("ks-m3", "ks-m3"), ("ks-m1", "ks-m1")]
    assert '"apply order: ks-m2, ks-m3, ks-m1"' in proc.stdout
    assert ('"lease kube-system/kube-scheduler: held by ks-m1: moves once, when it changes (after every other master '
            'that restarts it)"') in proc.stdout
    assert " done: the fleet is done" not in proc.stdout  # one cluster: no fleet report
    # A Check job shows the order too, and applies nothing.
    proc, applied = run(ansible_playbook, tmp_path, ["--check"])
    assert proc.returncode == 0 and not applied
    assert '"apply order: ks-m2, ks-m3, ks-m1"' in proc.stdout


def test_a_fleet_goes_in_waves_and_the_first_failure_stops_it_after_its_wave(tmp_path, ansible_playbook):
    playbook("systemd", tmp_path)
    inventory(tmp_path, {"east": (["e1", "e2", "e3"], "e1"), "west": (["w1", "w2"], "w2"), "lab": (["l1", "l2"], "l1")},
              failing=["w2"], unchanged=["l2"])
    proc, applied = run(ansible_playbook, tmp_path)
    assert proc.returncode == 2
    # Wave 1 and 2 ran as one batch each; wave 3 (e1) never started.
    assert sorted(applied) == sorted([("e2", "e2,w1,l1"), ("w1", "e2,w1,l1"), ("l1", "e2,w1,l1"),
                                      ("e3", "e3,w2"), ("w2", "e3,w2")])
    assert "committed e3" in proc.stdout  # the other cluster's master of the failed wave finished
    report = json.loads(re.search(r'TASK \[Report the fleet per cluster after this wave\].*?\n(.*?\n})\n', proc.stdout.split(
        "wave 1 of 3 done")[1], re.S).group(1).split(" => ", 1)[1])["msg"]
    assert report == [
        "cluster east: done e2, e3; untouched e1",
        "cluster west: done w1; failed and restored w2: w2: Health gate (stand-in) failed: the new process never "
        "answered health -- put back as it was before this change. The rollout stops at this master.",
        "cluster lab: done l1; no change l2",
        "wave 2 of 3 failed: the fleet stops here (waves 3 to 3 not started)"]
    assert re.search(r"fatal: \[w2\]: FAILED! => .*Health gate \(stand-in\) failed", proc.stdout)
    recap = dict(re.findall(r"^(\w+)\s+: ok=\d+\s+changed=\d+\s+unreachable=\d+\s+failed=(\d+)", proc.stdout, re.M))
    assert recap == {"e1": "0", "e2": "0", "e3": "0", "w1": "0", "w2": "1", "l1": "0", "l2": "0"}


def test_a_canary_cluster_goes_first_alone(tmp_path, ansible_playbook):
    playbook("static_pod", tmp_path)
    inventory(tmp_path, {"east": (["e1", "e2"], "e1"), "west": (["w1", "w2"], "w1")})
    proc, applied = run(ansible_playbook, tmp_path, ["-e", "kube_scheduler_canary_cluster=west"])
    assert proc.returncode == 0
    assert applied == [("w2", "w2"), ("w1", "w1"), ("e2", "e2"), ("e1", "e1")]
    assert '"wave 1: w2 (canary cluster west)"' in proc.stdout
    assert '"wave 4 of 4 done: the fleet is done"' in proc.stdout
    proc, applied = run(ansible_playbook, tmp_path, ["-e", "kube_scheduler_canary_cluster=north"])
    assert proc.returncode == 2 and not applied
    assert "kube_scheduler_canary_cluster: Invalid value: 'north'" in proc.stdout


def test_the_metrics_gate_across_clusters_needs_an_api_server_per_cluster_before_any_change(tmp_path, ansible_playbook):
    # The verify role proves each master through its own cluster's API server: clusters that would read the same one
    # are refused in the plan; one cluster with a change is gated as before.
    playbook("systemd", tmp_path)
    inventory(tmp_path, {"east": (["e1", "e2"], "e1"), "west": (["w1"], "w1")})
    proc, applied = run(ansible_playbook, tmp_path, ["-e", "kube_scheduler_rollout_verify=true"])
    assert proc.returncode == 2 and not applied
    assert ("kube_scheduler_rollout_verify: the metrics gate of cluster east and of cluster west would read the same API "
            "server") in proc.stdout


def test_cluster_groups_gate_each_master_through_its_clusters_api_and_a_refused_one_stops_the_fleet(tmp_path, ansible_playbook):
    playbook("static_pod", tmp_path)
    inventory(tmp_path, {"east": (["e1", "e2"], "e1"), "west": (["w1", "w2"], "w2")}, groups=True,
              group_vars={"east": {"kube_scheduler_verify_k8s_kubeconfig": "/k/east.conf"},
                          "west": {"kube_scheduler_verify_k8s_kubeconfig": "/k/west.conf"}},
              host_vars={"w2": {"fail_verify": True}})
    proc, applied = run(ansible_playbook, tmp_path, ["-e", "kube_scheduler_rollout_verify=true"])
    assert proc.returncode == 2
    assert '"wave 1: e2, w1"' in proc.stdout and '"wave 2: e1, w2"' in proc.stdout
    assert sorted(applied) == sorted([("e2", "e2,w1"), ("w1", "e2,w1"), ("e1", "e1,w2"), ("w2", "e1,w2")])
    for host, cluster in (("e2", "east"), ("w1", "west"), ("e1", "east")):
        assert '"verified %s through /k/%s.conf"' % (host, cluster) in proc.stdout
        assert "committed %s" % host in proc.stdout
    assert "committed w2" not in proc.stdout
    assert "cluster west: done w1; failed and restored w2: w2: Metrics gate (stand-in) failed: Verification failed through /k/west.conf" in proc.stdout
    recap = dict(re.findall(r"^(\w+)\s+: ok=\d+\s+changed=\d+\s+unreachable=\d+\s+failed=(\d+)", proc.stdout, re.M))
    assert recap == {"e1": "0", "e2": "0", "w1": "0", "w2": "1"}


def test_a_master_in_two_cluster_groups_stops_the_plan_naming_the_variable(tmp_path, ansible_playbook):
    playbook("systemd", tmp_path)
    inventory(tmp_path, {"east": (["e1", "e2"], "e1"), "west": (["w1", "e2"], "w1")}, groups=True)
    proc, applied = run(ansible_playbook, tmp_path)
    assert proc.returncode == 2 and not applied
    assert "kube_scheduler_cluster_groups: e2 is in 2 cluster groups (east, west): a master belongs to one cluster" in proc.stdout


@pytest.mark.parametrize("kind,standby", [("static_pod", True), ("systemd", False)])
def test_a_one_master_cluster_gives_its_lease_holder_a_temporary_standby_where_the_kind_defaults_to_one(
        kind, standby, tmp_path, ansible_playbook):
    """Make before break: the plan of every master names the instance, the apply step gets it."""
    playbook(kind, tmp_path)
    inventory(tmp_path, {"one": (["ks-m1"], "ks-m1")})
    line = ("ks-m1: kube-scheduler holds lease kube-system/kube-scheduler and no other master stands by for it: a "
            "temporary standby with the new config takes the lease while kube-scheduler is replaced")
    for extra, expected in (((), standby), (("-e", "kube_scheduler_make_before_break=%s" % (not standby)), not standby)):
        proc, applied = run(ansible_playbook, tmp_path, list(extra))
        assert proc.returncode == 0 and applied == [("ks-m1", "ks-m1")]
        assert (line in proc.stdout) is expected
        assert ('"standbys of ks-m1: %s"' % ("kube-scheduler" if expected else "")) in proc.stdout
    # Three masters: the others stand by for the lease, no temporary one.
    inventory(tmp_path, {"one": (["ks-m1", "ks-m2", "ks-m3"], "ks-m1")})
    proc, _applied = run(ansible_playbook, tmp_path, ["-e", "kube_scheduler_make_before_break=true"])
    assert proc.returncode == 0 and "temporary standby" not in proc.stdout and '"standbys of ks-m1: "' in proc.stdout


@pytest.mark.parametrize("kind", ["systemd", "static_pod"])
def test_a_master_unreachable_at_the_plan_stops_the_rollout_before_any_master_changes(kind, tmp_path, ansible_playbook):
    playbook(kind, tmp_path)
    inventory(tmp_path, {"one": (["ks-m1", "ks-m2", "ks-m3"], "ks-m1")}, host_vars={"ks-m3": LOST})
    proc, applied = run(ansible_playbook, tmp_path)
    assert proc.returncode != 0 and applied == []
    assert re.search(r"fatal: \[ks-m3\]: UNREACHABLE!", proc.stdout), proc.stdout[-3000:]
    recap = dict(re.findall(r"^(\S+)\s+: ok=\d+\s+changed=\d+\s+unreachable=(\d+)", proc.stdout, re.M))
    assert recap == {"ks-m1": "0", "ks-m2": "0", "ks-m3": "1"}


def test_a_master_lost_during_its_apply_is_named_and_the_masters_after_it_are_not_touched(tmp_path, ansible_playbook):
    """The order is ks-m2, ks-m3, then the lease holder ks-m1. ks-m3 is lost in the middle of its apply: ks-m2 is
    done and committed, ks-m3 is named unreachable (no restore is tried on a master that cannot be reached; the next
    run's plan finds its held change), and ks-m1 is not touched."""
    playbook("static_pod", tmp_path)
    inventory(tmp_path, {"one": (["ks-m1", "ks-m2", "ks-m3"], "ks-m1")}, host_vars={"ks-m3": {"lost_at_apply": True}})
    proc, applied = run(ansible_playbook, tmp_path)
    assert proc.returncode != 0
    assert applied == [("ks-m2", "ks-m2"), ("ks-m3", "ks-m3")]
    assert "committed ks-m2" in proc.stdout and "committed ks-m1" not in proc.stdout
    assert re.search(r"fatal: \[ks-m3\]: UNREACHABLE!", proc.stdout), proc.stdout[-3000:]
    assert "Restore (stand-in)" not in proc.stdout
    recap = dict(re.findall(r"^(\S+)\s+: ok=\d+\s+changed=\d+\s+unreachable=(\d+)", proc.stdout, re.M))
    assert recap == {"ks-m1": "0", "ks-m2": "0", "ks-m3": "1"}


CONFIG = "/etc/kubernetes/schedulers/kube-scheduler.yaml"


@pytest.mark.parametrize("kind", ["systemd", "static_pod"])
@pytest.mark.parametrize("check", [False, True])
def test_a_master_that_cannot_be_planned_holds_back_the_others_change_saying_which_and_why(
        kind, check, tmp_path, ansible_playbook):
    playbook(kind, tmp_path)
    inventory(tmp_path, {"one": (["ks-m1", "ks-m2", "ks-m3", "ks-m4"], "ks-m1")}, unchanged=["ks-m4"], host_vars={
        "ks-m2": LOST, "ks-m3": {"fail_plan": "kube-scheduler: secure port 10271 is taken on this master"}})
    proc, applied = run(ansible_playbook, tmp_path, ["--check"] if check else [])
    assert proc.returncode == 4 and not applied  # ansible-playbook's code for a run with an unreachable host
    message = re.search(r"fatal: \[ks-m1\]: FAILED! => .*\"msg\": \"(.*)\"}", proc.stdout).group(1)
    assert message.startswith("ks-m1: its pending change %s: kube-scheduler: update (%s). The rollout changes no master "
                              "while a master of the run could not be planned" % (
                                  "would not be applied" if check else "was not applied", CONFIG)), message
    assert "ks-m2 (unreachable: Failed to connect to the host via ssh" in message
    assert "; ks-m3 (kube-scheduler: secure port 10271 is taken on this master). Fix ks-m2, ks-m3 and run again" in message
    recap = dict((host, (unreachable, failed)) for host, unreachable, failed in re.findall(
        r"^([\w-]+)\s+: ok=\d+\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)", proc.stdout, re.M))
    # ks-m4 has nothing to hold back; no master reached the apply play.
    assert recap == {"ks-m1": ("0", "1"), "ks-m2": ("1", "0"), "ks-m3": ("0", "1"), "ks-m4": ("0", "0")}
    assert "PLAY [Apply" not in proc.stdout or "skipping: no hosts matched" in proc.stdout
    assert "apply order:" not in proc.stdout  # no order is shown for masters that are held back
