# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which masters a rollout changes in what order, and in which waves. Pure Python, no Ansible imports:
the filters ``rollout_waves`` and ``rollout_report`` (plugins/filter/rollout_order.py) call it from the playbooks.

One handover per lease. A kube-scheduler that stops cleanly releases its lease and a standby takes it within a
retry period. Changing the master that holds a lease moves the lease; changing, after that, the master that took it
moves it again. So in a cluster every master that restarts a standby of a lease goes before the lease's holder: the
masters that hold no lease first, the holders last, and each lease moves at most once. With several leases held by
several masters the constraints can form a cycle (A holds l1 and restarts a standby of l2, B holds l2 and restarts a
standby of l1): whichever goes first hands its lease to a master still to change, so no order moves every lease at
most once; the plan says so and breaks the cycle where the fewest leases can move twice.

Clusters. A master's cluster is named by the variable ``kube_scheduler_cluster`` or by an inventory group: every
group listed in ``kube_scheduler_cluster_groups`` is one cluster, named as the group. A master in two of those
groups, a master whose ``kube_scheduler_cluster`` names another cluster than its group, and, once groups are listed,
a master in none of them without ``kube_scheduler_cluster`` are refused (``cluster_of``): two masters of one real
cluster must never count as two clusters, which would change them at once.

Waves. Clusters share nothing: wave k changes the k-th master (in that order) of every cluster at once, one master
at a time within a cluster; a canary cluster, when named, goes first, alone, one master per wave. One cluster gives
waves of one master: ``serial: 1`` as before.
"""

from __future__ import annotations

# The plan's instance actions that stop or start the instance's process (module_utils/rollout/engine.py): a lease its
# process holds moves when the master is changed.
MOVES = ("create", "update", "restart", "start", "remove")


class OrderError(ValueError):
    """The variables that shape the waves name nothing this rollout has (a canary cluster of no master), or name a
    master's cluster in two ways that disagree."""


CLUSTER = "kube_scheduler_cluster"
CLUSTER_GROUPS = "kube_scheduler_cluster_groups"


def cluster_groups(value, host):
    """``kube_scheduler_cluster_groups`` as a list of group names ([] when unset), or OrderError."""
    if value is None or value == "" or value == []:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(
            isinstance(name, str) and name.strip() and name == name.strip() for name in value):
        raise OrderError("%s (of %s): Invalid value: %r: a list of inventory group names, one group per cluster "
                         "(such as [east, west])" % (CLUSTER_GROUPS, host, value))
    if len(set(value)) != len(value):
        raise OrderError("%s (of %s): Duplicate value: %r: name each cluster group once"
                         % (CLUSTER_GROUPS, host, sorted(name for name in set(value) if list(value).count(name) > 1)[0]))
    return list(value)


CANARY = "kube_scheduler_canary_cluster"


def canary_cluster(value):
    """``kube_scheduler_canary_cluster`` as one cluster name, or None when unset or empty (an unanswered survey
    question); a list (a multi-select survey question's answer), a number or a boolean is refused, naming the form."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, str) and value.strip() == value:
        return value
    if isinstance(value, str):
        form = "a name with spaces around it or of spaces only"
        fix = "write the name alone"
    elif isinstance(value, (list, tuple)):
        form = "a list of %d" % len(value)
        fix = ("one cluster goes first, so give one name: an AWX multi-select survey question gives a list; make it a "
               "multiple-choice question with one answer, or a text question")
    else:
        form = "a boolean" if isinstance(value, bool) else "a number" if isinstance(value, (int, float)) else \
            type(value).__name__
        fix = "give the cluster's name as text (quote a name made of digits; an AWX survey: a text question)"
    shown = repr(list(value) if isinstance(value, (list, tuple)) else value)
    raise OrderError("%s: Invalid value: %s: one cluster name, not %s: %s. Nothing was changed."
                     % (CANARY, shown if len(shown) <= 80 else shown[:80] + "...", form, fix))


def cluster_of(host, group_names, cluster, groups, default):
    """The cluster of ``host``: the one group of ``groups`` (kube_scheduler_cluster_groups) it is in, else its
    ``cluster`` (kube_scheduler_cluster), else ``default`` (the masters group: one cluster). Refused, naming the
    variable and the fix: a master in two cluster groups, a kube_scheduler_cluster that names another cluster than
    the master's group, a master in no cluster group (once groups are listed) without kube_scheduler_cluster."""
    groups = cluster_groups(groups, host)
    if cluster == "":  # an unanswered survey question: not set
        cluster = None
    member = [name for name in groups if name in (group_names or [])]
    if len(member) > 1:
        raise OrderError("%s: %s is in %d cluster groups (%s): a master belongs to one cluster. Remove it from every "
                         "group but its cluster's, or drop from %s the groups that are not clusters. Nothing was "
                         "changed." % (CLUSTER_GROUPS, host, len(member), ", ".join(member), CLUSTER_GROUPS))
    if member:
        if cluster is not None and cluster != member[0]:
            raise OrderError("%s: %s sets %r, but it is in the cluster group %r (%s): a master belongs to one "
                             "cluster. Drop %s for it (its group names the cluster) or set it to %r. Nothing was "
                             "changed." % (CLUSTER, host, cluster, member[0], CLUSTER_GROUPS, CLUSTER, member[0]))
        return member[0]
    if cluster is not None:
        return cluster
    if groups:
        raise OrderError("%s: %s is in none of the cluster groups (%s) and has no %s: add it to its cluster's group "
                         "(or set %s for it). Nothing was changed." % (
                             CLUSTER_GROUPS, host, ", ".join(groups), CLUSTER, CLUSTER))
    return default


def master_view(host, plan, cluster):
    """What the order needs of one master's plan (the scheduler_rollout action's result): whether it has a change
    to apply and, per lease one of its instances elects a leader on, whether the change restarts that instance and
    who holds the lease (``holder`` null when it could not be read)."""
    plan = plan or {}
    leases = {}
    for name, entry in sorted(((plan.get("plan") or {}).get("instances") or {}).items()):
        access = (entry or {}).get("lease_access")
        if not access or not access.get("lease"):
            continue
        holder = access.get("holder")
        unknown = access.get("detail") if access.get("status") == "not checked" else access.get("holder_detail")
        leases[access["lease"]] = {"instance": name, "moves": entry.get("action") in MOVES, "holder": holder,
                                   "held_here": bool(access.get("held_here")) and bool(holder),
                                   "unknown": None if holder is not None else (unknown or "not read")}
    return {"host": host, "cluster": cluster, "pending": bool(plan.get("pending")), "leases": leases}


def _holders(masters):
    """Per lease of the cluster: (kind, who) with kind "master" (a master of this rollout holds it), "outside"
    (another process: its identity), "unheld", or "unknown" (no master could read it: the reason)."""
    out = {}
    for lease in sorted(set(name for master in masters for name in master["leases"])):
        readings = [(master["host"], master["leases"][lease]) for master in masters if lease in master["leases"]]
        here = [host for host, reading in readings if reading["held_here"]]
        read = [reading["holder"] for _host, reading in readings if reading["holder"] is not None]
        if here:
            out[lease] = ("master", here[0])
        elif any(read):
            out[lease] = ("outside", [holder for holder in read if holder][0])
        elif read:
            out[lease] = ("unheld", None)
        else:
            out[lease] = ("unknown", sorted(set(reading["unknown"] for _host, reading in readings))[0])
    return out


def order_cluster(masters):
    """The masters of one cluster (views, in inventory order) with a change, in the order that moves each lease at
    most once, and what happens to each lease: {order, leases: {lease: text}, cycle: text or None, fallback: text
    or None}."""
    pending = [master for master in masters if master["pending"]]
    position = dict((master["host"], index) for index, master in enumerate(pending))
    by_host = dict((master["host"], master) for master in pending)
    holders = _holders(masters)

    def restarts(host, lease):
        return by_host[host]["leases"].get(lease, {}).get("moves", False)

    # moved[h]: the leases h holds and its change moves; before[h]: the masters that must change before h.
    moved = dict((host, [lease for lease, (kind, who) in sorted(holders.items())
                         if kind == "master" and who == host and restarts(host, lease)]) for host in position)
    before = dict((host, set(other for lease in moved[host] for other in position
                             if other != host and restarts(other, lease))) for host in position)
    order, remaining, cycle = [], list(position), None
    while remaining:
        ready = [host for host in remaining if not before[host] & set(remaining)]
        if ready:
            # Among those free to go: the ones that move no lease first, then inventory order.
            pick = min(ready, key=lambda host: (bool(moved[host]), position[host]))
        else:
            # A cycle: go on where the fewest leases can move twice.
            pick = min(remaining, key=lambda host: (len([lease for lease in moved[host] if any(
                restarts(other, lease) for other in remaining if other != host)]), position[host]))
            if cycle is None:
                cycle = _cycle_text(remaining, moved, before, holders, pick)
        order.append(pick)
        remaining.remove(pick)

    leases = dict((lease, _lease_text(lease, kind, who, order, position, restarts))
                  for lease, (kind, who) in sorted(holders.items()))
    unknown = [who for kind, who in holders.values() if kind == "unknown"]
    fallback = None
    if pending and (not holders or len(unknown) == len(holders)):
        fallback = ("inventory order: %s" % (
            "the lease holders could not be read (%s)" % unknown[0] if unknown else
            "no lease to read (no instance elects a leader, or kube_scheduler_lease_check is false)"))
    return {"order": order, "leases": leases, "cycle": cycle, "fallback": fallback}


def _cycle_text(remaining, moved, before, holders, pick):
    stuck = sorted((host for host in remaining if moved[host]), key=remaining.index)
    held = "; ".join("%s holds %s and must wait for %s" % (host, ", ".join(moved[host]), ", ".join(
        sorted(before[host] & set(remaining), key=remaining.index))) for host in stuck)
    return ("no order moves every lease at most once: %s. Whichever goes first hands its lease to a master still to "
            "change. Going on with %s (the fewest leases that can move twice); to move each lease once, let one "
            "master hold these leases before the rollout, or change them in separate runs." % (held, pick))


def _lease_text(lease, kind, who, order, position, restarts):
    if kind == "unknown":
        return "holder not known (%s): the order ignores it" % who
    if kind == "unheld":
        return "unheld: the first of its schedulers to start takes it"
    if kind == "outside":
        return "held by %s, not a master with a change in this rollout: it does not move" % who
    if who not in position or not restarts(who, lease):
        return "held by %s, which does not restart it: it does not move" % who
    later = [host for host in order[order.index(who) + 1:] if restarts(host, lease)]
    if later:
        return "held by %s: moves when it changes, and may move again when %s change" % (who, ", ".join(later))
    return "held by %s: moves once, when it changes (after every other master that restarts it)" % who


def waves(views, canary=None):
    """The rollout of every master (views in inventory order, see master_view) as waves: {order (the masters with a
    change, wave after wave), serial (the wave sizes: the apply play's serial), waves, clusters: {name: {masters,
    order, leases, cycle, fallback}}, canary, lines (what the plan shows)}."""
    clusters = {}
    for view in views:
        clusters.setdefault(view["cluster"], []).append(view)
    canary = canary_cluster(canary)
    if canary and canary not in clusters:
        raise OrderError("%s: Invalid value: %r: no master of this rollout is in that cluster (its clusters, from "
                         "kube_scheduler_cluster or kube_scheduler_cluster_groups: %s)" % (CANARY, canary, ", ".join(clusters)))
    planned = dict((name, dict(order_cluster(masters), masters=[master["host"] for master in masters]))
                   for name, masters in clusters.items())
    out = []
    if canary:
        out.extend([host] for host in planned[canary]["order"])
    rest = [name for name in clusters if name != canary]
    depth = max([len(planned[name]["order"]) for name in rest] or [0])
    for k in range(depth):
        out.append([planned[name]["order"][k] for name in rest if k < len(planned[name]["order"])])
    result = {"order": [host for wave in out for host in wave], "serial": [len(wave) for wave in out] or [1],
              "waves": out, "clusters": planned, "canary": canary or None}
    result["lines"] = _plan_lines(result)
    return result


def _plan_lines(result):
    lines = []
    for name, cluster in result["clusters"].items():
        head = "cluster %s: " % name if len(result["clusters"]) > 1 else ""
        order = ", ".join(cluster["order"]) or "nothing to change"
        lines.append("%sapply order: %s%s" % (head, order, " (%s)" % cluster["fallback"] if cluster["fallback"] else ""))
        for lease, text in sorted(cluster["leases"].items()):
            lines.append("%slease %s: %s" % (head, lease, text))
        if cluster["cycle"]:
            lines.append("%s%s" % (head, cluster["cycle"]))
    if len(result["clusters"]) > 1 and result["waves"]:
        for index, wave in enumerate(result["waves"]):
            lines.append("wave %d: %s%s" % (index + 1, ", ".join(wave),
                                            " (canary cluster %s)" % result["canary"] if result["canary"] and index < len(
                                                result["clusters"][result["canary"]]["order"]) else ""))
    return lines


def fleet_report(rollout, batch, failures):
    """Once a wave ended: per cluster, the masters done, failed and put back (with the reason), untouched (a later
    wave, which does not start when this one failed) and without a change. ``batch``: the wave's masters (the apply
    play's current batch); ``failures``: {master: the reason it failed}."""
    wave = next((index for index, hosts in enumerate(rollout["waves"]) if set(hosts) & set(batch)), None)
    if wave is None:
        raise OrderError("none of %s is in a wave of this rollout" % ", ".join(batch))
    started = set(host for hosts in rollout["waves"][:wave + 1] for host in hosts)
    report, lines = {}, []
    for name, cluster in rollout["clusters"].items():
        entry = {"done": [host for host in cluster["order"] if host in started and host not in failures],
                 "failed and restored": ["%s: %s" % (host, _first_line(failures[host]))
                                         for host in cluster["order"] if host in failures],
                 "untouched": [host for host in cluster["order"] if host not in started],
                 "no change": [host for host in cluster["masters"] if host not in cluster["order"]]}
        report[name] = entry
        lines.append("cluster %s: %s" % (name, "; ".join(
            "%s %s" % (what, ", ".join(hosts)) for what, hosts in entry.items() if hosts) or "no master"))
    last = wave + 1 == len(rollout["waves"])
    if failures:
        lines.append("wave %d of %d failed: the fleet stops here%s" % (
            wave + 1, len(rollout["waves"]), "" if last else " (waves %d to %d not started)" % (wave + 2, len(rollout["waves"]))))
    else:
        lines.append("wave %d of %d done%s" % (wave + 1, len(rollout["waves"]), ": the fleet is done" if last else ""))
    return {"clusters": report, "lines": lines, "wave": wave + 1, "stopped": bool(failures)}


def _first_line(text):
    return " ".join(str(text).split())[:300]
