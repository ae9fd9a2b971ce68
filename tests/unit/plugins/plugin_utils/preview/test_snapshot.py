"""The snapshot's pure parts: the ClusterRole it asks for, the refusal naming what is missing, the pods it cannot
carry yet."""
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
    role = yaml.safe_load(message.split("ClusterRoleBinding to the identity):\n", 1)[1])
    assert [rule["resources"] for rule in role["rules"]] == [["nodes"], ["priorityclasses"]]


def test_pods_with_claims_are_named_as_what_the_snapshot_does_not_carry():
    pods = [{"metadata": {"name": "db", "namespace": "a"},
             "spec": {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "d"}}]}},
            {"metadata": {"name": "gpu", "namespace": "a"}, "spec": {"resourceClaims": [{"name": "g"}]}},
            {"metadata": {"name": "web", "namespace": "a"}, "spec": {"volumes": [{"name": "t", "emptyDir": {}}]}}]
    assert unsupported({"pods": pods}) == {"a/db": ["PersistentVolumeClaims"], "a/gpu": ["ResourceClaims"]}
