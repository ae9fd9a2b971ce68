# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one way to replace a file on a host: what kubesched.schedulers.scheduler_config writes and what
the rollout engine writes, backs up and restores all go through here, so a fix reaches every write.

A write is all-or-nothing: the new bytes go to a temp file in the same directory (so the rename is atomic, and
hidden, so the kubelet ignores it), locked while it is written, given its owner, group and mode, synced, and only
then renamed over the file; on any failure the file is left as it was and the temp file removed. Temp files that
a killed run left are recognised by their name and removed by a later run (a locked one belongs to a running task).
The restore of a backup is such a write too, and a symbolic link is switched the same way.

Every failure to write, make or remove something here raises WriteFailed, which names the path, the master and the
file system (a full disk's bare "[Errno 28] No space left on device" names none of them, and a master has several
mounts), so every message built on it carries them.

Host code: stdlib only.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import fcntl
import grp
import hashlib
import os
import pwd
import re
import shutil
import socket
import tempfile

from ansible_collections.kubesched.schedulers.plugins.module_utils import _records

# Every temp name is ".<name><TEMP_MARK><random>" beside the file it replaces (plugins/plugin_utils/core/constants.py
# re-exports these for the controller and the tests).
TEMP_MARK = ".kubesched-tmp."
# The temp names of earlier versions, recognised as leftovers too: the module's ".<name>.<8 chars>.tmp", the
# engine's ".<name>.kubesched-<random>", its restore's and its link switch's fixed names.
_OLD_TEMP = r"\.[A-Za-z0-9_]{8}\.tmp|\.kubesched-(?:restore|link|[A-Za-z0-9_]{8})"
_OCTAL_MODE = re.compile(r"0?o?[0-7]{1,4}")
_SYMBOLIC_MODE = re.compile(r"([ugoa]*[-+=]([rwxXst]*|[ugo])(,|$))+")


# What each write failure means for the operator, after the file system's own words.
_WRITE_HINTS = {
    errno.ENOSPC: "the file system mounted at %(mount)s is full",
    errno.EDQUOT: "the disk quota of uid %(uid)s on the file system mounted at %(mount)s is used up",
    errno.EROFS: "the file system mounted at %(mount)s is read-only",
    errno.EACCES: "uid %(uid)s may not write there",
    errno.EPERM: ("uid %(uid)s may not change it (the file or directory belongs to another user, or is immutable or "
                  "append-only)"),
}


class WriteFailed(OSError):
    """A write, a new directory or a removal that failed, naming the path, the master and the file system. An OSError
    (same errno), so every handler of OSError handles it; ``reason`` is the part after the path."""

    def __init__(self, path, error, action="write", purpose=None):
        super().__init__(error.errno, error.strerror or str(error))
        self.path = _native(path)
        self.master = socket.gethostname()
        self.action = action
        self.purpose = purpose
        self.reason = _reason(self.path, error)

    def __str__(self):
        purpose = " (%s)" % self.purpose if self.purpose else ""
        return "could not %s %s%s on %s: %s" % (self.action, self.path, purpose, self.master, self.reason)


def _mount_point(path):
    """The mount point of the file system that holds ``path`` (or would hold it: its nearest existing parent)."""
    path = os.path.abspath(path)
    while not os.path.lexists(path) and path != os.path.dirname(path):
        path = os.path.dirname(path)
    while not os.path.ismount(path) and path != os.path.dirname(path):
        path = os.path.dirname(path)
    return path


def _reason(path, error):
    if error.errno is None:
        return str(error)
    words = "%s (%s)" % (error.strerror or os.strerror(error.errno), errno.errorcode.get(error.errno, error.errno))
    hint = _WRITE_HINTS.get(error.errno)
    return words + (": " + hint % {"mount": _mount_point(path), "uid": os.geteuid()} if hint else "")


@contextlib.contextmanager
def writing(path, action="write", purpose=None):
    """Any OSError inside becomes WriteFailed naming ``path`` (one that is already a WriteFailed passes as it is)."""
    try:
        yield
    except WriteFailed:
        raise
    except OSError as error:
        raise WriteFailed(path, error, action, purpose) from error


def _b(value):
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogateescape")


def _native(value):
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def temp_pattern(base):
    """The names of this collection's temp files for the file ``base`` (bytes), of this and earlier versions."""
    return re.compile(br"\." + re.escape(_b(base)) + br"(" + re.escape(_b(TEMP_MARK)) + br"[A-Za-z0-9_]+|"
                      + _b(_OLD_TEMP) + br")")


def mode_problem(mode):
    """Why ``mode`` cannot be used, or None. Integers are refused: an unquoted 600 is the decimal number 600
    (mode 0o1130), and an unquoted 0600 is 384; only a quoted string says what was meant."""
    if mode is None:
        return None
    if isinstance(mode, bool) or not isinstance(mode, str):
        return ('mode must be a quoted string such as "0600" or "u=rw,g=,o=", got the number %s: an unquoted 600 is '
                'the decimal number 600 (mode 0o1130) and an unquoted 0600 is 384 (0o600), so a number is refused '
                'rather than guessed' % (mode,))
    if _OCTAL_MODE.fullmatch(mode):
        return None
    if _SYMBOLIC_MODE.fullmatch(mode) and not mode.endswith(","):
        return None
    return 'mode %r is neither an octal mode such as "0600" nor a symbolic one such as "u=rw,g=,o="' % (mode,)


def account_problem(option, name):
    """Why the owner or group ``name`` cannot be used on this host, or None (a number is an id: always usable).
    Looked up before anything is written, so that a name that does not exist fails cleanly."""
    if name is None or str(name).isdigit():
        return None
    try:
        (pwd.getpwnam if option == "owner" else grp.getgrnam)(name)
    except (KeyError, ValueError):  # ValueError: a NUL in the name
        shown = ("%r" if not name.isprintable() else "%s") % (name,)
        return "%s %s does not exist on the host" % (option, shown)
    return None


def sha256(data):
    """The hex SHA-256 of bytes, or of text as UTF-8: the collection's one checksum (the rendered config's, the
    static pod annotation's, the engine's comparison of a wanted file with the host's)."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def sha256_file(path, sync=False):
    """The file's sha256; with ``sync``, its bytes are on the disk too (not only in the page cache)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
        if sync:
            os.fsync(handle.fileno())
    return digest.hexdigest()


def read_bytes(path):
    """The file's bytes, or None when it does not exist."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def remove_leftovers(directory, base):
    """Remove the temp files of earlier runs that were killed before their rename; returns their paths. A temp
    file is locked while a run writes it, so one that can be locked belongs to no running task."""
    pattern = temp_pattern(base)
    removed = []
    try:
        names = os.listdir(_b(directory))
    except OSError:
        return removed
    for name in names:
        if not pattern.fullmatch(name):
            continue
        path = os.path.join(_b(directory), name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a running task is writing it
            os.unlink(path)
            removed.append(_native(path))
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def write_atomically(path, data, ids=None, mode=None, prepare=None):
    """Replace ``path`` with ``data`` (bytes) through a locked temp file beside it.

    The temp file gets ``ids`` (uid, gid) and ``mode`` (an int) when given, then ``prepare(temp_path)`` runs on it
    (the module's owner, group, symbolic mode, SELinux context and attributes; its backup), and only then is it
    renamed over ``path``. Any failure before the rename leaves ``path`` as it was; the temp file is removed.
    ``path`` and the temp path have the same type (str or bytes). Returns the leftovers of killed runs that it
    removed first."""
    directory, base = os.path.split(path)
    removed = remove_leftovers(directory or ".", base)
    prefix = "." + _native(base) + TEMP_MARK
    tmp = None
    with writing(path):
        try:
            fd, tmp = tempfile.mkstemp(dir=directory or ".", prefix=_b(prefix) if isinstance(path, bytes) else prefix)
            with os.fdopen(fd, "wb") as handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # a later run's cleanup leaves a locked temp file alone
                handle.write(data)
                handle.flush()
                if ids is not None:
                    os.fchown(handle.fileno(), *ids)
                if mode is not None:
                    os.fchmod(handle.fileno(), mode)
                os.fsync(handle.fileno())
                if prepare is not None:
                    prepare(tmp)
                os.replace(tmp, path)
            dir_fd = os.open(directory or ".", os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        finally:
            if tmp is not None and os.path.lexists(tmp):
                os.unlink(tmp)
    return removed


def sync_directory(path):
    """The directory's entries (a file made, renamed or removed in it) on the disk, not only in the page cache."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def attribute_changes(module, path, diff):
    """Whether the owner, group, mode, SELinux context or attributes of ``path`` differ from an AnsibleModule's file
    arguments, with Ansible's diff of them in ``diff``; nothing is changed. Ansible's own comparison, asked of a
    check-mode view of the module (the module itself is left as it is), so that a change of attributes alone is
    written through a temp file too, all at once."""
    view = copy.copy(module)
    view.check_mode = True
    return view.set_fs_attributes_if_different(view.load_file_common_arguments(view.params, path=path), False, diff=diff)


def file_arguments(module, tmp, like):
    """A ``prepare`` step for an AnsibleModule's write: the temp file gets the owner, group, mode and SELinux context
    of the file it replaces (so unspecified ones stay as they are and a symbolic mode applies to that file's mode),
    then the module's file arguments (owner, group, mode, SELinux options, attributes). A failure fails the task
    through the module (the temp file is then removed)."""
    if os.path.exists(like):
        current = os.stat(like)
        try:
            os.chown(tmp, current.st_uid, current.st_gid)
        except PermissionError:
            pass  # not root: the temp file is this user's, as a new file would be
        os.chmod(tmp, current.st_mode & 0o7777)
        if module.selinux_enabled():
            module.set_context_if_different(_native(tmp), module.selinux_context(_native(like)), False)
    tmp_args = module.load_file_common_arguments(module.params, path=_native(tmp))
    module.set_fs_attributes_if_different(tmp_args, False)


def switch_link(path, src):
    """Point the symbolic link ``path`` at ``src`` in one rename, as a write replaces a file."""
    tmp = os.path.join(os.path.dirname(path), ".%s%slink" % (os.path.basename(path), TEMP_MARK))
    with writing(path, purpose="a link to %s" % src):
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(src, tmp)
        try:
            os.replace(tmp, path)
        finally:
            if os.path.islink(tmp):
                os.unlink(tmp)


def remove_path(path):
    with writing(path, action="remove"):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)


def _same_file(path, data, st):
    """Whether ``path`` has the bytes ``data`` and the owner, group and mode of ``st``."""
    try:
        now = os.stat(path)
    except OSError:
        return False
    return ((now.st_uid, now.st_gid, now.st_mode & 0o7777) == (st.st_uid, st.st_gid, st.st_mode & 0o7777)
            and now.st_size == len(data) and read_bytes(path) == data)


class Backup(object):
    """What a change replaces, kept in ``<state_dir>/<name>/backup/`` until the change has passed the master's last
    gate (kubeadm's semantics: one directory per instance)."""

    def __init__(self, state_dir, name):
        self.dir = os.path.join(state_dir, name, "backup")
        self.entries = []  # {"path", "existed", "copy", "sha256" (of the copy; none in an index of version 0)}

    @classmethod
    def load(cls, state_dir, name, record=None):
        """The backup an earlier call saved (its index, checked: _records.py), for a restore or a release in a later
        call; None when there is none. ``record``: the path of the change's record, named in what the operator is
        told to do when the index cannot be trusted."""
        backup = cls(state_dir, name)
        index = os.path.join(backup.dir, "index.json")
        advice = ("The change recorded in %s backed up the files of %s there: look at the master, put back by hand "
                  "what the change wrote from the copies in %s (the numbered files, in the order the index named "
                  "them), then remove %s and that record; the next run plans from what is on the master"
                  % (record or "the state directory", name, backup.dir, backup.dir))
        body = _records.read(index, backup._check_index, advice)
        if body is None:
            return None
        backup.entries = body if isinstance(body, list) else body["entries"]
        return backup

    def _check_index(self, body, version):
        """What restore relies on: each entry an absolute path; whether it existed; its copy, a numbered file of this
        backup's directory, with (from version 1) the sha256 of the copy."""
        entries = body if version == 0 else _records.mapping(body, "the index", ("entries",))["entries"]
        keys = ("path", "existed", "copy") + (("sha256",) if version else ())
        for where, entry in _records.items(entries, "entries"):
            _records.mapping(entry, where, keys)
            _records.absolute_path(entry["path"], where + ".path")
            if _records.boolean(entry["existed"], where + ".existed"):
                copy = _records.text(entry["copy"], where + ".copy")
                if os.path.dirname(copy) != self.dir or not os.path.basename(copy).isdigit():
                    raise _records.Wrong("%s.copy: a numbered file of %s expected, got %r" % (where, self.dir, copy))
                if version:
                    _records.digest(entry["sha256"], where + ".sha256")
            elif entry["copy"] is not None or entry.get("sha256") is not None:
                raise _records.Wrong("%s: a file that did not exist has no copy" % where)

    def save(self, paths):
        """Each file copied (synced, its sha256 in the index), then the index written atomically and durably."""
        remove_path(self.dir)
        instance_dir = os.path.dirname(self.dir)
        with writing(self.dir, action="make", purpose="the backup directory"):
            made = not os.path.isdir(instance_dir)
            os.makedirs(self.dir, 0o700)
            os.chmod(instance_dir, 0o700)
            # The new directories' entries on the disk (the index's write syncs the backup directory itself).
            sync_directory(instance_dir)
            if made:
                sync_directory(os.path.dirname(instance_dir))
        for index, path in enumerate(paths):
            entry = {"path": path, "existed": os.path.isfile(path), "copy": None, "sha256": None}
            if entry["existed"]:
                entry["copy"] = os.path.join(self.dir, str(index))
                with writing(entry["copy"], purpose="the backup of %s" % path):
                    shutil.copy2(path, entry["copy"])
                    st = os.stat(path)
                    os.chown(entry["copy"], st.st_uid, st.st_gid)
                    entry["sha256"] = sha256_file(entry["copy"], sync=True)
            self.entries.append(entry)
        write_atomically(os.path.join(self.dir, "index.json"), _records.encode({"entries": self.entries}), None, 0o600)

    def restore(self, refusal=None):
        """Files back in reverse write order (the unit or manifest first goes back first); new files removed.
        ``refusal(path)``: why a path may not be written (the record's rule), or None. A refused path, or a copy whose
        sha256 is not the index's, is never written: it is reported when the file differs from its backup. Every
        file is tried; returns the ones that could not (or may not) be put back."""
        problems = []
        for entry in reversed(self.entries):
            refused = refusal(entry["path"]) if refusal is not None else None
            try:
                if entry["existed"]:
                    st = os.stat(entry["copy"])
                    with open(entry["copy"], "rb") as handle:
                        data = handle.read()
                    # A file the change never replaced (its write failed first) is not written again: on a full
                    # disk that write would fail too, and report a file as not restored that never changed.
                    if not _same_file(entry["path"], data, st):
                        if refused is None and entry.get("sha256") not in (None, sha256(data)):
                            refused = "its copy does not match the sha256 the backup's index recorded for it"
                        if refused is not None:
                            problems.append("%s (%s; its copy is %s)" % (entry["path"], refused, entry["copy"]))
                            continue
                        write_atomically(entry["path"], data, (st.st_uid, st.st_gid), st.st_mode & 0o7777)
                    elif refused is not None:
                        continue  # as it was before the change: nothing to write
                    with writing(entry["path"]):
                        os.utime(entry["path"], ns=(st.st_atime_ns, st.st_mtime_ns))
                elif os.path.lexists(entry["path"]):
                    if refused is not None:
                        problems.append("%s (%s; it did not exist before the change and is left as it is)"
                                        % (entry["path"], refused))
                        continue
                    with writing(entry["path"], action="remove"):
                        os.unlink(entry["path"])
            except WriteFailed as exc:
                problems.append("%s on %s (%s; its copy is %s)" % (entry["path"], exc.master, exc.reason, entry["copy"]))
            except OSError as exc:  # its copy could not be read
                problems.append("%s (%s; its copy is %s)" % (entry["path"], exc, entry["copy"]))
        return problems

    def ran_before(self):
        """Whether the instance ran before this change: its unit or manifest (written last) existed."""
        return bool(self.entries) and self.entries[-1]["existed"]

    def clear(self):
        remove_path(self.dir)
        instance_dir = os.path.dirname(self.dir)
        if os.path.isdir(instance_dir) and not os.listdir(instance_dir):
            with writing(instance_dir, action="remove", purpose="the emptied directory of the backup"):
                os.rmdir(instance_dir)
