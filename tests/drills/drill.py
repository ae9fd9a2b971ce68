"""Drills against a scenario's real control plane and real kube-schedulers on podman masters; each asserts its
outcome and prints its timings as one JSON line (prefixed "drill:"), exit 1 with the reason when it fails.

  drill.py failover KUBECONFIG --lease NS/NAME --unit UNIT
      SIGKILL the process holding the lease (the holder identity starts with its master's host name) and measure
      until another process holds the lease.
  drill.py rolling KUBECONFIG --scheduler-name NAME -- COMMAND...
      Create a pod for NAME every --interval seconds while COMMAND (a rolling change of the masters) runs, and
      measure how long each pod stayed unscheduled; every pod must be bound, none later than --max-gap seconds.
      With real kubelets (--real-nodes) the pods say `os: windows`, which a Linux kubelet refuses at admission (no
      sandbox, no network namespace: hundreds of those a minute overload these hosts' kernels), and each is deleted
      once bound. The scheduler does not look at spec.os, so binding is measured as on any node.
"""
from __future__ import annotations

import argparse
import json
import queue
import subprocess
import sys
import threading
import time

from kubernetes import client, config, watch

NOT_READY = client.V1Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoSchedule")
# Real kubeadm-like masters carry this taint (API-only Nodes do not: tolerating it there changes nothing).
CONTROL_PLANE = client.V1Toleration(key="node-role.kubernetes.io/control-plane", operator="Exists", effect="NoSchedule")


def holder(coordination, namespace, name):
    spec = coordination.read_namespaced_lease(name, namespace).spec
    return spec.holder_identity or ""


def failover(api, args) -> dict:
    namespace, name = args.lease.split("/")
    coordination = client.CoordinationV1Api(api)
    before = holder(coordination, namespace, name)
    assert before, "nobody holds %s before the drill" % args.lease
    host = before.split("_")[0]
    started = time.monotonic()
    subprocess.run(["podman", "exec", host, "systemctl", "kill", "--signal=SIGKILL", args.unit + ".service"],
                   check=True)
    while time.monotonic() - started < args.timeout:
        current = holder(coordination, namespace, name)
        if current and current != before:
            return {"drill": "failover", "lease": args.lease, "killed": before, "new_holder": current,
                    "failover_seconds": round(time.monotonic() - started, 2)}
        time.sleep(0.1)
    raise AssertionError("no other process took %s within %ss of SIGKILL to %s" % (args.lease, args.timeout, before))


class PodStream:
    """Creates one pod every ``interval`` seconds and notes when each was created and when it was bound."""

    def __init__(self, api, namespace, scheduler_name, interval, real_nodes=False):
        self.core, self.namespace, self.scheduler_name, self.interval = client.CoreV1Api(api), namespace, scheduler_name, interval
        self.created, self.bound, self.stop = {}, {}, threading.Event()
        # Set once the last pod is noted: the watcher stops when every pod created is bound, and a pod whose create
        # call was in flight when `stop` came would otherwise be left out of the count and reported never bound.
        self.all_created = threading.Event()
        self.real_nodes = real_nodes
        # Deleting in the watch loop delayed seeing later bindings (a busy API server answers a delete in 0.1 s and
        # more): the pods to delete go to threads of their own.
        self.to_delete = queue.Queue()

    def setup(self):
        self.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=self.namespace)))
        # Pods need their ServiceAccount to exist; no controller makes "default" here, so name our own.
        self.core.create_namespaced_service_account(self.namespace, client.V1ServiceAccount(
            metadata=client.V1ObjectMeta(name="drill")))

    def create_loop(self):
        index = 0
        next_at = time.monotonic()
        try:
            while not self.stop.is_set():
                name = "p%05d" % index
                self.core.create_namespaced_pod(self.namespace, client.V1Pod(
                    metadata=client.V1ObjectMeta(name=name),
                    spec=client.V1PodSpec(scheduler_name=self.scheduler_name, service_account_name="drill",
                                          automount_service_account_token=False, tolerations=[NOT_READY, CONTROL_PLANE],
                                          termination_grace_period_seconds=0,
                                          os=client.V1PodOS(name="windows") if self.real_nodes else None,
                                          containers=[client.V1Container(name="pause", image="registry.k8s.io/pause:3.10")])))
                self.created[name] = time.monotonic()
                index += 1
                next_at += self.interval
                time.sleep(max(0.0, next_at - time.monotonic()))
        finally:
            self.all_created.set()

    def watch_loop(self):
        stream = watch.Watch()
        while not (self.all_created.is_set() and len(self.bound) >= len(self.created)):
            for event in stream.stream(self.core.list_namespaced_pod, self.namespace, timeout_seconds=5):
                pod = event["object"]
                if pod.spec.node_name and pod.metadata.name not in self.bound:
                    self.bound[pod.metadata.name] = time.monotonic()
                    if self.real_nodes:
                        self.to_delete.put(pod.metadata.name)
                if self.all_created.is_set() and len(self.bound) >= len(self.created):
                    stream.stop()

    def delete_loop(self):
        while True:
            name = self.to_delete.get()
            if name is None:
                return
            try:
                self.core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0)
            except client.ApiException:
                pass  # gone already: the namespace's teardown deletes whatever is left

    def teardown(self):
        self.core.delete_namespace(self.namespace)


def pods_during(api, command, scheduler_name, namespace="drill-rolling", interval=0.1, real_nodes=False,
                wait_seconds=45.0):
    """Create a pod for ``scheduler_name`` every ``interval`` seconds while ``command`` runs, then wait up to
    ``wait_seconds`` for the last ones to bind. Returns the timings (a pod never bound counts until now), the names of
    the pods never bound and the command's CompletedProcess; judging them is the caller's (the rolling drill asserts,
    benchmarks/lease_gaps.py prints)."""
    pods = PodStream(api, namespace, scheduler_name, interval, real_nodes)
    pods.setup()
    try:
        creator = threading.Thread(target=pods.create_loop, daemon=True)
        watcher = threading.Thread(target=pods.watch_loop, daemon=True)
        deleters = [threading.Thread(target=pods.delete_loop, daemon=True) for _index in range(4 if real_nodes else 0)]
        for deleter in deleters:
            deleter.start()
        watcher.start()
        creator.start()
        started = time.monotonic()
        change = subprocess.run(command, capture_output=True, text=True, check=False)
        change_seconds = time.monotonic() - started
        pods.stop.set()
        creator.join()
        watcher.join(timeout=wait_seconds)
        for _deleter in deleters:
            pods.to_delete.put(None)
        now = time.monotonic()
        waits = {name: pods.bound.get(name, now) - created for name, created in pods.created.items()}
        unbound = sorted(set(pods.created) - set(pods.bound))
        worst = max(waits, key=waits.get)
        ordered = sorted(waits.values())
        result = {"drill": "rolling", "scheduler_name": scheduler_name, "pods": len(waits),
                  "interval_seconds": interval, "change_seconds": round(change_seconds, 1),
                  "longest_unscheduled_seconds": round(waits[worst], 2), "worst_pod": worst,
                  "median_seconds": round(ordered[len(ordered) // 2], 3),
                  "p99_seconds": round(ordered[int(len(ordered) * 0.99)], 3)}
        return result, unbound, change
    finally:
        pods.stop.set()
        pods.teardown()


def rolling(api, args) -> dict:
    result, unbound, change = pods_during(api, args.command, args.scheduler_name, args.namespace, args.interval,
                                          args.real_nodes, wait_seconds=args.max_gap + 30)
    if change.returncode != 0:
        raise AssertionError("the rolling change failed (rc %s):\n%s\n%s"
                             % (change.returncode, change.stdout[-3000:], change.stderr[-2000:]))
    if unbound:
        raise AssertionError("%d pods never bound (first %s): %s" % (len(unbound), unbound[0], json.dumps(result)))
    if result["longest_unscheduled_seconds"] > args.max_gap:
        raise AssertionError("a pod waited %.1fs, more than %ss: %s"
                             % (result["longest_unscheduled_seconds"], args.max_gap, json.dumps(result)))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="drill", required=True)
    one = sub.add_parser("failover")
    one.add_argument("kubeconfig")
    one.add_argument("--lease", required=True)
    one.add_argument("--unit", required=True)
    one.add_argument("--timeout", type=float, default=60)
    two = sub.add_parser("rolling")
    two.add_argument("kubeconfig")
    two.add_argument("--scheduler-name", required=True)
    two.add_argument("--namespace", default="drill-rolling")
    two.add_argument("--interval", type=float, default=0.1)
    two.add_argument("--max-gap", type=float, default=15.0,
                     help="the default lease duration: a stop that did not release the lease would wait it out")
    two.add_argument("--real-nodes", action="store_true",
                     help="pods real (Linux) kubelets refuse at admission, each deleted once bound")
    two.add_argument("command", nargs="+")
    args = parser.parse_args()
    api = config.new_client_from_config(config_file=args.kubeconfig)
    try:
        result = {"failover": failover, "rolling": rolling}[args.drill](api, args)
    except AssertionError as exc:
        print("drill %s FAILED: %s" % (args.drill, exc))
        return 1
    print("drill: " + json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
