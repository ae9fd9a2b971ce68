# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What can go wrong in a rollout, as types: the module reports ``rolled_back`` from the type, never from the text."""

from __future__ import annotations


class RolloutFailed(Exception):
    """A step failed; the message says what and what was done about it."""


class PreflightFailed(RolloutFailed):
    """Found before the first write (a spec, an owner, the binary, a file the config names, or the master's own
    kube-scheduler refusing the new config): nothing was changed. ``plan`` and ``diff`` are the plan that was refused,
    when planning got that far."""

    def __init__(self, message, plan=None, diff=None):
        super(PreflightFailed, self).__init__(message)
        self.plan = plan
        self.diff = diff


class ReadChanged(PreflightFailed):
    """What the controller rendered from (the files the plan read, the directories it resolved) is not what the
    master holds now: nothing was changed; the controller reads them again and renders anew. ``paths``: the ones
    that differ."""

    def __init__(self, paths):
        super(ReadChanged, self).__init__(
            "nothing was changed: %s changed on this master since the plan read it; read again"
            % ", ".join(paths))
        self.paths = paths


class RolledBack(RolloutFailed):
    """A change began and failed; everything it changed was put back (the message tells how each instance answers)."""
