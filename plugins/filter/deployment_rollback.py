# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deployment role's rollback point in the cluster, and what a run does with one an earlier run left
(plugin_utils/cluster/rollback_point.py)."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster import rollback_point


def _error(message):
    # Imported here so the module stays importable without Ansible.
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    return AnsibleFilterError(message)


def deployment_previous_objects(results):
    """The objects a rollout replaces, as they can be applied again, from the loop of k8s_info reads."""
    return rollback_point.previous_objects(results)


def deployment_rollback_point(previous, settings, objects, labels):
    """The Secret that keeps ``previous`` while the workload of ``objects`` (the role's rendered objects) rolls out."""
    workload = next((obj for obj in objects or [] if obj.get("kind") == settings.get("kind")), None)
    if workload is None:
        raise _error("deployment_rollback_point: no %s among the objects" % settings.get("kind"))
    return rollback_point.point(settings, list(previous or []), workload, labels)


def deployment_rollback_point_checked(secrets, settings):
    """The name of the rollback point an earlier run left (``secrets``: the Secrets of the namespace with the point's
    label, as read), once it is the role's own and would put back only the role's ConfigMap and workload; else it
    fails naming the Secret and the field. Nothing of a refused point is used."""
    try:
        secret = rollback_point.left_point(secrets, settings)
        rollback_point.read(secret, settings)
    except rollback_point.RollbackPointError as exc:
        raise _error(str(exc)) from None
    return secret["metadata"]["name"]


def deployment_rollback_points(secrets, settings):
    """The Secrets of the namespace with the point's label, as read, split into the role's own rollback point
    (``own``: names) and the others (``others``: why each is not the role's), by the check a point passes before it
    is used."""
    own, others = rollback_point.own_points(secrets, settings)
    return {"own": own, "others": others}


def deployment_rollback_decision(secrets, workloads, pods, settings, check_mode=False):
    """``commit`` or ``restore`` for the rollback point an earlier run left (``secrets``: the Secrets of the namespace
    with the point's label, as read), from its workload (the k8s_info resources: one or none) and its pods; with the
    message and the objects to put back. A point that is not the role's own, or that would put back anything but the
    role's ConfigMap and workload (``settings``: its name, namespace, kind, labels and selector), fails naming it."""
    try:
        secret = rollback_point.left_point(secrets, settings)
        return rollback_point.decide(secret, (workloads or [None])[0], pods, settings, bool(check_mode))
    except rollback_point.RollbackPointError as exc:
        raise _error(str(exc)) from None


def deployment_label_selectors(labels):
    """``key=value`` terms of a selector, for k8s_info's label_selectors."""
    return rollback_point.label_selectors(labels)


def deployment_pod_states(pods):
    """Each pod's name, phase and containers' states, for a failure's message."""
    return rollback_point.pod_states(pods)


class FilterModule(object):  # pylint: disable=too-few-public-methods
    """The deployment role's rollback point."""

    def filters(self):
        return {"deployment_previous_objects": deployment_previous_objects,
                "deployment_rollback_point": deployment_rollback_point,
                "deployment_rollback_point_checked": deployment_rollback_point_checked,
                "deployment_rollback_points": deployment_rollback_points,
                "deployment_rollback_decision": deployment_rollback_decision,
                "deployment_pod_states": deployment_pod_states,
                "deployment_label_selectors": deployment_label_selectors}
