# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A snapshot written into the throwaway control plane: what each object becomes there, and the requests that
write it (raw JSON, WORKERS at a time: 30,000 pods do not go through the kubernetes client's models)."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._http import ApiError
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview.snapshot import (
    DRA_GROUP, DRA_VERSION, is_mirror, key)

BUILT_IN_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# Metadata that belongs to the object's life in the real cluster, not to what kube-scheduler reads.
OWN_METADATA = ("labels", "annotations", "ownerReferences")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
WORKERS = 16


class LoadError(Exception):
    """The throwaway API server refused an object of the snapshot, or did not keep it as it was."""


def _metadata(obj: dict, namespaced: bool = False) -> dict:
    meta = obj.get("metadata") or {}
    kept = {"name": meta["name"]}
    if namespaced:
        kept["namespace"] = meta["namespace"]
    for field in OWN_METADATA:
        if meta.get(field):
            kept[field] = dict(meta[field]) if isinstance(meta[field], dict) else list(meta[field])
    if LAST_APPLIED in kept.get("annotations", {}):
        del kept["annotations"][LAST_APPLIED]
    return kept


def node_object(node: dict) -> tuple:
    """(the Node to create, its status to write): labels, exactly its taints, unschedulable; capacity,
    allocatable, conditions, images (ImageLocality scores them)."""
    spec = node.get("spec") or {}
    kept_spec = dict((field, spec[field]) for field in ("taints", "unschedulable") if spec.get(field))
    status = node.get("status") or {}
    kept_status = dict((field, status[field]) for field in ("capacity", "allocatable", "conditions", "images",
                                                            "nodeInfo", "addresses") if status.get(field))
    meta = _metadata(node)
    meta.pop("ownerReferences", None)
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": kept_spec}, {"status": kept_status}


def pod_object(pod: dict, keep_node: bool) -> dict:
    """The Pod as its creator gave it: its spec without the node (unless ``keep_node``) and without ephemeral
    containers (only the API's subresource adds them), its selectors without what the API server merged into them,
    no status, no finalizers."""
    spec = dict(pod.get("spec") or {})
    spec.pop("ephemeralContainers", None)
    if not keep_node:
        spec.pop("nodeName", None)
    _unmerge_label_keys(spec, (pod.get("metadata") or {}).get("labels") or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": _metadata(pod, namespaced=True), "spec": spec}


AFFINITY_TERMS = (("podAffinity", "podAntiAffinity"), "requiredDuringSchedulingIgnoredDuringExecution",
                  "preferredDuringSchedulingIgnoredDuringExecution")


def _unmerge_label_keys(spec: dict, labels: dict) -> None:
    """The API server stores a pod with each topology spread constraint's matchLabelKeys, and each pod affinity
    term's matchLabelKeys and mismatchLabelKeys, merged into its labelSelector (an expression per key the pod has a
    label of: In, NotIn its value), and refuses a new pod that names a key in both: the expressions it added are
    taken out of ``spec`` (its lists replaced, the snapshot's own left as they are), and it adds them again."""
    if spec.get("topologySpreadConstraints"):
        spec["topologySpreadConstraints"] = [_unmerged(term, labels) for term in spec["topologySpreadConstraints"]]
    affinity = dict(spec.get("affinity") or {})
    kinds, required, preferred = AFFINITY_TERMS
    for kind in kinds:
        if not affinity.get(kind):
            continue
        terms = affinity[kind] = dict(affinity[kind])
        if terms.get(required):
            terms[required] = [_unmerged(term, labels) for term in terms[required]]
        if terms.get(preferred):
            terms[preferred] = [dict(weighted, podAffinityTerm=_unmerged(weighted.get("podAffinityTerm") or {}, labels))
                                for weighted in terms[preferred]]
    if affinity:
        spec["affinity"] = affinity


def _unmerged(term: dict, labels: dict) -> dict:
    """``term`` with its labelSelector as its creator gave it."""
    added = [{"key": name, "operator": operator, "values": [labels[name]]}
             for field, operator in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn"))
             for name in term.get(field) or () if name in labels]
    selector = term.get("labelSelector")
    if not added or not selector or not selector.get("matchExpressions"):
        return term
    selector = dict(selector, matchExpressions=[expression for expression in selector["matchExpressions"]
                                                if expression not in added])
    if not selector["matchExpressions"]:
        del selector["matchExpressions"]
    return dict(term, labelSelector=selector)


def creation_order(pods: list) -> list:
    """Oldest first. A creationTimestamp has a one-second resolution: among pods of the same second, the higher
    priority first (kube-scheduler's queue would take it first), then the ones the cluster bound before the ones it
    left pending (a pod that found no room most likely came after the ones that took it), then by name."""
    return sorted(pods, key=lambda pod: ((pod.get("metadata") or {}).get("creationTimestamp") or "",
                                         -((pod.get("spec") or {}).get("priority") or 0),
                                         0 if (pod.get("spec") or {}).get("nodeName") else 1, key(pod)))


class Writer:
    """Raw requests to the throwaway API server."""

    def __init__(self, api_client):
        self.api = api_client

    def request(self, method: str, path: str, body=None, query=None, content_type="application/json"):
        try:
            return self.api.request(method, path, body, query, content_type)
        except ApiError as exc:
            raise LoadError("%s %s: HTTP %s %s" % (method, path, exc.status, exc.message)) from None

    def send(self, path: str, body: bytes) -> None:
        """POSTs an object already serialised; its answer is not read (LocalApi.send)."""
        try:
            self.api.send("POST", path, body)
        except ApiError as exc:
            raise LoadError("POST %s: HTTP %s %s" % (path, exc.status, exc.message)) from None

    def create(self, path: str, obj: dict, exists_ok: bool = False):
        try:
            return self.request("POST", path, obj)
        except LoadError as exc:
            if exists_ok and "HTTP 409" in str(exc):
                return None
            raise

    def many(self, calls, waves=None) -> None:
        """Each (function, args), WORKERS at a time; with ``waves`` (the number of calls of each, in order), a wave
        starts once the one before it is done, so what it writes comes after everything the earlier one wrote.
        Each worker takes the wave's next call until none is left: a future per call cost the preview a tenth of
        its own CPU in submitting and waiting."""
        calls = list(calls)
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            start = 0
            for size in waves or [len(calls)]:
                wave = iter(calls[start:start + size])
                taking = threading.Lock()

                def work(wave=wave, taking=taking):
                    while True:
                        with taking:
                            call = next(wave, None)
                        if call is None:
                            return
                        call[0](*call[1])
                for future in [pool.submit(work) for _worker in range(min(WORKERS, size))]:
                    future.result()
                start += size


def load_cluster(writer: Writer, snapshot: dict) -> None:
    """Namespaces, PriorityClasses and Nodes, each node with exactly its real taints (checked after the write)."""
    for namespace in snapshot["namespaces"]:
        if namespace["metadata"]["name"] not in BUILT_IN_NAMESPACES:
            writer.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": _metadata(namespace)}, exists_ok=True)
    for priority_class in snapshot["priority_classes"]:
        obj = dict((field, priority_class[field]) for field in ("value", "globalDefault", "preemptionPolicy",
                                                                "description") if field in priority_class)
        obj.update(apiVersion="scheduling.k8s.io/v1", kind="PriorityClass", metadata=_metadata(priority_class))
        writer.create("/apis/scheduling.k8s.io/v1/priorityclasses", obj, exists_ok=True)

    def one_node(node):
        obj, status = node_object(node)
        writer.create("/api/v1/nodes", obj)
        writer.request("PATCH", "/api/v1/nodes/%s/status" % obj["metadata"]["name"], status,
                       content_type="application/merge-patch+json")
    writer.many([(one_node, (node,)) for node in snapshot["nodes"]])
    check_taints(writer, snapshot)
    load_storage(writer, snapshot)
    load_disruption_budgets(writer, snapshot)
    if snapshot.get("dra"):
        load_dra(writer, snapshot)
    load_scheduler_plugins(writer, snapshot)


STORAGE_CLASS_FIELDS = ("provisioner", "parameters", "reclaimPolicy", "mountOptions", "allowVolumeExpansion",
                        "volumeBindingMode", "allowedTopologies")
CAPACITY_FIELDS = ("nodeTopology", "storageClassName", "capacity", "maximumVolumeSize")
# The node kube-scheduler chose for an unbound WaitForFirstConsumer claim: chosen again in the preview.
SELECTED_NODE = "volume.kubernetes.io/selected-node"


def _with(obj: dict, fields, **more) -> dict:
    kept = dict((field, obj[field]) for field in fields if field in obj)
    kept.update(more)
    return kept


def _status(writer: Writer, path: str, status) -> None:
    if status:
        writer.request("PATCH", path + "/status", {"status": status}, content_type="application/merge-patch+json")


def load_storage(writer: Writer, snapshot: dict) -> None:
    """What the volume plugins read, as the cluster holds it: StorageClasses, CSIDrivers, CSINodes,
    CSIStorageCapacities; each PersistentVolumeClaim with its status (an unbound one stays unbound, without the
    node an earlier scheduling chose for it), then each PersistentVolume with its node affinity and status, its
    claimRef naming the claim as created here (its uid is the throwaway API server's)."""
    for obj in snapshot.get("storage_classes") or ():
        writer.create("/apis/storage.k8s.io/v1/storageclasses", _with(
            obj, STORAGE_CLASS_FIELDS, apiVersion="storage.k8s.io/v1", kind="StorageClass", metadata=_metadata(obj)))
    for resource, kind, items in (("csidrivers", "CSIDriver", "csi_drivers"), ("csinodes", "CSINode", "csi_nodes")):
        for obj in snapshot.get(items) or ():
            writer.create("/apis/storage.k8s.io/v1/" + resource, {
                "apiVersion": "storage.k8s.io/v1", "kind": kind, "metadata": _metadata(obj), "spec": obj["spec"]})
    for obj in snapshot.get("csi_storage_capacities") or ():
        writer.create("/apis/storage.k8s.io/v1/namespaces/%s/csistoragecapacities" % obj["metadata"]["namespace"],
                      _with(obj, CAPACITY_FIELDS, apiVersion="storage.k8s.io/v1", kind="CSIStorageCapacity",
                            metadata=_metadata(obj, namespaced=True)))
    uids = {}

    def one_claim(claim):
        meta = _metadata(claim, namespaced=True)
        if not (claim.get("spec") or {}).get("volumeName"):
            meta.get("annotations", {}).pop(SELECTED_NODE, None)
        path = "/api/v1/namespaces/%s/persistentvolumeclaims" % meta["namespace"]
        created = writer.create(path, {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                                       "spec": claim["spec"]})
        uids[key(claim)] = created["metadata"]["uid"]
        _status(writer, "%s/%s" % (path, meta["name"]), claim.get("status"))

    def one_volume(volume):
        spec = dict(volume["spec"])
        if spec.get("claimRef"):
            ref = dict((field, spec["claimRef"][field]) for field in ("kind", "apiVersion", "namespace", "name")
                       if field in spec["claimRef"])
            uid = uids.get("%s/%s" % (ref.get("namespace"), ref.get("name")))
            if uid:
                ref["uid"] = uid
            spec["claimRef"] = ref
        meta = _metadata(volume)
        writer.create("/api/v1/persistentvolumes", {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta,
                                                    "spec": spec})
        _status(writer, "/api/v1/persistentvolumes/" + meta["name"], volume.get("status"))
    writer.many([(one_claim, (claim,)) for claim in snapshot.get("persistent_volume_claims") or ()])
    writer.many([(one_volume, (volume,)) for volume in snapshot.get("persistent_volumes") or ()])


def load_disruption_budgets(writer: Writer, snapshot: dict) -> None:
    """Each PodDisruptionBudget with the status the cluster's disruption controller gave it (there is none here):
    preemption counts its disruptionsAllowed."""
    for budget in snapshot.get("pod_disruption_budgets") or ():
        meta = _metadata(budget, namespaced=True)
        path = "/apis/policy/v1/namespaces/%s/poddisruptionbudgets" % meta["namespace"]
        created = writer.create(path, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta,
                                       "spec": budget["spec"]})
        status = dict(budget.get("status") or {})
        if status.get("observedGeneration") == (budget.get("metadata") or {}).get("generation"):
            status["observedGeneration"] = created["metadata"].get("generation")
        else:
            status.pop("observedGeneration", None)
        _status(writer, "%s/%s" % (path, meta["name"]), status)


def load_dra(writer: Writer, snapshot: dict) -> None:
    """DeviceClasses, ResourceSlices and ResourceClaims (resource.k8s.io/v1), the claims unallocated: kube-scheduler
    allocates them again for the pods it places."""
    base = "/apis/%s/%s/" % (DRA_GROUP, DRA_VERSION)
    for resource, kind, items in (("deviceclasses", "DeviceClass", "device_classes"),
                                  ("resourceslices", "ResourceSlice", "resource_slices")):
        writer.many([(writer.create, (base + resource, {
            "apiVersion": DRA_GROUP + "/" + DRA_VERSION, "kind": kind, "metadata": _metadata(obj),
            "spec": obj["spec"]})) for obj in snapshot.get(items) or ()])
    writer.many([(writer.create, (base + "namespaces/%s/resourceclaims" % claim["metadata"]["namespace"], {
        "apiVersion": DRA_GROUP + "/" + DRA_VERSION, "kind": "ResourceClaim",
        "metadata": _metadata(claim, namespaced=True), "spec": claim["spec"]}))
        for claim in snapshot.get("resource_claims") or ()])


def check_taints(writer: Writer, snapshot: dict) -> None:
    """Every node there carries exactly the taints it carries in the cluster, nothing an admission added."""
    def taints(node):
        return sorted(json.dumps(taint, sort_keys=True) for taint in (node.get("spec") or {}).get("taints") or ())
    loaded = dict((node["metadata"]["name"], taints(node))
                  for node in writer.request("GET", "/api/v1/nodes").get("items") or ())
    wrong = [node["metadata"]["name"] for node in snapshot["nodes"]
             if loaded.get(node["metadata"]["name"]) != taints(node)]
    if wrong:
        raise LoadError("nodes whose taints differ from the cluster's after the load: %s" % ", ".join(wrong[:10]))


def pods_path(pod: dict) -> str:
    return "/api/v1/namespaces/%s/pods" % pod["metadata"]["namespace"]


def pod_requests(pods: list, keep_node: bool) -> tuple:
    """What create_pods sends for ``pods``, serialised once for every run that sends them: ([(path, JSON body)], the
    number of pods of each creation second, in order)."""
    waves = []
    for index, pod in enumerate(pods):
        second = (pod.get("metadata") or {}).get("creationTimestamp")
        if index and second == (pods[index - 1].get("metadata") or {}).get("creationTimestamp"):
            waves[-1] += 1
        else:
            waves.append(1)
    return [(pods_path(pod), json.dumps(pod_object(pod, keep_node)).encode()) for pod in pods], waves


def create_pods(writer: Writer, pods: list, keep_node: bool, requests: tuple | None = None) -> None:
    """The pods, a wave per creation second in the order given: kube-scheduler's queue meets the pods of an earlier
    second first, as the cluster's did (requests sent side by side reach the API server in any order, so within a
    second, which is all a creationTimestamp tells, the order is the run's own). ``requests``: pod_requests(pods,
    keep_node), made once."""
    bodies, waves = requests or pod_requests(pods, keep_node)
    writer.many([(writer.send, request) for request in bodies], waves)


def fixed_pods(snapshot: dict, served_names) -> list:
    """The pods that keep their node in every run: mirror pods (the kubelet placed them) and bound pods of a
    scheduler name no configuration previewed serves."""
    return [pod for pod in snapshot["pods"] if (pod.get("spec") or {}).get("nodeName") and (
        is_mirror(pod) or (pod["spec"].get("schedulerName") or "default-scheduler") not in served_names)]


# scheduler-plugins' own objects: (the snapshot's key, apiVersion, resource, kind).
SCHEDULER_PLUGINS_OBJECTS = (("pod_groups", "scheduling.x-k8s.io/v1alpha1", "podgroups", "PodGroup"),
                             ("elastic_quotas", "scheduling.x-k8s.io/v1alpha1", "elasticquotas", "ElasticQuota"))


def load_scheduler_plugins(writer: Writer, snapshot: dict) -> None:
    """PodGroups and ElasticQuotas (their CRDs installed with the control plane), oldest first (Coscheduling's queue
    takes the pods of an older group first), each with the status scheduler-plugins' controller gave it."""
    for items, api_version, resource, kind in SCHEDULER_PLUGINS_OBJECTS:
        for obj in sorted(snapshot.get(items) or (), key=lambda obj: (
                (obj.get("metadata") or {}).get("creationTimestamp") or "", key(obj))):
            meta = _metadata(obj, namespaced=True)
            path = "/apis/%s/namespaces/%s/%s" % (api_version, meta["namespace"], resource)
            writer.create(path, {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": obj.get("spec") or {}})
            _status(writer, "%s/%s" % (path, meta["name"]), obj.get("status"))
