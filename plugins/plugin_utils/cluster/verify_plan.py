# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the verify role decides from what it read: the schedulers to verify, each one's verdict, the report's
tables and the reasons it fails; and the rows it keeps of each read (health, /metrics, config checksums).

The role makes the API calls and the HTTPS requests; the filters in plugins/filter/verify_plan.py hand their answers
here. A scheduler passes when its test pod is bound and the Scheduled event of that very pod (its uid: a stale event
of an earlier pod does not count) names the scheduler as its reportingController, which kube-scheduler sets to the
profile's schedulerName.

Pure Python: no Ansible imports.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster.scheduler_activity import parse
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import (
    ANNOTATIONS, LEGACY_ANNOTATIONS)

RENEW_TIME = "%Y-%m-%dT%H:%M:%S.%fZ"  # a Lease's renewTime, metav1.MicroTime
NO_TOKEN = "run playbooks/metrics_access.yml, or set kube_scheduler_verify_metrics_token"


def truncated(text, length):
    """``text`` cut to ``length`` characters at a word, ending in "..." (Jinja's truncate, which the role's messages
    used: a text at most 5 characters longer is kept whole)."""
    if len(text) <= length + 5:
        return text
    return text[:length - 3].rsplit(" ", 1)[0] + "..."


def _first(items, **wanted):
    """The first of ``items`` whose dotted paths have the values ``wanted`` (path dots written as __)."""
    for item in items:
        if all(_at(item, path.split("__")) == value for path, value in wanted.items()):
            return item
    return {}


def _at(item, path):
    for key in path:
        if not isinstance(item, dict) or key not in item:
            return None
        item = item[key]
    return item


def _annotation(annotations, name, default):
    """An annotation of the deployment role's ConfigMap, under the collection's key or the one it wrote before."""
    return annotations.get(ANNOTATIONS[name], annotations.get(LEGACY_ANNOTATIONS[name], default))


def targets(given, host_instances, configmaps):
    """The schedulers to verify: each of ``given`` (a name, or name and lease), else every scheduler name of the
    instances of the masters verified together (``host_instances``: their resolved instances, master by master),
    then of the deployment role's ConfigMaps; each name once, the first place it was found named as its source."""
    found = [{"name": wanted, "lease": "", "source": "given"} if isinstance(wanted, str)
             else {"name": wanted["name"], "lease": wanted.get("lease", ""), "source": "given"} for wanted in given]
    if given:
        return found
    names = set()

    def add(name, lease, source):
        if name not in names:
            names.add(name)
            found.append({"name": name, "lease": lease, "source": source})

    for instances in host_instances:
        for instance in instances:
            lease = instance.get("lease")
            for name in instance["scheduler_names"]:
                add(name, "%s/%s" % (lease["namespace"], lease["name"]) if lease else "", "instance " + instance["name"])
    for configmap in configmaps:
        metadata = configmap["metadata"]
        annotations = metadata.get("annotations") or {}
        source = "deployment %s/%s" % (metadata["namespace"], _annotation(annotations, "deployment", metadata["name"]))
        for name in _annotation(annotations, "scheduler_names", "").split(","):
            if name:
                add(name, _annotation(annotations, "lease", ""), source)
    return found


def expected_leases(host_rows, scheduler_targets):
    """What the lease audit expects of each lease: every master's instances (``host_rows``, master by master, as
    ``lease_expectations`` gave them on each) and the deployment role's schedulers, each expectation once."""
    found = []
    rows = [row for rows in host_rows for row in rows]
    rows += [{"lease": target["lease"], "instance": target["source"], "deployment": target["source"].split("/")[-1]}
             for target in scheduler_targets if target["lease"] and target["source"].startswith("deployment ")]
    for row in rows:
        if row not in found:
            found.append(row)
    return found


def _moment(value):
    return value if isinstance(value, datetime.datetime) else datetime.datetime.fromisoformat(str(value))


def _verdict(target, pod, events, check_mode, timeout):
    """The outcome, its detail and the reportingController of the test pod's Scheduled event."""
    node = (pod.get("spec") or {}).get("nodeName", "") if pod else ""
    uid = (pod.get("metadata") or {}).get("uid", "-") if pod else "-"
    reporter = _first(events, reason="Scheduled", regarding__uid=uid).get("reportingController", "")
    if check_mode:
        return "skipped", "check mode: no pod created", reporter
    if not node:
        waiting = ""
        if pod:
            conditions = (pod.get("status") or {}).get("conditions") or []
            waiting = next((condition.get("message", "") for condition in conditions
                            if condition.get("type") == "PodScheduled"), "")
        return "FAILED", "not bound within %ss: %s" % (
            timeout, waiting if waiting else "no scheduler of this name answered"), reporter
    if reporter != target["name"]:
        return "FAILED", "bound to %s but %s" % (
            node, "the Scheduled event names %s" % reporter if reporter else "no Scheduled event was found"), reporter
    return "ok", "bound to %s" % node, reporter


def results(scheduler_targets, pods, events, lease_reads, now, timeout, check_mode):
    """Each target's verdict on the API's answers: ``pods`` (the test pods), ``events`` (events.k8s.io Events of
    their namespace), ``lease_reads`` (one list of Leases per namespace: ``item`` the namespace, ``resources``),
    and its lease's holder, how long ago it was renewed (seconds, ``now`` the UTC time without a zone) and its
    duration."""
    found = []
    for target in scheduler_targets:
        pod = _first(pods, spec__schedulerName=target["name"])
        outcome, detail, reporter = _verdict(target, pod, events, check_mode, timeout)
        lease_namespace, lease_name = (target["lease"] or "/").split("/", 1)
        read = _first(lease_reads, item=lease_namespace)
        lease = _first(read.get("resources") or [], metadata__name=lease_name).get("spec") or {}
        renewed = None
        if "renewTime" in lease:
            renewed = round((_moment(now) - datetime.datetime.strptime(lease["renewTime"], RENEW_TIME))
                            .total_seconds(), 1)
        found.append({"name": target["name"], "source": target["source"], "outcome": outcome, "detail": detail,
                      "reporter": reporter, "lease": target["lease"],
                      "holder": lease.get("holderIdentity", "") if target["lease"] else "",
                      "renewed_seconds_ago": renewed, "lease_seconds": lease.get("leaseDurationSeconds")})
    return found


def gate_problems(gate, metrics, token_found, activity):
    """Why the metrics gate refuses (nothing when it is off): /metrics not read, no token, or what the activity says
    (scheduler_activity.gate_problems)."""
    if not gate:
        return []
    if not metrics:
        return ["kube_scheduler_verify_metrics_gate reads /metrics: set kube_scheduler_verify_metrics: true"]
    if not token_found:
        return ["No token may get /metrics for the metrics gate: " + NO_TOKEN]
    return list((activity or {}).get("gate_problems", []))


def problems(verdicts, health, audit, audit_fails, gate):
    """Every reason verification fails, one sentence each: a scheduler that did not schedule, an instance that is
    not healthy, a flagged lease (when ``audit_fails``), the metrics gate's reasons (``gate``)."""
    found = ["Scheduler %s did not schedule: %s" % (row["name"], row["detail"])
             for row in verdicts if row["outcome"] == "FAILED"]
    found += ["Instance %s on %s is not healthy at %s: %s" % (row["instance"], row["host"], row["url"], row["detail"])
              for row in health if not row["ok"]]
    if audit_fails:
        found += ["Lease %s: %s: %s" % (row["lease"], ", ".join(row["flags"]), row["detail"])
                  for row in audit if row["flags"]]
    return found + list(gate)


def failure_message(found):
    return "Verification failed. " + "".join("%s. " % problem for problem in found)


def table(header, rows):
    """Lines whose columns are as wide as their longest value (a lease holder is a host name and a UUID), so no
    value is cut and no row shifts the columns after it; the last column is not padded."""
    widths = [max(len(row[column]) for row in [header] + rows) for column in range(len(header) - 1)]
    return ["".join(cell.ljust(width) + "  " for cell, width in zip(row, widths)) + row[-1] for row in [header] + rows]


def _ago(seconds):
    return "%.1fs ago" % seconds


def summary(verdicts, health, audit, activity, token_found, check_mode):
    """The report's lines: the verdicts, then (each after an empty line, when there is any) the instances' health,
    the lease audit, and the attempts per profile."""
    lines = table(["SCHEDULER", "RESULT", "LEASE", "HOLDER", "RENEWED", "DETAIL"], [
        [row["name"], row["outcome"], row["lease"] or "-", row["holder"] or "-",
         _ago(row["renewed_seconds_ago"]) if row["renewed_seconds_ago"] is not None else ("none" if row["lease"] else "-"),
         "%s (%s)" % (row["detail"], row["source"])] for row in verdicts])
    if health:
        lines += [""] + table(["HOST", "INSTANCE", "HEALTH", "URL", "DETAIL"], [
            [row["host"], row["instance"], "ok" if row["ok"] else "FAILED", row["url"], row["detail"]] for row in health])
    if audit:
        lines += [""] + table(["LEASE", "HOLDER", "RENEWED", "DURATION", "EXPECTED", "AUDIT", "DETAIL"], [
            [row["lease"], row["holder"] or "-",
             _ago(row["renewed_seconds_ago"]) if row["renewed_seconds_ago"] is not None else "-",
             "%ss" % row["lease_seconds"] if row["lease_seconds"] is not None else "-",
             ",".join(row["expected_holders"]) or "(not ours)", ", ".join(row["flags"]) or "ok", row["detail"]]
            for row in audit])
    if (activity or {}).get("rows"):
        lines.append("")
        if not token_found:
            lines.append("Attempts per profile not read: no token may get /metrics - %s." % NO_TOKEN)
        else:
            lines.append("Attempts per profile %s; pods waiting for each scheduler name%s:" % (
                "since each process started (check mode)" if check_mode else "while verify ran",
                "" if check_mode else " before->after"))
            lines += table(["SCHEDULER", "SCHEDULED", "UNSCHEDULABLE", "ERROR", "PENDING", "LEADER", "DETAIL"],
                           [_activity_row(row, check_mode) for row in activity["rows"]])
    return lines


def _activity_row(row, check_mode):
    read = len(row["processes"]) > 0
    total = len(row["processes"]) + len(row["unread"])
    detail = "%d of %d processes read" % (len(row["processes"]), total) if total \
        else "no host instance has this profile"
    if row["unread"]:
        detail += "; NOT read: " + "; ".join(row["unread"])
    return [row["name"]] + [str(row[result]) if read else "-" for result in ("scheduled", "unschedulable", "error")] + [
        str(row["pending_after"]) if check_mode else "%s->%s" % (row["pending_before"], row["pending_after"]),
        row["leader"] or "-", detail]


def report(verdicts, health, audit, activity, settings):
    """The summary's lines, the reasons verification fails and the message naming them. ``settings``: check_mode,
    metrics, metrics_gate, lease_audit_fail (the role's booleans) and token_found (a token may read /metrics)."""
    gate = gate_problems(settings["metrics_gate"], settings["metrics"], settings["token_found"], activity)
    found = problems(verdicts, health, audit or [], settings["lease_audit_fail"], gate)
    return {"summary": summary(verdicts, health, audit or [], activity, settings["token_found"],
                               settings["check_mode"]),
            "problems": found, "message": failure_message(found)}


def metrics_sources(hosts):
    """Every instance whose /metrics the role reads, from its own master: ``hosts`` is each master's name, the name
    kube-scheduler writes into its lease (``hostname``) and its resolved ``instances``. The URL is the health
    endpoint's with /metrics for its path; a certificate the roles issued is ``signed`` by the cluster CA."""
    return [{"host": host["host"], "hostname": host["hostname"], "instance": instance["name"],
             "profiles": instance["scheduler_names"],
             "url": instance["health_url"][:len(instance["health_url"]) - len(instance["health_path"])] + "/metrics",
             "signed": isinstance(instance.get("serving_cert"), Mapping)}
            for host in hosts for instance in host["instances"]]


def metrics_reads(answers):
    """One row per /metrics request (ansible.builtin.uri's loop results): its source, its HTTP status (-1 without
    an answer), why it was not read, and the attempts it counted (scheduler_activity.parse)."""
    found = []
    for answer in answers:
        source, status = answer["item"], answer.get("status", -1)
        if answer.get("skipped", False):
            detail = "no token: " + NO_TOKEN
        else:
            detail = "HTTP %d" % status if status > 0 else truncated(answer.get("msg", "no answer"), 80)
        found.append({"host": source["host"], "hostname": source["hostname"], "instance": source["instance"],
                      "profiles": source["profiles"], "status": status, "detail": detail,
                      "metrics": parse(answer["content"]) if status == 200 else {}})
    return found


def health_rows(answers, host):
    """One row per health request of ``host``'s instances (ansible.builtin.uri's loop results): healthy when it
    answered 200 with the body "ok"."""
    found = []
    for answer in answers:
        status, body = answer.get("status", -1), answer.get("content", "").strip()
        found.append({"host": host, "instance": answer["item"]["name"], "url": answer["item"]["health_url"],
                      "ok": status == 200 and body == "ok",
                      "detail": "HTTP %s %s" % (status, truncated(body, 60)) if status > 0
                      else truncated(answer.get("msg", "no answer"), 80)})
    return found


def lease_expectations(config_stats, host, hostname):
    """What ``host`` (``hostname``, as kube-scheduler writes it into a lease) expects of each lease its instances
    use: ansible.builtin.stat's loop results over those instances' config files (the lease audit flags masters that
    share a lease but run different configs)."""
    return [{"lease": "%s/%s" % (found["item"]["lease"]["namespace"], found["item"]["lease"]["name"]),
             "instance": found["item"]["name"], "host": host, "hostname": hostname,
             "config_checksum": found["stat"].get("checksum")} for found in config_stats]
