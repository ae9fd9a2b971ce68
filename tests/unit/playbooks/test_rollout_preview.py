# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kube_scheduler_rollout_preview in a Check job, with real ansible-playbook and the real playbooks' plays (every
task as it is; only the role includes become stand-ins: the plan sets the master's plan, with its diff, from the
inventory) and the real kubesched.schedulers.placement_preview:

- off (the default), the preview task is skipped and nothing is said of it;
- on, it runs once per cluster and changed scheduler name, on the controller, with that name's running and proposed
  configuration (the masters' plans), and one that cannot run (its binaries missing, a variable unset) warns naming
  why while the job goes on; kube_scheduler_rollout_preview_required: true fails the job instead;
- with the real binaries, against a local API server playing the cluster, the job prints the side-by-side table.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

from conftest import rollout_plays

REPO = Path(__file__).resolve().parents[3]
API = "kubescheduler.config.k8s.io/v1"
PATH = "/etc/kubernetes/schedulers/kube-scheduler.yaml"
PREVIEW_TASK = "Preview the placement of each changed scheduler name, once per cluster, on the controller"
# The real plan's tasks need real masters (the Molecule scenarios run them): its stand-in registers the plan a Check
# job's plan call answers, from the inventory.
PLAN = [{"name": "Plan (stand-in)", "ansible.builtin.set_fact": {"kube_scheduler_plan": "{{ fake_plan }}"}}]
# What the preview task was called with, per loop item, kept for the test (appended to the plan play).
KEEP = {"name": "Keep what the preview task was called with (test)", "ansible.builtin.copy": {
    "dest": "{{ playbook_dir }}/previews.json",
    "content": "{{ __kube_scheduler_rollout_preview_results.results | default([]) | map(attribute='item') | list | to_json }}"},
    "delegate_to": "localhost", "run_once": True, "check_mode": False,
    "when": "__kube_scheduler_rollout_preview_results is defined"}


def config(kind, name="default-scheduler"):
    return {"apiVersion": API, "kind": "KubeSchedulerConfiguration", "leaderElection": {"leaderElect": False},
            "profiles": [{"schedulerName": name, "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": kind}}}]}]}


def fake_plan(before, after):
    """A Check job's plan of a master whose configuration file changes from ``before`` to ``after``."""
    return {"pending": True, "changed": True,
            "plan": {"instances": {"kube-scheduler": {"action": "update", "files": [PATH]}}},
            "diff": [{"before_header": "%s (root:kube-scheduler 0640)" % PATH,
                      "after_header": "%s (root:kube-scheduler 0640)" % PATH,
                      "before": yaml.safe_dump(before), "after": yaml.safe_dump(after)}]}


def playbook(kind, tmp_path):
    (tmp_path / "plan.yml").write_text(yaml.safe_dump(PLAN))
    plays = [play for play in rollout_plays(kind) if "ansible.builtin.import_playbook" not in play]
    out = []
    for play in plays:
        tasks = []
        for task in play["tasks"]:
            task = dict(task)
            include = task.pop("ansible.builtin.include_role", None)
            if include is not None:
                task["ansible.builtin.include_tasks"] = str(tmp_path / "plan.yml")
            tasks.append(task)
        out.append(dict(play, become=False, tasks=tasks))
    out[0]["tasks"].append(KEEP)
    (tmp_path / "playbook.yml").write_text(yaml.safe_dump(out, sort_keys=False))


def inventory(tmp_path, clusters, cluster_vars):
    """clusters: {cluster: {master: its plan}}; cluster_vars: {cluster: its group's variables}."""
    children = {}
    hosts = {}
    for cluster, masters in clusters.items():
        for host, plan in masters.items():
            hosts[host] = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                           "fake_plan": plan, "kube_scheduler_version": "1.37.2"}
        children[cluster] = {"hosts": dict((host, {}) for host in masters), "vars": cluster_vars.get(cluster, {})}
    document = {"all": {"vars": {"kube_scheduler_cluster_groups": list(clusters)},
                        "children": dict({"kube_control_plane": {"hosts": hosts}}, **children)}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(document, sort_keys=False))


def run(ansible_playbook, tmp_path, extra=(), timeout=600):
    proc = ansible_playbook(["-i", "inventory.yml", "-f", "10", "--check", "playbook.yml"] + list(extra), cwd=tmp_path,
                            env={"ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp")}, timeout=timeout)
    print(proc.stdout + proc.stderr)
    kept = tmp_path / "previews.json"
    return proc, json.loads(kept.read_text()) if kept.exists() else None


def shown(proc):
    """The lines of the task that shows the previews."""
    found = re.search(r"TASK \[Show the placement previews, per cluster and scheduler name\].*?\n(.*?\n})\n",
                      proc.stdout, re.S)
    return json.loads(found.group(1).split(" => ", 1)[1])["msg"] if found else None


def fleet(tmp_path, missing_binaries="/nonexistent/kubernetes-server"):
    """east: e1 e2 change LeastAllocated to MostAllocated; west: w1 changes batch, w2 nothing; lab: its kubeconfig
    unset. The preview's binaries are where nothing is: the real preview refuses them before anything starts."""
    least, most = config("LeastAllocated"), config("MostAllocated")
    unchanged = {"pending": False, "plan": {"instances": {"kube-scheduler": {"action": "none", "files": []}}}}
    inventory(tmp_path, {
        "east": {"e1": fake_plan(least, most), "e2": fake_plan(least, most)},
        "west": {"w1": fake_plan(config("MostAllocated", "batch"), config("LeastAllocated", "batch")), "w2": unchanged},
        "lab": {"l1": fake_plan(least, most)}}, {
        "east": {"kube_scheduler_rollout_preview_kubeconfig": "/k/east.conf",
                 "kube_scheduler_rollout_preview_binaries": missing_binaries},
        "west": {"kube_scheduler_rollout_preview_kubeconfig": "/k/west.conf",
                 "kube_scheduler_rollout_preview_binaries": missing_binaries,
                 "kube_scheduler_rollout_preview_scheduler_plugins_version": "0.34.7"},
        "lab": {"kube_scheduler_rollout_preview_binaries": missing_binaries}})


@pytest.mark.parametrize("kind", ["systemd", "static_pod"])
def test_off_the_preview_task_is_skipped(kind, tmp_path, ansible_playbook):
    playbook(kind, tmp_path)
    fleet(tmp_path)
    proc, kept = run(ansible_playbook, tmp_path)
    assert proc.returncode == 0
    assert re.search(r"TASK \[%s\] \*+\nskipping: \[e1\]" % re.escape(PREVIEW_TASK), proc.stdout)
    assert kept == [] and shown(proc) is None and "(item=cluster" not in proc.stdout
    # A spelling of the boolean ansible-core reads two ways is refused, naming the variable.
    proc, _kept = run(ansible_playbook, tmp_path, ["-e", '{"kube_scheduler_rollout_preview": "yes "}'])
    assert proc.returncode == 2
    assert "kube_scheduler_rollout_preview: Invalid value: 'yes '" in proc.stdout


def test_on_it_runs_once_per_cluster_and_changed_name_and_a_failed_preview_warns_and_the_job_goes_on(tmp_path, ansible_playbook):
    playbook("systemd", tmp_path)
    fleet(tmp_path)
    proc, kept = run(ansible_playbook, tmp_path, ["-e", "kube_scheduler_rollout_preview=true"])
    assert proc.returncode == 0
    # Once per cluster and name, on the controller, with each name's running and proposed configuration.
    assert [(item["label"], item["kubeconfig"], item["binaries_dir"], item["kubernetes_version"]) for item in kept] == [
        ("cluster east, scheduler name default-scheduler (e1, e2)", "/k/east.conf", "/nonexistent/kubernetes-server", "1.37.2"),
        ("cluster west, scheduler name batch (w1)", "/k/west.conf", "/nonexistent/kubernetes-server", "1.37.2")]
    assert kept[0]["current"] == config("LeastAllocated") and kept[0]["proposed"] == config("MostAllocated")
    assert kept[1]["current"] == config("MostAllocated", "batch")
    # The release of scheduler-plugins a cluster's masters run (its group's variable) goes with its previews only.
    assert [item["scheduler_plugins_version"] for item in kept] == [None, "0.34.7"]
    assert len(re.findall(r"\(item=cluster ", proc.stdout)) == 2
    assert re.search(r"ok: \[e1 -> localhost\] => \(item=cluster east, scheduler name default-scheduler \(e1, e2\)\)",
                     proc.stdout)
    # Each one that did not run says why: the real preview refused the binaries (after both configurations passed
    # the minor's own check), and lab's kubeconfig is unset.
    lines = shown(proc)
    assert lines[0].startswith("WARNING: the placement preview of cluster east, scheduler name default-scheduler "
                               "(e1, e2) did not run: binaries: ")
    assert "/nonexistent/kubernetes-server" in lines[0]
    assert lines[1].startswith("WARNING: the placement preview of cluster west, scheduler name batch (w1) did not run")
    assert lines[2].startswith("WARNING: the placement preview of cluster lab, scheduler name default-scheduler (l1) "
                               "did not run: kube_scheduler_rollout_preview_kubeconfig: Required value: ")
    assert "the apply order" not in proc.stdout.split("TASK [Show the placement previews")[1]  # shown before it
    recap = dict(re.findall(r"^(\w+)\s+: ok=\d+\s+changed=\d+\s+unreachable=\d+\s+failed=(\d+)", proc.stdout, re.M))
    assert recap == {"e1": "0", "e2": "0", "w1": "0", "w2": "0", "l1": "0"}


def test_required_a_preview_that_did_not_run_fails_the_job(tmp_path, ansible_playbook):
    playbook("static_pod", tmp_path)
    fleet(tmp_path)
    proc, _kept = run(ansible_playbook, tmp_path, ["-e", "kube_scheduler_rollout_preview=true",
                                                   "-e", "kube_scheduler_rollout_preview_required=true"])
    assert proc.returncode == 2
    failed = re.search(r"fatal: \[e1\]: FAILED! => (\{.*\})", proc.stdout).group(1)
    message = json.loads(failed)["msg"]
    assert message.startswith("kube_scheduler_rollout_preview_required: the placement preview did not run for cluster "
                              "east, scheduler name default-scheduler (e1, e2): binaries: ")
    assert "cluster lab, scheduler name default-scheduler (l1): kube_scheduler_rollout_preview_kubeconfig: Required" in message


# Three runs of two configurations through the rollout's Check job: make preview-tests (the tests above keep the
# preview task, and the action plugin's fidelity test the real preview, in make test).
@pytest.mark.slow_preview
def test_with_the_real_binaries_the_check_job_prints_the_table(tmp_path, ansible_playbook):
    """The preview's own real test proves the engine; here, once, that the Check job reaches it and shows its table."""
    sys.path.insert(0, str(REPO / "tests" / "controlplane"))
    from local_apiserver import LocalApiServer, missing_binaries  # pylint: disable=import-outside-toplevel
    from preview_binaries import real_binaries  # pylint: disable=import-outside-toplevel
    minor, binaries = real_binaries(("1.35", "1.37"))
    if minor is None or missing_binaries():
        pytest.skip("no real binaries: %s" % (binaries if minor is None else ", ".join(missing_binaries())))
    playbook("systemd", tmp_path)
    (tmp_path / "cluster").mkdir()
    with LocalApiServer(tmp_path / "cluster") as api:
        from kubernetes import client  # pylint: disable=import-outside-toplevel
        core = client.CoreV1Api(api.client)
        api.ready_nodes(dict(("node-%d" % index, {}) for index in range(3)), {"cpu": "4", "memory": "8Gi", "pods": "110"})
        api.namespaces("apps")
        for index in range(4):
            core.create_namespaced_pod("apps", {"metadata": {"name": "web-%d" % index}, "spec": {"containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}]}})
        least, most = config("LeastAllocated"), config("MostAllocated")
        inventory(tmp_path, {"one": {"m1": fake_plan(least, most)}}, {"one": {
            "kube_scheduler_version": minor, "kube_scheduler_rollout_preview_kubeconfig": str(api.kubeconfig),
            "kube_scheduler_rollout_preview_binaries": {"etcd": binaries["etcd"],
                                                        "kube_apiserver": binaries["kube-apiserver"],
                                                        "kube_scheduler": binaries["kube-scheduler"]}}})
        # The group's version wins over none: the inventory's host variable is the fleet's; here the cluster's minor.
        document = yaml.safe_load((tmp_path / "inventory.yml").read_text())
        del document["all"]["children"]["kube_control_plane"]["hosts"]["m1"]["kube_scheduler_version"]
        (tmp_path / "inventory.yml").write_text(yaml.safe_dump(document))
        proc, kept = run(ansible_playbook, tmp_path, ["-e", "kube_scheduler_rollout_preview=true",
                                                      "-e", "kube_scheduler_rollout_preview_required=true"], timeout=900)
    assert proc.returncode == 0
    assert len(kept) == 1
    lines = shown(proc)
    assert lines[0] == "cluster one, scheduler name default-scheduler (m1):"
    table = "\n".join(lines[1:])
    assert "running" in table and "proposed" in table and "nodes used" in table
    # LeastAllocated spreads 4 pods over the 3 nodes; MostAllocated packs them onto fewer.
    used = re.search(r"nodes used\s+(\S+)\s+(\S+)\s+(\S+)", table)
    assert used and used.group(2) == "3" and int(used.group(3).split("-")[0]) < 3, table


def gang(kind):
    """A default-scheduler profile of scheduler-plugins' Coscheduling, with scoring strategy ``kind``."""
    return {"apiVersion": API, "kind": "KubeSchedulerConfiguration", "leaderElection": {"leaderElect": False},
            "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}},
                "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": kind}}},
                                 {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 5}}]}]}


@pytest.mark.slow_preview
def test_a_scheduler_plugins_cluster_is_previewed_by_the_release_the_group_names(tmp_path, ansible_playbook):
    """A cluster whose masters run scheduler-plugins 0.34.7's scheduler (a Coscheduling profile):
    kube_scheduler_rollout_preview_scheduler_plugins_version in its group reaches the preview, which runs that
    release's scheduler on its PodGroups (without it, kube-scheduler's own check refuses Coscheduling and the preview
    does not run)."""
    sys.path.insert(0, str(REPO / "tests" / "controlplane"))
    from local_apiserver import LocalApiServer, missing_binaries  # pylint: disable=import-outside-toplevel
    from preview_binaries import (  # pylint: disable=import-outside-toplevel
        SCHEDULER_PLUGINS_GROUP, real_binaries, scheduler_plugins_scheduler, serve_scheduler_plugins_objects)
    minor, binaries = real_binaries(("1.35", "1.37"))
    scheduler = scheduler_plugins_scheduler("0.34.7")
    if minor is None or missing_binaries() or not scheduler:
        pytest.skip("no real binaries: %s" % (binaries if minor is None else ", ".join(missing_binaries())
                                              or "scheduler-plugins 0.34.7's scheduler (make binaries)"))
    playbook("static_pod", tmp_path)
    (tmp_path / "cluster").mkdir()
    with LocalApiServer(tmp_path / "cluster") as api:
        from kubernetes import client  # pylint: disable=import-outside-toplevel
        groups = serve_scheduler_plugins_objects(api, REPO)["PodGroup"]
        api.ready_nodes(dict(("node-%d" % index, {}) for index in range(3)), {"cpu": "4", "memory": "8Gi", "pods": "110"})
        api.namespaces("apps")
        groups.create(namespace="apps", body={"apiVersion": SCHEDULER_PLUGINS_GROUP + "/v1alpha1", "kind": "PodGroup",
                                              "metadata": {"name": "four"}, "spec": {"minMember": 4}})
        for index in range(4):
            client.CoreV1Api(api.client).create_namespaced_pod("apps", {"metadata": {
                "name": "web-%d" % index, "labels": {SCHEDULER_PLUGINS_GROUP + "/pod-group": "four"}}, "spec": {
                "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}]}})
        inventory(tmp_path, {"one": {"m1": fake_plan(gang("LeastAllocated"), gang("MostAllocated"))}}, {"one": {
            "kube_scheduler_rollout_preview_kubeconfig": str(api.kubeconfig),
            "kube_scheduler_rollout_preview_scheduler_plugins_version": "0.34.7",
            "kube_scheduler_rollout_preview_binaries": {"etcd": binaries["etcd"],
                                                        "kube_apiserver": binaries["kube-apiserver"],
                                                        "kube_scheduler": scheduler}}})
        document = yaml.safe_load((tmp_path / "inventory.yml").read_text())
        document["all"]["children"]["kube_control_plane"]["hosts"]["m1"]["kube_scheduler_version"] = "1.34.7"
        (tmp_path / "inventory.yml").write_text(yaml.safe_dump(document))
        proc, kept = run(ansible_playbook, tmp_path, ["-e", "kube_scheduler_rollout_preview=true",
                                                      "-e", "kube_scheduler_rollout_preview_required=true"], timeout=900)
    assert proc.returncode == 0
    assert [item["scheduler_plugins_version"] for item in kept] == ["0.34.7"]
    table = "\n".join(shown(proc)[1:])
    # The gang of four is placed whole: LeastAllocated over the 3 nodes, MostAllocated onto fewer.
    used = re.search(r"nodes used\s+(\S+)\s+(\S+)\s+(\S+)", table)
    assert used and used.group(2) == "3" and int(used.group(3).split("-")[0]) < 3, table
