"""The snapshot's pure parts: the ClusterRole it asks for, the refusal naming what is missing, the pods whose
placement it cannot reproduce."""
from __future__ import annotations

import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview.snapshot import (
    cluster_role, refusal, unsupported)


def test_the_cluster_role_grants_list_on_exactly_what_is_missing():
    role = yaml.safe_load(cluster_role(["pods", "priorityclasses"]))
    assert role["kind"] == "ClusterRole"
    assert sorted(role["rules"], key=str) == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
        {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"], "verbs": ["list"]}]


def test_the_refusal_names_the_resources_and_the_role_to_grant():
    message = refusal([("nodes", ""), ("priorityclasses", "scheduling.k8s.io")])
    assert "may not list nodes, priorityclasses.scheduling.k8s.io cluster-wide" in message
    # What the snapshot reads in all: the volume plugins' objects and the disruption budgets too, DRA's where served.
    assert ("(nodes, namespaces, priorityclasses.scheduling.k8s.io, pods, persistentvolumeclaims, persistentvolumes, "
            "storageclasses.storage.k8s.io, csinodes.storage.k8s.io, csidrivers.storage.k8s.io, "
            "csistoragecapacities.storage.k8s.io, poddisruptionbudgets.policy)") in message
    assert "resourceclaims.resource.k8s.io)" in refusal([("nodes", "")], dra=True)
    role = yaml.safe_load(message.split("ClusterRoleBinding to the identity):\n", 1)[1])
    assert [rule["resources"] for rule in role["rules"]] == [["nodes"], ["priorityclasses"]]


def test_the_whole_cluster_role_lists_every_read_by_group():
    role = yaml.safe_load(cluster_role())
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["nodes", "namespaces", "pods", "persistentvolumeclaims",
                                          "persistentvolumes"], "verbs": ["list"]},
        {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"], "verbs": ["list"]},
        {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses", "csinodes", "csidrivers",
                                                        "csistoragecapacities"], "verbs": ["list"]},
        {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["list"]},
        {"apiGroups": ["resource.k8s.io"], "resources": ["deviceclasses", "resourceslices", "resourceclaims"],
         "verbs": ["list"]}]


def test_what_the_preview_cannot_reproduce_is_named_per_pod():
    pods = [{"metadata": {"name": "db", "namespace": "a"},
             "spec": {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "d"}}]}},
            {"metadata": {"name": "scratch", "namespace": "a"},
             "spec": {"volumes": [{"name": "s", "ephemeral": {"volumeClaimTemplate": {}}}]}},
            {"metadata": {"name": "gpu", "namespace": "a"}, "spec": {"resourceClaims": [
                {"name": "g", "resourceClaimName": "gpu"}]}},
            {"metadata": {"name": "gpus", "namespace": "a"}, "spec": {"resourceClaims": [
                {"name": "g", "resourceClaimTemplateName": "gpu"}]}},
            {"metadata": {"name": "web", "namespace": "a"}, "spec": {"volumes": [{"name": "t", "emptyDir": {}}]}}]
    # A claim of the snapshot is loaded: a pod with a PersistentVolumeClaim or a ResourceClaim places as it would.
    assert unsupported({"pods": pods, "dra": True}) == {
        "a/scratch": ["generic ephemeral volumes"], "a/gpus": ["ResourceClaimTemplates"]}
    assert unsupported({"pods": pods, "dra": False})["a/gpu"] == [
        "ResourceClaims (the cluster serves no resource.k8s.io/v1)"]
