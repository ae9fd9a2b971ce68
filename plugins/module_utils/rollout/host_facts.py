# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The facts of a master the planning call reports.

The controller asks for them in the planning call, so that planning a master is one call, not a fact gathering plus
a call. Host code: stdlib only."""

from __future__ import annotations

import grp
import os
import pwd
import stat


def host_facts():
    """The kernel's machine name (the release binary's architecture) and whether systemd booted this host (its
    runtime directory exists: the test sd_booted() and Ansible's service_mgr fact make)."""
    return {"machine": os.uname().machine, "systemd": os.path.isdir("/run/systemd/system")}


def account_facts(user, group):
    return {"user_exists": _exists(pwd.getpwnam, user), "group_exists": _exists(grp.getgrnam, group)}


def binary_facts(path, run):
    """Whether the binary exists and what its ``--version`` says (None when it cannot say)."""
    version = None
    if os.path.isfile(path) and os.access(path, os.X_OK) and run:
        try:
            rc, stdout, stderr = run([path, "--version"])
        except OSError:  # a file this master cannot execute (another architecture): it says nothing
            rc, stdout, stderr = 1, "", ""
        version = (stdout or stderr).strip() if rc == 0 else None
    return {"exists": os.path.isfile(path), "version_output": version}


def resolve_path(path):
    """What a path is on this host, read-only: its real path (symbolic links followed; a missing tail is kept, as
    `realpath --canonicalize-missing` keeps it) and, for an existing directory, its device and inode (what the kubelet
    lists, so a bind mount counts too). Two names for one directory pass every comparison of strings."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return {"path": real, "directory": None}
    return {"path": real, "directory": [st.st_dev, st.st_ino] if stat.S_ISDIR(st.st_mode) else None}


def _exists(lookup, name):
    try:
        lookup(name)
    except KeyError:
        return False
    return True
