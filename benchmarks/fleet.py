# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fleet in waves: how long a config change takes over N = 1, 4 and 8 small clusters.

Each cluster is FLEET_MASTERS (default 2) systemd masters (podman hosts booting systemd, ks-fleet-c<k>-m<j>) with
one kube-scheduler each (the real KUBE_SCHEDULER_BIN); the clusters share ONE real API server (etcd and
kube-apiserver on ks-fleet-api, extensions/molecule/resources/control-plane.yml) and each has a lease of its own
(kube-system/fleet-c<k>) and schedulerName: one API server with a lease per cluster stands in for N API servers,
which this machine does not hold. kube_scheduler_cluster names each master's cluster, so playbooks/systemd.yml
plans every master at once and applies wave after wave, the k-th master of every cluster at once.

First every master converges once (binary, unit, config), then one config change (percentageOfNodesToScore) is
rolled over the masters of the first N clusters with the collection's playbook, as an operator runs it
(ANSIBLE_FORKS = the number of masters, so a wave is not cut by the forks): T(N) is that run's wall time. Last, the
8 clusters as ONE cluster (kube_scheduler_cluster unset: one master at a time over the whole fleet, as before
waves). Prints each T(N), T(8)/T(1) and the machine's load average (os.getloadavg) around each run, where the CPU
went (the controller, the test hosts, the whole machine) and the bound that the machine's cores put on T(8): the 16
test hosts and the one API server share this machine's cores with the controller, where a real fleet's masters each
run on their own. Figures, no pass/fail. BENCH_KEEP=1 keeps the hosts.
"""

from __future__ import annotations

import glob
import json
import os
import re
import resource
import sys
import subprocess
import time

from playbook_runs import environment, sh  # benchmarks/, the script's own directory, is on sys.path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATE = os.path.join(REPO, ".build", "bench-fleet")
CLUSTERS = 8
MASTERS = int(os.environ.get("FLEET_MASTERS", "2"))
NETWORK = "ks-fleet"
API = "ks-fleet-api"
IMAGE = "localhost/kubesched-test-host:bookworm"
PLAYBOOK = os.path.join(REPO, "playbooks", "systemd.yml")
# FLEET_PROFILE=1: Ansible's profile_tasks callback in each run's log (time per task); FLEET_SIZES: the N to run.
PROFILE = os.environ.get("FLEET_PROFILE") == "1"
SIZES = tuple(int(n) for n in os.environ.get("FLEET_SIZES", "1 4 8").split())
AS_ONE = os.environ.get("FLEET_AS_ONE", "1") == "1"


def masters(clusters):
    return ["ks-fleet-c%d-m%d" % (k, j) for k in range(1, clusters + 1) for j in range(1, MASTERS + 1)]


def env():
    return environment(STATE, "bench-fleet", os.path.join(REPO, "tests", "hosts", "connection_plugins"))


def inventory(clusters, one_cluster=False):
    """The masters of the first ``clusters`` clusters, each with its cluster's instance (a name, lease and
    schedulerName of its own: the 8 clusters also make one valid cluster), and the API server's host.
    ``one_cluster``: no kube_scheduler_cluster (the masters group is one cluster)."""
    hosts = {}
    for host in masters(clusters):
        cluster = host.split("-")[2]
        hosts[host] = {"kube_scheduler_instances": [{
            "name": "fleet-%s" % cluster, "kubeconfig_content": "{{ molecule_kubeconfig }}",
            "config": {"leaderElection": {"resourceName": "fleet-%s" % cluster},
                       "percentageOfNodesToScore": "{{ fleet_score | int }}",
                       "profiles": [{"schedulerName": "fleet-%s" % cluster}]}}]}
        if not one_cluster:
            hosts[host]["kube_scheduler_cluster"] = cluster
    document = {"all": {
        "vars": {"ansible_connection": "podman_pipelined", "ansible_pipelining": True,
                 "ansible_python_interpreter": "/usr/bin/python3", "kube_scheduler_health_timeout": 60,
                 "molecule_extra_leases": ["fleet-c%d" % k for k in range(1, CLUSTERS + 1)]},
        "children": {"kube_control_plane": {"hosts": hosts}, "test_control_plane": {"hosts": {API: {}}}}}}
    path = os.path.join(STATE, "inventory-%d%s.json" % (
        clusters, "-one" if one_cluster else ""))
    with open(path, "w") as handle:
        json.dump(document, handle, indent=1)
    return path


def start_hosts(environ):
    if sh(["podman", "network", "exists", NETWORK], environ, check=False) != 0:
        sh(["podman", "network", "create", NETWORK], environ)
    for host in [API] + masters(CLUSTERS):
        if sh(["podman", "container", "exists", host], environ, check=False) != 0:
            sh(["podman", "run", "--detach", "--name", host, "--hostname", host, "--network", NETWORK,
                "--systemd=always", "--label", "kubesched.bench-fleet=true", IMAGE], environ)


def remove_hosts(environ):
    for host in [API] + masters(CLUSTERS):
        sh(["podman", "rm", "--force", "--time", "5", host], environ, check=False)
    sh(["podman", "network", "rm", NETWORK], environ, check=False)


def machine_busy():
    """CPU seconds the whole machine spent busy since boot (/proc/stat: every state but idle and iowait)."""
    with open("/proc/stat") as handle:
        fields = [int(value) for value in handle.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def hosts_cpu(environ):
    """CPU seconds the ks-fleet-* containers used since they started (their cgroups: systemd, the kube-schedulers,
    every module run on them), or None where the cgroup is not found."""
    ids = subprocess.run(["podman", "ps", "--filter", "label=kubesched.bench-fleet=true", "--format", "{{.ID}}",
                          "--no-trunc"], env=environ, capture_output=True, text=True, check=False).stdout.split()
    total = 0
    for cid in ids:
        found = glob.glob("/sys/fs/cgroup/cpuacct/**/*%s*/cpuacct.usage" % cid, recursive=True) or glob.glob(
            "/sys/fs/cgroup/**/*%s*/cpu.stat" % cid, recursive=True)
        if not found:
            return None
        with open(found[0]) as handle:
            text = handle.read()
        total += int(text) / 1e9 if found[0].endswith("usage") else int(re.search(r"usage_usec (\d+)", text).group(1)) / 1e6
    return total


def rollout(environ, label, path, score, forks):
    """Wall time of one run of playbooks/systemd.yml, its masters changed, the load average around it, and where the
    CPU went meanwhile: the controller (ansible-playbook, its workers and their podman exec clients), the test
    hosts (the containers: systemd, kube-scheduler, the modules), the whole machine (other jobs included)."""
    log = os.path.join(STATE, "%s.log" % label)
    load = os.getloadavg()[0]
    if PROFILE:
        environ = dict(environ, ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks", PROFILE_TASKS_TASK_OUTPUT_LIMIT="60")
    children, busy, hosts = resource.getrusage(resource.RUSAGE_CHILDREN), machine_busy(), hosts_cpu(environ)
    start = time.monotonic()
    sh(["ansible-playbook", "-i", path, "-e", "fleet_score=%d" % score, PLAYBOOK], dict(environ, ANSIBLE_FORKS=str(forks)), log)
    seconds = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    controller = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    hosts_after = hosts_cpu(environ)
    with open(log) as handle:
        text = handle.read()
    changed = len([1 for n in re.findall(r"^ks-fleet-\S+ +: ok=\d+ +changed=(\d+)", text, re.M) if int(n) > 0])
    row = {"run": label, "seconds": round(seconds, 1), "masters_changed": changed,
           "waves": len(re.findall(r"^TASK \[Stop before this wave", text, re.M)),
           "load_before": round(load, 1), "load_after": round(os.getloadavg()[0], 1),
           "cpu_controller": round(controller, 1), "cpu_machine": round(machine_busy() - busy, 1),
           "cpu_hosts": round(hosts_after - hosts, 1) if None not in (hosts, hosts_after) else None}
    print("fleet: " + json.dumps(row, sort_keys=True), flush=True)
    return row


def main():
    for name in ("KUBE_SCHEDULER_BIN", "ETCD_BIN"):
        if not os.access(os.environ.get(name, ""), os.X_OK):
            sys.exit("bench-fleet needs real binaries: %s is not set (make binaries finds them: see the README)" % name)
    os.makedirs(os.path.join(STATE, "ansible-tmp"), exist_ok=True)
    group_vars = os.path.join(STATE, "group_vars")
    os.makedirs(group_vars, exist_ok=True)
    shared = os.path.join(REPO, "extensions", "molecule", "resources", "vars", "test-cluster.yml")
    if not os.path.lexists(os.path.join(group_vars, "all.yml")):
        os.symlink(shared, os.path.join(group_vars, "all.yml"))
    environ, version = env()
    print("kube-scheduler v%s; %d clusters of %d systemd masters (podman hosts ks-fleet-c<k>-m<j>) on ONE kube-apiserver "
          "(%s) with a lease per cluster (kube-system/fleet-c<k>); %d cores; logs in %s"
          % (version, CLUSTERS, MASTERS, API, os.cpu_count(), STATE), flush=True)
    rows = []
    try:
        start_hosts(environ)
        full = inventory(CLUSTERS)
        sh(["ansible-playbook", "-i", full, os.path.join(REPO, "extensions", "molecule", "resources", "prepare.yml")],
           environ, os.path.join(STATE, "prepare.log"))
        rows.append(rollout(environ, "first converge, %d clusters" % CLUSTERS, full, 50, MASTERS * CLUSTERS))
        for index, clusters in enumerate(SIZES):
            rows.append(rollout(environ, "change, %d clusters" % clusters, inventory(clusters), 60 + 10 * index,
                                MASTERS * clusters))
        if AS_ONE:
            as_one = inventory(CLUSTERS, one_cluster=True)
            rows.append(rollout(environ, "change, %d clusters as one" % CLUSTERS, as_one, 40, MASTERS * CLUSTERS))
    finally:
        if os.environ.get("BENCH_KEEP") != "1":
            remove_hosts(environ)
    print("\n%-32s %9s %8s %6s %12s %15s %10s %12s" % ("run", "seconds", "changed", "waves", "load avg",
                                                       "controller CPU", "hosts CPU", "machine CPU"))
    for row in rows:
        print("%-32s %9.1f %8d %6d %5.1f->%-5.1f %13.1f s %8s s %10.1f s" % (
            row["run"], row["seconds"], row["masters_changed"], row["waves"], row["load_before"], row["load_after"],
            row["cpu_controller"], "?" if row["cpu_hosts"] is None else "%.1f" % row["cpu_hosts"], row["cpu_machine"]))
    times = dict((row["run"], row["seconds"]) for row in rows)
    one, eight = times.get("change, 1 clusters"), times.get("change, %d clusters" % CLUSTERS)
    if one and eight:
        print("\nT(8)/T(1) = %.2f (%.1f s / %.1f s)" % (eight / one, eight, one))
        # What 2 cores allow: a run cannot take less than the CPU it used over the cores it had. The test hosts' CPU
        # (every master's module runs, systemd, kube-scheduler restarts, the one API server) is on this machine's
        # cores too: on a real fleet each master and each cluster's API server has its own.
        row = [row for row in rows if row["run"] == "change, %d clusters" % CLUSTERS][0]
        cores, own = os.cpu_count(), row["cpu_controller"] + (row["cpu_hosts"] or 0)
        print("CPU bound on %d cores: T(8) >= %.1f s (the run's CPU: controller %.1f s + test hosts %.1f s) / %d = %.1f s, so "
              "T(8)/T(1) >= %.2f here; the controller's share alone: %.1f s / %d = %.1f s (the test hosts' CPU runs on the "
              "masters' and API servers' own CPUs in a real fleet)" % (
                  cores, own, row["cpu_controller"], row["cpu_hosts"] or 0, cores, own / cores, own / cores / one,
                  row["cpu_controller"], cores, row["cpu_controller"] / cores))
    if "change, %d clusters as one" % CLUSTERS in times:
        print("the 8 clusters one master at a time: %.1f s" % times["change, %d clusters as one" % CLUSTERS])


if __name__ == "__main__":
    main()
