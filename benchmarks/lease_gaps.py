# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How long a change of the default scheduler leaves the cluster without a scheduler, per mode, on one
master and on three, for a config-only change and for a bad change (an unknown feature gate, which the plan's
preflight refuses before anything is touched).

The real test cluster of the e2e suite (tests/e2e/realcluster.py: etcd, kube-apiserver and kube-controller-manager
v1.35 on a host of their own; here three kubeadm-like masters with real kubelets and no worker). Each change is
applied with this collection's playbook (playbooks/static_pod.yml, playbooks/systemd.yml) as an operator runs it,
while:
- the Lease kube-system/kube-scheduler is polled every 0.1 s: "lease unheld" is the time from the departing holder's
  last renewal (or its release) to the next holder's acquireTime, summed over the handovers of the run (a holder
  that renews keeps it held; kube-scheduler renews every 2 s, the resolution when a release was not seen);
- a pod for default-scheduler is created every 0.1 s and the longest any pod waited to be bound is noted
  (tests/drills/drill.py, the rolling drill's pod stream: pods the Linux kubelets refuse at admission);
- restarts: the masters whose process listening on 10259 changed.
"One master" is the same cluster with the scheduler stopped on m2 and m3 and only m1 in the inventory's masters.
On three masters the config-only change runs twice: "holder first", the order before the plan read the holder (the
inventory order, kube_scheduler_lease_check: false so the plan does not read the holder, after the lease was handed
to m1 by restarting its holder), and "leader last", the playbooks' order now (the plan reads the holder and changes
it last).
On one master it runs twice too: "no standby" (kube_scheduler_make_before_break: false: the instance is replaced
and the lease waits for the new process) and "standby", the playbooks' default now (make before break: a temporary
standby with the new config takes the lease while the instance is replaced, then hands it back; the static_pod
playbook's default, asked for explicitly here for systemd, whose default is off).
Prints figures, checks nothing. LEASE_GAPS_MODES (default "static_pod systemd"), BENCH_KEEP=1 keeps the hosts.
Needs KUBE_SCHEDULER_BIN, the control plane's binaries and a kubelet (`make bench-lease-gaps` has `make binaries`
find them) and podman.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "e2e"), str(REPO / "tests" / "drills")]
from realcluster import RealCluster  # noqa: E402  pylint: disable=wrong-import-position
from drill import pods_during  # noqa: E402  pylint: disable=wrong-import-position

STATE = REPO / ".build" / "bench-lease-gaps"
LEASE = ("kube-system", "kube-scheduler")
PORT = "10259"
BAD_FLAGS = {"feature-gates": "NoSuchGate=true"}
PLAYBOOKS = {"static_pod": REPO / "playbooks" / "static_pod.yml", "systemd": REPO / "playbooks" / "systemd.yml"}


class LeasePoller:
    """Reads the Lease every ``period`` seconds in a thread of its own: (holderIdentity, renewTime, acquireTime)."""

    def __init__(self, api, period=0.1):
        from kubernetes import client  # pylint: disable=import-outside-toplevel
        self.coordination = client.CoordinationV1Api(api)
        self.period, self.samples, self.stop = period, [], threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def read(self):
        spec = self.coordination.read_namespaced_lease(LEASE[1], LEASE[0]).spec
        return spec.holder_identity or "", spec.renew_time, spec.acquire_time

    def loop(self):
        while not self.stop.is_set():
            try:
                self.samples.append(self.read())
            except Exception:  # pylint: disable=broad-except
                pass  # a busy API server answering late is one lost sample, not a gap
            time.sleep(self.period)

    def held_now(self, prefix=""):
        holder, renew, _acquire = self.read()
        fresh = renew is not None and (datetime.datetime.now(datetime.timezone.utc) - renew).total_seconds() < 5
        return bool(holder) and holder.startswith(prefix) and fresh

    def wait_held(self, prefix="", timeout=90.0):
        """Until a holder (whose identity starts with ``prefix``: the master's host name) renews the lease."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.held_now(prefix):
                return True
            time.sleep(0.5)
        return False

    def gaps(self):
        """Seconds from each departing holder's last renewal (or release) to the next holder's acquisition; a lease
        still unheld at the end counts until now."""
        if not self.samples:
            return []
        gaps = []
        holder, last_renew, _acquire = self.samples[0]
        for current, renew, acquire in self.samples[1:]:
            if current == holder:
                last_renew = max(filter(None, (last_renew, renew)), default=None)
            elif not current:  # client-go clears the holder when a scheduler releases the lease as it stops
                holder, last_renew = "", renew
            else:
                gaps.append(((acquire or renew) - last_renew).total_seconds())
                holder, last_renew = current, renew
        if not self.held_now():
            gaps.append((datetime.datetime.now(datetime.timezone.utc) - last_renew).total_seconds())
        return gaps


class Bench:
    """The cluster, its inventories (all masters, or m1 only) and one row per measured change."""

    def __init__(self, cluster: RealCluster):
        self.cluster, self.rows, self.runs = cluster, [], 0
        self.api = cluster.api()
        self.kubeconfig = cluster.scheduler_kubeconfig.read_text()
        full = yaml.safe_load(cluster.inventory().read_text())
        self.inventories = {}
        for count in (3, 1):
            full["all"]["children"]["kube_control_plane"]["hosts"] = {host: None for host in cluster.masters[:count]}
            path = cluster.inventory().with_name("masters-%d.yml" % count)
            path.write_text(yaml.safe_dump(full))
            self.inventories[count] = path

    def instances(self, mode, score, bad=False):
        """The default scheduler only; `score` (percentageOfNodesToScore) differs between two runs: a config-only
        change. systemd writes the kubeconfig (the static pod adopts kubeadm's scheduler.conf)."""
        instance = {"name": "kube-scheduler", "default_scheduler": True, "config": {"percentageOfNodesToScore": score}}
        if mode == "systemd":
            instance["kubeconfig_content"] = self.kubeconfig
        if bad:
            instance["extra_flags"] = BAD_FLAGS
        return [instance]

    def argv(self, mode, masters, instances, label, extra=None):
        variables = STATE / ("%s.json" % label)
        variables.write_text(json.dumps(dict({"kube_scheduler_instances": instances, "kube_scheduler_health_timeout": 60},
                                             **(extra or {}))))
        variables.chmod(0o600)
        return [str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(self.inventories[masters]),
                "-e", "@%s" % variables, str(PLAYBOOKS[mode])]

    def converge(self, mode, masters, score):
        label = "%s-%d-converge" % (mode, masters)
        run = subprocess.run(self.argv(mode, masters, self.instances(mode, score), label), capture_output=True,
                             text=True, check=False)
        (STATE / ("%s.log" % label)).write_text(run.stdout + run.stderr)
        if run.returncode != 0:
            sys.exit("%s failed (rc %d): see %s" % (label, run.returncode, STATE / ("%s.log" % label)))

    def listeners(self, hosts):
        return {host: self.cluster.node_exec(host, "ss", "-Hltnp", "sport = :%s" % PORT).strip() for host in hosts}

    def measure(self, mode, masters, change, instances, extra=None):
        self.runs += 1
        label = "%s-%d-%s" % (mode, masters, "-".join(change.replace(",", "").split()[:3]))
        hosts = self.cluster.masters[:masters]
        before = self.listeners(hosts)
        poller = LeasePoller(self.cluster.api())
        if not poller.wait_held():
            sys.exit("%s: nobody holds %s/%s before the change" % (label, *LEASE))
        poller.thread.start()
        started = time.monotonic()
        pods, unbound, run = pods_during(self.api, self.argv(mode, masters, instances, label, extra), "default-scheduler",
                                         namespace="lease-gaps-%d" % self.runs, real_nodes=True, wait_seconds=90)
        poller.wait_held(timeout=60)
        poller.stop.set()
        poller.thread.join()
        (STATE / ("%s.log" % label)).write_text(run.stdout + run.stderr)
        after = self.listeners(hosts)
        gaps = poller.gaps()
        row = {"mode": mode, "masters": masters, "change": change, "playbook_rc": run.returncode,
               "playbook_seconds": round(time.monotonic() - started, 1),
               "lease_unheld_seconds": round(sum(gaps), 2), "handovers": len(gaps),
               "longest_unscheduled_seconds": pods["longest_unscheduled_seconds"], "pods": pods["pods"],
               "unbound": len(unbound), "restarts": sum(before[host] != after[host] for host in hosts)}
        print("lease-gaps: " + json.dumps(row, sort_keys=True), flush=True)
        self.rows.append(row)

    def mode(self, mode, scores):
        """Converge all three masters, measure; then stop the scheduler on m2 and m3 and measure on m1 alone."""
        self.converge(mode, 3, next(scores))
        for masters in (3, 1):
            if masters == 1:
                for host in self.cluster.masters[1:]:
                    self.stop_scheduler(mode, host)
                if not LeasePoller(self.cluster.api()).wait_held(prefix=self.cluster.masters[0] + "_"):
                    sys.exit("%s: m1 never took the lease once the other masters stopped" % mode)
            if masters == 3:
                self.hand_lease_to(mode, self.cluster.masters[0])
                self.measure(mode, masters, "config-only, holder first", self.instances(mode, next(scores)),
                             {"kube_scheduler_lease_check": False})
            if masters == 1:
                self.measure(mode, masters, "config-only, no standby", self.instances(mode, next(scores)),
                             {"kube_scheduler_make_before_break": False})
            score = next(scores)
            self.measure(mode, masters, "config-only, leader last" if masters == 3 else "config-only, standby",
                         self.instances(mode, score), {"kube_scheduler_make_before_break": True} if masters == 1 else None)
            self.measure(mode, masters, "bad (unknown feature gate)", self.instances(mode, score, bad=True))

    def hand_lease_to(self, mode, host, attempts=10):
        """Restart the holder's scheduler (a clean stop releases the lease) until ``host`` holds the lease, each
        restarted scheduler listening again before the next step: the holder-first row's starting point."""
        poller = LeasePoller(self.cluster.api())
        for _attempt in range(attempts):
            if not poller.wait_held():
                sys.exit("nobody holds %s/%s" % LEASE)
            holder = poller.read()[0]
            name = holder.rsplit("_", 1)[0]
            if name == host:
                return
            if mode == "static_pod":  # the kubelet starts the container again
                self.cluster.node_exec(name, "sh", "-c", "kill $(ss -Hltnp 'sport = :%s' | sed -n 's/.*pid=\\([0-9]*\\).*/\\1/p')" % PORT)
            else:
                self.cluster.node_exec(name, "systemctl", "restart", "kube-scheduler.service")
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and (poller.read()[0] in ("", holder) or not self.listeners([name])[name]):
                time.sleep(0.5)
        sys.exit("%s never took the lease in %d restarts of its holder" % (host, attempts))

    def stop_scheduler(self, mode, host):
        """What a master without a scheduler looks like: no manifest (the kubelet stops the pod), or no unit."""
        if mode == "static_pod":
            self.cluster.node_exec(host, "sh", "-c", "mv /etc/kubernetes/manifests/kube-scheduler.yaml /root/")
        else:
            self.cluster.node_exec(host, "systemctl", "disable", "--now", "kube-scheduler.service")
        self.wait_port_free(host)

    def remove_static_pods(self):
        """Before the systemd mode: no manifest and no state of the static_pod role on any master."""
        for host in self.cluster.masters:
            self.cluster.node_exec(host, "sh", "-c", "rm -rf /etc/kubernetes/manifests/kube-scheduler.yaml "
                                   "/root/kube-scheduler.yaml /etc/kubernetes/schedulers /var/lib/kubesched")
        for host in self.cluster.masters:
            self.wait_port_free(host)

    def wait_port_free(self, host, timeout=90.0):
        deadline = time.monotonic() + timeout
        while self.listeners([host])[host] and time.monotonic() < deadline:
            time.sleep(1)


def table(rows):
    print("\n%-10s %7s %-27s %3s %10s %9s %13s %8s" % (
        "mode", "masters", "change", "rc", "lease s", "handovers", "unscheduled s", "restarts"))
    for row in rows:
        print("%-10s %7d %-27s %3d %10.2f %9d %13.2f %8d" % (
            row["mode"], row["masters"], row["change"], row["playbook_rc"], row["lease_unheld_seconds"],
            row["handovers"], row["longest_unscheduled_seconds"], row["restarts"]))


def main():
    binary = os.environ.get("KUBE_SCHEDULER_BIN", "")
    if not os.access(binary, os.X_OK):
        sys.exit("bench-lease-gaps needs real binaries: KUBE_SCHEDULER_BIN is not set (make binaries finds them)")
    modes = os.environ.get("LEASE_GAPS_MODES", "static_pod systemd").split()
    STATE.mkdir(parents=True, exist_ok=True)
    cluster = RealCluster("gaps", binary, STATE / "cluster", masters=3, workers=0)
    cluster.directory.mkdir(exist_ok=True)
    # The playbooks read the cluster from the Molecule variables the shared playbooks use (group_vars/all.yml).
    os.environ.update(cluster.environment())
    print("kube-scheduler v%s; hosts %s; logs in %s" % (cluster.version, ", ".join(cluster.hosts), STATE), flush=True)
    scores = iter(range(30, 100, 5))
    try:
        started = time.monotonic()
        cluster.up()
        print("cluster up in %.0f s" % (time.monotonic() - started), flush=True)
        bench = Bench(cluster)
        for mode in modes:
            if mode == "systemd":  # kubeadm's static pod, or the static_pod role's, holds the port
                bench.remove_static_pods()
            bench.mode(mode, scores)
    finally:
        if os.environ.get("BENCH_KEEP") != "1":
            cluster.down()
    table(bench.rows)


if __name__ == "__main__":
    main()
