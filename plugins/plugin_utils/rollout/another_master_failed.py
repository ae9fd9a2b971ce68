# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Another master failed its plan: why a master's pending change was not applied.

The rollout playbooks change no master while one could not be planned (a refusal on the master, the master
unreachable): its plan is unknown, so the order of the others, which leases move and when, is unknown too. Without a
word the masters that planned well would end the run ``ok`` with their change silently held back. So each of them
fails, naming its pending change (``pending_summary``: per instance the action and the files, and what else the
plan found to do) and every master that could not be planned with its reason where the run knows it
(``failure_reason``: the plan call's own answer). Pure Python, no Ansible imports: the filter
``rollout_held_back`` (plugins/filter/rollout_order.py) calls it from the playbooks.
"""

from __future__ import annotations

# The plan's instance action that changes nothing (module_utils/rollout/engine.py).
NONE = "none"
TASK_FAILED = "Task failed: "


def _one_line(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def pending_summary(plan):
    """One phrase per part of a master's pending change, from its plan (the scheduler_rollout action's result):
    each instance with its action and the files it changes, then the directories, the binary link, a change an
    earlier run left, a temporary standby left behind, backups to remove and lease RBAC to create."""
    body = (plan or {}).get("plan") or {}
    parts = []
    for name, entry in sorted((body.get("instances") or {}).items()):
        entry = entry or {}
        action = entry.get("action") or NONE
        if action != NONE:
            files = entry.get("files") or []
            parts.append("%s: %s%s" % (name, action, " (%s)" % ", ".join(files) if files else ""))
        if (entry.get("lease_access") or {}).get("will_create"):
            parts.append("%s: create the lease Role and RoleBinding" % name)
    if body.get("directories"):
        parts.append("directories: %s" % ", ".join(body["directories"]))
    if body.get("link_changed"):
        parts.append("the binary link")
    if body.get("held") is not None:
        parts.append("a change an earlier run left (%s), to gate again" % (", ".join(body["held"]) or "directories"))
    if body.get("standby_leftovers"):
        parts.append("a temporary standby an earlier run left (%s)" % ", ".join(body["standby_leftovers"]))
    if body.get("stale_backups"):
        parts.append("%d backup(s) to remove" % len(body["stale_backups"]))
    return parts


def failure_reason(result):
    """Why a master could not be planned, from its plan call's registered result: its answer when it failed or
    was unreachable, else None (it failed at another step, whose output says why)."""
    if not isinstance(result, dict):
        return None
    if result.get("unreachable"):
        return "unreachable: %s" % _message(result, "no answer")
    if result.get("failed"):
        return _message(result, "the plan failed")
    return None


def _message(result, default):
    # ansible-core 2.19 and later put its own words before the connection's answer.
    text = _one_line(result.get("msg") or default)
    return text[len(TASK_FAILED):] if text.startswith(TASK_FAILED) else text


def another_master_failed(host, plan, failed, check_mode=False):
    """The message of ``host``, whose ``plan`` is pending, when the masters ``failed`` ([(master, reason or
    None)], in inventory order) could not be planned."""
    if not failed:
        raise ValueError("no master failed: nothing holds back the change of %s" % host)
    names = ", ".join(name for name, _reason in failed)
    why = "; ".join("%s (%s)" % (name, reason or "it failed before its plan answered; its own output above says why")
                    for name, reason in failed)
    parts = pending_summary(plan) or ["pending"]
    return ("%s: its pending change %s: %s. The rollout changes no master while a master of the run could not be "
            "planned (the order and the lease handovers depend on every master's plan): %s. Fix %s and run again, or "
            "leave %s out of the run (--limit)." % (
                host, "would not be applied" if check_mode else "was not applied", "; ".join(parts), why, names,
                "it" if len(failed) == 1 else "them"))
