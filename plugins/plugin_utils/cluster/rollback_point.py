# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deployment role's rollback point, kept in the cluster while a rollout is not confirmed ready.

The role reads the ConfigMap and workload a rollout replaces, applies the new ones and waits for the new pods; when
they never become ready it puts the previous objects back. Held only in the controller's memory, that rollback point
dies with the controller: a run killed after its apply left the new objects, never judged. So before its first write
the role keeps the previous objects in a Secret in the scheduler's namespace (``point``: a Secret because the
ConfigMap may carry an extender's keyData), labelled with the collection's mark and the workload's name, with the
config checksum the rollout is to run; the run removes it once the rollout is confirmed ready, or once the previous
objects are back.

A run that finds one (``decide``) judges the rollout it belongs to: the workload ready with the new config commits it
(the point goes, and the run says so); anything else puts back the previous objects from the point and fails,
naming why, with each pod's state (``pod_states``). Pure Python, no Ansible imports: the filters of
plugins/filter/deployment_rollback.py call it from the role.
"""

from __future__ import annotations

import base64
import json

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import (
    CONFIG_CHECKSUM_ANNOTATION, ROLLBACK_POINT_LABEL)

# The Secret's one key: the record, JSON.
RECORD_KEY = "rollback.json"
# What the API server sets on an object: a put-back object without them is applied as the one it replaced.
SERVER_FIELDS = ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields")
# The record's format, so that a later release reads a point an earlier one left (or says it cannot).
FORMAT = 1


class RollbackPointError(ValueError):
    """A rollback point that cannot be read (not this role's, or damaged)."""


def point_name(name):
    """The Secret of the workload ``name``."""
    return "%s-rollback-point" % name


def restorable(resource):
    """An object as read from the API server, as it can be applied again: without its status and the fields the
    server sets."""
    out = dict((key, value) for key, value in (resource or {}).items() if key != "status")
    out["metadata"] = dict((key, value) for key, value in (out.get("metadata") or {}).items()
                           if key not in SERVER_FIELDS)
    return out


def previous_objects(results):
    """The objects a rollout replaces, from the loop of k8s_info reads (one result per object; an object that does
    not exist yet has no resource)."""
    return [restorable(result["resources"][0]) for result in results or [] if result.get("resources")]


def _template_checksum(workload):
    template = ((workload or {}).get("spec") or {}).get("template") or {}
    return ((template.get("metadata") or {}).get("annotations") or {}).get(CONFIG_CHECKSUM_ANNOTATION)


def point(settings, previous, workload, labels):
    """The Secret that keeps ``previous`` (restorable objects) while ``workload`` (the new one, as rendered) rolls
    out. ``settings``: the role's name, namespace and kind; ``labels``: the collection's mark on every object."""
    record = {"format": FORMAT, "kind": settings["kind"], "name": settings["name"], "namespace": settings["namespace"],
              "config_checksum": _template_checksum(workload), "previous": previous}
    text = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": point_name(settings["name"]), "namespace": settings["namespace"],
                         "labels": dict(labels or {}, **{ROLLBACK_POINT_LABEL: settings["name"]})},
            "data": {RECORD_KEY: base64.b64encode(text.encode("utf-8")).decode("ascii")}}


def read(secret):
    """The record a rollback point Secret holds."""
    metadata = (secret or {}).get("metadata") or {}
    where = "%s/%s" % (metadata.get("namespace"), metadata.get("name"))
    try:
        record = json.loads(base64.b64decode(((secret or {}).get("data") or {})[RECORD_KEY]).decode("utf-8"))
    except (KeyError, TypeError, ValueError) as exc:
        raise RollbackPointError("the rollback point Secret %s cannot be read (%s): it was not written by this role, "
                                 "or was changed; look at it, delete it and run again" % (where, exc)) from None
    if not isinstance(record, dict) or record.get("format") != FORMAT or not isinstance(record.get("previous"), list):
        raise RollbackPointError("the rollback point Secret %s holds no record this release reads (format %r): delete "
                                 "it and run again" % (where, record.get("format") if isinstance(record, dict) else None))
    return record


def label_selectors(labels):
    """A workload's selector as the ``key=value`` terms k8s_info's label_selectors takes, to read its pods."""
    return ["%s=%s" % (key, value) for key, value in sorted((labels or {}).items())]


def pod_states(pods):
    """Each pod's name, phase and, per container, why it waits or whether it is ready: what a failure names."""
    states = []
    for pod in pods or []:
        status = pod.get("status") or {}
        containers = []
        for container in status.get("containerStatuses") or []:
            waiting = (container.get("state") or {}).get("waiting")
            if waiting is not None:
                containers.append(waiting.get("reason") or "waiting")
            else:
                containers.append("ready" if container.get("ready") else "not ready")
        states.append(" ".join([(pod.get("metadata") or {}).get("name", "?"), status.get("phase") or "Unknown"]
                               + containers))
    return "; ".join(states) or "none"


def _not_rolled_out(workload):
    """What keeps a workload from being rolled out, as ``kubectl rollout status`` judges it: every pod updated, no
    old pod left, every updated pod available (ready for minReadySeconds)."""
    spec, status = workload.get("spec") or {}, workload.get("status") or {}
    if workload.get("kind") == "DaemonSet":
        want = status.get("desiredNumberScheduled") or 0
        updated, total = status.get("updatedNumberScheduled") or 0, want
        ready, available = status.get("numberReady") or 0, status.get("numberAvailable") or 0
    else:
        want = spec.get("replicas", 1)
        updated, total = status.get("updatedReplicas") or 0, status.get("replicas") or 0
        ready, available = status.get("readyReplicas") or 0, status.get("availableReplicas") or 0
    found = []
    if updated < want:
        found.append("%d of %d pods updated" % (updated, want))
    if total > updated:
        found.append("%d old pod(s) still running" % (total - updated))
    if available < max(updated, want):
        found.append("%d of %d available (%d ready)" % (available, max(updated, want), ready))
    return found


def rollout_state(record, workload):
    """(ready, why not): whether the workload runs the record's new config, rolled out and ready."""
    label = "%s %s/%s" % (record.get("kind"), record.get("namespace"), record.get("name"))
    if not workload:
        return False, "%s does not exist" % label
    if _template_checksum(workload) != record.get("config_checksum"):
        return False, "%s no longer has the config this rollout applied (config checksum %s, the rollout's %s)" % (
            label, _template_checksum(workload), record.get("config_checksum"))
    status = workload.get("status") or {}
    generation = (workload.get("metadata") or {}).get("generation")
    if generation is not None and (status.get("observedGeneration") or 0) < generation:
        return False, "%s: its controller has not yet seen its last change" % label
    found = _not_rolled_out(workload)
    if found:
        return False, "%s: its new pods are not ready (%s)" % (label, ", ".join(found))
    return True, None


def decide(secret, workload, pods, check_mode=False):
    """What a run does with a rollback point an earlier run left: ``commit`` (the rollout is ready with its new
    config: the point goes) or ``restore`` (the previous objects go back from it, and the run fails), with the
    message that says so and the objects to put back."""
    record = read(secret)
    label = "%s %s/%s" % (record["kind"], record["namespace"], record["name"])
    ready, why = rollout_state(record, workload)
    would = "would be" if check_mode else "was"
    if ready:
        return {"action": "commit", "previous": [], "message": (
            "%s: a rollout an earlier run applied and never confirmed (the run stopped before its pods were ready) is "
            "ready with its new config: it is committed, and its rollback point %s removed" % (label, would))}
    kinds = [obj.get("kind") for obj in record["previous"]]
    if kinds:
        put_back = "the previous %s %s put back from the rollback point" % (
            " and ".join(kinds), would if len(kinds) == 1 else would.replace("was", "were"))
    else:
        put_back = ("there was no previous ConfigMap or %s to put back; the new objects are left for inspection"
                    % record["kind"])
    return {"action": "restore", "previous": record["previous"], "message": (
        "%s failed: a rollout an earlier run applied and never confirmed (the run stopped before its pods were "
        "ready) is not ready: %s. Pods: %s. %s." % (label, why, pod_states(pods), put_back[0].upper() + put_back[1:]))}
