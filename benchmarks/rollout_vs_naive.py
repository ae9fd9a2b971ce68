# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's playbooks side by side with a hand-written naive playbook, on the same three local masters.

For systemd and for static pods: the naive playbook (benchmarks/rollout/naive-*.yml: template/copy + systemd, no
validation, no health gate) first converge and no-op rerun, then this collection's playbook first converge, no-op rerun
and `--check --diff` on the converged cluster, each from clean masters. Prints each wall time, the ratio to the naive
one against the targets below (TARGETS), the calls each master cost (modules sent to it, counted by the connection:
benchmarks/rollout/connection_plugins/podman_counted.py; tasks run and skipped, from the recap) beside the naive
playbook's, and the ten slowest tasks of the collection's converge and no-op runs. Real parts only: the masters are real
nodes (podman hosts booting systemd with containerd and the real kubelet, kubeadm's layout: tests/realnode/README.md),
the control plane is etcd + kube-apiserver + kube-controller-manager (KUBE_APISERVER_BIN, ...) and the kube-scheduler is
the one named by KUBE_SCHEDULER_BIN, also as the image the static pods run (`make bench-rollout` has `make binaries`
find them). BENCH_KEEP=1 keeps the hosts.
"""

from __future__ import annotations

import os
import re
import sys
import time

from playbook_runs import environment, sh  # benchmarks/, the script's own directory, is on sys.path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(REPO, "benchmarks", "rollout")
STATE = os.path.join(REPO, ".build", "bench-rollout")
INVENTORY = os.path.join(BENCH, "inventory.yml")
HOSTS = ["ks-bench-m1", "ks-bench-m2", "ks-bench-m3", "ks-bench-api"]
NETWORK = "ks-bench"
IMAGE = "localhost/kubesched-test-host:bookworm"
# The masters are real nodes, started as tests/e2e/realcluster.py starts them (tests/realnode/README.md).
NODE_IMAGE = "localhost/kubesched-node:bookworm"
NODE_OPTIONS = ["--privileged", "--cgroupns=private", "--tmpfs", "/var/lib/containerd:rw,exec"]
# A no-op rerun and a Check job at most a quarter of the naive playbook's no-op, a converge at most its own.
TARGETS = {"no-op": 0.25, "check": 0.25, "converge": 1.0}
MASTERS = HOSTS[:3]


def env():
    # The masters' connection counts the modules it sends (inventory.yml: podman_counted).
    return environment(STATE, "bench", os.pathsep.join(
        [os.path.join(BENCH, "connection_plugins")] + [path for path in [os.environ.get("ANSIBLE_CONNECTION_PLUGINS")] if path]))


def playbook(environ, name, path, *args, profile=False):
    """Wall time of one ansible-playbook run, as an operator runs it, and what each master cost: (seconds, log text,
    calls), calls per master {"modules": sent to it, "tasks": run on it (ok or failed), "skipped": tasks skipped}.
    Its log under .build/bench-rollout."""
    log = os.path.join(STATE, "%s.log" % name)
    calls_log = os.path.join(STATE, "%s.calls" % name)
    if os.path.exists(calls_log):
        os.unlink(calls_log)
    run_env = dict(environ, BENCH_CALLS_LOG=calls_log)
    if profile:
        run_env.update(ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks", PROFILE_TASKS_TASK_OUTPUT_LIMIT="10")
    start = time.monotonic()
    sh(["ansible-playbook", "-i", INVENTORY, path] + list(args), run_env, log)
    seconds = time.monotonic() - start
    with open(log) as handle:
        text = handle.read()
    calls = dict((host, {"modules": 0, "tasks": 0, "skipped": 0}) for host in MASTERS)
    if os.path.exists(calls_log):
        with open(calls_log) as handle:
            for line in handle:
                host = line.split()[0]
                if host in calls:
                    calls[host]["modules"] += 1
    for host, ok, failed, skipped in re.findall(r"(ks-bench-m\d) +: ok=(\d+) .*failed=(\d+) +skipped=(\d+)", text):
        calls[host].update(tasks=int(ok) + int(failed), skipped=int(skipped))
    changed = sum(int(n) for n in re.findall(r"ks-bench-m\d +: ok=\d+ +changed=(\d+)", text))
    print("  %-34s %7.1f s   changed=%-2d per master: %s" % (name, seconds, changed, shown(per_master(calls))), flush=True)
    return seconds, text, calls


def per_master(calls):
    """The mean over the masters of each count (they do the same work; a master that differs shows as a fraction)."""
    return dict((key, sum(entry[key] for entry in calls.values()) / float(len(calls))) for key in ("modules", "tasks", "skipped"))


def shown(counts):
    return "%4.1f modules, %4.1f tasks run, %4.1f skipped" % (counts["modules"], counts["tasks"], counts["skipped"])


def start_hosts(environ):
    if sh(["podman", "network", "exists", NETWORK], environ, check=False) != 0:
        sh(["podman", "network", "create", NETWORK], environ)
    for host in HOSTS:
        if sh(["podman", "container", "exists", host], environ, check=False) != 0:
            image, options = (IMAGE, []) if host == "ks-bench-api" else (NODE_IMAGE, NODE_OPTIONS)
            sh(["podman", "run", "--detach", "--name", host, "--hostname", host, "--network", NETWORK, "--systemd=always",
                "--label", "kubesched.bench=true"] + options + [image], environ)


def remove_hosts(environ):
    for host in HOSTS:
        sh(["podman", "rm", "--force", "--time", "5", host], environ, check=False)
    sh(["podman", "network", "rm", NETWORK], environ, check=False)


def slowest_tasks(text):
    """profile_tasks' summary lines of a run: "<task> ---- 1.23s"."""
    lines = [line for line in text.splitlines() if re.search(r"-{3,} +\d+\.\d+s$", line)]
    return lines[-10:]


def phase(environ, kind, naive, ours):
    """{run: (seconds, calls per master)} of the naive playbook's converge and no-op and of the collection's
    converge, no-op and check, and the slowest tasks of the collection's converge and no-op."""
    print("%s:" % kind, flush=True)
    clean = ["-e", "bench_phase=%s" % kind]
    sh(["ansible-playbook", "-i", INVENTORY, os.path.join(BENCH, "clean.yml")] + clean, environ, os.path.join(STATE, "clean.log"))
    runs = {}
    for run in ("converge", "no-op"):
        seconds, _text, calls = playbook(environ, "naive %s %s" % (kind, run), naive)
        runs["naive " + run] = (seconds, per_master(calls))
    sh(["ansible-playbook", "-i", INVENTORY, os.path.join(BENCH, "clean.yml")] + clean, environ, os.path.join(STATE, "clean.log"))
    slowest = {}
    for run, args in (("converge", []), ("no-op", []), ("check", ["--check", "--diff"])):
        seconds, text, calls = playbook(environ, "collection %s %s" % (kind, run), ours, *args, profile=run != "check")
        runs[run] = (seconds, per_master(calls))
        if run != "check":
            slowest[run] = slowest_tasks(text)
    return runs, slowest


def main():
    for name in ("KUBE_SCHEDULER_BIN", "KUBE_APISERVER_BIN", "ETCD_BIN"):
        if not os.access(os.environ.get(name, ""), os.X_OK):
            sys.exit("bench-rollout needs real binaries: %s is not set (make binaries finds them: see the README)" % name)
    os.makedirs(os.path.join(STATE, "ansible-tmp"), exist_ok=True)
    environ, version = env()
    with open("/proc/loadavg") as handle:
        load_at_start = " ".join(handle.read().split()[:3])
    print("kube-scheduler v%s; three masters ks-bench-m1..m3 (podman, systemd), logs in %s" % (version, STATE), flush=True)
    try:
        start_hosts(environ)
        # The control plane, then real nodes (each running kubeadm's kube-scheduler static pod until clean.yml).
        resources = os.path.join(REPO, "extensions", "molecule", "resources")
        sh(["ansible-playbook", "-i", INVENTORY, os.path.join(resources, "prepare.yml"), os.path.join(resources, "nodes.yml")],
           environ, os.path.join(STATE, "prepare.log"))
        results = {
            "systemd": phase(environ, "systemd", os.path.join(BENCH, "naive-systemd.yml"),
                             os.path.join(REPO, "playbooks", "systemd.yml")),
            "static_pod": phase(environ, "static_pod", os.path.join(BENCH, "naive-static-pod.yml"),
                                os.path.join(REPO, "playbooks", "static_pod.yml")),
        }
    finally:
        if os.environ.get("BENCH_KEEP") != "1":
            remove_hosts(environ)
    # Per phase: wall time against the naive run it replaces (a check against the naive no-op: both change nothing),
    # then the calls per master against the naive run's (modules sent to the master, tasks run on it).
    header = ("role", "run", "naive s", "ours s", "ratio", "target", "", "per master: modules sent (naive), tasks run (naive), skipped")
    print("\n%-10s %-8s %8s %8s %6s %7s %-6s  %s" % header)
    for kind, (runs, _slowest) in results.items():
        for run, naive in (("converge", "naive converge"), ("no-op", "naive no-op"), ("check", "naive no-op")):
            (ours_s, ours_calls), (naive_s, naive_calls) = runs[run], runs[naive]
            ratio = ours_s / naive_s
            print("%-10s %-8s %8.1f %8.1f %5.2fx %s%.2fx %-6s  %4.1f (%4.1f) %5.2fx, %4.1f (%4.1f) %5.2fx, %4.1f" % (
                kind, run, naive_s, ours_s, ratio, "<=", TARGETS[run], "ok" if ratio <= TARGETS[run] else "MISSED",
                ours_calls["modules"], naive_calls["modules"], ours_calls["modules"] / max(naive_calls["modules"], 1),
                ours_calls["tasks"], naive_calls["tasks"], ours_calls["tasks"] / max(naive_calls["tasks"], 1),
                ours_calls["skipped"]))
    with open("/proc/loadavg") as handle:
        print("\nload average at the start %s, at the end %s (1, 5, 15 min; %d cores)" % (
            load_at_start, " ".join(handle.read().split()[:3]), os.cpu_count()))
    for kind, (_figures, slowest) in results.items():
        for run, lines in slowest.items():
            print("\nslowest tasks of the collection's %s %s run (profile_tasks):" % (kind, run))
            for line in lines:
                print("  " + line.strip())


if __name__ == "__main__":
    main()
