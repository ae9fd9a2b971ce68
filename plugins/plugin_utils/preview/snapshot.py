# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A read-only snapshot of what kube-scheduler reads of a cluster, taken with list verbs only, as plain data.

What it holds: Nodes (labels, taints, allocatable, conditions, images), Namespaces (their labels: pod affinity's
namespaceSelector reads them), PriorityClasses, and every Pod that is bound or pending (Succeeded and Failed pods
hold nothing). Not yet: PVCs, PVs, StorageClasses and CSINodes (the volume plugins), PodDisruptionBudgets
(preemption), DRA objects: ``unsupported()`` names the pods that need them, which the report lists.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._http import Api, ApiError, configuration_for

# (API path, resource, group) of each list the snapshot makes: all it needs is list on these, cluster-wide.
READS = (
    ("/api/v1/nodes", "nodes", ""),
    ("/api/v1/namespaces", "namespaces", ""),
    ("/apis/scheduling.k8s.io/v1/priorityclasses", "priorityclasses", "scheduling.k8s.io"),
    ("/api/v1/pods", "pods", ""),
)
PAGE = 500
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
CLUSTER_ROLE_NAME = "kubesched-placement-preview"


class SnapshotError(Exception):
    """The cluster could not be read: unreachable, or a list refused (the message names what to grant)."""


def cluster_role(resources) -> str:
    """The ClusterRole that grants what the snapshot reads, as YAML text an operator applies."""
    groups = {}
    for _path, resource, group in READS:
        if resource in resources:
            groups.setdefault(group, []).append(resource)
    rules = "".join("  - apiGroups: [\"%s\"]\n    resources: [%s]\n    verbs: [list]\n"
                    % (group, ", ".join(names)) for group, names in groups.items())
    return "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: %s\nrules:\n%s" % (
        CLUSTER_ROLE_NAME, rules)


def _get(api, path: str, query: dict):
    return api.request("GET", path, query=query)


def missing_permissions(api) -> list:
    """The (resource, group) pairs this identity may not list cluster-wide, found by listing one of each."""
    missing = []
    for path, resource, group in READS:
        try:
            _get(api, path, {"limit": 1})
        except ApiError as exc:
            if exc.status in (401, 403):
                missing.append((resource, group))
            else:
                raise SnapshotError("listing %s failed: %s" % (resource, exc)) from None
    return missing


def refusal(missing) -> str:
    names = ", ".join("%s%s" % (resource, "." + group if group else "") for resource, group in missing)
    return ("kubeconfig: this identity may not list %s cluster-wide; the snapshot reads with the verb list only "
            "(nodes, namespaces, priorityclasses.scheduling.k8s.io, pods). Grant it this ClusterRole (and a "
            "ClusterRoleBinding to the identity):\n%s" % (names, cluster_role([pair[0] for pair in missing])))


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


def take(api) -> dict:
    """The snapshot: {"nodes", "namespaces", "priority_classes", "pods"}, each a list of the API's own objects
    (plain dicts); refused reads are named first, all at once."""
    try:
        missing = missing_permissions(api)
        if missing:
            raise SnapshotError(refusal(missing))
        data = dict((resource, _list(api, path)) for path, resource, _group in READS)
    except ApiError as exc:
        raise SnapshotError("the cluster could not be read: %s" % exc) from None
    except (OSError, ValueError) as exc:
        raise SnapshotError("the cluster could not be read: %s" % str(exc).splitlines()[0]) from None
    except Exception as exc:  # urllib3's connection errors, which are many types
        if isinstance(exc, SnapshotError):
            raise
        raise SnapshotError("the cluster could not be read: %s" % str(exc).splitlines()[0]) from None
    pods = [pod for pod in data["pods"] if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    return {"nodes": data["nodes"], "namespaces": data["namespaces"],
            "priority_classes": data["priorityclasses"], "pods": pods}


def unsupported(snapshot: dict) -> dict:
    """'namespace/name' -> what of the pod the snapshot does not carry yet (its volume claims, its resource
    claims): kube-scheduler in the throwaway control plane would find them missing."""
    found = {}
    for pod in snapshot["pods"]:
        spec = pod.get("spec") or {}
        needs = []
        if any("persistentVolumeClaim" in volume or "ephemeral" in volume for volume in spec.get("volumes") or ()):
            needs.append("PersistentVolumeClaims")
        if spec.get("resourceClaims"):
            needs.append("ResourceClaims")
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
