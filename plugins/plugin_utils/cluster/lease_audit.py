# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every scheduler lease the cluster holds, against what this inventory expects of it.

kube-scheduler's leader election writes ``holderIdentity`` as the host name, ``_`` and a UUID (the pod name for a
Deployment's replica, whose host name it is), and renews ``renewTime`` every retry period; a lease whose renewTime
is older than its ``leaseDurationSeconds`` is free for the taking. Flags:

- ``foreign contender``: a lease this inventory's instance uses is held by an identity not of this inventory (another
  scheduler configured with the same lease name: only one of them ever schedules);
- ``stale``: the holder stopped renewing (it died, or cannot update its lease);
- ``two configs``: masters that share the lease run different config files (whichever holds it decides which
  profiles score pods);
- ``not held``: this inventory expects the lease, and nobody ever took it (no lease object, or no holder).

Pure Python: no Ansible imports.
"""

from __future__ import annotations

import datetime

FOREIGN, STALE, TWO_CONFIGS, NOT_HELD = "foreign contender", "stale", "two configs", "not held"


def is_scheduler_lease(name, expected_names):
    """Leases in kube-system and the instances' namespaces share them with the controller-manager's, the API
    servers' (apiserver-<hash>) and others: a scheduler lease is one this inventory expects, or one named like a
    scheduler's (kube-scheduler, my-scheduler, scheduler-plugins-scheduler...)."""
    return name in expected_names or "scheduler" in name


def _time(text):
    if not text:
        return None
    text = text.replace("Z", "+00:00")
    if "." in text:  # MicroTime: up to six digits; Python before 3.11 takes exactly six
        head, _dot, tail = text.partition(".")
        digits = "".join(ch for ch in tail if ch.isdigit())
        zone = tail[len(digits):]
        text = "%s.%s%s" % (head, (digits + "000000")[:6], zone)
    found = datetime.datetime.fromisoformat(text)
    return found if found.tzinfo else found.replace(tzinfo=datetime.timezone.utc)  # now(utc=true) is naive


def holder_host(identity):
    """The host (or pod) name in a kube-scheduler holderIdentity: what comes before the last '_'."""
    return identity.rsplit("_", 1)[0] if "_" in identity else identity


def _ours(identity, expectations):
    host = holder_host(identity).lower()
    for expected in expectations:
        if expected.get("hostname") and host == expected["hostname"].lower():
            return True
        if expected.get("deployment") and host.startswith(expected["deployment"].lower() + "-"):
            return True
    return False


def audit(leases, expected, now):
    """Rows, one per scheduler lease (and per expected lease that does not exist), sorted by lease.

    ``leases``: Lease objects as the API returns them. ``expected``: what this inventory runs, one entry per
    (instance, host) or deployment: ``lease`` (namespace/name), ``instance``, and ``host`` with ``hostname`` (the
    name kube-scheduler puts in holderIdentity) and ``config_checksum`` (of the config file on that host, or None), or
    ``deployment`` (its name: replicas hold the lease as their pod names). ``now``: an aware datetime or ISO text.
    """
    now = _time(now) if isinstance(now, str) else now
    by_lease = {}
    for entry in expected:
        by_lease.setdefault(entry["lease"], []).append(entry)
    rows = {}
    for lease in leases:
        meta, spec = lease.get("metadata") or {}, lease.get("spec") or {}
        key = "%s/%s" % (meta.get("namespace"), meta.get("name"))
        if not is_scheduler_lease(meta.get("name") or "", [name.split("/", 1)[1] for name in by_lease]):
            continue
        rows[key] = _row(key, spec, by_lease.get(key) or [], now)
    for key, expectations in by_lease.items():
        if key not in rows:
            rows[key] = _row(key, None, expectations, now)
    return [rows[key] for key in sorted(rows)]


def _row(key, spec, expectations, now):
    holder = (spec or {}).get("holderIdentity") or ""
    renewed = _time((spec or {}).get("renewTime"))
    duration = (spec or {}).get("leaseDurationSeconds")
    age = round((now - renewed).total_seconds(), 1) if renewed else None
    expected_holders = sorted(set(e.get("hostname") or ("%s-*" % e["deployment"] if e.get("deployment") else "?")
                                  for e in expectations))
    flags, details = [], []
    if expectations and not holder:
        flags.append(NOT_HELD)
        details.append("no lease object: no instance ever led" if spec is None else "nobody holds it")
    if expectations and holder and not _ours(holder, expectations):
        flags.append(FOREIGN)
        details.append("held by %s, which is not %s: another scheduler uses this lease; only one of them schedules"
                       % (holder, " or ".join(expected_holders)))
    if holder and age is not None and duration is not None and age > duration:
        flags.append(STALE)
        details.append("renewed %ds ago, longer than its %ss lease duration: the holder stopped renewing"
                       % (int(age), duration))
    checksums = {}
    for entry in expectations:
        if entry.get("config_checksum"):
            checksums.setdefault(entry["config_checksum"], []).append(entry.get("host") or entry["instance"])
    if len(checksums) > 1:
        flags.append(TWO_CONFIGS)
        details.append("the masters behind it run different configs: " + "; ".join(
            "%s on %s" % (checksum[:12], ", ".join(sorted(hosts))) for checksum, hosts in sorted(checksums.items())))
    return {"lease": key, "holder": holder, "renewed_seconds_ago": age, "lease_seconds": duration,
            "expected_holders": expected_holders,
            "instances": sorted(set(e["instance"] for e in expectations)),
            "ours": bool(expectations), "flags": flags, "detail": "; ".join(details)}
