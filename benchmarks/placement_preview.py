"""Benchmark of kubesched.schedulers.placement_preview's engine (a measurement to read, not a timed test).

On this machine's real binaries (`make binaries`: the newest minor with a kube-apiserver and a kube-scheduler,
Debian's etcd):
1. a "cluster": a throwaway control plane of the engine's own holding --nodes Node objects (3 zones) and --pods
   running pods (bound with their nodeName, requests of four shapes); the snapshot is read from it as from a real
   cluster (snapshot.take: list, 500 a page) and timed; then that control plane is stopped;
2. the preview: LeastAllocated against MostAllocated (NodeResourcesFit's scoringStrategy), one run each, with the
   time of each phase (control plane start and nodes, pods created while kube-scheduler runs, until the last bind,
   the pods deleted for the next run) and the peak memory of the whole process tree (this Python, etcd,
   kube-apiserver, kube-scheduler: the largest sum of their RSS, sampled every 0.5 s);
3. the same kube-scheduler's own throughput on this machine: the same nodes and pods loaded into an idle API server
   first (no scheduler running), then kube-scheduler started and timed until every pod is bound: the physical
   limit of this design. The preview's pods per second are given against it.

Run with `make bench-preview` (NODES=... PODS=... for another size); append the figures to benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import threading
import time
from datetime import datetime, timezone

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview import placement, report, snapshot
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._control_plane import ControlPlane
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._load import (
    Writer, create_pods, load_cluster)

SHAPES = (("100m", "128Mi"), ("250m", "512Mi"), ("500m", "1Gi"), ("1", "2Gi"))
READY = [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "",
          "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}]


def binaries():
    etcd = os.environ.get("ETCD_BIN") or shutil.which("etcd")
    for minor in ("1_37", "1_36", "1_35"):
        found = {"etcd": etcd, "kube-apiserver": os.environ.get("KUBE_APISERVER_BIN_" + minor),
                 "kube-scheduler": os.environ.get("KUBE_SCHEDULER_BIN_" + minor)}
        if all(path and os.access(path, os.X_OK) for path in found.values()):
            return minor.replace("_", "."), found
    sys.exit("no kube-apiserver and kube-scheduler of one minor, or no etcd: run through make (make binaries)")


def load() -> str:
    """The machine's load average (1 minute) now, printed beside each figure: the machine is shared."""
    return "load %.1f" % os.getloadavg()[0]


def strategy(kind):
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": kind}}}]}]}


def synthetic(nodes: int, pods: int) -> dict:
    resources = {"cpu": "32", "memory": "128Gi", "pods": "250"}
    node_list = [{"metadata": {"name": "node-%05d" % index, "labels": {
        "kubernetes.io/hostname": "node-%05d" % index, "topology.kubernetes.io/zone": "zone-%s" % "abc"[index % 3]}},
        "status": {"capacity": resources, "allocatable": resources, "conditions": READY}} for index in range(nodes)]
    pod_list = []
    for index in range(pods):
        cpu, memory = SHAPES[index % len(SHAPES)]
        pod_list.append({"metadata": {"name": "pod-%06d" % index, "namespace": "ns-%d" % (index % 10),
                                      "labels": {"app": "app-%d" % (index % 50)}},
                         "spec": {"nodeName": "node-%05d" % (index % nodes),
                                  "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                                  "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}})
    return {"nodes": node_list, "namespaces": [{"metadata": {"name": "ns-%d" % n}} for n in range(10)],
            "priority_classes": [], "pods": pod_list}


class PeakMemory(threading.Thread):
    """The largest sum of the RSS of this process and all its descendants, and the CPU seconds each descendant
    used, by command name (sampled every half second: a process's last half second may be missed)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak = 0
        self.running = True
        self.cpu = {}  # pid: (command, CPU seconds)

    def _tree_rss(self) -> int:
        parents, rss, cpu = {}, {}, {}
        tick = os.sysconf("SC_CLK_TCK")
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % entry, encoding="utf-8") as handle:
                    command, fields = handle.read().split(" (", 1)[1].rsplit(") ", 1)
                    fields = fields.split()
            except (OSError, IndexError, ValueError):
                continue
            parents[int(entry)] = int(fields[1])
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
            cpu[int(entry)] = (command, (int(fields[11]) + int(fields[12])) / tick)
        mine, total = {os.getpid()}, 0
        changed = True
        while changed:
            changed = False
            for pid, parent in parents.items():
                if parent in mine and pid not in mine:
                    mine.add(pid)
                    changed = True
        for pid in mine:
            total += rss.get(pid, 0)
            if pid != os.getpid() and pid in cpu:
                self.cpu[pid] = cpu[pid]
        return total

    def cpu_by_command(self) -> dict:
        """CPU seconds so far by command, this process's own (exact) as python."""
        out = {"python": sum(os.times()[:2])}
        for command, seconds in list(self.cpu.values()):
            out[command] = out.get(command, 0.0) + seconds
        return out

    def run(self):
        while self.running:
            self.peak = max(self.peak, self._tree_rss())
            time.sleep(0.5)


def cpu_line(before: dict, after: dict) -> str:
    spent = dict((name, after[name] - before.get(name, 0.0)) for name in after)
    return ", ".join("%s %.1f s" % (name, seconds) for name, seconds in sorted(spent.items(), key=lambda item: -item[1])
                     if seconds >= 0.05)


def own_throughput(paths, data) -> tuple:
    """Seconds from kube-scheduler's start until every preloaded pod is bound, and the pods."""
    pending = [dict(pod, spec=dict((k, v) for k, v in pod["spec"].items() if k != "nodeName")) for pod in data["pods"]]
    with ControlPlane(paths) as plane:
        writer = Writer(plane.client())
        load_cluster(writer, data)
        create_pods(writer, pending, keep_node=False)
        started = time.monotonic()
        scheduler = plane.start_scheduler("kube-scheduler", strategy("LeastAllocated"))
        while writer.request("GET", "/api/v1/pods", query={"limit": 1, "fieldSelector": "spec.nodeName="}).get(
                "items"):
            plane.alive(scheduler)
            time.sleep(0.25)
        return time.monotonic() - started, len(pending)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=30000)
    args = parser.parse_args()
    minor, paths = binaries()
    data = synthetic(args.nodes, args.pods)
    memory = PeakMemory()
    memory.start()
    print("placement preview benchmark, %s, %d nodes, %d pods, kube-scheduler %s, %s, %d cores, load %s" % (
        datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), args.nodes, args.pods, minor,
        platform.python_version(), os.cpu_count(), " ".join("%.1f" % value for value in os.getloadavg())), flush=True)

    started = time.monotonic()
    with ControlPlane(paths) as cluster:
        writer = Writer(cluster.client())
        load_cluster(writer, data)
        create_pods(writer, data["pods"], keep_node=True)
        built = time.monotonic() - started
        began = time.monotonic()
        taken = snapshot.take(cluster.client())
        read = time.monotonic() - began
    print("cluster built in %.1f s; snapshot read: %.1f s (%d nodes, %d pods); %s" % (
        built, read, len(taken["nodes"]), len(taken["pods"]), load()), flush=True)

    began = time.monotonic()
    cpu_before = memory.cpu_by_command()
    result = placement.preview(taken, [("LeastAllocated", strategy("LeastAllocated")),
                                       ("MostAllocated", strategy("MostAllocated"))], paths, runs=1, timeout=1800,
                               progress=lambda line: print("  " + line, flush=True))
    previewed = time.monotonic() - began
    compared = report.compare(taken, result)
    print("\n".join(report.table(compared)))
    print("preview of two configurations: %.1f s (control planes started and loaded: %.1f s); %s" % (
        previewed, result["load_seconds"], load()))
    rates = []
    for label, runs in result["runs"].items():
        run = runs[0]
        placed = len(run["placed"])
        rates.append(placed / run["seconds"])
        print("  %s: %d pods placed in %.1f s from kube-scheduler's start (%.0f pods/s), all created by %.1f s; "
              "its control plane started and loaded in %.1f s"
              % (label, placed, run["seconds"], placed / run["seconds"], run["load_seconds"], run["setup_seconds"]))
    rest = previewed - result["load_seconds"] - sum(runs[0]["seconds"] for runs in result["runs"].values())
    print("  the rest (the settle wait, stopping kube-scheduler, removing each control plane): %.1f s" % rest)
    print("snapshot read + preview: %.1f s; peak memory of the process tree so far: %.2f GiB" % (
        read + previewed, memory.peak / 2 ** 30), flush=True)
    time.sleep(1)  # one more sample of the processes that are gone
    print("CPU of the preview, by process: %s" % cpu_line(cpu_before, memory.cpu_by_command()), flush=True)
    cpu_before = memory.cpu_by_command()

    seconds, pods = own_throughput(paths, data)
    print("kube-scheduler's own throughput (pods preloaded into an idle API server): %d pods in %.1f s, %.0f pods/s; %s"
          % (pods, seconds, pods / seconds, load()))
    print("CPU of the own-throughput phase (load and scheduling), by process: %s"
          % cpu_line(cpu_before, memory.cpu_by_command()))
    print("kube-scheduler's own pods/s over the preview's: %s (the target: at most 1.5)"
          % ", ".join("%.2f" % ((pods / seconds) / rate) for rate in rates))
    memory.running = False
    print("peak memory of the process tree: %.2f GiB" % (memory.peak / 2 ** 30))
    return 0


if __name__ == "__main__":
    sys.exit(main())
