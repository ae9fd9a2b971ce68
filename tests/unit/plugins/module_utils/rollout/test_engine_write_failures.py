# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every write failure names the path it could not write, the master and the file system, on real failing file
systems: a full tmpfs (ENOSPC), a read-only one (EROFS), a directory another user owns (EACCES, written as nobody), an
immutable directory (EPERM). The one writer and the backup (module_utils/_files.py), the rollout engine on a full
disk (its message carries the writer's words; the files are as they were), every other writer of the engine (its
directories, the parents it makes, owners and modes, the held change's record, the standby's files, the backups'
directories; a restore that cannot write), and the two modules that write through real ansible-playbook runs.
Mounting needs root: without it the module is skipped, loudly.

EDQUOT has the same wording path (the errno's table) but no real test: this kernel has neither tmpfs quotas nor
ext4's quota format (CONFIG_TMPFS_QUOTA, CONFIG_QFMT_V2), so no file system here can run out of quota; each writer
is also given every errno by its os function failing (the last test), EDQUOT among them."""

from __future__ import annotations

import errno
import json
import os
import pickle
import socket
import subprocess
import sys

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils._files import (
    TEMP_MARK, Backup, WriteFailed, remove_path, switch_link, write_atomically, writing)
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.file_specs import make_parents, set_attributes
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.held_change import HeldChange, remove_backups
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import Engine
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import RolledBack

from test_engine import FakeStrategy, FakeWaiter, converge, instance, params, snapshot

MASTER = socket.gethostname()
NOBODY = 65534

if os.geteuid() != 0:
    pytest.skip("the write failures need root to mount a full and a read-only tmpfs: not run as uid %d" % os.geteuid(),
                allow_module_level=True)


class Mounts(object):
    """Small tmpfs mounts of one test, each unmounted at its end."""

    def __init__(self):
        self.points = []

    def tmpfs(self, path, size="64k"):
        path.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=0755" % size, "kubesched-test", str(path)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            pytest.skip("cannot mount a tmpfs here (%s): the write failures on real file systems are not run"
                        % done.stderr.strip())
        self.points.append(path)
        return path

    def full(self, path):
        """Fill the file system at ``path`` to its last byte."""
        with open(str(path / ".filler"), "wb", buffering=0) as handle:
            with pytest.raises(OSError) as full:
                while True:
                    handle.write(b"\0" * 4096)
        assert full.value.errno == errno.ENOSPC

    def read_only(self, path):
        subprocess.run(["mount", "-o", "remount,ro", str(path)], check=True)

    def unmount_all(self):
        for path in reversed(self.points):
            subprocess.run(["umount", "--lazy", str(path)], check=False)


@pytest.fixture
def mounts():
    found = Mounts()
    try:
        yield found
    finally:
        found.unmount_all()


def said(action, *args):
    """The message of the WriteFailed that ``action(*args)`` raises."""
    with pytest.raises(WriteFailed) as failure:
        action(*args)
    return str(failure.value)


def temp_files(directory):
    return [name for name in os.listdir(str(directory)) if TEMP_MARK in name]


def as_nobody(action):
    """``action()`` in a child process as uid and gid 65534; returns what it raised (or None), as text and errno."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        result = (None, None)
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            action()
        except OSError as error:
            result = (str(error), error.errno)
        with os.fdopen(write, "wb") as handle:
            pickle.dump(result, handle)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as handle:
        result = pickle.load(handle)
    os.waitpid(pid, 0)
    return result


# --- the one writer ---------------------------------------------------------------------------------------------

def test_a_full_disk_names_the_file_the_master_and_the_mount_and_leaves_the_file_as_it_was(tmp_path, mounts):
    disk = mounts.tmpfs(tmp_path / "disk")
    dest = disk / "scheduler.yaml"
    dest.write_text("old\n")
    mounts.full(disk)
    with pytest.raises(WriteFailed) as failure:
        write_atomically(str(dest), b"new\n" * 4096, mode=0o600)
    assert str(failure.value) == ("could not write %s on %s: No space left on device (ENOSPC): the file system mounted "
                                  "at %s is full" % (dest, MASTER, disk))
    assert failure.value.errno == errno.ENOSPC and isinstance(failure.value, OSError)
    assert dest.read_text() == "old\n" and temp_files(disk) == []


def test_a_read_only_file_system_is_named_for_the_write_the_link_the_removal_and_the_backup(tmp_path, mounts):
    disk = mounts.tmpfs(tmp_path / "disk")
    (disk / "scheduler.yaml").write_text("old\n")
    mounts.read_only(disk)
    tail = "on %s: Read-only file system (EROFS): the file system mounted at %s is read-only" % (MASTER, disk)
    assert said(write_atomically, str(disk / "scheduler.yaml"), b"new\n") == (
        "could not write %s/scheduler.yaml %s" % (disk, tail))
    assert said(switch_link, str(disk / "kube-scheduler"), "/opt/x") == (
        "could not write %s/kube-scheduler (a link to /opt/x) %s" % (disk, tail))
    assert said(remove_path, str(disk / "scheduler.yaml")) == "could not remove %s/scheduler.yaml %s" % (disk, tail)
    assert said(Backup(str(disk), "one").save, [str(disk / "scheduler.yaml")]) == (
        "could not make %s/one/backup (the backup directory) %s" % (disk, tail))
    assert (disk / "scheduler.yaml").read_text() == "old\n"


def test_a_backup_on_a_full_disk_names_the_copy_and_what_it_is_a_copy_of(tmp_path, mounts):
    state = mounts.tmpfs(tmp_path / "state")
    config = tmp_path / "scheduler.yaml"
    config.write_bytes(b"x" * 131072)
    with pytest.raises(WriteFailed) as failure:
        Backup(str(state), "one").save([str(config)])
    assert str(failure.value) == (
        "could not write %s/one/backup/0 (the backup of %s) on %s: No space left on device (ENOSPC): the file system "
        "mounted at %s is full" % (state, config, MASTER, state))


def test_a_directory_of_another_user_is_named_with_the_uid_that_may_not_write(tmp_path):
    os.chmod(str(tmp_path), 0o755)  # nobody may enter it, not write in it
    dest = tmp_path / "scheduler.yaml"
    said, number = as_nobody(lambda: write_atomically(str(dest), b"new\n"))
    assert number == errno.EACCES
    assert said == "could not write %s on %s: Permission denied (EACCES): uid %d may not write there" % (
        dest, MASTER, NOBODY)
    assert not dest.exists()


def test_an_immutable_directory_is_named_too(tmp_path, mounts):
    disk = mounts.tmpfs(tmp_path / "disk")
    locked = disk / "locked"
    locked.mkdir()
    if subprocess.run(["chattr", "+i", str(locked)], capture_output=True, check=False).returncode != 0:
        pytest.skip("chattr +i is not possible here: the immutable directory is not tried")
    try:
        with pytest.raises(WriteFailed) as failure:
            write_atomically(str(locked / "scheduler.yaml"), b"new\n")
    finally:
        subprocess.run(["chattr", "-i", str(locked)], check=True)
    assert str(failure.value) == (
        "could not write %s/scheduler.yaml on %s: Operation not permitted (EPERM): uid 0 may not change it (the file "
        "or directory belongs to another user, or is immutable or append-only)" % (locked, MASTER))


def test_a_quota_is_worded_like_a_full_disk():
    """No file system here can run out of quota (the module's docstring); the wording is the errno's table."""
    failure = WriteFailed("/etc/kubernetes/schedulers/batch.yaml", OSError(errno.EDQUOT, os.strerror(errno.EDQUOT)))
    assert str(failure) == (
        "could not write /etc/kubernetes/schedulers/batch.yaml on %s: Disk quota exceeded (EDQUOT): the disk quota of "
        "uid %d on the file system mounted at / is used up" % (MASTER, os.geteuid()))


def test_a_write_failed_error_passes_through_writing_unchanged():
    inner = WriteFailed("/a", OSError(errno.ENOSPC, "No space left on device"))
    with pytest.raises(WriteFailed) as failure:
        with writing("/b"):
            raise inner
    assert failure.value is inner


# --- the engine on a full disk: its message carries the writer's words --------------------------------------------

def test_the_engine_on_a_full_config_disk_names_the_file_restores_nothing_changed_and_leaves_no_temp(tmp_path, mounts):
    disk = mounts.tmpfs(tmp_path / "disk", size="256k")
    state = str(tmp_path / "state")  # the backups on another file system, as /var/lib is beside /etc/kubernetes
    converge(params(disk, [instance(disk, "one", 10259)], state_dir=state))
    before = snapshot(disk)
    mounts.full(disk)
    changed = params(disk, [instance(disk, "one", 10259, config="a: %s\n" % ("2" * 65536))], state_dir=state)
    eng = Engine(changed, FakeStrategy(), FakeWaiter())
    plan, _diff, _changed = eng.plan()
    with pytest.raises(RolledBack) as failure:
        eng.apply(plan)
    message = str(failure.value)
    assert message.startswith("could not write %s/etc/one.yaml on %s: No space left on device (ENOSPC): the file "
                              "system mounted at %s is full. Restored: " % (disk, MASTER, disk)), message
    assert "NOT restored" not in message  # the file its write never replaced is not written again on a full disk
    os.unlink(str(disk / ".filler"))
    assert snapshot(disk) == before and [name for directory, _dirs, names in os.walk(str(disk))
                                         for name in names if TEMP_MARK in name] == []


# --- the modules, through real ansible-playbook runs ----------------------------------------------------------------

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: config
      kubesched.schedulers.scheduler_config:
        config: {profiles: [{schedulerName: default-scheduler}]}
        dest: "{{ disk }}/scheduler.yaml"
      ignore_errors: true
    - name: cert
      kubesched.schedulers.serving_cert:
        cert_path: "{{ read_only }}/pki/kube-scheduler.crt"
        key_path: "{{ read_only }}/pki/kube-scheduler.key"
        ca_cert: "{{ ca }}/ca.crt"
        ca_key: "{{ ca }}/ca.key"
        common_name: kube-scheduler
        ip_sans: [127.0.0.1]
      ignore_errors: true
"""


def test_the_modules_name_the_path_and_the_master(tmp_path, mounts, ansible_playbook):
    disk = mounts.tmpfs(tmp_path / "disk")
    (disk / "scheduler.yaml").write_text("old\n")
    mounts.full(disk)
    read_only = mounts.tmpfs(tmp_path / "read-only")
    (read_only / "pki").mkdir()
    mounts.read_only(read_only)
    ca = tmp_path / "ca"
    ca.mkdir()
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(ca / "ca.key"), "-out", str(ca / "ca.crt"), "-subj", "/CN=test-ca", "-days", "2"],
                   capture_output=True, check=True)
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    proc = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                             "-e", "disk=%s read_only=%s ca=%s" % (disk, read_only, ca), "play.yml"],
                            cwd=tmp_path, env=dict(ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
                                                   ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp")))
    report = json.loads(proc.stdout[proc.stdout.find("{\n"):])
    results = dict((task["task"]["name"], task["hosts"]["localhost"]) for play in report["plays"]
                   for task in play["tasks"])
    assert results["config"]["msg"] == (
        "could not write %s/scheduler.yaml on %s: No space left on device (ENOSPC): the file system mounted at %s is "
        "full; %s/scheduler.yaml was left as it was" % (disk, MASTER, disk, disk))
    assert results["cert"]["msg"] == (
        "could not write %s/pki/kube-scheduler.key on %s: Read-only file system (EROFS): the file system mounted at "
        "%s is read-only" % (read_only, MASTER, read_only))
    assert "Traceback" not in proc.stdout + proc.stderr
    assert (disk / "scheduler.yaml").read_text() == "old\n" and temp_files(disk) == []


# --- every other writer of the engine: directories, attributes, the record, the standby, the backups ---------------

def engine_failure(p, waiter=None):
    """The message of the RolledBack that applying ``p``'s plan raises."""
    eng = Engine(p, FakeStrategy(), waiter or FakeWaiter())
    plan, _diff, _changed = eng.plan()
    with pytest.raises(RolledBack) as failure:
        eng.apply(plan)
    return str(failure.value)


def reason(number, mount):
    words = {errno.ENOSPC: "No space left on device (ENOSPC): the file system mounted at %s is full" % mount,
             errno.EROFS: "Read-only file system (EROFS): the file system mounted at %s is read-only" % mount}
    return words[number]


def test_a_parent_directory_on_a_file_system_without_inodes_is_named_with_the_file_it_was_for(tmp_path, mounts):
    disk = mounts.tmpfs(tmp_path / "disk", size="64k,nr_inodes=1")  # its root directory takes the one inode
    before = snapshot(disk)
    message = engine_failure(params(disk, [instance(disk, "one", 10259)], state_dir=str(tmp_path / "state")))
    assert message.startswith("could not make %s/etc (a parent directory of %s/etc/one.yaml) on %s: %s. Restored: "
                              % (disk, disk, MASTER, reason(errno.ENOSPC, disk))), message
    assert "NOT" not in message and snapshot(disk) == before


def test_a_directory_of_the_rollout_on_a_read_only_file_system_is_named(tmp_path, mounts):
    disk = mounts.tmpfs(tmp_path / "disk")
    (disk / "made").mkdir(mode=0o755)
    mounts.read_only(disk)
    state = str(tmp_path / "state")
    missing = params(tmp_path, [instance(tmp_path, "one", 10259)], state_dir=state,
                     directories=[{"path": str(disk / "new"), "owner": "root", "group": "root", "mode": "0750"}])
    assert engine_failure(missing).startswith("could not make %s/new on %s: %s. Restored: nothing had changed yet."
                                              % (disk, MASTER, reason(errno.EROFS, disk)))
    other_mode = dict(missing, directories=[{"path": str(disk / "made"), "owner": "root", "group": "root", "mode": "0750"}])
    assert engine_failure(other_mode).startswith("could not set the owner and mode of %s/made on %s: %s. Restored: "
                                                 % (disk, MASTER, reason(errno.EROFS, disk)))
    assert stat_mode(disk / "made") == 0o755 and not os.path.exists(str(tmp_path / "etc"))


def stat_mode(path):
    return os.stat(str(path)).st_mode & 0o7777


def test_an_attribute_change_that_fails_half_way_is_named_and_puts_back_what_it_changed(tmp_path, mounts):
    """The config's mode is set, the unit's cannot be (its directory is another, read-only, file system): the
    config gets its mode back (an attribute change is not backed up: it restarts nothing)."""
    root = tmp_path / "master"
    units = mounts.tmpfs(root / "units")
    state = str(tmp_path / "state")
    converge(params(root, [instance(root, "one", 10259)], state_dir=state))
    mounts.read_only(units)
    changed = instance(root, "one", 10259)
    for spec in changed["files"]:
        spec["mode"] = "0600"
    message = engine_failure(params(root, [changed], state_dir=state))
    assert message.startswith("could not set the owner and mode of %s/one.service on %s: %s. Restored: the owner and "
                              "mode of %s/etc/one.yaml" % (units, MASTER, reason(errno.EROFS, units), root)), message
    assert stat_mode(root / "etc" / "one.yaml") == 0o640 and stat_mode(units / "one.service") == 0o644


def test_the_state_directory_on_a_read_only_file_system_is_named_before_anything_is_written(tmp_path, mounts):
    disk = mounts.tmpfs(tmp_path / "var")
    mounts.read_only(disk)
    message = engine_failure(params(tmp_path, [instance(tmp_path, "one", 10259)], state_dir=str(disk / "state")))
    assert message.startswith("could not make %s/state (the state directory) on %s: %s. Restored: nothing had changed "
                              "yet." % (disk, MASTER, reason(errno.EROFS, disk))), message
    assert not os.path.exists(str(tmp_path / "etc"))


def test_a_standby_on_a_full_disk_is_named_and_nothing_of_it_is_left(tmp_path, mounts):
    from test_standbys import Waiter, setup

    root, p = setup(tmp_path)
    run = mounts.tmpfs(tmp_path / "run")
    mounts.full(run)
    before = snapshot(os.path.join(root, "etc"))
    message = engine_failure(p, Waiter([], root))
    assert message.startswith("could not write %s/kubesched-standby-kube-scheduler.service on %s: %s. Restored: "
                              % (run, MASTER, reason(errno.ENOSPC, run))), message
    os.unlink(str(run / ".filler"))
    assert snapshot(os.path.join(root, "etc")) == before and os.listdir(str(run)) == []


class ReadOnlyAtTheGate(FakeWaiter):
    """The file system goes read-only while the new process starts (ext4's errors=remount-ro) and the gate fails:
    the restore cannot write either, and says what it could not put back, where, and where the copies are."""

    def __init__(self, mounts, disk):
        super().__init__(failing={10259})
        self.remount = lambda: mounts.read_only(disk)

    def wait_new_healthy(self, port, url, previous_pid, timeout, settle):
        self.remount()
        return super().wait_new_healthy(port, url, previous_pid, timeout, settle)


def test_a_restore_that_cannot_write_names_each_path_the_master_and_the_copies(tmp_path, mounts):
    disk = mounts.tmpfs(tmp_path / "disk")
    state = str(tmp_path / "state")
    directory = {"path": str(disk / "etc"), "owner": "root", "group": "root", "mode": "0755"}
    converge(params(disk, [instance(disk, "one", 10259)], state_dir=state, directories=[directory]))
    changed = params(disk, [instance(disk, "one", 10259, config="a: 2\n")], state_dir=state,
                     directories=[dict(directory, mode="0750")])
    message = engine_failure(changed, ReadOnlyAtTheGate(mounts, disk))
    tail = reason(errno.EROFS, disk)
    assert ("NOT restored: %s/etc/one.yaml on %s (%s; its copy is %s/one/backup/0);"
            % (disk, MASTER, tail, state) in message), message
    # The unit the change never wrote is not touched (once its times were set back, which failed here too).
    assert "%s/units/one.service" % disk not in message
    assert "NOT restored: directory %s/etc on %s (%s)" % (disk, MASTER, tail) in message
    assert "Backups are kept in %s." % state in message


def test_a_commit_on_a_read_only_state_directory_names_the_backup_it_could_not_remove(tmp_path, mounts):
    var = mounts.tmpfs(tmp_path / "var", size="1m")
    state = str(var / "state")
    eng = Engine(params(tmp_path, [instance(tmp_path, "one", 10259)], state_dir=state), FakeStrategy(), FakeWaiter())
    eng.apply(eng.plan()[0])
    mounts.read_only(var)
    with pytest.raises(WriteFailed) as failure:
        eng.commit()
    assert str(failure.value) == "could not remove %s/one/backup on %s: %s" % (state, MASTER, reason(errno.EROFS, var))


def forget(root):
    held = HeldChange(root)
    held.save()
    held.forget()


# Each writer of the engine that is not the one atomic writer, with the os function it calls failing with each errno
# a master's file system gives (EDQUOT has no real file system here: the module's docstring).
WRITERS = {
    "make_parents": ("mkdir", lambda root: make_parents(root + "/etc/one.yaml"),
                     "could not make {root}/etc (a parent directory of {root}/etc/one.yaml)"),
    "set_attributes": ("chown", lambda root: set_attributes(dict(FILE, path=root + "/one.yaml")),
                       "could not set the owner and mode of {root}/one.yaml"),
    "the record": ("makedirs", lambda root: HeldChange(root + "/state").save(),
                   "could not make {root}/state (the state directory)"),
    "the record's removal": ("unlink", forget, "could not remove {root}/held-change.json (the "
                             "record of the change)"),
    "a backup's directory": ("rmdir", lambda root: remove_backups([root + "/one/backup"]),
                             "could not remove {root}/one (the emptied directory of the backup)"),
}
FILE = {"content": "a: 1\n", "owner": "root", "group": "root", "mode": "0600"}


@pytest.mark.parametrize("number", [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT],
                         ids=lambda number: errno.errorcode[number])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_writer_names_the_path_and_the_master_for_every_errno(tmp_path, monkeypatch, writer, number):
    function, call, said = WRITERS[writer]
    root = str(tmp_path)
    (tmp_path / "one.yaml").write_text("a: 1\n")
    (tmp_path / "one").mkdir()  # its backup removed already: the emptied directory goes

    def fails(*args, **kwargs):
        raise OSError(number, os.strerror(number))

    monkeypatch.setattr(os, function, fails)
    with pytest.raises(WriteFailed) as failure:
        call(root)
    assert str(failure.value).startswith(said.format(root=root) + " on %s: %s (%s)" % (
        MASTER, os.strerror(number), errno.errorcode[number])), str(failure.value)
    assert failure.value.errno == number
