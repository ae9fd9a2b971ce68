# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deployment role's rollback point: the Secret keeps the previous objects as they can be applied again and the
config the rollout is to run; a run that finds one commits a rollout that is ready with that config and puts back
the previous objects of any other, naming why and each pod's state."""

from __future__ import annotations

import base64
import json

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster.rollback_point import (
    RollbackPointError, decide, label_selectors, pod_states, point, previous_objects, read, rollout_state)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import (
    CONFIG_CHECKSUM_ANNOTATION, ROLLBACK_POINT_LABEL)

SETTINGS = {"name": "batch", "namespace": "kube-system", "kind": "Deployment"}
LABELS = {"app.kubernetes.io/managed-by": "kubesched.schedulers"}
CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"config.yaml": "keyData: c2VjcmV0\n"},
              "metadata": {"name": "batch", "namespace": "kube-system", "resourceVersion": "41", "uid": "u1",
                           "creationTimestamp": "t", "managedFields": [{}], "labels": {"a": "b"}}}


def workload(checksum="new", replicas=2, ready=2, updated=2, available=2, generation=3, observed=3, kind="Deployment",
             total=None):
    status = ({"observedGeneration": observed, "updatedReplicas": updated, "readyReplicas": ready,
               "availableReplicas": available, "replicas": updated if total is None else total}
              if kind == "Deployment" else
              {"observedGeneration": observed, "desiredNumberScheduled": replicas, "updatedNumberScheduled": updated,
               "numberReady": ready, "numberAvailable": available})
    metadata = {"name": "batch", "namespace": "kube-system", "generation": generation}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": metadata,
            "spec": dict({"template": {"metadata": {"annotations": {CONFIG_CHECKSUM_ANNOTATION: checksum}}}},
                         **({"replicas": replicas} if kind == "Deployment" else {})),
            "status": status}


def kept(previous=None):
    return point(SETTINGS, previous_objects([{"resources": [CONFIG_MAP]}, {"resources": []}])
                 if previous is None else previous, workload("new"), LABELS)


def test_the_point_keeps_the_previous_objects_as_they_can_be_applied_again():
    secret = kept()
    assert secret["kind"] == "Secret" and secret["metadata"]["name"] == "batch-rollback-point"
    assert secret["metadata"]["labels"] == dict(LABELS, **{ROLLBACK_POINT_LABEL: "batch"})
    # The ConfigMap's secrets are in the Secret's data only, encoded; never in its metadata.
    assert "c2VjcmV0" not in json.dumps(secret["metadata"])
    record = read(secret)
    assert record["config_checksum"] == "new" and record["kind"] == "Deployment"
    (config_map,) = record["previous"]  # the workload did not exist yet: nothing of it to keep
    assert config_map["data"] == CONFIG_MAP["data"] and "status" not in config_map
    assert config_map["metadata"] == {"name": "batch", "namespace": "kube-system", "labels": {"a": "b"}}


@pytest.mark.parametrize("secret, words", [
    ({"metadata": {"name": "x", "namespace": "n"}, "data": {}}, "the rollback point Secret n/x cannot be read"),
    ({"metadata": {"name": "x", "namespace": "n"}, "data": {"rollback.json": "not base64 json"}}, "cannot be read"),
    ({"metadata": {"name": "x", "namespace": "n"}, "data": {"rollback.json": base64.b64encode(b'{"format": 9}').decode()}},
     "holds no record this release reads (format 9)"),
])
def test_a_point_this_role_did_not_write_is_named_not_used(secret, words):
    with pytest.raises(RollbackPointError, match=words.replace("(", r"\(").replace(")", r"\)")):
        read(secret)


@pytest.mark.parametrize("found, why", [
    (workload(), None),
    (workload(kind="DaemonSet"), None),
    (None, "Deployment kube-system/batch does not exist"),
    (workload(checksum="other"), "no longer has the config this rollout applied (config checksum other, the rollout's new)"),
    (workload(observed=2), "its controller has not yet seen its last change"),
    (workload(ready=1, available=1), "its new pods are not ready (1 of 2 available (1 ready))"),
    (workload(updated=1, total=2), "its new pods are not ready (1 of 2 pods updated, 1 old pod(s) still running)"),
    # A new pod that cannot start beside the old one it replaces, which still serves (readyReplicas counts it).
    (workload(replicas=1, updated=1, total=2, ready=1, available=1), "its new pods are not ready (1 old pod(s) still running)"),
    (workload(kind="DaemonSet", ready=0, available=0), "its new pods are not ready (0 of 2 available (0 ready))"),
    (workload(kind="DaemonSet", updated=1), "its new pods are not ready (1 of 2 pods updated, 1 old pod(s) still running)"),
])
def test_a_rollout_is_ready_only_rolled_out_with_its_new_config_and_every_pod_ready(found, why):
    ready, reason = rollout_state(read(kept()), found)
    assert ready is (why is None)
    assert reason is None if why is None else why in reason, reason


def test_pod_states_name_each_pod_and_why_its_containers_wait():
    pods = [{"metadata": {"name": "batch-1"}, "status": {"phase": "Pending", "containerStatuses": [
        {"state": {"waiting": {"reason": "ImagePullBackOff"}}, "ready": False}]}},
        {"metadata": {"name": "batch-2"}, "status": {"phase": "Running", "containerStatuses": [
            {"state": {"running": {}}, "ready": True}, {"state": {"running": {}}, "ready": False}]}},
        {"metadata": {"name": "batch-3"}, "status": {}}]
    assert pod_states(pods) == "batch-1 Pending ImagePullBackOff; batch-2 Running ready not ready; batch-3 Unknown"
    assert pod_states([]) == "none"


def test_a_ready_rollout_is_committed_and_the_run_says_so():
    decision = decide(kept(), workload(), [])
    assert decision["action"] == "commit" and decision["previous"] == []
    assert decision["message"] == (
        "Deployment kube-system/batch: a rollout an earlier run applied and never confirmed (the run stopped before "
        "its pods were ready) is ready with its new config: it is committed, and its rollback point was removed")
    assert "would be removed" in decide(kept(), workload(), [], check_mode=True)["message"]


def test_any_other_rollout_is_put_back_from_the_point_naming_why():
    pods = [{"metadata": {"name": "batch-9"}, "status": {"phase": "Pending", "containerStatuses": [
        {"state": {"waiting": {"reason": "ErrImagePull"}}}]}}]
    decision = decide(kept(), workload(ready=0, available=0), pods)
    assert decision["action"] == "restore" and [obj["kind"] for obj in decision["previous"]] == ["ConfigMap"]
    assert decision["message"] == (
        "Deployment kube-system/batch failed: a rollout an earlier run applied and never confirmed (the run stopped "
        "before its pods were ready) is not ready: Deployment kube-system/batch: its new pods are not ready (0 of 2 "
        "available (0 ready)). Pods: batch-9 Pending ErrImagePull. The previous ConfigMap was put back from the "
        "rollback point.")
    nothing = decide(kept(previous=[]), None, [])
    assert nothing["message"].endswith("There was no previous ConfigMap or Deployment to put back; the new objects "
                                       "are left for inspection.")
    assert "would be put back" in decide(kept(), None, [], check_mode=True)["message"]
    both = previous_objects([{"resources": [CONFIG_MAP]}, {"resources": [workload("old")]}])
    assert "The previous ConfigMap and Deployment were put back" in decide(kept(both), None, [])["message"]


def test_the_pods_are_read_by_each_term_of_the_workloads_selector():
    # The terms are key=value of each label, not Jinja's join of a dict2items entry (which gave "key=value" itself,
    # and the failure named no pod).
    assert label_selectors({"app.kubernetes.io/name": "kube-scheduler", "app.kubernetes.io/instance": "batch"}) == [
        "app.kubernetes.io/instance=batch", "app.kubernetes.io/name=kube-scheduler"]
