"""On the real cluster (conftest.py, realcluster.py): the cluster-wide pre-upgrade scan and the lease RBAC
preflight of the plan, as an operator runs them against kubeadm's masters.

The scan (playbooks/upgrade_scan.yml, read-only, also a Check job) must find the third-party scheduler configs an
upgrade breaks, by namespace/name, with the field kube-scheduler names, and the masters' kube-scheduler static pods by
host/path. The preflight (the plan of playbooks/static_pod.yml) must refuse an instance whose lease kubeadm's identity
system:kube-scheduler may not use, with the RBAC to add, before anything on a master changes. The bootstrap
ClusterRole system:kube-scheduler grants get/update on the lease named kube-scheduler only (and create on any); the
test control plane is upstream's (OpenShift's would also let it get/update every lease in kube-system through its
bootstrap Role system::leader-locking-kube-scheduler), and realcluster.py grants no extra lease
(molecule_extra_leases): the gap tested is a lease in a namespace of the scheduler's own, as a third-party scheduler
keeps it.
"""
from __future__ import annotations

import contextlib
import json
import re
import time

import pytest
import yaml
from kubernetes import client

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import versions

from conftest import require_binaries

require_binaries()

SCAN_NAMESPACE = "e2e-upgrade-scan"
# kube-scheduler 1.29 removed kubescheduler.config.k8s.io/v1beta3 (/work/shared/reference/kube-scheduler.md).
V1BETA3 = """apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  resourceName: stork
  resourceNamespace: e2e-upgrade-scan
profiles:
- schedulerName: stork
"""
# The in-tree volume-limit plugins were unregistered in 1.32 (config/_plugin_registry.py, _PLUGIN_CHANGES[32]).
REMOVED_PLUGIN, REMOVED_IN = "EBSLimits", (1, 32)
V1_REMOVED_PLUGIN = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: volume-aware
  plugins:
    filter:
      enabled:
      - name: %s
""" % REMOVED_PLUGIN
GAP_LEASE = GAP_NAMESPACE = "e2e-lease-gap"


def minor_tuple(minor):
    return tuple(int(part) for part in minor.split("."))


def target_minor(cluster):
    """The upgrade the operator plans: the next minor, or the first one without the removed plugin if later. On a
    cluster of the newest minor the collection knows there is no next one yet: the scan checks that minor itself
    (both planted objects fail there as well)."""
    major, minor = minor_tuple(cluster.minor)
    return "%d.%d" % max(min((major, minor + 1), minor_tuple(versions.NEWEST_MINOR)), REMOVED_IN)


def run_playbook(cluster, monkeypatch, playbook, extra_vars, options=()):
    """Run one of the collection's playbooks against the masters with the ansible.posix.json callback: the process
    and its report (plays, tasks with each host's result, stats)."""
    monkeypatch.setenv("ANSIBLE_STDOUT_CALLBACK", "ansible.posix.json")
    run = cluster.playbook(playbook, extra_vars, masters=True, check=False, options=options)
    start = run.stdout.find("{")
    assert start >= 0, "ansible-playbook did not print JSON:\n%s\n%s" % (run.stdout[-4000:], run.stderr[-3000:])
    return run, json.loads(run.stdout[start:])


def task_results(report, task):
    """{host: result} of every run of a task in a JSON report, by its name (a role's task is "role : name")."""
    return {host: result for play in report["plays"] for entry in play["tasks"]
            if entry["task"]["name"].rsplit(" : ", 1)[-1] == task for host, result in entry["hosts"].items()}


def changed(report):
    return sum(stats["changed"] for stats in report["stats"].values())


def tables(lines):
    """The scan's report (one line per row, a blank line between objects) as {head line: [row lines]}."""
    out, head = {}, None
    for line in lines:
        if not line:
            head = None
        elif head is None:
            head = line
            out[head] = []
        else:
            out[head].append(line)
    return out


def rows(table):
    """[(minor, starts, field, finding)] of one object's table; a continuation row repeats its minor."""
    header, parsed, minor, starts = table[0], [], "", ""
    columns = [header.index(name) for name in ("MINOR", "STARTS", "FIELD", "FINDING")]
    for line in table[1:]:
        cells = [line[begin:end].strip() for begin, end in zip(columns, columns[1:] + [None])]
        minor, starts = cells[0] or minor, cells[1] or starts
        parsed.append((minor.split()[0], starts, cells[2], cells[3]))
    return parsed


@contextlib.contextmanager
def namespace(cluster, name):
    """A namespace of the test's own, removed after it."""
    core = client.CoreV1Api(cluster.api())
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    try:
        yield core
    finally:
        core.delete_namespace(name)


@pytest.fixture
def scan_namespace(cluster):
    with namespace(cluster, SCAN_NAMESPACE) as core:
        yield core


def test_the_scan_finds_the_configmaps_an_upgrade_breaks_and_the_masters_static_pods(
        cluster, scan_namespace, monkeypatch):
    started = time.monotonic()
    core = scan_namespace
    planted = {
        "stork-config": core.create_namespaced_config_map(SCAN_NAMESPACE, client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="stork-config"), data={"config.yaml": V1BETA3})),
        "volume-scheduler": core.create_namespaced_config_map(SCAN_NAMESPACE, client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="volume-scheduler"),
            data={"scheduler-config.yaml": V1_REMOVED_PLUGIN})),
    }
    target = target_minor(cluster)
    scan_vars = {"kube_scheduler_version": cluster.version, "kube_scheduler_upgrade_to": [target],
                 "kube_scheduler_upgrade_kubeconfig": str(cluster.admin_kubeconfig)}
    reports = {}
    for mode, options in (("run", ()), ("check", ("--check",))):
        run, report = run_playbook(cluster, monkeypatch, "playbooks/upgrade_scan.yml", scan_vars, options)
        assert run.returncode == 2, run.stdout[-6000:] + run.stderr[-3000:]  # two objects would not start
        assert changed(report) == 0
        tables_shown = [result for result in task_results(report, "Report a table per object").values()
                        if not result.get("skipped")]
        assert len(tables_shown) == 1, run.stdout[-4000:]  # once for the cluster, not per master
        reports[mode] = tables_shown[0]["msg"]
        reports[mode + " failure"] = [result["msg"] for result in task_results(
            report, "Fail when a config would not start on a target").values() if result.get("failed")]
    print("\n".join(reports["run"]))
    assert reports["check"] == reports["run"], "a Check job must see what a run sees"
    found = tables(reports["run"])

    def table_of(prefix):
        heads = [head for head in found if head.startswith(prefix)]
        assert len(heads) == 1, (prefix, list(found))
        return heads[0], rows(found[heads[0]])

    stork_head, stork = table_of("configmap %s/stork-config key config.yaml " % SCAN_NAMESPACE)
    assert "kubescheduler.config.k8s.io/v1beta3" in stork_head
    on_target = [row for row in stork if row[0] == target]
    assert on_target and on_target[0][1] == "NO" and on_target[0][2] == "apiVersion", stork
    assert "kubescheduler.config.k8s.io/v1beta3" in on_target[0][3], stork

    volume_head, volume = table_of("configmap %s/volume-scheduler key scheduler-config.yaml " % SCAN_NAMESPACE)
    assert "kubescheduler.config.k8s.io/v1" in volume_head
    on_target = [row for row in volume if row[0] == target]
    field = "profiles[0].plugins.filter.enabled[0]"
    assert on_target and on_target[0][1] == "NO" and on_target[0][2] == field, volume
    assert on_target[0][3].startswith("%s: " % field) and REMOVED_PLUGIN in on_target[0][3], volume
    now = volume[0]
    assert now[1] == ("yes" if minor_tuple(cluster.minor) < REMOVED_IN else "NO"), volume

    # kubeadm's kube-scheduler static pod on each master, by host and path (the kubelet's manifest directory).
    for master in cluster.masters:
        head, pod = table_of("host %s path /etc/kubernetes/manifests/kube-scheduler.yaml " % master)
        assert all(row[1] == "yes" for row in pod), (head, pod)
    # The failure names both ConfigMaps, once for the cluster.
    assert len(reports["run failure"]) == 1
    for name in planted:
        assert "%s/%s" % (SCAN_NAMESPACE, name) in reports["run failure"][0]
    # Read-only: the ConfigMaps are as they were written.
    for name, written in planted.items():
        now_there = core.read_namespaced_config_map(name, SCAN_NAMESPACE)
        assert now_there.metadata.resource_version == written.metadata.resource_version
    print("scan test: %.1f s (two playbook runs)" % (time.monotonic() - started))


def manifests_state(cluster):
    """{master: sha256sum of every file under /etc/kubernetes (the manifests, kubeadm's kubeconfigs)}."""
    return {master: cluster.real.node_exec(master, "sh", "-c", "find /etc/kubernetes -type f | sort | xargs sha256sum")
            for master in cluster.masters}


@pytest.fixture
def gap_namespace(cluster):
    with namespace(cluster, GAP_NAMESPACE):
        yield GAP_NAMESPACE


def test_the_plan_refuses_an_instance_whose_lease_kubeadms_identity_may_not_use(cluster, gap_namespace, monkeypatch):
    started = time.monotonic()
    lease = "%s/%s" % (gap_namespace, GAP_LEASE)
    gap = {"name": GAP_LEASE, "secure_port": 10261, "kubeconfig": "/etc/kubernetes/scheduler.conf",
           "config": {"leaderElection": {"resourceName": GAP_LEASE, "resourceNamespace": gap_namespace},
                      "profiles": [{"schedulerName": GAP_LEASE}]}}
    plan_vars = {"kube_scheduler_version": cluster.version,
                 "kube_scheduler_instances": [{"name": "kube-scheduler", "default_scheduler": True}, gap]}
    before = manifests_state(cluster)
    assert all("/etc/kubernetes/manifests/kube-scheduler.yaml" in listing for listing in before.values()), before
    rbac = client.RbacAuthorizationV1Api(cluster.api())
    for options in (("--check",), ()):  # a Check job, then a real run: the plan refuses both before any change
        run, report = run_playbook(cluster, monkeypatch, "playbooks/static_pod.yml", plan_vars, options)
        assert run.returncode != 0, run.stdout[-6000:]
        assert changed(report) == 0
        assert not task_results(report, "Apply this master's plan behind the health gate")
        refused = {host: result for host, result in task_results(report, "Ask the master what would change").items()
                   if result.get("failed")}
        assert set(refused) == set(cluster.masters), run.stdout[-6000:]
        for master, result in refused.items():
            message = result["msg"]
            missing = re.search(r"(\S+) may not (\S+) lease %s\b" % re.escape(lease), message)
            assert missing, message
            assert missing.group(1) == "system:kube-scheduler" and set(missing.group(2).split("/")) == {"get", "update"}
            documents = [doc for doc in yaml.safe_load_all(message[message.index("\n---") + 1:]) if doc]
            role = next(doc for doc in documents if doc["kind"] == "Role")
            binding = next(doc for doc in documents if doc["kind"] == "RoleBinding")
            granted = [rule for rule in role["rules"] if GAP_LEASE in rule.get("resourceNames", [])]
            assert granted and {"get", "update"} <= set(granted[0]["verbs"]), (master, role)
            assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == gap_namespace
            assert binding["roleRef"]["name"] == role["metadata"]["name"]
            assert [subject["name"] for subject in binding["subjects"]] == ["system:kube-scheduler"]
    after = manifests_state(cluster)
    assert after == before
    assert rbac.list_namespaced_role(gap_namespace).items == []  # a plan never creates the RBAC it names
    print("lease gap test: %.1f s (a Check job and a run)" % (time.monotonic() - started))
