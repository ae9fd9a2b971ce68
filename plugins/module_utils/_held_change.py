# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A master's change that is applied but not yet proven: what the rollout engine needs to put the master back.

The engine's apply step holds the change (its health gate passed, a later gate may still refuse it: the verify
role's metrics gate of the rollout playbooks); the commit step releases it once the master's last gate passed; the
restore step puts the master back from it. Kept on the master in ``<state_dir>/held-change.json`` beside the
backups it names, so that the three steps may be three module calls: the instances (name, unit, port, health URL:
no file content, so never a secret), the pid each answered with before the change, the binary link's previous
target, and the directories the change made or changed.
Host code: stdlib only.
"""

from __future__ import annotations

import json
import os

from ansible_collections.kubesched.schedulers.plugins.module_utils._files import Backup, write_atomically

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

    def names(self):
        return [instance["name"] for instance, _backup, _pid in self.touched]

    def holds(self, name):
        return name in self.names()

    def add(self, instance, backup, pid_before):
        self.touched.append((dict((key, instance.get(key)) for key in _INSTANCE_KEYS), backup, pid_before))

    def save(self):
        """Written atomically, root only (the state directory is 0700 too)."""
        record = {"instances": [dict(instance, pid_before=pid) for instance, _backup, pid in self.touched],
                  "link_path": self.link_path, "link_before": self.link_before, "made": self.made,
                  "changed_dirs": [list(entry) for entry in self.changed_dirs]}
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
            held.touched.append((entry, Backup.load(state_dir, entry["name"]), pid))
        held.link_path = record.get("link_path")
        held.link_before = record.get("link_before")
        held.made = list(record.get("made") or [])
        held.changed_dirs = [tuple(entry) for entry in record.get("changed_dirs") or []]
        return held

    def release(self):
        """The master's last gate passed: its backups and this record go."""
        for _instance, backup, _pid in self.touched:
            backup.clear()
        self.forget()

    def forget(self):
        """After a restore: the record goes, the backups stay for the operator (as a failed apply leaves them)."""
        if os.path.lexists(self.path):
            os.unlink(self.path)
