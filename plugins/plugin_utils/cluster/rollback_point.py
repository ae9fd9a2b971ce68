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
naming why, with each pod's state (``pod_states``).

What a point may put back is bounded, because a label is no proof of who wrote a Secret: anyone who may write
Secrets in the scheduler's namespace can write one, and the role applies what it puts back with ``force`` through
its own kubeconfig. So ``read`` takes a point only when the Secret is the one the role writes and every object in it
is the role's own ConfigMap or workload (of the kind the point was kept for), of the role's name and namespace, with
the labels, selector and pod the role renders (its service account, one unprivileged container, its ConfigMap the
only volume); anything else is refused naming the Secret and the field, before anything of it is used. What stays
the point writer's to choose is what a rollback legitimately changes: the configuration, the image, resources and
placement (docs/docsite/rst/security.rst). Pure Python, no Ansible imports: the filters of
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


def _refused(where, field, detail, settings):
    return RollbackPointError(
        "the rollback point Secret %s is refused: %s: %s. A rollback point puts back only this role's own ConfigMap "
        "and %s %s/%s, as the role renders them; nothing was applied from it. It was not written by this role, or "
        "was changed since (anyone who may write Secrets in %s can write one): look at it and at who wrote it (its "
        "managedFields), delete it and run again"
        % (where, field, detail, settings["kind"], settings["namespace"], settings["name"], settings["namespace"]))


def _expect(found, wanted, where, field, settings):
    # JSON's true is not the number 1 here (by isinstance: Ansible hands the filters its own str and dict subclasses).
    if found != wanted or isinstance(found, bool) is not isinstance(wanted, bool):
        raise _refused(where, field, "Invalid value: %s: must be %s" % (_shown(found), _shown(wanted)), settings)


def _shown(value):
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _mapping(value, where, field, settings):
    if not isinstance(value, dict):
        # Only the type: a damaged point may hold the previous ConfigMap's secrets anywhere.
        raise _refused(where, field, "must be a mapping, got %s" % type(value).__name__, settings)
    return value


def _labelled(metadata, labels, where, field, settings):
    """The labels the role sets on its objects, each with the role's value."""
    found = _mapping(metadata.get("labels", {}), where, field + ".labels", settings)
    for key, value in sorted((labels or {}).items()):
        _expect(found.get(key), value, where, "%s.labels[%s]" % (field, key), settings)


def _secret(secret, settings):
    """The Secret itself as the role writes it: its name, namespace, type, labels and one key."""
    metadata = (secret if isinstance(secret, dict) else {}).get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    where = "%s/%s" % (metadata.get("namespace"), metadata.get("name"))
    _mapping(secret, where, "Secret", settings)
    _expect(metadata.get("namespace"), settings["namespace"], where, "metadata.namespace", settings)
    _expect(metadata.get("name"), point_name(settings["name"]), where, "metadata.name", settings)
    _labelled(metadata, dict(settings.get("labels") or {}, **{ROLLBACK_POINT_LABEL: settings["name"]}), where,
              "metadata", settings)
    _expect(secret.get("type", "Opaque"), "Opaque", where, "type", settings)
    data = _mapping(secret.get("data"), where, "data", settings)
    _expect(sorted(data), [RECORD_KEY], where, "data (its keys)", settings)
    return where, data[RECORD_KEY]


def _decoded(text, where):
    try:
        record = json.loads(base64.b64decode(text, validate=True).decode("utf-8"))
    except (TypeError, ValueError, RecursionError) as exc:
        raise RollbackPointError("the rollback point Secret %s cannot be read (data.%s: %s): nothing was applied from "
                                 "it; it was not written by this role, or was changed or damaged since: look at it, "
                                 "delete it and run again" % (where, RECORD_KEY, str(exc)[:200] or type(exc).__name__)) \
            from None
    return record


# The workloads the role renders, and the API version of each kind a point may put back.
WORKLOAD_KINDS = ("Deployment", "DaemonSet")
API_VERSIONS = {"ConfigMap": "v1", "Deployment": "apps/v1", "DaemonSet": "apps/v1"}


def _pod(template, settings, where, field):
    """The pod as the role renders it, where a point could make it more than the role's scheduler: its service
    account, the role's labels, one container, unprivileged, its own ConfigMap the only volume. The image, the
    command, resources and placement are the previous rollout's (and so the point writer's) to choose."""
    template = _mapping(template, where, field, settings)
    _labelled(_mapping(template.get("metadata", {}), where, field + ".metadata", settings), settings.get("labels"),
              where, field + ".metadata", settings)
    spec = _mapping(template.get("spec"), where, field + ".spec", settings)
    field += ".spec"
    _expect(spec.get("serviceAccountName"), settings["name"], where, field + ".serviceAccountName", settings)
    _expect(spec.get("serviceAccount", settings["name"]), settings["name"], where, field + ".serviceAccount", settings)
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(key, False) is not False:
            raise _refused(where, "%s.%s" % (field, key), "Invalid value: %s: the role's pods never share the "
                           "node's namespaces" % _shown(spec[key]), settings)
    for key in ("initContainers", "ephemeralContainers"):
        if spec.get(key):
            raise _refused(where, "%s.%s" % (field, key), "the role's pods run one container", settings)
    security = _mapping(spec.get("securityContext", {}), where, field + ".securityContext", settings)
    _expect(security.get("runAsNonRoot"), True, where, field + ".securityContext.runAsNonRoot", settings)
    containers = spec.get("containers")
    if not isinstance(containers, list) or len(containers) != 1:
        raise _refused(where, field + ".containers", "the role's pods run one container, kube-scheduler", settings)
    container = _mapping(containers[0], where, field + ".containers[0]", settings)
    _expect(container.get("name"), "kube-scheduler", where, field + ".containers[0].name", settings)
    context = _mapping(container.get("securityContext"), where, field + ".containers[0].securityContext", settings)
    _expect(context.get("privileged", False), False, where, field + ".containers[0].securityContext.privileged",
            settings)
    _expect(context.get("allowPrivilegeEscalation"), False, where,
            field + ".containers[0].securityContext.allowPrivilegeEscalation", settings)
    added = _mapping(context.get("capabilities", {}), where, field + ".containers[0].securityContext.capabilities",
                     settings).get("add")
    _expect(added or [], [], where, field + ".containers[0].securityContext.capabilities.add", settings)
    volumes = spec.get("volumes")
    if not isinstance(volumes, list):
        raise _refused(where, field + ".volumes", "must be a list, got %s" % type(volumes).__name__, settings)
    for index, volume in enumerate(volumes):
        at = "%s.volumes[%d]" % (field, index)
        _expect(sorted(_mapping(volume, where, at, settings)), ["configMap", "name"], where, at + " (its keys)",
                settings)
        _expect(_mapping(volume["configMap"], where, at + ".configMap", settings).get("name"), settings["name"],
                where, at + ".configMap.name", settings)


def _previous(objects, kind, settings, where):
    """The objects to put back: the role's ConfigMap and workload (each at most once), of its name and namespace,
    with the labels it sets; the workload's pods the role's."""
    if not isinstance(objects, list):
        raise _refused(where, "previous", "must list at most the ConfigMap and the %s, got %s" % (
            kind, type(objects).__name__), settings)
    seen = set()
    for index, obj in enumerate(objects):
        field = "previous[%d]" % index
        obj = _mapping(obj, where, field, settings)
        if obj.get("kind") not in ("ConfigMap", kind) or obj["kind"] in seen:
            raise _refused(where, field + ".kind", "Unsupported value: %s: a rollback point puts back the ConfigMap "
                           "and the %s, once each" % (_shown(obj.get("kind")), kind), settings)
        seen.add(obj["kind"])
        _expect(obj.get("apiVersion"), API_VERSIONS[obj["kind"]], where, field + ".apiVersion", settings)
        metadata = _mapping(obj.get("metadata"), where, field + ".metadata", settings)
        _expect(metadata.get("namespace"), settings["namespace"], where, field + ".metadata.namespace", settings)
        _expect(metadata.get("name"), settings["name"], where, field + ".metadata.name", settings)
        _labelled(metadata, settings.get("labels"), where, field + ".metadata", settings)
        if obj["kind"] == "ConfigMap":
            data = _mapping(obj.get("data", {}), where, field + ".data", settings)
            _expect(sorted(data), ["config.yaml"], where, field + ".data (its keys)", settings)
            if "binaryData" in obj:
                raise _refused(where, field + ".binaryData", "the role's ConfigMap holds config.yaml only", settings)
            continue
        spec = _mapping(obj.get("spec"), where, field + ".spec", settings)
        selector = _mapping(spec.get("selector"), where, field + ".spec.selector", settings)
        _expect(selector, {"matchLabels": settings.get("selector")}, where, field + ".spec.selector", settings)
        _pod(spec.get("template"), settings, where, field + ".spec.template")
    return objects


def read(secret, settings):
    """The record a rollback point Secret holds, once the Secret is the one the role writes (``settings``: the
    role's name, namespace, kind, labels and selector) and everything it would put back is the role's own ConfigMap
    and workload: else RollbackPointError, naming the Secret and the field."""
    where, text = _secret(secret, settings)
    record = _decoded(text, where)
    if not isinstance(record, dict) or record.get("format") != FORMAT or isinstance(record.get("format"), bool):
        raise RollbackPointError("the rollback point Secret %s holds no record this release reads (format %s): "
                                 "nothing was applied from it; delete it and run again" % (
                                     where, _shown(record.get("format") if isinstance(record, dict) else None)))
    _expect(sorted(record), ["config_checksum", "format", "kind", "name", "namespace", "previous"], where,
            "the record's keys", settings)
    if record["kind"] not in WORKLOAD_KINDS:
        raise _refused(where, "kind", "Unsupported value: %s: supported values: %s" % (
            _shown(record["kind"]), ", ".join(WORKLOAD_KINDS)), settings)
    _expect(record["name"], settings["name"], where, "name", settings)
    _expect(record["namespace"], settings["namespace"], where, "namespace", settings)
    if not isinstance(record["config_checksum"], str):
        raise _refused(where, "config_checksum", "must be text, got %s" % type(record["config_checksum"]).__name__,
                       settings)
    _previous(record["previous"], record["kind"], settings, where)
    return record


def own_points(secrets, settings):
    """``secrets`` (the Secrets of the namespace with the point's label) split by the check a point passes before it
    is used (``read``): (the names of the role's own, one line per other Secret saying why it is not). What removes
    the role's points removes only its own: a label is no proof of who wrote a Secret."""
    own, others = [], []
    for secret in secrets or []:
        try:
            read(secret, settings)
        except RollbackPointError as exc:
            others.append(str(exc))
        else:
            own.append(secret["metadata"]["name"])
    return own, others


def left_point(secrets, settings):
    """The one rollback point among ``secrets`` (the Secrets of the namespace with the point's label), or None:
    each must be the one the role writes; the first that is not is refused."""
    secrets = list(secrets or [])
    for secret in secrets:
        _secret(secret, settings)
    return secrets[0] if secrets else None


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


def decide(secret, workload, pods, settings, check_mode=False):
    """What a run does with a rollback point an earlier run left: ``commit`` (the rollout is ready with its new
    config: the point goes) or ``restore`` (the previous objects go back from it, and the run fails), with the
    message that says so and the objects to put back. A point ``read`` refuses is neither: nothing of it is used."""
    record = read(secret, settings)
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
