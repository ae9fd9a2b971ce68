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

from hypothesis import HealthCheck, given, settings as hypothesis_settings
from hypothesis import strategies as st

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster.rollback_point import (
    RollbackPointError, decide, label_selectors, pod_states, point, previous_objects, read, rollout_state)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import (
    CONFIG_CHECKSUM_ANNOTATION, ROLLBACK_POINT_LABEL)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.deployment_objects import config_map, workload as rendered

LABELS = {"app.kubernetes.io/name": "kube-scheduler", "app.kubernetes.io/instance": "batch",
          "app.kubernetes.io/managed-by": "kubesched.schedulers"}
SELECTOR = {"app.kubernetes.io/name": "kube-scheduler", "app.kubernetes.io/instance": "batch"}
# The role's settings (vars/main.yml), what the render and the point read of them.
SETTINGS = {"name": "batch", "namespace": "kube-system", "kind": "Deployment", "labels": LABELS, "selector": SELECTOR,
            "replicas": 2, "lease_name": "batch", "secure_port": 10259, "image": "registry.k8s.io/kube-scheduler:v1.35.4",
            "image_pull_policy": "IfNotPresent", "resources": {}, "priority_class_name": "", "run_as_user": 65532,
            "node_selector": {}, "tolerations": [], "spread_when_unsatisfiable": "ScheduleAnyway", "wait_timeout": 300, "settle": 10,
            "control_plane_selector": {}, "control_plane_tolerations": []}
CONFIG = {"checksum": "old", "profiles": ["batch"], "rendered": "keyData: c2VjcmV0\n",
          "health_paths": {"liveness": "/livez", "readiness": "/readyz"}, "effective": {}}
CONFIG_MAP = dict(config_map(SETTINGS, CONFIG, {}))
CONFIG_MAP["metadata"] = dict(CONFIG_MAP["metadata"], resourceVersion="41", uid="u1", creationTimestamp="t",
                              managedFields=[{}])


def workload(checksum="new", replicas=2, ready=2, updated=2, available=2, generation=3, observed=3, kind="Deployment",
             total=None):
    status = ({"observedGeneration": observed, "updatedReplicas": updated, "readyReplicas": ready,
               "availableReplicas": available, "replicas": updated if total is None else total}
              if kind == "Deployment" else
              {"observedGeneration": observed, "desiredNumberScheduled": replicas, "updatedNumberScheduled": updated,
               "numberReady": ready, "numberAvailable": available})
    found = rendered(dict(SETTINGS, kind=kind, replicas=replicas), dict(CONFIG, checksum=checksum))
    found["metadata"]["generation"] = generation
    return dict(found, status=status)


def kept(previous=None):
    return point(SETTINGS, previous_objects([{"resources": [CONFIG_MAP]}, {"resources": []}])
                 if previous is None else previous, workload("new"), LABELS)


def test_the_point_keeps_the_previous_objects_as_they_can_be_applied_again():
    secret = kept()
    assert secret["kind"] == "Secret" and secret["metadata"]["name"] == "batch-rollback-point"
    assert secret["metadata"]["labels"] == dict(LABELS, **{ROLLBACK_POINT_LABEL: "batch"})
    # The ConfigMap's secrets are in the Secret's data only, encoded; never in its metadata.
    assert "c2VjcmV0" not in json.dumps(secret["metadata"])
    record = read(secret, SETTINGS)
    assert record["config_checksum"] == "new" and record["kind"] == "Deployment"
    (kept_map,) = record["previous"]  # the workload did not exist yet: nothing of it to keep
    assert kept_map["data"] == CONFIG_MAP["data"] and "status" not in kept_map
    assert set(kept_map["metadata"]) == {"name", "namespace", "labels", "annotations"}


def secret_of(data):
    secret = kept()
    secret["data"] = data
    return secret


@pytest.mark.parametrize("secret, words", [
    (secret_of({}), "the rollback point Secret kube-system/batch-rollback-point is refused: data (its keys)"),
    (secret_of({"rollback.json": "not base64 json"}), "cannot be read"),
    (secret_of({"rollback.json": base64.b64encode(b'{"format": 9}').decode()}),
     "holds no record this release reads (format 9)"),
])
def test_a_point_this_role_did_not_write_is_named_not_used(secret, words):
    with pytest.raises(RollbackPointError, match=words.replace("(", r"\(").replace(")", r"\)")):
        read(secret, SETTINGS)


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
    ready, reason = rollout_state(read(kept(), SETTINGS), found)
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
    decision = decide(kept(), workload(), [], SETTINGS)
    assert decision["action"] == "commit" and decision["previous"] == []
    assert decision["message"] == (
        "Deployment kube-system/batch: a rollout an earlier run applied and never confirmed (the run stopped before "
        "its pods were ready) is ready with its new config: it is committed, and its rollback point was removed")
    assert "would be removed" in decide(kept(), workload(), [], SETTINGS, check_mode=True)["message"]


def test_any_other_rollout_is_put_back_from_the_point_naming_why():
    pods = [{"metadata": {"name": "batch-9"}, "status": {"phase": "Pending", "containerStatuses": [
        {"state": {"waiting": {"reason": "ErrImagePull"}}}]}}]
    decision = decide(kept(), workload(ready=0, available=0), pods, SETTINGS)
    assert decision["action"] == "restore" and [obj["kind"] for obj in decision["previous"]] == ["ConfigMap"]
    assert decision["message"] == (
        "Deployment kube-system/batch failed: a rollout an earlier run applied and never confirmed (the run stopped "
        "before its pods were ready) is not ready: Deployment kube-system/batch: its new pods are not ready (0 of 2 "
        "available (0 ready)). Pods: batch-9 Pending ErrImagePull. The previous ConfigMap was put back from the "
        "rollback point.")
    nothing = decide(kept(previous=[]), None, [], SETTINGS)
    assert nothing["message"].endswith("There was no previous ConfigMap or Deployment to put back; the new objects "
                                       "are left for inspection.")
    assert "would be put back" in decide(kept(), None, [], SETTINGS, check_mode=True)["message"]
    both = previous_objects([{"resources": [CONFIG_MAP]}, {"resources": [workload("old")]}])
    assert "The previous ConfigMap and Deployment were put back" in decide(kept(both), None, [], SETTINGS)["message"]


def test_the_pods_are_read_by_each_term_of_the_workloads_selector():
    # The terms are key=value of each label, not Jinja's join of a dict2items entry (which gave "key=value" itself,
    # and the failure named no pod).
    assert label_selectors({"app.kubernetes.io/name": "kube-scheduler", "app.kubernetes.io/instance": "batch"}) == [
        "app.kubernetes.io/instance=batch", "app.kubernetes.io/name=kube-scheduler"]


# --- the parser against anything a Secret can hold ---------------------------------------------------------------

PROPERTY_SETTINGS = dict(deadline=None, derandomize=True, database=None, max_examples=300,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
                    max_leaves=25)
# Values that hit the checks: the role's own names and kinds, and others.
NEAR = st.sampled_from(["batch", "kube-system", "team-a", "ConfigMap", "Deployment", "DaemonSet", "ClusterRoleBinding",
                        "v1", "apps/v1", "config.yaml", "kube-scheduler", True, False, None, 1, [], {}]) | JSON


def _record():
    return json.loads(base64.b64decode(kept(previous_objects([{"resources": [CONFIG_MAP]},
                                                              {"resources": [workload("old")]}]))["data"]["rollback.json"]))


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, prefix + (index,))


RECORD_PATHS = list(_paths(_record()))


def _only_its_own(record):
    """What an accepted point puts back: the role's ConfigMap and workload, of its name and namespace."""
    for obj in record["previous"]:
        assert obj["kind"] in ("ConfigMap", record["kind"]) and record["kind"] in ("Deployment", "DaemonSet")
        assert (obj["metadata"]["name"], obj["metadata"]["namespace"]) == ("batch", "kube-system")
    assert len({obj["kind"] for obj in record["previous"]}) == len(record["previous"]) <= 2


def _read(secret):
    try:
        record = read(secret, SETTINGS)
    except RollbackPointError as exc:
        assert str(exc).startswith("the rollback point Secret "), str(exc)
        return None
    _only_its_own(record)
    return record


@hypothesis_settings(**PROPERTY_SETTINGS)
@given(st.binary(max_size=200))
def test_any_bytes_are_a_point_or_the_one_typed_error(data):
    _read(secret_of({"rollback.json": base64.b64encode(data).decode()}))


@hypothesis_settings(**PROPERTY_SETTINGS)
@given(JSON)
def test_any_json_record_is_a_point_or_the_one_typed_error(record):
    _read(secret_of({"rollback.json": base64.b64encode(json.dumps(record).encode()).decode()}))


@hypothesis_settings(**PROPERTY_SETTINGS)
@given(st.lists(st.tuples(st.sampled_from(RECORD_PATHS), NEAR), min_size=1, max_size=3))
def test_a_changed_record_is_a_point_of_its_own_objects_or_the_one_typed_error(changes):
    record = _record()
    for path, value in changes:
        if not path:
            record = value
            continue
        target = record
        try:
            for step in path[:-1]:
                target = target[step]
            target[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    _read(secret_of({"rollback.json": base64.b64encode(json.dumps(record).encode()).decode()}))


@hypothesis_settings(**PROPERTY_SETTINGS)
@given(JSON, st.sampled_from(["metadata", "data", "type", "kind"]))
def test_any_secret_shape_is_a_point_or_the_one_typed_error(value, key):
    secret = kept()
    secret[key] = value
    _read(secret)
    _read(value)
