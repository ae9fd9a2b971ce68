# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A read-only snapshot of what kube-scheduler reads of a cluster, taken with list verbs only, as plain data.

What it holds: Nodes (labels, taints, allocatable, conditions, images), Namespaces (their labels: pod affinity's
namespaceSelector reads them), PriorityClasses, every Pod that is bound or pending (Succeeded and Failed pods hold
nothing); what the volume plugins read (PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
CSIDrivers, CSIStorageCapacities); PodDisruptionBudgets (preemption); and, where the cluster serves
resource.k8s.io/v1 (asked of its discovery), the DRA objects (DeviceClasses, ResourceSlices, ResourceClaims).
``unsupported()`` names the pods whose placement it cannot reproduce, which the report lists.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._http import Api, ApiError, configuration_for

# (API path, resource, group, the snapshot's key) of each list the snapshot makes: all it needs is list on these,
# cluster-wide. The volume plugins (VolumeBinding, VolumeZone, VolumeRestrictions, NodeVolumeLimits) read the storage
# objects, preemption the PodDisruptionBudgets.
READS = (
    ("/api/v1/nodes", "nodes", "", "nodes"),
    ("/api/v1/namespaces", "namespaces", "", "namespaces"),
    ("/apis/scheduling.k8s.io/v1/priorityclasses", "priorityclasses", "scheduling.k8s.io", "priority_classes"),
    ("/api/v1/pods", "pods", "", "pods"),
    ("/api/v1/persistentvolumeclaims", "persistentvolumeclaims", "", "persistent_volume_claims"),
    ("/api/v1/persistentvolumes", "persistentvolumes", "", "persistent_volumes"),
    ("/apis/storage.k8s.io/v1/storageclasses", "storageclasses", "storage.k8s.io", "storage_classes"),
    ("/apis/storage.k8s.io/v1/csinodes", "csinodes", "storage.k8s.io", "csi_nodes"),
    ("/apis/storage.k8s.io/v1/csidrivers", "csidrivers", "storage.k8s.io", "csi_drivers"),
    ("/apis/storage.k8s.io/v1/csistoragecapacities", "csistoragecapacities", "storage.k8s.io",
     "csi_storage_capacities"),
    ("/apis/policy/v1/poddisruptionbudgets", "poddisruptionbudgets", "policy", "pod_disruption_budgets"),
)
# Dynamic resource allocation, read where the cluster serves this version (GA since 1.34; a beta-only cluster's
# claims are named as not reproduced): the DynamicResources plugin reads these.
DRA_GROUP = "resource.k8s.io"
DRA_VERSION = "v1"
DRA_READS = tuple(("/apis/%s/%s/%s" % (DRA_GROUP, DRA_VERSION, resource), resource, DRA_GROUP, key)
                  for resource, key in (("deviceclasses", "device_classes"), ("resourceslices", "resource_slices"),
                                        ("resourceclaims", "resource_claims")))
# The snapshot's keys of lists; "dra" says whether the cluster serves DRA_VERSION.
KEYS = tuple(read[3] for read in READS + DRA_READS)
# The objects of scheduler-plugins' own CRDs, read where the profile enables a plugin that reads them (its CRD's
# name, as scheduler_plugins.OutOfTree.needs() names it).
CUSTOM_READS = {
    "podgroups.scheduling.x-k8s.io": (
        "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", "podgroups", "scheduling.x-k8s.io", "pod_groups"),
    "elasticquotas.scheduling.x-k8s.io": (
        "/apis/scheduling.x-k8s.io/v1alpha1/elasticquotas", "elasticquotas", "scheduling.x-k8s.io", "elastic_quotas"),
}
PAGE = 500
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
CLUSTER_ROLE_NAME = "kubesched-placement-preview"


class SnapshotError(Exception):
    """The cluster could not be read: unreachable, or a list refused (the message names what to grant)."""


def cluster_role(resources=None, custom=()) -> str:
    """The ClusterRole that grants what the snapshot reads (``resources``, default all of it, with the ``custom``
    reads), as YAML text an operator applies."""
    groups = {}
    for _path, resource, group, _key in READS + DRA_READS + tuple(custom):
        if resources is None or resource in resources:
            groups.setdefault(group, []).append(resource)
    rules = "".join("  - apiGroups: [\"%s\"]\n    resources: [%s]\n    verbs: [list]\n"
                    % (group, ", ".join(names)) for group, names in groups.items())
    return "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: %s\nrules:\n%s" % (
        CLUSTER_ROLE_NAME, rules)


def _get(api, path: str, query: dict):
    return api.request("GET", path, query=query)


def serves_dra(api) -> bool:
    """Whether the API server serves resource.k8s.io/DRA_VERSION (its discovery, which every identity may read)."""
    try:
        group = _get(api, "/apis/" + DRA_GROUP, {})
    except ApiError as exc:
        if exc.status == 404:
            return False
        raise
    return any(version.get("version") == DRA_VERSION for version in group.get("versions") or ())


def reads(dra: bool, custom=()) -> tuple:
    return READS + (DRA_READS if dra else ()) + tuple(custom)


def missing_permissions(api, dra: bool = False, custom=()) -> list:
    """The (resource, group) pairs this identity may not list cluster-wide, found by listing one of each."""
    missing = []
    for read in reads(dra, custom):
        path, resource, group, _key = read
        try:
            _get(api, path, {"limit": 1})
        except ApiError as exc:
            if exc.status in (401, 403):
                missing.append((resource, group))
            elif exc.status == 404 and read in tuple(custom):
                raise SnapshotError("the profile enables a plugin that reads %s.%s, which the cluster does not serve: "
                                    "install scheduler-plugins' CRDs (the deployment role does)" % (resource, group))
            else:
                raise SnapshotError("listing %s failed: %s" % (resource, exc)) from None
    return missing


def _names(pairs) -> str:
    return ", ".join("%s%s" % (resource, "." + group if group else "") for resource, group in pairs)


def refusal(missing, dra: bool = False, custom=()) -> str:
    return ("kubeconfig: this identity may not list %s cluster-wide; the snapshot reads with the verb list only "
            "(%s). Grant it this ClusterRole (and a ClusterRoleBinding to the identity):\n%s"
            % (_names(missing), _names((read[1], read[2]) for read in reads(dra, custom)),
               cluster_role([pair[0] for pair in missing], custom)))


def _list(api, path: str) -> list:
    items, token = [], None
    while True:
        query = {"limit": PAGE}
        if token:
            query["continue"] = token
        page = _get(api, path, query)
        items.extend(page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return items


def take(api, crds=()) -> dict:
    """The snapshot: a list of the API's own objects (plain dicts) under each of KEYS (the DRA ones empty where the
    cluster does not serve DRA_VERSION) and of the CUSTOM_READS of ``crds``, and "dra" (whether it serves it);
    refused reads are named first, all at once."""
    custom = tuple(CUSTOM_READS[crd] for crd in crds)
    try:
        dra = serves_dra(api)
        missing = missing_permissions(api, dra, custom)
        if missing:
            raise SnapshotError(refusal(missing, dra, custom))
        data = dict((key, _list(api, path)) for path, _resource, _group, key in reads(dra, custom))
    except ApiError as exc:
        raise SnapshotError("the cluster could not be read: %s" % exc) from None
    except (OSError, ValueError) as exc:
        raise SnapshotError("the cluster could not be read: %s" % str(exc).splitlines()[0]) from None
    except Exception as exc:  # urllib3's connection errors, which are many types
        if isinstance(exc, SnapshotError):
            raise
        raise SnapshotError("the cluster could not be read: %s" % str(exc).splitlines()[0]) from None
    data["pods"] = [pod for pod in data["pods"]
                    if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    snapshot = dict((name, data.get(name) or []) for name in KEYS + tuple(read[3] for read in custom))
    snapshot["dra"] = dra
    return snapshot


def unsupported(snapshot: dict) -> dict:
    """'namespace/name' -> what of the pod the preview cannot reproduce: a generic ephemeral volume or a claim from
    a ResourceClaimTemplate (kube-controller-manager makes their claims for the pod the cluster runs, which the
    preview's pod is not), a ResourceClaim where the cluster does not serve resource.k8s.io/v1."""
    found = {}
    for pod in snapshot["pods"]:
        spec = pod.get("spec") or {}
        needs = []
        if any("ephemeral" in volume for volume in spec.get("volumes") or ()):
            needs.append("generic ephemeral volumes")
        claims = spec.get("resourceClaims") or ()
        if any(claim.get("resourceClaimTemplateName") for claim in claims):
            needs.append("ResourceClaimTemplates")
        if claims and not snapshot.get("dra"):
            needs.append("ResourceClaims (the cluster serves no %s/%s)" % (DRA_GROUP, DRA_VERSION))
        if needs:
            found[key(pod)] = needs
    return found


def key(obj: dict) -> str:
    meta = obj.get("metadata") or {}
    return "%s/%s" % (meta.get("namespace"), meta.get("name")) if meta.get("namespace") else meta.get("name")


def is_mirror(pod: dict) -> bool:
    """A static pod's mirror: the kubelet places it, no scheduler does."""
    return MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {})


def is_daemon(pod: dict) -> bool:
    return any(owner.get("kind") == "DaemonSet" for owner in (pod.get("metadata") or {}).get("ownerReferences") or ())


def connect(kubeconfig=None, context=None) -> Api:
    """A client of the cluster from a kubeconfig (a path, a mapping, or None for the kubernetes client's
    default); a kubeconfig that cannot be loaded is a SnapshotError naming why."""
    try:
        return Api(configuration_for(kubeconfig, context))
    except ImportError:
        raise SnapshotError("the preview needs the kubernetes Python package on the controller "
                            "(pip install kubernetes)") from None
    except Exception as exc:  # the kubeconfig loader raises many types
        raise SnapshotError("kubeconfig: %s" % str(exc).splitlines()[0]) from None
