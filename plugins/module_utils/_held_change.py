# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A master's change from before its first write until it is committed: what the rollout engine needs to put the
master back, or to gate the change again.

Intent first: the engine's apply step records the change it is about to make (each instance's backup, taken before
its files are written, the standbys it starts, the binary link's previous target, the directories it makes) before
each write, so a run killed anywhere (the controller, the engine on the master, the master itself) leaves a record.
While the record says its health gate never passed, the change is pending: the next run gates it again from the
record and restores it on failure, whatever the files look like. Once the gate passed, the change is held (a later
gate may still refuse it: the verify role's metrics gate of the rollout playbooks); the commit step releases it (its
backups go) and the restore step puts the master back from it. Kept on the master in ``<state_dir>/held-change.json``
beside the backups it names, so that the steps may be separate module calls: the instances (name, unit, port,
health URL, whether each passed the apply step's health gate, the sha256 of each file written: never file content,
so never a secret), the pid each answered with before the change, the binary link's previous target, and the
directories the change made or changed.
Host code: stdlib only.
"""

from __future__ import annotations

import json
import os

from ansible_collections.kubesched.schedulers.plugins.module_utils._files import (
    Backup, remove_path, write_atomically, writing)

FILE_NAME = "held-change.json"
# What the restore step needs of an instance: how it restarts or stops, and where its health gate looks.
_INSTANCE_KEYS = ("name", "state", "unit", "port", "health_url")


class HeldChange(object):
    """The touched instances (instance, backup, pid before), the binary link and its previous target ("" when there
    was no link, None when the change left it alone), the directories made (in order) and changed (path, uid, gid,
    mode)."""

    def __init__(self, state_dir):
        self.state_dir = state_dir
        self.path = os.path.join(state_dir, FILE_NAME)
        self.touched = []
        self.link_path = None
        self.link_before = None
        self.made = []
        self.changed_dirs = []
        # False from the intent on, until every instance the change touched passed the apply step's health gate.
        self.gate_passed = False
        self.standbys = []  # the temporary standbys the change started (names)
        self.written = {}  # path -> sha256 of what the change wrote there

    def names(self):
        return [instance["name"] for instance, _backup, _pid in self.touched]

    def holds(self, name):
        return name in self.names()

    def add(self, instance, backup, pid_before, port_before=None):
        """``port_before``: the secure port the instance listened on before the change (None: the same as after
        it), where its health is awaited once it is restored."""
        entry = dict((key, instance.get(key)) for key in _INSTANCE_KEYS)
        if port_before is not None:
            entry["port_before"] = port_before
        self.touched.append((entry, backup, pid_before))

    def update(self, instance):
        """A held instance rewritten by a later change: the record names where it listens now (its unit, port and
        health URL); its backup, its pid and port from before the first change stay."""
        for entry, _backup, _pid in self.touched:
            if entry["name"] == instance["name"]:
                before = entry.get("port_before") or entry.get("port")
                entry.update((key, instance.get(key)) for key in _INSTANCE_KEYS)
                entry.pop("port_before", None)
                if before is not None and before != entry["port"]:
                    entry["port_before"] = before

    def mark_gated(self, names):
        """Which instances passed the apply step's health gate (the others did not, or it never watched them)."""
        for entry, _backup, _pid in self.touched:
            entry["gated"] = entry["name"] in names

    def ungated(self):
        """The instances the health gate did not pass (a record written before it said so counts as not passed)."""
        return [entry["name"] for entry, _backup, _pid in self.touched if not entry.get("gated")]

    def save(self):
        """Written atomically, root only (the state directory is 0700 too)."""
        record = {"instances": [dict(instance, pid_before=pid) for instance, _backup, pid in self.touched],
                  "link_path": self.link_path, "link_before": self.link_before, "made": self.made,
                  "changed_dirs": [list(entry) for entry in self.changed_dirs], "gate_passed": self.gate_passed,
                  "standbys": self.standbys, "written": self.written}
        with writing(self.state_dir, action="make", purpose="the state directory"):
            os.makedirs(self.state_dir, 0o700, exist_ok=True)
        write_atomically(self.path, json.dumps(record, indent=1, sort_keys=True).encode("utf-8"), (0, 0), 0o600)

    @classmethod
    def load(cls, state_dir):
        """The change held on this master, or None."""
        held = cls(state_dir)
        try:
            with open(held.path) as handle:
                record = json.load(handle)
        except FileNotFoundError:
            return None
        for entry in record["instances"]:
            pid = entry.pop("pid_before", None)
            try:
                backup = Backup.load(state_dir, entry["name"])
            except FileNotFoundError:
                continue  # an absent instance whose removal cleared its backup: nothing of it to put back
            held.touched.append((entry, backup, pid))
        held.link_path = record.get("link_path")
        held.link_before = record.get("link_before")
        held.made = list(record.get("made") or [])
        held.changed_dirs = [tuple(entry) for entry in record.get("changed_dirs") or []]
        # A record without the field was written by a version that recorded a change only once its gate passed.
        held.gate_passed = bool(record.get("gate_passed", True))
        held.standbys = list(record.get("standbys") or [])
        held.written = dict(record.get("written") or {})
        return held

    def release(self):
        """The master's last gate passed: its backups and this record go; returns the backup directories removed."""
        removed = []
        for _instance, backup, _pid in self.touched:
            if os.path.isdir(backup.dir):
                removed.append(backup.dir)
            backup.clear()
        self.forget()
        return removed

    def forget(self):
        """After a restore: the record goes, the backups stay for the operator (as a failed apply leaves them)."""
        if os.path.lexists(self.path):
            with writing(self.path, action="remove", purpose="the record of the change"):
                os.unlink(self.path)


def as_before(instance):
    """A held instance (its record) as it listened before the change: its port_before, and its health URL on it."""
    port = instance.get("port_before")
    if not port or port == instance.get("port"):
        return instance
    url = instance.get("health_url") or ""
    return dict(instance, port=port, health_url=url.replace(":%d/" % instance["port"], ":%d/" % port, 1))


def stale_backups(state_dir, held):
    """The backup directories in ``state_dir`` that no recorded change names (``held``: the record, or None): the
    backups a restore kept for the operator, or those of a change a killed run never recorded."""
    names = set(held.names()) if held is not None else set()
    try:
        entries = sorted(os.listdir(state_dir))
    except OSError:
        return []
    return [os.path.join(state_dir, name, "backup") for name in entries
            if name not in names and os.path.isfile(os.path.join(state_dir, name, "backup", "index.json"))]


def remove_backups(directories):
    """Each backup directory removed (and its instance's directory when that is left empty); returns them."""
    for directory in directories:
        remove_path(directory)
        parent = os.path.dirname(directory)
        if os.path.isdir(parent) and not os.listdir(parent):
            with writing(parent, action="remove", purpose="the emptied directory of the backup"):
                os.rmdir(parent)
    return list(directories)
