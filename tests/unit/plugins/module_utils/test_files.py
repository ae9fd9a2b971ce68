# -*- coding: utf-8 -*-
"""The one writer (module_utils/_files.py) on a real directory: what scheduler_config and the rollout engine share."""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils._files import (
    Backup, TEMP_MARK, remove_leftovers, switch_link, write_atomically)


def test_a_failure_before_the_rename_leaves_the_file_and_no_temp(tmp_path):
    dest = tmp_path / "scheduler.yaml"
    dest.write_text("old\n")

    def refuse(tmp):
        assert os.path.basename(tmp).startswith(".scheduler.yaml" + TEMP_MARK)
        raise OSError("refused")

    with pytest.raises(OSError, match="refused"):
        write_atomically(str(dest), b"new\n", prepare=refuse)
    assert dest.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["scheduler.yaml"]


def test_mode_is_on_the_file_before_it_appears(tmp_path):
    dest = tmp_path / "kubeconfig"
    seen = []
    write_atomically(str(dest).encode(), b"token\n", mode=0o600,
                     prepare=lambda tmp: seen.append(stat.S_IMODE(os.stat(tmp).st_mode)))
    assert seen == [0o600] and stat.S_IMODE(os.stat(dest).st_mode) == 0o600 and dest.read_bytes() == b"token\n"


def test_leftovers_of_every_writer_version_are_removed_and_nothing_else(tmp_path):
    ours = [".m.yaml" + TEMP_MARK + "x1y2z3", ".m.yaml.abcd1234.tmp", ".m.yaml.kubesched-a1b2c3d4",
            ".m.yaml.kubesched-restore", ".m.yaml.kubesched-link"]
    others = [".m.yaml.unrelated", ".other.yaml" + TEMP_MARK + "x1y2z3", "m.yaml"]
    for name in ours + others:
        (tmp_path / name).write_text("x")
    removed = remove_leftovers(str(tmp_path), "m.yaml")
    assert sorted(os.path.basename(path) for path in removed) == sorted(ours)
    assert sorted(os.listdir(tmp_path)) == sorted(others)


def test_restore_puts_back_bytes_mode_and_mtime_through_the_writer(tmp_path):
    dest = tmp_path / "unit.service"
    dest.write_text("before\n")
    os.chmod(dest, 0o640)
    os.utime(dest, (1000000000, 1000000000))
    new = tmp_path / "new.conf"
    backup = Backup(str(tmp_path / "state"), "one")
    backup.save([str(new), str(dest)])
    dest.write_text("after\n")
    os.chmod(dest, 0o600)
    new.write_text("created by the change\n")
    assert backup.restore() == []
    assert dest.read_text() == "before\n" and stat.S_IMODE(os.stat(dest).st_mode) == 0o640
    assert os.stat(dest).st_mtime == 1000000000 and not new.exists() and backup.ran_before()
    assert not [name for name in os.listdir(tmp_path) if TEMP_MARK in name]


def test_a_link_is_switched_in_one_rename(tmp_path):
    link = tmp_path / "kube-scheduler"
    switch_link(str(link), "/opt/a")
    switch_link(str(link), "/opt/b")
    assert os.readlink(link) == "/opt/b" and os.listdir(tmp_path) == ["kube-scheduler"]


def test_a_write_removes_what_a_killed_write_left(tmp_path):
    (tmp_path / (".m.yaml" + TEMP_MARK + "dead01")).write_text("half")
    removed = write_atomically(str(tmp_path / "m.yaml"), b"whole\n")
    assert [os.path.basename(path) for path in removed] == [".m.yaml" + TEMP_MARK + "dead01"]
    assert os.listdir(tmp_path) == ["m.yaml"]
