# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verify role's reading of the schedulers' /metrics in a template (plugin_utils/cluster/scheduler_activity.py)."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster import scheduler_activity as activity


def scheduler_metrics(text):
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    if not isinstance(text, str):
        raise AnsibleFilterError("scheduler_metrics: the input must be the text of a /metrics answer")
    return activity.parse(text)


def scheduler_activity(after, targets, before, pending_before, pending_after, bound, holders):
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    if not all(isinstance(value, list) for value in (after, targets, before, pending_before, pending_after, bound)):
        raise AnsibleFilterError("scheduler_activity: every argument but the lease holders must be a list")
    if not isinstance(holders, dict):
        raise AnsibleFilterError("scheduler_activity: the lease holders must map namespace/name to a holderIdentity")
    try:
        rows = activity.activity(targets, before, after, activity.pending_by_scheduler(pending_before),
                                 activity.pending_by_scheduler(pending_after), holders)
    except (KeyError, TypeError, AttributeError) as exc:
        raise AnsibleFilterError("scheduler_activity: not the reads the verify role makes (%s)" % exc) from None
    return {"rows": rows, "gate_problems": activity.gate_problems(rows, bound)}


class FilterModule(object):  # pylint: disable=too-few-public-methods
    """What the schedulers did, per profile."""

    def filters(self):
        return {"scheduler_metrics": scheduler_metrics, "scheduler_activity": scheduler_activity}
