# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout playbooks' apply order and waves, the fleet report after a wave (plugin_utils/rollout/rollout_order.py),
why a master's change was held back (plugin_utils/rollout/another_master_failed.py), and which scheduler names a Check job
previews (plugin_utils/preview/changes.py)."""

from __future__ import annotations

import json

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import plain
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs import kinds
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview import changes
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout import temporary_standby
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.another_master_failed import (
    another_master_failed, failure_reason)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.rollout_order import (
    CLUSTER, CLUSTER_GROUPS, OrderError, cluster_of, fleet_report, master_view, waves)

# The verify role's variables that say which API server proves a master (roles/verify: the API calls run on
# kube_scheduler_verify_api_host with this kubeconfig and context).
GATE_API = ("kube_scheduler_verify_api_host", "kube_scheduler_verify_k8s_kubeconfig", "kube_scheduler_verify_k8s_context")


def _error(message):
    # Imported here so the module stays importable without Ansible.
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    return AnsibleFilterError(message)


def _cluster(host, host_vars, default):
    """A master's cluster: its group of kube_scheduler_cluster_groups, else kube_scheduler_cluster (text: a name),
    else the one cluster of the masters group (plugin_utils/rollout/rollout_order.py: cluster_of)."""
    value = host_vars.get(CLUSTER)
    try:
        if value is not None and value != "":
            value = kinds.text(value, "%s (of %s)" % (CLUSTER, host))
        return cluster_of(host, host_vars.get("group_names"), value, host_vars.get(CLUSTER_GROUPS), default)
    except (kinds.InputError, OrderError) as exc:
        raise _error(str(exc)) from None


def _flag(host, value):
    try:
        return kinds.boolean(value, "%s (of %s)" % (temporary_standby.ENABLED_VARIABLE, host))
    except kinds.InputError as exc:
        raise _error(str(exc)) from None


def rollout_clusters(hosts, hostvars, default_cluster="kube_control_plane"):
    """{host: its cluster} for ``hosts``, from hostvars (kube_scheduler_cluster_groups, kube_scheduler_cluster)."""
    return dict((host, _cluster(host, hostvars[host], default_cluster)) for host in hosts)


def rollout_cluster_hosts(hosts, host, hostvars, default_cluster="kube_control_plane"):
    """The hosts of ``hosts`` (in their order) in the cluster of ``host``: what the verify role compares a master
    with (its cluster's masters, not every host of the play)."""
    clusters = rollout_clusters(list(hosts) + [host], hostvars, default_cluster)
    return [name for name in hosts if clusters[name] == clusters[host]]


def _gate_api(hostvars, cluster):
    """Which API server the verify role's gate reads for a cluster: its first master's api host, kubeconfig and
    context (unset: the role's defaults, localhost and the kubernetes client's default kubeconfig). A kubeconfig
    given as a mapping (kubernetes.core's other form) is compared by its content, as JSON text: a mapping cannot be
    a key, and its content (credentials) is never shown."""
    host_vars = hostvars[cluster["masters"][0]]
    return tuple(_comparable(host_vars.get(name) or None) for name in GATE_API)


class _Content(str):
    """A mapping (a kubeconfig) as JSON text, to compare; shown without its content."""

    def __str__(self):
        return "(a mapping; its content is not shown)"


def _comparable(value):
    if isinstance(value, (dict, list)):
        return _Content(json.dumps(plain(value), sort_keys=True, default=str))
    return value if value is None or isinstance(value, str) else str(value)


def rollout_waves(hosts, hostvars, canary=None, default_cluster="kube_control_plane", gate=False, kind=None):
    """``hosts``: the planned masters in inventory order; their plans (kube_scheduler_plan), clusters
    (kube_scheduler_cluster_groups, kube_scheduler_cluster) and kube_scheduler_make_before_break are read from
    ``hostvars``; ``kind`` (systemd, static_pod) gives the latter's default."""
    views = [master_view(host, hostvars[host].get("kube_scheduler_plan"), _cluster(host, hostvars[host], default_cluster))
             for host in hosts]
    for view in views:
        view["make_before_break"] = _flag(view["host"], hostvars[view["host"]].get(
            temporary_standby.ENABLED_VARIABLE, temporary_standby.ENABLED_BY_KIND.get(kind, False)))
    try:
        result = waves(views, canary)
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
        # The verify role proves each master through its own cluster's API server, from that cluster's variables:
        # two changing clusters that would read one API server the same way would prove each other's masters.
        seen = {}
        for name in changing:
            api = _gate_api(hostvars, result["clusters"][name])
            if api in seen:
                raise _error(
                    "kube_scheduler_rollout_verify: the metrics gate of cluster %s and of cluster %s would read the same "
                    "API server (kube_scheduler_verify_api_host %s, kube_scheduler_verify_k8s_kubeconfig %s, "
                    "kube_scheduler_verify_k8s_context %s): set kube_scheduler_verify_k8s_kubeconfig (or _context) in "
                    "each cluster's group variables to that cluster's API server, or run the rollout once per cluster "
                    "(--limit with the cluster's group). Nothing was changed." % (
                        seen[api], name, str(api[0] or "localhost"), str(api[1] or "(the default, ~/.kube/config)"),
                        str(api[2] or "(its current one)")))
            seen[api] = name
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


def rollout_held_back(host, hosts_all, hosts_left, hostvars, check_mode=False):
    """The message of ``host`` (a planned master with a pending change) when masters of the play could not be
    planned: ``hosts_all`` and ``hosts_left`` are the plan play's ansible_play_hosts_all and ansible_play_hosts; a
    failed master's reason is its plan call's registered answer (kube_scheduler_plan), when it got that far."""
    left = set(hosts_left)
    failed = [(name, failure_reason(hostvars[name].get("kube_scheduler_plan"))) for name in hosts_all if name not in left]
    try:
        return another_master_failed(host, hostvars[host].get("kube_scheduler_plan"), failed, bool(check_mode))
    except ValueError as exc:
        raise _error(str(exc)) from None


def rollout_previews(hosts, hostvars, enabled=False, required=False, default_cluster="kube_control_plane"):
    """A Check job's placement previews (plugin_utils/preview/changes.py): per cluster, each scheduler name whose
    configuration the planned masters (``hosts``, their plans in hostvars) change; ``enabled`` and ``required`` are
    kube_scheduler_rollout_preview and kube_scheduler_rollout_preview_required, by the one boolean rule."""
    try:
        flags = {"enabled": kinds.boolean(enabled, changes.ENABLED), "required": kinds.boolean(required, changes.REQUIRED)}
    except kinds.InputError as exc:
        raise _error(str(exc)) from None
    if not flags["enabled"]:
        return dict(flags, previews=[], notes=[])
    planned = changes.previews([(host, hostvars[host]) for host in hosts], rollout_clusters(hosts, hostvars, default_cluster))
    return dict(flags, **planned)


def rollout_preview_report(planned, results):
    """The lines of the previews (rollout_previews) and their results (the preview task's, registered)."""
    return changes.report(planned, (results or {}).get("results") or [])


class FilterModule(object):  # pylint: disable=too-few-public-methods
    """The rollout's order and waves."""

    def filters(self):
        return {"rollout_waves": rollout_waves, "rollout_report": rollout_report, "rollout_clusters": rollout_clusters,
                "rollout_cluster_hosts": rollout_cluster_hosts, "rollout_held_back": rollout_held_back,
                "rollout_previews": rollout_previews, "rollout_preview_report": rollout_preview_report}
