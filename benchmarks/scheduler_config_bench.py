"""Benchmark of kubesched.schedulers.scheduler_config (a measurement to read, not a timed test).

Prints:
1. in-process validate+render time of the library's process() for configs with 1, 10 and 100 profiles
   (median of --runs runs each);
2. the wall time of a scheduler_config task against an ansible.builtin.copy task of the same rendered text on
   localhost (connection local), median over --tasks tasks each, for a first write and for an unchanged re-run,
   and their ratio. Task times come from the ansible.posix.json callback's per-task start/end stamps.

Run with `make bench` (which sets ANSIBLE_COLLECTIONS_PATH and PYTHONPATH so the checkout is kubesched.schedulers).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process

VERSION = "1.33"


def config_with_profiles(count: int) -> dict:
    """A valid config with `count` profiles in the shapes the Kubernetes docs show, cycled."""
    shapes = [
        {},
        {"plugins": {"preScore": {"disabled": [{"name": "*"}]}, "score": {"disabled": [{"name": "*"}]}}},
        {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "MostAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                          {"name": "intel.com/foo", "weight": 3}]}}}]},
        {"plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 5}]}},
         "pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
             {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
              "whenUnsatisfiable": "ScheduleAnyway"}]}}]},
    ]
    profiles = [dict(shapes[i % len(shapes)], schedulerName="scheduler-%03d" % i) for i in range(count)]
    return {
        "clientConnection": {"kubeconfig": "/etc/kubernetes/scheduler.conf"},
        "leaderElection": {"leaderElect": True, "resourceName": "bench-scheduler"},
        "profiles": profiles,
    }


def in_process(runs: int) -> None:
    print("In-process validate+render (process(config=...), Kubernetes %s), median of %d runs:" % (VERSION, runs))
    for count in (1, 10, 100):
        config = config_with_profiles(count)
        result = process(config=config, kubernetes_version=VERSION)
        if not result.ok:
            sys.exit("benchmark config with %d profiles is invalid: %s" % (count, result.errors))
        times = []
        for dummy in range(runs):
            start = time.perf_counter()
            process(config=config, kubernetes_version=VERSION)
            times.append(time.perf_counter() - start)
        print("  %3d profiles: %8.2f ms  (min %.2f, max %.2f; rendered %d bytes)" % (
            count, statistics.median(times) * 1e3, min(times) * 1e3, max(times) * 1e3, len(result.rendered)))


def _task_playbook(tasks: int) -> str:
    # One task per file and tool, interleaved, so both see the same machine load; no loops (a loop is one task).
    lines = ["- hosts: localhost", "  gather_facts: false", "  tasks:"]
    for i in range(tasks):
        lines += [
            "    - name: scheduler_config %d" % i,
            "      kubesched.schedulers.scheduler_config:",
            "        {config: '{{ config }}', kubernetes_version: '%s', dest: '{{ out }}/sc-%d.yaml'}" % (VERSION, i),
            "    - name: copy %d" % i,
            "      ansible.builtin.copy: {content: '{{ rendered }}', dest: '{{ out }}/cp-%d.yaml', mode: '0600'}" % i,
        ]
    return "\n".join(lines) + "\n"


def _durations(report: dict) -> dict:
    """Seconds per task kind from the json callback's start/end stamps."""
    found = {"scheduler_config": [], "copy": []}
    for play in report["plays"]:
        for task in play["tasks"]:
            name = task["task"]["name"]
            stamps = task["task"]["duration"]
            seconds = (datetime.fromisoformat(stamps["end"].rstrip("Z"))
                       - datetime.fromisoformat(stamps["start"].rstrip("Z"))).total_seconds()
            for result in task["hosts"].values():
                if result.get("failed"):
                    sys.exit("task %s failed: %s" % (name, result.get("msg")))
            found[name.rsplit(" ", 1)[0]].append(seconds)
    return found


def against_copy(tasks: int) -> None:
    config = config_with_profiles(2)
    rendered = process(config=config, kubernetes_version=VERSION).rendered
    with tempfile.TemporaryDirectory(prefix="scheduler-config-bench-") as work:
        with open(os.path.join(work, "playbook.yml"), "w", encoding="utf-8") as handle:
            handle.write(_task_playbook(tasks))
        with open(os.path.join(work, "vars.json"), "w", encoding="utf-8") as handle:
            json.dump({"config": config, "rendered": rendered, "out": work,
                       "ansible_python_interpreter": sys.executable}, handle)
        env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
                   ANSIBLE_LOCAL_TEMP=os.path.join(work, ".ansible-local"))
        command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                   "-c", "local", "-e", "@vars.json", "playbook.yml"]
        print("\nTask wall time on localhost (connection local), 2-profile config, median of %d tasks each:" % tasks)
        for label in ("first write", "unchanged re-run"):
            proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                sys.exit("ansible-playbook failed:\n%s\n%s" % (proc.stdout[-3000:], proc.stderr[-3000:]))
            found = _durations(json.loads(proc.stdout))
            ours, theirs = statistics.median(found["scheduler_config"]), statistics.median(found["copy"])
            print("  %-16s scheduler_config %6.0f ms   ansible.builtin.copy %6.0f ms   ratio %.2f" % (
                label, ours * 1e3, theirs * 1e3, ours / theirs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="in-process runs per config size")
    parser.add_argument("--tasks", type=int, default=7, help="tasks per tool in the playbook comparison")
    args = parser.parse_args()
    print("Python %s on %s, %d CPUs" % (platform.python_version(), platform.machine(), os.cpu_count()))
    in_process(args.runs)
    against_copy(args.tasks)


if __name__ == "__main__":
    main()
