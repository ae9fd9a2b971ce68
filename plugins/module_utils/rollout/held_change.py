# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The held change: the record of a master's change from before its first write until its commit or restore.

What the rollout engine needs to put the master back, or to gate the change again.

Intent first: the engine's apply step records the change it is about to make (each instance's backup, taken before
its files are written, the standbys it starts, the binary link's previous target, the directories it makes) before
each write, so a run killed anywhere (the controller, the engine on the master, the master itself) leaves a record.
While the record says its health gate never passed, the change is pending: the next run gates it again from the
record and restores it on failure, whatever the files look like. Once the gate passed, the change is held (a later
gate may still refuse it: the verify role's metrics gate of the rollout playbooks); the commit step releases it (its
backups go) and the restore step puts the master back from it. Kept on the master in ``<state_dir>/held-change.json``
beside the backups it names, so that the steps may be separate module calls: the instances (name, unit, port,
health URL, the directories of its files, whether each passed the apply step's health gate, the sha256 of each file
written: never file content, so never a secret), the pid each answered with before the change, the binary link's
previous target, and the directories the change made or changed.

The record and the backups' indexes are read back checked (_records.py: a format version, the sha256 of the body,
every field's type): one that cannot be trusted fails every step, naming it and what to do, and is never taken for
"nothing held". A restore writes a file only when the record says the change wrote it (``written``) and it lies in a
directory of its own instance's files (``dirs``, recorded with the instance), from a copy whose sha256 is the one the
index recorded; anything else is refused by name and left as it is (docs/hostile-inputs.md, "Records on the host").
Host code: stdlib only.
"""

from __future__ import annotations

import os

from ansible_collections.kubesched.schedulers.plugins.module_utils import _records
from ansible_collections.kubesched.schedulers.plugins.module_utils._files import (
    Backup, remove_path, sync_directory, write_atomically, writing)

FILE_NAME = "held-change.json"
# What the restore step needs of an instance: how it restarts or stops, and where its health gate looks.
_INSTANCE_KEYS = ("name", "state", "unit", "port", "health_url")
_RECORD_KEYS = ("instances", "link_path", "link_before", "made", "changed_dirs", "gate_passed", "standbys", "written")


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
        # Where its files are: a restore writes nowhere else for it.
        entry["dirs"] = sorted(_directories(instance))
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
                if entry.get("dirs") is not None:
                    # The later change may write elsewhere too: its restore may put those files back as well.
                    entry["dirs"] = sorted(set(entry["dirs"]) | _directories(instance))
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
        """Written atomically and durably (the file and its directory synced), root only (the state directory is 0700
        too), with a format version and the checksum of its body."""
        record = {"instances": [dict(instance, pid_before=pid) for instance, _backup, pid in self.touched],
                  "link_path": self.link_path, "link_before": self.link_before, "made": self.made,
                  "changed_dirs": [list(entry) for entry in self.changed_dirs], "gate_passed": self.gate_passed,
                  "standbys": self.standbys, "written": self.written}
        if not os.path.isdir(self.state_dir):
            with writing(self.state_dir, action="make", purpose="the state directory"):
                os.makedirs(self.state_dir, 0o700, exist_ok=True)
                sync_directory(os.path.dirname(os.path.abspath(self.state_dir)))
        write_atomically(self.path, _records.encode(record), (0, 0), 0o600)

    @classmethod
    def load(cls, state_dir):
        """The change held on this master, or None; RecordDamaged when its record or a backup's index cannot be
        trusted."""
        held = cls(state_dir)
        advice = ("A run stopped during a change it recorded there, so this master may be half-changed: look at its "
                  "scheduler instances, put back by hand what the change wrote from the backups in %s (each "
                  "<instance>/backup/index.json names the file of each numbered copy), then remove %s; the next run "
                  "plans from what is on the master" % (os.path.join(state_dir, "<instance>", "backup"), held.path))
        record = _records.read(held.path, _check_record, advice)
        if record is None:
            return None
        for entry in record["instances"]:
            pid = entry.pop("pid_before", None)
            entry.setdefault("dirs", None)
            backup = Backup.load(state_dir, entry["name"], held.path)
            if backup is None:
                continue  # an absent instance whose removal cleared its backup: nothing of it to put back
            held.touched.append((entry, backup, pid))
        held.link_path = record.get("link_path")
        held.link_before = record.get("link_before")
        held.made = list(record.get("made") or [])
        held.changed_dirs = [tuple(entry) for entry in record.get("changed_dirs") or []]
        # A record without the field was written by a version that recorded a change only once its gate passed.
        held.gate_passed = record.get("gate_passed", True)
        held.standbys = list(record.get("standbys") or [])
        held.written = dict(record.get("written") or {})
        return held

    def refusal(self, instance):
        """For the restore of ``instance`` (its record): why a path of its backup may not be written, or None. Only
        a file the change wrote, in a directory of the instance's own files (a record of version 0 names no
        directories: then the files it says the change wrote)."""
        dirs = instance.get("dirs")

        def why(path):
            if path not in self.written:
                return "refused: the record of the change does not name it among the files the change wrote"
            if dirs is not None and os.path.dirname(path) not in dirs:
                return ("refused: it is outside the directories of the files of %s (%s)"
                        % (instance["name"], ", ".join(dirs) or "none"))
            return None
        return why

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
                sync_directory(self.state_dir)


def _check_record(record, version):
    """What the engine relies on in a record (RecordDamaged otherwise, _records.py). Version 0, written before the
    record had a version, may lack the fields added since (gate_passed, standbys, written, the instances' dirs)."""
    if version:
        _records.mapping(record, "the record", _RECORD_KEYS)
    else:
        _records.mapping(record, "the record", ("instances",), _RECORD_KEYS)
    names = set()
    instance_keys = ("dirs",) if version else ()
    for where, entry in _records.items(record["instances"], "instances"):
        _records.mapping(entry, where, _INSTANCE_KEYS + ("pid_before",) + instance_keys, ("port_before", "dirs", "gated"))
        name = _records.file_name(entry["name"], where + ".name")
        if name in names:
            raise _records.Wrong("%s.name: %s is named twice" % (where, name))
        names.add(name)
        if entry["state"] not in ("present", "absent"):
            raise _records.Wrong("%s.state: \"present\" or \"absent\" expected, got %r" % (where, entry["state"]))
        _records.optional_text(entry["unit"], where + ".unit")
        _records.optional_text(entry["health_url"], where + ".health_url")
        _records.integer(entry["port"], where + ".port", 1, 65535, none="port_before" not in entry)
        if "port_before" in entry:
            _records.integer(entry["port_before"], where + ".port_before", 1, 65535)
        if "gated" in entry:
            _records.boolean(entry["gated"], where + ".gated")
        _records.integer(entry["pid_before"], where + ".pid_before", 0, 2 ** 31, none=True)
        # null: recorded by a version that named no directories (the restore then goes by ``written`` alone).
        if entry.get("dirs") is not None:
            for item, path in _records.items(entry["dirs"], where + ".dirs"):
                _records.absolute_path(path, item)
    link_path = record.get("link_path")
    if link_path is not None:
        _records.absolute_path(link_path, "link_path")
    if record.get("link_before") is not None:
        _records.text(record["link_before"], "link_before")
        if link_path is None:
            raise _records.Wrong("link_before: the previous target of no link (link_path is null)")
    for where, path in _records.items(record.get("made", []), "made"):
        _records.absolute_path(path, where)
    for where, entry in _records.items(record.get("changed_dirs", []), "changed_dirs"):
        if not isinstance(entry, list) or len(entry) != 4:
            raise _records.Wrong("%s: [path, uid, gid, mode] expected, got %s" % (where, _records.shown(entry)))
        _records.absolute_path(entry[0], where + "[0]")
        _records.integer(entry[1], where + "[1]", 0, 2 ** 32 - 1)
        _records.integer(entry[2], where + "[2]", 0, 2 ** 32 - 1)
        _records.integer(entry[3], where + "[3]", 0, 0o7777)
    _records.boolean(record.get("gate_passed", True), "gate_passed")
    for where, name in _records.items(record.get("standbys", []), "standbys"):
        _records.text(name, where, empty=False)
    written = record.get("written", {})
    if not isinstance(written, dict):
        raise _records.Wrong("written: an object expected, got %s" % _records.shown(written))
    for path, checksum in written.items():
        _records.absolute_path(path, "written")
        _records.digest(checksum, "written[%s]" % path)


def _directories(instance):
    """The directories of an instance's files."""
    return set(os.path.dirname(spec["path"]) for spec in instance.get("files") or [])


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
