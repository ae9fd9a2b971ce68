# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verify role's decisions on what it read (plugin_utils/cluster/verify_plan.py)."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster import verify_plan as plan

# The facts the verify role sets on each master, which these filters read through hostvars.
HOST_INSTANCES = "__kube_scheduler_verify_host_instances"
LEASE_EXPECTATIONS = "__kube_scheduler_verify_lease_expected"
REPORT_SETTINGS = ("check_mode", "metrics", "metrics_gate", "lease_audit_fail", "token_found")


def _error(name, message):
    # Imported here so the module stays importable without Ansible.
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    return AnsibleFilterError("%s: %s" % (name, message))


def _lists(name, **values):
    wrong = sorted(key for key, value in values.items() if not isinstance(value, list))
    if wrong:
        raise _error(name, "%s must be lists" % ", ".join(wrong))


def _host_values(hostvars, hosts, variable):
    """``variable`` of each of ``hosts`` that has it, in their order."""
    return [hostvars[host].get(variable) for host in hosts if hostvars[host].get(variable) is not None]


def _call(name, function, *args):
    try:
        return function(*args)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise _error(name, "not what the verify role reads (%s: %s)" % (type(exc).__name__, exc)) from None


def verify_targets(given, hosts, hostvars, configmaps):
    _lists("verify_targets", given=given, hosts=hosts, configmaps=configmaps)
    return _call("verify_targets", plan.targets, given, _host_values(hostvars, hosts, HOST_INSTANCES), configmaps)


def verify_expected_leases(hosts, hostvars, targets):
    _lists("verify_expected_leases", hosts=hosts, targets=targets)
    return _call("verify_expected_leases", plan.expected_leases, _host_values(hostvars, hosts, LEASE_EXPECTATIONS),
                 targets)


def verify_results(targets, pods, events, lease_reads, now, timeout, check_mode):
    _lists("verify_results", targets=targets, pods=pods, events=events, lease_reads=lease_reads)
    return _call("verify_results", plan.results, targets, pods, events, lease_reads, now, timeout, bool(check_mode))


def verify_report(results, health, audit, activity, settings):
    _lists("verify_report", results=results, health=health, audit=audit)
    if not isinstance(settings, dict) or not all(name in settings for name in REPORT_SETTINGS):
        raise _error("verify_report", "settings must have %s" % ", ".join(REPORT_SETTINGS))
    if activity is not None and not isinstance(activity, dict):
        raise _error("verify_report", "the activity must be scheduler_activity's result or none")
    return _call("verify_report", plan.report, results, health, audit, activity,
                 dict((name, bool(settings[name])) for name in REPORT_SETTINGS))


def verify_metrics_sources(hosts, hostvars):
    _lists("verify_metrics_sources", hosts=hosts)
    found = [{"host": host, "hostname": (hostvars[host].get("ansible_facts") or {}).get("nodename", host),
              "instances": hostvars[host].get(HOST_INSTANCES) or []} for host in hosts]
    return _call("verify_metrics_sources", plan.metrics_sources, found)


def verify_metrics_reads(answers):
    _lists("verify_metrics_reads", answers=answers)
    return _call("verify_metrics_reads", plan.metrics_reads, answers)


def verify_health_rows(answers, host):
    _lists("verify_health_rows", answers=answers)
    return _call("verify_health_rows", plan.health_rows, answers, host)


def verify_lease_expectations(config_stats, host, hostname):
    _lists("verify_lease_expectations", config_stats=config_stats)
    return _call("verify_lease_expectations", plan.lease_expectations, config_stats, host, hostname)


class FilterModule(object):  # pylint: disable=too-few-public-methods
    """What the verify role decides."""

    def filters(self):
        return {
            "verify_targets": verify_targets,
            "verify_expected_leases": verify_expected_leases,
            "verify_results": verify_results,
            "verify_report": verify_report,
            "verify_metrics_sources": verify_metrics_sources,
            "verify_metrics_reads": verify_metrics_reads,
            "verify_health_rows": verify_health_rows,
            "verify_lease_expectations": verify_lease_expectations,
        }
