"""The scheduler_instances action plugin in a real ansible-playbook run over several (local) masters.

What only a real run shows: role-style variables per host, peers read from hostvars, hosts without the variable,
and that the play fails on every master before any task after it runs.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

PLAYBOOK = textwrap.dedent("""\
    - name: Resolve instances on every master
      hosts: masters
      gather_facts: false
      tasks:
        - name: Resolve
          kubesched.schedulers.scheduler_instances:
            instances: "{{ kube_scheduler_instances | default(default_instances) }}"
            kubernetes_version: "1.34.2"
            config_dir: /etc/kubernetes/schedulers
            peers_var: kube_scheduler_instances
          register: resolved
        - name: Record what each master resolved
          ansible.builtin.copy:
            content: "{{ resolved.instances | to_json }}"
            dest: "{{ out_dir }}/{{ inventory_hostname }}.json"
            mode: "0644"
          delegate_to: localhost
    """)


def run_play(ansible_playbook, tmp_path, host_vars, groups=None):
    """Run the playbook over master-1..n with the given per-host variables (and ``groups``: {group: [masters]},
    listed in kube_scheduler_cluster_groups); return (rc, output, results)."""
    inventory = {"masters": {"hosts": {}, "vars": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
        "out_dir": str(tmp_path), "default_instances": [{"name": "kube-scheduler", "default_scheduler": True}]}}}
    for host, variables in host_vars.items():
        inventory["masters"]["hosts"][host] = variables
    if groups:
        inventory["masters"]["vars"]["kube_scheduler_cluster_groups"] = list(groups)
        inventory.update((group, {"hosts": dict((host, {}) for host in hosts)}) for group, hosts in groups.items())
    (tmp_path / "inventory.json").write_text(json.dumps({"all": {"children": inventory}}))
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    proc = ansible_playbook(["-i", tmp_path / "inventory.json", tmp_path / "play.yml"])
    results = {path.stem: json.loads(path.read_text()) for path in tmp_path.glob("master-*.json")}
    return proc.returncode, proc.stdout + proc.stderr, results


BATCH = {"name": "batch-scheduler", "secure_port": 10260,
         "config": {"leaderElection": {"resourceName": "batch-scheduler"}, "profiles": [{"schedulerName": "batch"}]}}
DEFAULT = {"name": "kube-scheduler", "default_scheduler": True}


@pytest.fixture(scope="module")
def consistent_run(tmp_path_factory, ansible_playbook):
    tmp_path = tmp_path_factory.mktemp("consistent")
    # master-3 has no variable of its own: like a role default, it is taken to match this host's.
    return run_play(ansible_playbook, tmp_path, {"master-1": {"kube_scheduler_instances": [DEFAULT, BATCH]},
                                                 "master-2": {"kube_scheduler_instances": [DEFAULT, BATCH]},
                                                 "master-3": {}})


def test_consistent_masters_resolve(consistent_run):
    rc, output, results = consistent_run
    assert rc == 0, output
    assert [i["name"] for i in results["master-1"]] == ["kube-scheduler", "batch-scheduler"]
    assert results["master-1"][1]["flags"][-1] == "--secure-port=10260"
    assert [i["name"] for i in results["master-3"]] == ["kube-scheduler"]


def test_conflict_on_one_master_stops_every_master_before_any_change(ansible_playbook, tmp_path):
    rogue = dict(BATCH, name="rogue", secure_port=10270)
    rc, output, results = run_play(ansible_playbook, tmp_path, {
        "master-1": {"kube_scheduler_instances": [DEFAULT, BATCH]},
        "master-2": {"kube_scheduler_instances": [DEFAULT, rogue]}})
    assert rc != 0
    assert results == {}, "no master may get past the check"
    assert "lease kube-system/batch-scheduler of instance batch-scheduler is also used by instance rogue " \
           "on host master-2" in output
    assert "nothing was changed" in output


def test_masters_of_other_clusters_are_not_peers(ansible_playbook, tmp_path):
    """A fleet in one inventory. Each cluster has its own API server, so the same lease or schedulerName
    on another cluster's master is no conflict; within a cluster it still is."""
    rogue = dict(BATCH, name="rogue", secure_port=10270)
    rc, output, results = run_play(ansible_playbook, tmp_path, {
        "master-1": {"kube_scheduler_instances": [DEFAULT, BATCH], "kube_scheduler_cluster": "east"},
        "master-2": {"kube_scheduler_instances": [DEFAULT, rogue], "kube_scheduler_cluster": "west"}})
    assert rc == 0, output
    assert [i["name"] for i in results["master-2"]] == ["kube-scheduler", "rogue"]
    rc, output, results = run_play(ansible_playbook, tmp_path, {
        "master-1": {"kube_scheduler_instances": [DEFAULT, BATCH], "kube_scheduler_cluster": "east"},
        "master-2": {"kube_scheduler_instances": [DEFAULT, rogue], "kube_scheduler_cluster": "east"}})
    assert rc != 0 and "is also used by instance rogue on host master-2" in output


def test_cluster_groups_name_the_clusters_and_a_master_in_two_stops_every_master(ansible_playbook, tmp_path):
    """An inventory group per cluster (kube_scheduler_cluster_groups) makes the same peers as
    kube_scheduler_cluster; a master in two cluster groups fails every master before any change, naming the fix."""
    rogue = dict(BATCH, name="rogue", secure_port=10270)
    masters = {"master-1": {"kube_scheduler_instances": [DEFAULT, BATCH]},
               "master-2": {"kube_scheduler_instances": [DEFAULT, rogue]}}
    rc, output, results = run_play(ansible_playbook, tmp_path, masters, {"east": ["master-1"], "west": ["master-2"]})
    assert rc == 0, output
    assert [i["name"] for i in results["master-2"]] == ["kube-scheduler", "rogue"]
    rc, output, results = run_play(ansible_playbook, tmp_path, masters, {"east": ["master-1", "master-2"], "west": []})
    assert rc != 0 and "is also used by instance rogue on host master-2" in output
    for path in tmp_path.glob("master-*.json"):
        path.unlink()
    rc, output, results = run_play(ansible_playbook, tmp_path, masters, {"east": ["master-1", "master-2"],
                                                                         "west": ["master-2"]})
    assert rc != 0 and results == {}
    assert ("kube_scheduler_cluster_groups: master-2 is in 2 cluster groups (east, west): a master belongs to one "
            "cluster") in output


def test_config_errors_reach_the_operator_with_field_paths(ansible_playbook, tmp_path):
    bad = dict(DEFAULT, config={"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]})
    rc, output, _results = run_play(ansible_playbook, tmp_path, {"master-1": {"kube_scheduler_instances": [bad]}})
    assert rc != 0
    assert "kube_scheduler_instances[0].config.profiles[1].schedulerName: Duplicate value" in output


def test_config_content_with_a_date_like_name_resolves(ansible_playbook, tmp_path):
    # One strict loader for every config input. go-yaml keeps 2024-01-01 a string, as scheduler_config
    # does; a YAML 1.1 loader made it a date, and the action crashed ("Object of type date is not JSON serializable").
    dated = dict(DEFAULT, config_content=(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n  - schedulerName: 2024-01-01\n"))
    rc, output, results = run_play(ansible_playbook, tmp_path, {"master-1": {"kube_scheduler_instances": [dated]}})
    assert rc == 0, output
    assert "schedulerName: '2024-01-01'" in results["master-1"][0]["config_rendered"]
