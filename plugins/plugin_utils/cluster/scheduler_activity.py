# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the schedulers did while the verify role ran, per profile (one profile per schedulerName).

kube-scheduler counts every attempt in ``scheduler_schedule_attempts_total{profile, result}`` (result ``scheduled``,
``unschedulable`` or ``error``). Only the holder of an instance's lease schedules, so a profile's attempts are the sum
over the instance's processes on every master, and the one that leads is the process on the host its lease's
``holderIdentity`` names (``<host name>_<uuid>``): kube-scheduler 1.35 exports no leader-election metric.
``scheduler_pending_pods`` is per scheduling queue of the whole process, not per profile: the pods waiting for each
schedulerName come from the API instead (pods with no node, phase Pending).

A process restarted between the two reads starts its counters again at 0: its attempts are then the ones it counted
since it started (Prometheus' counter-reset rule).

Pure Python: no Ansible imports.
"""

from __future__ import annotations

import re

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster.lease_audit import holder_host

RESULTS = ("scheduled", "unschedulable", "error")
ATTEMPTS = "scheduler_schedule_attempts_total"
DEFAULT_SCHEDULER = "default-scheduler"

# The text exposition format: name, optional {labels}, value, optional timestamp.
_SAMPLE = re.compile(r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)")
# A label: its name (the run of name characters before =", without leading digits) and its value. Matched from the
# start of a run only, and a value that never closes is matched to the end and dropped (no label can follow it):
# a search would scan every run and every unclosed value again from each position inside it.
_LABEL = re.compile(r'(?<![A-Za-z0-9_])[0-9]*([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)(")?')


def parse(text):
    """{"attempts": {profile: {result: count}}} from one /metrics answer."""
    attempts = {}
    for line in (text or "").splitlines():
        if not line.startswith(ATTEMPTS):
            continue
        sample = _SAMPLE.match(line)
        if not sample or sample.group("name") != ATTEMPTS:
            continue
        labels = dict(label.group(1, 2) for label in _LABEL.finditer(sample.group("labels") or "") if label.group(3))
        if "profile" in labels and "result" in labels:
            attempts.setdefault(labels["profile"], {})[labels["result"]] = float(sample.group("value"))
    return {"attempts": attempts}


def pending_by_scheduler(scheduler_names):
    """{schedulerName: count} from the schedulerName of every pod that waits for a node (an empty one is the default
    scheduler's, as the API server defaults it)."""
    counts = {}
    for name in scheduler_names:
        name = name or DEFAULT_SCHEDULER
        counts[name] = counts.get(name, 0) + 1
    return counts


def _grown(before, after):
    """What a counter counted between two reads; a lower second read means the process restarted in between."""
    return after if after < before else after - before


def activity(targets, before, after, pending_before, pending_after, holders):
    """One row per target: what its processes counted between the reads, in sum and for the one that leads, and
    the pods waiting for it before and after.

    ``targets``: [{"name": schedulerName, "lease": "namespace/name" or ""}]. ``before``/``after``: one entry per
    process - {"host", "hostname" (the name kube-scheduler writes into its lease), "instance", "profiles" (its
    scheduler names), "status" (the HTTP status), "detail" (why it was not read), "metrics": parse() or {}};
    ``before`` is empty when nothing was read first (check mode: the counts are then since each process started).
    ``pending_before``/``pending_after``: {schedulerName: count}. ``holders``: {"namespace/name": holderIdentity}."""
    first = {(read["host"], read["instance"]): read for read in before}
    rows = []
    for target in targets:
        name = target["name"]
        leader_host = holder_host(holders.get(target["lease"]) or "") if target["lease"] else ""
        row = {"name": name, "processes": [], "unread": [], "leader": "", "leader_scheduled": None,
               "pending_before": pending_before.get(name, 0), "pending_after": pending_after.get(name, 0)}
        row.update((result, 0) for result in RESULTS)
        for read in after:
            if name not in read["profiles"]:
                continue
            where = "%s on %s" % (read["instance"], read["host"])
            earlier = first.get((read["host"], read["instance"]))
            failed = next((one for one in (read, earlier) if one is not None and one["status"] != 200), None)
            if failed is not None:
                row["unread"].append("%s: %s" % (where, failed["detail"]))
                continue
            row["processes"].append(where)
            was = earlier["metrics"]["attempts"].get(name, {}) if earlier is not None else {}
            now = read["metrics"]["attempts"].get(name, {})
            counted = dict((result, int(_grown(was.get(result, 0.0), now.get(result, 0.0)))) for result in RESULTS)
            for result in RESULTS:
                row[result] += counted[result]
            if leader_host and read["hostname"] == leader_host:
                row["leader"], row["leader_scheduled"] = where, counted["scheduled"]
        rows.append(row)
    return rows


def gate_problems(rows, bound):
    """What fails the metrics gate: a process whose /metrics could not be read, a profile whose processes counted
    an error, and a bound test pod that the process holding its lease did not count (something else with that
    schedulerName scheduled it). ``bound``: the scheduler names whose test pod was bound."""
    problems = []
    for row in rows:
        for unread in row["unread"]:
            problems.append("Scheduler %s: /metrics of %s not read" % (row["name"], unread))
        if row["error"]:
            problems.append("Scheduler %s: its processes counted %d scheduling error(s) while verify ran"
                            % (row["name"], row["error"]))
        if row["name"] in bound and row["leader"] and not row["leader_scheduled"]:
            problems.append("Scheduler %s: its test pod was bound, but %s, which holds the lease, counted no scheduled "
                            "attempt: another scheduler with this name scheduled it (see the lease audit)"
                            % (row["name"], row["leader"]))
    return problems
