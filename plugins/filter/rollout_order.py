# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout playbooks' apply order and waves, and the fleet report after a wave (plugin_utils/rollout_order.py)."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils import inputs, temporary_standby
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout_order import (
    OrderError, fleet_report, master_view, waves)


def _error(message):
    # Imported here so the module stays importable without Ansible.
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    return AnsibleFilterError(message)


def _cluster(host, value, default):
    """A master's cluster: kube_scheduler_cluster (text: a name), else the one cluster of the masters group."""
    if value is None:
        return default
    try:
        return inputs.text(value, "kube_scheduler_cluster (of %s)" % host)
    except inputs.InputError as exc:
        raise _error(str(exc)) from None


def _flag(host, value):
    try:
        return inputs.boolean(value, "%s (of %s)" % (temporary_standby.ENABLED_VARIABLE, host))
    except inputs.InputError as exc:
        raise _error(str(exc)) from None


def rollout_waves(hosts, hostvars, canary=None, default_cluster="kube_control_plane", gate=False, kind=None):
    """``hosts``: the planned masters in inventory order; their plans (kube_scheduler_plan), clusters
    (kube_scheduler_cluster) and kube_scheduler_make_before_break are read from ``hostvars``; ``kind`` (systemd,
    static_pod) gives the latter's default."""
    views = [master_view(host, hostvars[host].get("kube_scheduler_plan"),
                         _cluster(host, hostvars[host].get("kube_scheduler_cluster"), default_cluster)) for host in hosts]
    for view in views:
        view["make_before_break"] = _flag(view["host"], hostvars[view["host"]].get(
            temporary_standby.ENABLED_VARIABLE, temporary_standby.ENABLED_BY_KIND.get(kind, False)))
    try:
        result = waves(views, canary or None)
    except OrderError as exc:
        raise _error(str(exc)) from None
    # Make before break: per cluster, the instances whose lease no other master stands by for.
    result["standbys"] = {}
    for name in result["clusters"]:
        found, lines = temporary_standby.needed([view for view in views if view["cluster"] == name])
        result["standbys"].update(found)
        result["lines"].extend(lines)
    changing = [name for name, cluster in result["clusters"].items() if cluster["order"]]
    if gate and len(changing) > 1:
        # The verify role proves a batch through one API server (kube_scheduler_verify_kubeconfig, one per run).
        raise _error("kube_scheduler_rollout_verify: the metrics gate proves a wave through one cluster's API, and "
                     "this rollout changes %d clusters (%s) side by side: run it once per cluster (--limit with the "
                     "cluster's group), or without the gate. Nothing was changed." % (len(changing), ", ".join(changing)))
    return result


def rollout_report(rollout, batch, hostvars):
    """Per cluster after the wave of ``batch`` (the apply play's current batch): done, failed and restored,
    untouched, no change; a failed master's reason is its fact __kube_scheduler_rollout_failure."""
    failures = dict((host, hostvars[host]["__kube_scheduler_rollout_failure"]) for host in batch
                    if hostvars[host].get("__kube_scheduler_rollout_failure") is not None)
    try:
        return fleet_report(rollout, list(batch), failures)
    except OrderError as exc:
        raise _error(str(exc)) from None


class FilterModule(object):  # pylint: disable=too-few-public-methods
    """The rollout's order and waves."""

    def filters(self):
        return {"rollout_waves": rollout_waves, "rollout_report": rollout_report}
