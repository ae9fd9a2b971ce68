# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a preview's runs mean: per configuration the nodes used, each node's requested CPU and memory, the pods that
do not fit with kube-scheduler's reason, the pods per zone, the pods that change node, the time; side by side as a
table, and as a picture (a self-contained SVG, or HTML around it) of each node's utilization, old against new.

Pure functions of the snapshot and the runs: no cluster, no process."""

from __future__ import annotations

import html
import statistics
from decimal import ROUND_CEILING, Decimal

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview.snapshot import is_daemon, is_mirror, key

ZONE_LABEL = "topology.kubernetes.io/zone"
# The picture draws a bar per node and resource up to this many nodes, a sorted line per configuration beyond.
BARS_UP_TO = 60
_SUFFIXES = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60,
             "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": 1, "k": 10 ** 3, "M": 10 ** 6,
             "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18}


def quantity(text) -> Decimal:
    """A resource.Quantity's value ("250m", "1.5Gi", "1e3", 2)."""
    text = str(text).strip()
    for suffix in sorted(_SUFFIXES, key=len, reverse=True):
        if suffix and text.endswith(suffix):
            number = text[:-len(suffix)]
            try:
                return Decimal(number) * Decimal(_SUFFIXES[suffix])
            except ArithmeticError:
                continue
    return Decimal(text)


def _milli(value) -> int:
    return int((quantity(value) * 1000).to_integral_value(rounding=ROUND_CEILING))


def _bytes(value) -> int:
    return int(quantity(value).to_integral_value(rounding=ROUND_CEILING))


def _requests(resources) -> tuple:
    requests = (resources or {}).get("requests") or {}
    return (_milli(requests["cpu"]) if "cpu" in requests else 0,
            _bytes(requests["memory"]) if "memory" in requests else 0)


def _add(a, b):
    return (a[0] + b[0], a[1] + b[1])


def _max(a, b):
    return (max(a[0], b[0]), max(a[1], b[1]))


def pod_requests(pod: dict) -> tuple:
    """(CPU millicores, memory bytes) the pod requests as kube-scheduler counts it (resourcehelper.PodRequests):
    its containers, its sidecars (restartable init containers) alongside them, the largest init step, the
    overhead; pod-level resources where the pod sets them."""
    spec = pod.get("spec") or {}
    if ((spec.get("resources") or {}).get("requests")):
        total = _requests(spec["resources"])
    else:
        total = (0, 0)
        for container in spec.get("containers") or ():
            total = _add(total, _requests(container.get("resources")))
        sidecars, init = (0, 0), (0, 0)
        for container in spec.get("initContainers") or ():
            own = _requests(container.get("resources"))
            if container.get("restartPolicy") == "Always":
                total = _add(total, own)
                sidecars = _add(sidecars, own)
                step = sidecars
            else:
                step = _add(own, sidecars)
            init = _max(init, step)
        total = _max(total, init)
    overhead = spec.get("overhead") or {}
    if overhead:
        total = _add(total, _requests({"requests": overhead}))
    return total


def percentile(values, fraction: float):
    """The nearest-rank percentile (p90 of ten values is the ninth)."""
    ordered = sorted(values)
    if not ordered:
        return 0
    rank = max(1, int(Decimal(fraction * len(ordered)).to_integral_value(rounding=ROUND_CEILING)))
    return ordered[rank - 1]


def _stats(values) -> dict:
    values = list(values)
    if not values:
        return {"min": 0, "median": 0, "p90": 0, "max": 0}
    return {"min": min(values), "median": round(statistics.median(values), 1), "p90": percentile(values, 0.9),
            "max": max(values)}


def summarize(snapshot: dict, run: dict, fixed=()) -> dict:
    """One run's aggregates. Nodes used counts the nodes that hold a pod other than a DaemonSet's or a mirror pod
    (those are on every node whatever the configuration); requests count every pod on the node."""
    pods = dict((key(pod), pod) for pod in snapshot["pods"])
    placement = dict(run["placed"])
    placement.update((name, pods[name]["spec"]["nodeName"]) for name in fixed if name in pods)
    nodes = dict((node["metadata"]["name"], node) for node in snapshot["nodes"])
    requested = dict((name, (0, 0)) for name in nodes)
    used, zones = set(), {}
    for name, node in placement.items():
        if node not in nodes:
            continue
        requested[node] = _add(requested[node], pod_requests(pods[name]))
        if not (is_daemon(pods[name]) or is_mirror(pods[name])):
            used.add(node)
        zone = ((nodes[node]["metadata"].get("labels") or {}).get(ZONE_LABEL)) or "(no zone)"
        zones[zone] = zones.get(zone, 0) + 1
    cpu, memory = [], []
    per_node = {}
    for name, node in sorted(nodes.items()):
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        cpu_share = 100.0 * requested[name][0] / _milli(allocatable["cpu"]) if allocatable.get("cpu") else 0.0
        memory_share = (100.0 * requested[name][1] / _bytes(allocatable["memory"])
                        if allocatable.get("memory") else 0.0)
        cpu.append(round(cpu_share, 1))
        memory.append(round(memory_share, 1))
        per_node[name] = {"cpu_millicores": requested[name][0], "memory_bytes": requested[name][1],
                          "cpu_percent": round(cpu_share, 1), "memory_percent": round(memory_share, 1)}
    reasons = {}
    for message in run["unschedulable"].values():
        reasons[message] = reasons.get(message, 0) + 1
    return {
        "nodes_used": len(used),
        "cpu_percent": _stats(cpu), "memory_percent": _stats(memory),
        "unschedulable": len(run["unschedulable"]),
        "reasons": [{"reason": reason, "pods": count}
                    for reason, count in sorted(reasons.items(), key=lambda item: -item[1])],
        "zones": dict(sorted(zones.items())),
        "preempted": len(run.get("preempted") or ()),
        "seconds": run["seconds"],
        "per_node": per_node,
    }


def moved(first: dict, second: dict) -> list:
    """The pods whose node differs between two runs (one that fits in one and not in the other too)."""
    names = set(first["placed"]) | set(second["placed"])
    return sorted(name for name in names if first["placed"].get(name) != second["placed"].get(name))


def _spread(values):
    values = list(values)
    return {"min": min(values), "max": max(values)} if values else {"min": 0, "max": 0}


def observed(snapshot: dict, fixed=()) -> dict:
    """The cluster as the snapshot found it, as a run: where its pods are bound, and why the pending ones are not
    (their PodScheduled condition), so the table shows how near the preview of the current configuration comes."""
    fixed = set(fixed)
    run = {"placed": {}, "unschedulable": {}, "preempted": [], "seconds": None}
    for pod in snapshot["pods"]:
        name = key(pod)
        if name in fixed:
            continue
        if (pod.get("spec") or {}).get("nodeName"):
            run["placed"][name] = pod["spec"]["nodeName"]
            continue
        for condition in (pod.get("status") or {}).get("conditions") or ():
            if condition.get("type") == "PodScheduled" and condition.get("status") == "False" and condition.get(
                    "reason") != "SchedulingGated":
                run["unschedulable"][name] = condition.get("message") or condition.get("reason") or ""
    return run


def compare(snapshot: dict, result: dict, observed_label: str | None = None) -> dict:
    """Per configuration: each run's summary and the spread over runs; between the last two configurations (the
    current and the proposed), the pods that change node in each pair of runs. With ``observed_label``, the
    cluster as it is comes first, a column of its own."""
    fixed = result.get("fixed") or ()
    runs = dict(result["runs"])
    labels = list(runs)
    if observed_label:
        runs[observed_label] = [observed(snapshot, fixed)]
        labels.insert(0, observed_label)
    configs = {}
    for label in labels:
        summaries = [summarize(snapshot, run, fixed) for run in runs[label]]
        configs[label] = {
            "runs": [dict((field, value) for field, value in summary.items() if field != "per_node")
                     for summary in summaries],
            "per_node": summaries[0]["per_node"],
            "spread": dict((field, _spread(summary[field] for summary in summaries))
                           for field in ("nodes_used", "unschedulable", "preempted")),
            "unschedulable_pods": runs[label][0]["unschedulable"],
        }
    report = {"configs": configs, "order": labels, "load_seconds": result.get("load_seconds"),
              "total_seconds": result.get("total_seconds")}
    if len(result["runs"]) >= 2:
        pairs = list(zip(runs[labels[-2]], runs[labels[-1]]))
        counts = [len(moved(a, b)) for a, b in pairs]
        report["moved"] = {"pods": moved(*pairs[0])[:100], "count": counts[0], "spread": _spread(counts)}
    return report


def _value(summary_runs, field, sub=None):
    values = [run[field][sub] if sub else run[field] for run in summary_runs]
    if None in values:
        return "-"
    low, high = min(values), max(values)
    return "%s" % low if low == high else "%s (%s..%s)" % (values[0], low, high)


def table(report: dict) -> list:
    """The side-by-side table, one line a row; a value that differs between runs shows its range."""
    labels = report["order"]
    rows = [("", labels)]
    runs = [report["configs"][label]["runs"] for label in labels]
    rows.append(("runs", [str(len(r)) for r in runs]))
    rows.append(("nodes used", [_value(r, "nodes_used") for r in runs]))
    for resource in ("cpu", "memory"):
        for sub in ("min", "median", "p90", "max"):
            rows.append(("%s requested %% %s" % (resource, sub), [_value(r, resource + "_percent", sub) for r in runs]))
    rows.append(("unschedulable pods", [_value(r, "unschedulable") for r in runs]))
    rows.append(("preempted pods", [_value(r, "preempted") for r in runs]))
    zones = sorted(set(zone for r in runs for zone in r[0]["zones"]))
    for zone in zones:
        rows.append(("pods in zone %s" % zone,
                     ["/".join(sorted(set(str(run["zones"].get(zone, 0)) for run in r))) for r in runs]))
    rows.append(("seconds", [_value(r, "seconds") for r in runs]))
    width = max(len(row[0]) for row in rows)
    columns = [max(len(row[1][index]) for row in rows) for index in range(len(labels))]
    lines = ["  ".join([row[0].ljust(width)] + [cell.rjust(columns[i]) for i, cell in enumerate(row[1])])
             for row in rows]
    if "moved" in report:
        spread = report["moved"]["spread"]
        lines.append("pods whose node changes: %d%s" % (report["moved"]["count"], "" if spread["min"] == spread["max"]
                                                        else " (%d..%d over the runs)" % (spread["min"], spread["max"])))
    for label in labels:
        for reason in report["configs"][label]["runs"][0]["reasons"][:5]:
            lines.append("%s: %d pods unschedulable: %s" % (label, reason["pods"], reason["reason"]))
    return lines


def picture(report: dict, title: str = "Placement preview") -> str:
    """A self-contained SVG: per node, CPU and memory requested (% of allocatable) under the current and the
    proposed configuration (the last two columns of the table)."""
    labels = report["order"][-2:]
    colours = ("#4477aa", "#ee6677")
    nodes = sorted(report["configs"][labels[0]]["per_node"])
    bar_width, gap, chart = 6, 10, 200
    group = len(labels) * bar_width * 2 + gap
    width = max(600, 60 + group * len(nodes)) if len(nodes) <= BARS_UP_TO else 900
    height = chart + 140
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="11">' % (width, height),
           '<title>%s</title>' % html.escape(title),
           '<text x="10" y="16" font-size="14">%s</text>' % html.escape(title)]
    top = 30
    for percent in (0, 50, 100):
        y = top + chart - chart * percent / 100.0
        out.append('<line x1="40" x2="%d" y1="%.1f" y2="%.1f" stroke="#ccc"/>' % (width - 10, y, y))
        out.append('<text x="4" y="%.1f">%d%%</text>' % (y + 4, percent))
    if len(nodes) > BARS_UP_TO:
        # Too many nodes for a bar each: each configuration's nodes sorted from the fullest, as a line per resource.
        span = width - 54
        for c, label in enumerate(labels):
            per_node = report["configs"][label]["per_node"]
            for resource, opacity in (("cpu_percent", "1"), ("memory_percent", "0.5")):
                shares = sorted((min(100.0, node.get(resource, 0.0)) for node in per_node.values()), reverse=True)
                points = " ".join("%.1f,%.1f" % (44 + span * n / max(1, len(shares) - 1), top + chart - chart * v / 100.0)
                                  for n, v in enumerate(shares))
                out.append('<polyline points="%s" fill="none" stroke="%s" stroke-opacity="%s" stroke-width="2">'
                           '<title>%s %s, nodes from the fullest</title></polyline>'
                           % (points, colours[c], opacity, html.escape(label), resource.split("_", maxsplit=1)[0]))
        out.append('<text x="44" y="%d">%d nodes, each configuration\'s sorted from the fullest</text>'
                   % (top + chart + 16, len(nodes)))
    for n, node in enumerate(nodes if len(nodes) <= BARS_UP_TO else ()):
        x = 44 + n * group
        for c, label in enumerate(labels):
            values = report["configs"][label]["per_node"].get(node, {})
            for r, resource in enumerate(("cpu_percent", "memory_percent")):
                value = min(100.0, values.get(resource, 0.0))
                h = chart * value / 100.0
                out.append('<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s" fill-opacity="%s">'
                           '<title>%s %s %s: %.1f%%</title></rect>'
                           % (x + (c * 2 + r) * bar_width, top + chart - h, bar_width - 1, h, colours[c],
                              "1" if r == 0 else "0.5",
                              html.escape(node), html.escape(label), resource.split("_", maxsplit=1)[0], value))
        out.append('<text transform="translate(%d,%d) rotate(60)" font-size="9">%s</text>'
                   % (x, top + chart + 10, html.escape(node)))
    legend_y = height - 14
    for c, label in enumerate(labels):
        summary = report["configs"][label]["runs"][0]
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>' % (10 + c * 300, legend_y - 9, colours[c]))
        out.append('<text x="%d" y="%d">%s: %d nodes used (solid CPU, light memory)</text>'
                   % (24 + c * 300, legend_y, html.escape(label), summary["nodes_used"]))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def html_page(report: dict, title: str = "Placement preview") -> str:
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head><body>\n%s<pre>%s</pre>\n"
            "</body></html>\n" % (html.escape(title), picture(report, title), html.escape("\n".join(table(report)))))
