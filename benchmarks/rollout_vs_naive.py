# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's playbooks side by side with a hand-written naive playbook, on the same three local masters.

For systemd and for static pods: the naive playbook (benchmarks/rollout/naive-*.yml: template/copy + systemd, no
validation, no health gate) first converge and no-op rerun, then this collection's playbook first converge, no-op
rerun and `--check --diff` on the converged cluster, each from clean masters. Prints each wall time, the ratio to
the naive one against issue 9's targets, and the ten slowest tasks of the collection's converge and no-op runs.
Real parts only: the masters are real nodes (podman hosts booting systemd with containerd and the real kubelet,
kubeadm's layout: tests/realnode/README.md), the control plane is etcd + kube-apiserver + kube-controller-manager
(KUBE_APISERVER_BIN, ...) and the kube-scheduler is the one named by KUBE_SCHEDULER_BIN, also as the image the static
pods run (`make bench-rollout` has `make binaries` find them). BENCH_KEEP=1 keeps the hosts.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

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
TARGETS = {"no-op": 1.0, "check": 1.0, "converge": 2.0}


def env():
    version = subprocess.run([os.environ["KUBE_SCHEDULER_BIN"], "--version"], capture_output=True, text=True,
                             check=True).stdout.split("v", 1)[1].strip()
    minor = version.rsplit(".", 1)[0]
    extra = {
        "ANSIBLE_COLLECTIONS_PATH": os.environ.get("ANSIBLE_COLLECTIONS_PATH", os.path.join(REPO, ".build", "collections")),
        "CONTAINERS_CONF": os.environ.get("CONTAINERS_CONF", os.path.join(REPO, "tests", "hosts", "containers.conf")),
        "ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_RETRY_FILES_ENABLED": "False",
        "ANSIBLE_LOCAL_TEMP": os.path.join(STATE, "ansible-tmp"),
        "KUBE_SCHEDULER_BIN_" + minor.replace(".", "_"): os.environ["KUBE_SCHEDULER_BIN"],
        "MOLECULE_KUBE_MINOR": minor, "MOLECULE_SCENARIO_NAME": "bench", "MOLECULE_PROJECT_DIRECTORY": REPO,
        "MOLECULE_EPHEMERAL_DIRECTORY": STATE,
    }
    return dict(os.environ, **extra), version


def sh(argv, environ, log=None, check=True):
    with open(log or os.devnull, "w") as out:
        code = subprocess.run(argv, env=environ, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    if check and code != 0:
        sys.exit("failed (%d): %s%s" % (code, " ".join(argv), ("; see " + log) if log else ""))
    return code


def playbook(environ, name, path, *args, profile=False):
    """Wall time of one ansible-playbook run, as an operator runs it; its log under .build/bench-rollout."""
    log = os.path.join(STATE, "%s.log" % name)
    run_env = dict(environ, ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks") if profile else environ
    if profile:
        run_env["PROFILE_TASKS_TASK_OUTPUT_LIMIT"] = "10"
    start = time.monotonic()
    sh(["ansible-playbook", "-i", INVENTORY, path] + list(args), run_env, log)
    seconds = time.monotonic() - start
    with open(log) as handle:
        text = handle.read()
    changed = sum(int(n) for n in re.findall(r"ks-bench-m\d +: ok=\d+ +changed=(\d+)", text))
    print("  %-28s %7.1f s   changed=%d" % (name, seconds, changed), flush=True)
    return seconds, text


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
    print("%s:" % kind, flush=True)
    clean = ["-e", "bench_phase=%s" % kind]
    sh(["ansible-playbook", "-i", INVENTORY, os.path.join(BENCH, "clean.yml")] + clean, environ, os.path.join(STATE, "clean.log"))
    figures = {"naive converge": playbook(environ, "naive %s converge" % kind, naive)[0],
               "naive no-op": playbook(environ, "naive %s no-op" % kind, naive)[0]}
    sh(["ansible-playbook", "-i", INVENTORY, os.path.join(BENCH, "clean.yml")] + clean, environ, os.path.join(STATE, "clean.log"))
    figures["converge"], converge = playbook(environ, "collection %s converge" % kind, ours, profile=True)
    figures["no-op"], no_op = playbook(environ, "collection %s no-op" % kind, ours, profile=True)
    figures["check"] = playbook(environ, "collection %s check --diff" % kind, ours, "--check", "--diff")[0]
    return figures, {"converge": slowest_tasks(converge), "no-op": slowest_tasks(no_op)}


def main():
    for name in ("KUBE_SCHEDULER_BIN", "KUBE_APISERVER_BIN", "ETCD_BIN"):
        if not os.access(os.environ.get(name, ""), os.X_OK):
            sys.exit("bench-rollout needs real binaries: %s is not set (make binaries finds them: see the README)" % name)
    os.makedirs(os.path.join(STATE, "ansible-tmp"), exist_ok=True)
    environ, version = env()
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
    print("\n%-12s %-10s %9s %9s %7s %7s" % ("role", "run", "naive s", "ours s", "ratio", "target"))
    for kind, (figures, _slowest) in results.items():
        for run, naive in (("converge", "naive converge"), ("no-op", "naive no-op"), ("check", "naive no-op")):
            ratio = figures[run] / figures[naive]
            print("%-12s %-10s %9.1f %9.1f %6.2fx %s%.1fx %s" % (
                kind, run, figures[naive], figures[run], ratio, "<=", TARGETS[run], "ok" if ratio <= TARGETS[run] else "MISSED"))
    for kind, (_figures, slowest) in results.items():
        for run, lines in slowest.items():
            print("\nslowest tasks of the collection's %s %s run (profile_tasks):" % (kind, run))
            for line in lines:
                print("  " + line.strip())


if __name__ == "__main__":
    main()
