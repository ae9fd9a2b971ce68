# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the real kube-scheduler places a snapshot's pods under each configuration, in a throwaway control plane.

A control plane of its own for each run of each configuration: the snapshot's namespaces, priority classes, nodes,
storage objects, disruption budgets and DRA objects are loaded, with the pods that keep their node (mirror pods, bound
pods of a scheduler name no configuration serves); kube-scheduler starts with that configuration and, once it schedules,
every other pod is created without its node (oldest first: kube-scheduler's queue meets them in the order the cluster
did); the run ends when each pod of a scheduler name the configuration serves is bound or reported unschedulable (its
PodScheduled condition, kube-scheduler's own message) and nothing changed for SETTLE seconds. A pod preempted (deleted
by kube-scheduler) is removed at once, as a kubelet would, and reported; a volume claim kube-scheduler binds is bound as
kube-controller-manager and a provisioner would (_Volumes). Then the control plane is removed.
"""

from __future__ import annotations

import json
import re
import threading
import time

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._control_plane import ControlPlane
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._http import HAS_URLLIB3
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._pki import HAS_CRYPTOGRAPHY
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._load import (
    SELECTED_NODE, Writer, create_pods, creation_order, fixed_pods, load_cluster, pod_requests, pods_path)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview.snapshot import key

SETTLE = 2.0
# Where the probe pod that tells kube-scheduler schedules lives (_wait_until_scheduling).
PROBE_NAMESPACE = "kubesched-preview-probe"
DEFAULT_SCHEDULER = "default-scheduler"


class PlacementError(Exception):
    """A run could not finish: kube-scheduler exited, or pods were still undecided at the timeout."""


def missing() -> list:
    """The Python packages a preview needs on the controller that are not installed there (the API client's
    urllib3, the control plane's certificates' cryptography)."""
    return [name for name, present in (("urllib3", HAS_URLLIB3), ("cryptography", HAS_CRYPTOGRAPHY)) if not present]


def scheduler_names(config: dict) -> list:
    return [profile.get("schedulerName") or DEFAULT_SCHEDULER for profile in config.get("profiles") or [{}]]


# A watch event's line begins with its type; the object's own resourceVersion is the first one in it (metadata comes
# before anything a user writes, and a quote inside a JSON string is escaped).
UNDECODED_TYPES = (b'{"type":"ADDED"', b'{"type":"MODIFIED"')
DECODED_WORDS = (b'"nodeName"', b'"PodScheduled"', b'"deletionTimestamp"')
RESOURCE_VERSION = re.compile(rb'"resourceVersion":"([^"]*)"')


def _watch_lines(api, path: str, since, stopped):
    """The lines of a watch of ``path`` from the resourceVersion ``since()`` gives, until ``stopped()``. The API server
    ends a watch after its timeoutSeconds: it is opened again from the last resourceVersion the caller saw (bookmarks
    keep that recent), so a run longer than that still sees every change."""
    while not stopped():
        for line in api.lines(path, {"watch": "true", "resourceVersion": since(), "allowWatchBookmarks": "true",
                                     "timeoutSeconds": 3600}):
            if stopped():
                return
            yield line


class _Watch(threading.Thread):
    """Follows every pod of the throwaway API server from a resourceVersion on; records bindings, kube-scheduler's
    Unschedulable conditions and deletions; force-deletes a pod kube-scheduler preempted (no kubelet would)."""

    def __init__(self, writer: Writer, resource_version: str):
        super().__init__(daemon=True)
        self.writer = writer
        self.resource_version = resource_version
        self.lock = threading.Lock()
        self.placed, self.unschedulable, self.gated, self.preempted = {}, {}, {}, {}
        self.last_change = time.monotonic()
        self.stopping = False
        self.error = None

    def run(self):
        try:
            for line in _watch_lines(self.writer.api, "/api/v1/pods", lambda: self.resource_version,
                                     lambda: self.stopping):
                self._line(line)
        except Exception as exc:  # pylint: disable=broad-except  # reported by the run that waits on it
            if not self.stopping:
                self.error = exc

    def _line(self, line: bytes):
        """An event as the API server wrote it. Half of a run's events are a pod created (no node, no
        PodScheduled condition, no deletion): all they change is the resourceVersion and the time of the last
        change, read here without decoding the pod (decoding every event was a fifth of the preview's own CPU).
        Any line that names a node, a PodScheduled condition or a deletion anywhere is decoded."""
        if line.startswith(UNDECODED_TYPES) and not any(word in line for word in DECODED_WORDS):
            version = RESOURCE_VERSION.search(line)
            with self.lock:
                self.last_change = time.monotonic()
                if version:
                    self.resource_version = version.group(1).decode()
            return
        self._event(json.loads(line))

    def _event(self, event: dict):
        pod = event.get("object") or {}
        meta = pod.get("metadata") or {}
        if meta.get("resourceVersion"):
            self.resource_version = meta["resourceVersion"]
        if event.get("type") not in ("ADDED", "MODIFIED", "DELETED"):
            return
        name = key(pod)
        with self.lock:
            self.last_change = time.monotonic()
            if event["type"] == "DELETED":
                self.placed.pop(name, None)
                return
            if meta.get("deletionTimestamp") and meta.get("namespace") != PROBE_NAMESPACE:
                # Only kube-scheduler deletes while a run goes on: a preemption's victim, whichever pod it was.
                if name not in self.preempted:
                    self.preempted[name] = (pod.get("spec") or {}).get("nodeName")
                    threading.Thread(target=self._remove, args=(pod,), daemon=True).start()
                return
            node = (pod.get("spec") or {}).get("nodeName")
            if node:
                self.placed[name] = node
                self.unschedulable.pop(name, None)
                return
            for condition in (pod.get("status") or {}).get("conditions") or ():
                if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
                    if condition.get("reason") == "SchedulingGated":
                        self.gated[name] = condition.get("message") or "scheduling gates"
                    else:
                        self.unschedulable[name] = condition.get("message") or condition.get("reason") or ""

    def _remove(self, pod):
        try:
            self.writer.request("DELETE", "%s/%s" % (pods_path(pod), pod["metadata"]["name"]),
                                {"gracePeriodSeconds": 0})
        except Exception:  # pylint: disable=broad-except  # already gone
            pass

    def decided(self, names) -> int:
        with self.lock:
            return sum(1 for name in names if name in self.placed or name in self.unschedulable
                       or name in self.gated or name in self.preempted)

    def stop(self):
        """The thread ends at the next event (the run's pods are deleted next): a watch blocked in a read cannot
        be closed from another thread."""
        self.stopping = True


# A CSI driver's name (the PersistentVolume source a provisioned claim gets where its provisioner is one).
CSI_DRIVER_NAME = re.compile(r"^[a-zA-Z0-9][-a-zA-Z0-9_.]{0,61}[a-zA-Z0-9]$")
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"


class _Volumes:
    """What kube-controller-manager's PersistentVolume controller and a CSI external-provisioner do for
    kube-scheduler's volume binding, which waits for them before it binds a pod: a claim a PersistentVolume now
    names (kube-scheduler chose a static volume) is bound to it; a WaitForFirstConsumer claim kube-scheduler gave a
    node (volume.kubernetes.io/selected-node) gets a volume provisioned there, with the node affinity of that node's
    topology as its CSINode reports it for the provisioner (what the driver's accessible topology is, mostly), and
    is bound to it. It follows the claims and the volumes with a watch of each, as the controllers do (listing them
    all again on a timer would cost a run with thousands of claims more than its scheduling), and looks again at a
    claim when it or a volume naming it changes."""

    PATHS = {"claims": "/api/v1/persistentvolumeclaims", "volumes": "/api/v1/persistentvolumes"}

    def __init__(self, writer: Writer, snapshot: dict):
        self.writer = writer
        self.classes = dict((obj["metadata"]["name"], obj) for obj in snapshot.get("storage_classes") or ())
        self.nodes = dict((obj["metadata"]["name"], obj) for obj in snapshot.get("nodes") or ())
        self.topology = dict(((obj["metadata"]["name"], driver.get("name")), driver.get("topologyKeys") or [])
                             for obj in snapshot.get("csi_nodes") or ()
                             for driver in (obj.get("spec") or {}).get("drivers") or ())
        self.lock = threading.Lock()
        self.claims = {}  # (namespace, name): the claim as last seen
        self.named = {}  # (namespace, name) of a claim: the volume whose claimRef names it
        self.bound = set()  # uids of the claims bound here (their update may not have been seen yet)
        self.versions = {}  # kind: the resourceVersion its watch has seen last
        self.stopping = threading.Event()
        self.error = None

    def start(self) -> None:
        """Lists both, looks at every claim, then follows both from what was listed."""
        with self.lock:
            for kind, path in self.PATHS.items():
                listed = self.writer.request("GET", path)
                self.versions[kind] = listed["metadata"]["resourceVersion"]
                for obj in listed.get("items") or ():
                    self._seen(kind, "ADDED", obj)
            for name in list(self.claims):
                self._consider(name)
        for kind, path in self.PATHS.items():
            threading.Thread(target=self._follow, args=(kind, path), daemon=True).start()

    def stop(self):
        """Each watch ends at its next event or when the control plane goes (the run's end)."""
        self.stopping.set()

    def _follow(self, kind: str, path: str) -> None:
        """Follows one kind from what start listed on, its watch opened again whenever the API server ends it."""
        try:
            for line in _watch_lines(self.writer.api, path, lambda: self.versions[kind], self.stopping.is_set):
                event = json.loads(line)
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    raise PlacementError("the watch of %s ended: %s" % (path, obj.get("message")))
                self.versions[kind] = (obj.get("metadata") or {}).get("resourceVersion") or self.versions[kind]
                if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                    with self.lock:
                        name = self._seen(kind, event["type"], obj)
                        if name is not None:
                            self._consider(name)
        except Exception as exc:  # pylint: disable=broad-except  # reported by the run that waits on it
            if not self.stopping.is_set():
                self.error = exc

    def _seen(self, kind: str, change: str, obj: dict):
        """Records what changed; the claim to look at again, or None."""
        if kind == "claims":
            name = (obj["metadata"]["namespace"], obj["metadata"]["name"])
            if change == "DELETED":
                self.claims.pop(name, None)
                return None
            self.claims[name] = obj
            return name
        ref = (obj.get("spec") or {}).get("claimRef")
        if not ref:
            return None
        name = (ref.get("namespace"), ref.get("name"))
        if change == "DELETED":
            if (self.named.get(name) or {}).get("metadata", {}).get("name") == obj["metadata"]["name"]:
                del self.named[name]
            return None
        self.named[name] = obj
        return name

    def _consider(self, name) -> None:
        claim = self.claims.get(name)
        if claim is None or (claim.get("spec") or {}).get("volumeName") or claim["metadata"]["uid"] in self.bound:
            return
        meta = claim["metadata"]
        volume = self.named.get(name)
        if volume and volume["spec"]["claimRef"].get("uid") not in (None, meta["uid"]):
            return
        if volume is None and (meta.get("annotations") or {}).get(SELECTED_NODE):
            volume = self._provision(claim, meta["annotations"][SELECTED_NODE])
        if volume is not None:
            self._bind(claim, volume)
            self.bound.add(meta["uid"])

    def _provision(self, claim: dict, node: str) -> dict:
        spec = claim["spec"]
        storage_class = self.classes.get(spec.get("storageClassName") or "") or {}
        provisioner = storage_class.get("provisioner") or ""
        labels = (self.nodes.get(node, {}).get("metadata") or {}).get("labels") or {}
        keys = [name for name in self.topology.get((node, provisioner), ()) if name in labels]
        name = "pvc-" + claim["metadata"]["uid"]
        volume = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {
            "name": name, "annotations": {"pv.kubernetes.io/provisioned-by": provisioner}}, "spec": {
            "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1")},
            "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
            "storageClassName": spec.get("storageClassName") or "",
            "volumeMode": spec.get("volumeMode") or "Filesystem",
            "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy") or "Delete",
            "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": claim["metadata"]["namespace"],
                         "name": claim["metadata"]["name"], "uid": claim["metadata"]["uid"]}}}
        if CSI_DRIVER_NAME.match(provisioner):
            volume["spec"]["csi"] = {"driver": provisioner, "volumeHandle": name}
        else:
            volume["spec"]["hostPath"] = {"path": "/" + name}
        if keys:
            volume["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": name, "operator": "In", "values": [labels[name]]} for name in keys]}]}}
        return self.writer.create("/api/v1/persistentvolumes", volume)

    def _bind(self, claim: dict, volume: dict) -> None:
        meta = claim["metadata"]
        path = "/api/v1/namespaces/%s/persistentvolumeclaims/%s" % (meta["namespace"], meta["name"])
        merge = "application/merge-patch+json"
        self.writer.request("PATCH", path, {"metadata": {"annotations": {
            BIND_COMPLETED: "yes", "pv.kubernetes.io/bound-by-controller": "yes"}},
            "spec": {"volumeName": volume["metadata"]["name"]}}, content_type=merge)
        self.writer.request("PATCH", path + "/status", {"status": {
            "phase": "Bound", "accessModes": volume["spec"].get("accessModes"),
            "capacity": volume["spec"].get("capacity")}}, content_type=merge)
        self.writer.request("PATCH", "/api/v1/persistentvolumes/%s/status" % volume["metadata"]["name"],
                            {"status": {"phase": "Bound"}}, content_type=merge)


def _resource_version(writer: Writer) -> str:
    return writer.request("GET", "/api/v1/pods", query={"limit": 1})["metadata"]["resourceVersion"]


def _wait_until_scheduling(plane, writer: Writer, watch: "_Watch", scheduler, served, timeout: float) -> None:
    """Returns once kube-scheduler schedules: a probe pod that fits no node is reported unschedulable by it, then
    deleted. Pods created before kube-scheduler has listed them would reach its queue in the list's order
    (namespace and name), not in the order they were created."""
    writer.create("/api/v1/namespaces", {"metadata": {"name": PROBE_NAMESPACE}}, exists_ok=True)
    probe = {"metadata": {"name": "probe", "namespace": PROBE_NAMESPACE},
             "spec": {"schedulerName": sorted(served)[0], "nodeSelector": {PROBE_NAMESPACE: "no-node-has-it"},
                      "containers": [{"name": "probe", "image": "probe"}]}}
    writer.create(pods_path(probe), probe)
    deadline = time.monotonic() + min(timeout, 300)
    while key(probe) not in watch.unschedulable:
        plane.alive(scheduler)
        if time.monotonic() > deadline:
            raise PlacementError("kube-scheduler did not start scheduling within %d s: %s"
                                 % (min(timeout, 300), plane.log_tail(scheduler.log_name, 3)))
        time.sleep(0.1)
    writer.request("DELETE", "%s/%s" % (pods_path(probe), "probe"), {"gracePeriodSeconds": 0})


def _one_run(plane: ControlPlane, writer: Writer, name: str, config: dict, pods: list, timeout: float,
             feature_gates=None, snapshot=None, requests=None) -> dict:
    served = set(scheduler_names(config))
    expected = [key(pod) for pod in pods if (pod["spec"].get("schedulerName") or DEFAULT_SCHEDULER) in served]
    watch = _Watch(writer, _resource_version(writer))
    watch.start()
    volumes = None
    if snapshot and snapshot.get("persistent_volume_claims"):
        volumes = _Volumes(writer, snapshot)
        volumes.start()
    started = time.monotonic()
    scheduler = plane.start_scheduler(name, config, feature_gates)
    try:
        _wait_until_scheduling(plane, writer, watch, scheduler, served, timeout)
        ready = time.monotonic() - started
        create_pods(writer, pods, keep_node=False, requests=requests)
        loaded = time.monotonic() - started
        deadline = started + timeout
        while True:
            plane.alive(scheduler)
            if watch.error is not None:
                raise PlacementError("watching the pods failed: %s" % watch.error)
            if volumes is not None and volumes.error is not None:
                raise PlacementError("binding the volume claims failed: %s" % volumes.error)
            now = time.monotonic()
            if watch.decided(expected) == len(expected) and now - watch.last_change >= SETTLE:
                break
            if now > deadline:
                raise PlacementError("%s: %d of %d pods still undecided after %d s (kube-scheduler's log: %s)"
                                     % (name, len(expected) - watch.decided(expected), len(expected), timeout,
                                        plane.log_tail(name, 3)))
            time.sleep(0.2)
        seconds = watch.last_change - started
    finally:
        plane.stop(scheduler)
        watch.stop()
        if volumes is not None:
            volumes.stop()
    with watch.lock:
        outcome = {
            "seconds": round(seconds, 2), "load_seconds": round(loaded, 2), "ready_seconds": round(ready, 2),
            "placed": dict((pod, watch.placed[pod]) for pod in expected if pod in watch.placed),
            "unschedulable": dict((pod, watch.unschedulable[pod]) for pod in expected if pod in watch.unschedulable),
            "gated": sorted(pod for pod in expected if pod in watch.gated),
            "preempted": sorted(watch.preempted),
            "not_served": sorted(key(pod) for pod in pods
                                 if (pod["spec"].get("schedulerName") or DEFAULT_SCHEDULER) not in served),
        }
    return outcome


def preview(snapshot: dict, configs: list, binaries: dict, runs: int = 3, timeout: float = 1800,
            feature_gates=None, progress=None, crds=(), scheduler_rules=()) -> dict:
    """{"runs": {config name: [outcome of each run]}, "load_seconds", "total_seconds"} for ``configs``, a list of
    (name, KubeSchedulerConfiguration mapping), each run ``runs`` times, in turn. ``crds`` (CustomResourceDefinition
    mappings) are installed in each control plane before the snapshot is loaded, and ``scheduler_rules`` (RBAC rules)
    granted to kube-scheduler there: scheduler-plugins' scheduler needs both for its own objects."""
    started = time.monotonic()
    served = set(name for _label, config in configs for name in scheduler_names(config))
    fixed = fixed_pods(snapshot, served)
    fixed_names = set(key(pod) for pod in fixed)
    movable = creation_order([pod for pod in snapshot["pods"] if key(pod) not in fixed_names])
    requests = pod_requests(movable, keep_node=False)
    results = dict((label, []) for label, _config in configs)
    setup = 0.0
    for number in range(runs):
        for index, (label, config) in enumerate(configs):
            # A control plane of its own per run: every run starts from the snapshot, and starting etcd and
            # kube-apiserver again costs less than deleting tens of thousands of pods.
            began = time.monotonic()
            with ControlPlane(binaries, crds=crds, scheduler_rules=scheduler_rules) as plane:
                writer = Writer(plane.client())
                load_cluster(writer, snapshot)
                create_pods(writer, fixed, keep_node=True)
                setup += time.monotonic() - began
                if progress:
                    progress("run %d of %d: %s" % (number + 1, runs, label))
                outcome = _one_run(plane, writer, "kube-scheduler-%d" % index, config, movable, timeout,
                                   feature_gates, snapshot, requests)
                outcome["setup_seconds"] = round(time.monotonic() - began - outcome["seconds"], 2)
                results[label].append(outcome)
    return {"runs": results, "load_seconds": round(setup, 2), "total_seconds": round(time.monotonic() - started, 2),
            "fixed": sorted(fixed_names)}
