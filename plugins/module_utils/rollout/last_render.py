# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The input a static-pod master's next plan will most likely get, kept there by its last apply.

It lets the plan be answered in the call that reads the master. A static-pod plan takes two calls: the controller
renders from what the first one read (kubeadm's manifest, the kubeconfigs' checksums), then the second compares.
Once an apply succeeded, the controller knows what the next read will find (the files it wrote, the ones it
removed), so it renders the next plan's input with it and the apply keeps it here. The next read call then also
plans with it, and the controller uses that answer only when the input it renders from the fresh read has the same
checksum (the canonical JSON's sha256, as records have): the kept input is never trusted, only compared. When it
differs, is missing or cannot be read, the second call runs as before. The master's kube-scheduler is never run on a
kept input (a plan of it that would, for a changed config, is left to the second call).
Host code: stdlib only; the controller computes the same checksum with these functions.
"""

from __future__ import annotations

import os

from ansible_collections.kubesched.schedulers.plugins.module_utils import _records
from ansible_collections.kubesched.schedulers.plugins.module_utils._files import write_atomically

FILE_NAME = "last-render.json"
# What each call sets for itself (how it runs, not what it compares): a plan and an apply of the same render differ
# only there, and the read call that plans ahead gives them.
PER_CALL = ("mode", "state_dir", "hold", "health_timeout", "settle", "lock", "unchanged", "remember", "speculate")
_ADVICE = "it is only a shortcut: the next apply writes it again"


def plan_input(engine):
    """The part of the engine's arguments that a render decides (the instances and their files, the directories,
    the checks asked for)."""
    return dict((key, value) for key, value in engine.items() if key not in PER_CALL)


def digest(body):
    """The checksum both sides compare (the canonical JSON's sha256)."""
    return _records.checksum(body)


def save(state_dir, body):
    """Keep ``body`` (plan_input of the next plan) on the master, readable by root alone: it holds the rendered files,
    secrets among them, as the backups beside it do."""
    write_atomically(os.path.join(state_dir, FILE_NAME), _records.encode({"plan_input": body}), (0, 0), 0o600)


def load(state_dir):
    """The kept plan input, or None when there is none or it cannot be read (a shortcut, never a reason to fail)."""
    try:
        record = _records.read(os.path.join(state_dir, FILE_NAME), _check, _ADVICE)
    except _records.RecordDamaged:
        return None
    return record["plan_input"] if record else None


def _check(body, version):
    _records.mapping(body, "the record", ("plan_input",))
    if not isinstance(body["plan_input"], dict):
        raise _records.Wrong("plan_input: a mapping expected")
