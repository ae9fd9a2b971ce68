"""Kube_scheduler_binary_local_path may be a symbolic link (/usr/local/bin/kube-scheduler ->
kube-scheduler-v1.35.4, the usual layout): the file it resolves to is checksummed, copied and asked for its version;
a failed check says what it found. The systemd role's install step (tasks_from install.yml) on localhost with the
real kube-scheduler binary (KUBE_SCHEDULER_BIN_1_35)."""
from __future__ import annotations

import hashlib
import json
import os
import sys

import pytest

PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Install
      block:
        - name: The role's install step
          ansible.builtin.include_role:
            name: kubesched.schedulers.systemd
            tasks_from: install.yml
      rescue:
        - name: Keep the failure
          ansible.builtin.copy:
            content: "{{ ansible_failed_result.msg }}"
            dest: "{{ work }}/error"
            mode: "0600"
"""


@pytest.fixture(scope="module")
def binary():
    path = os.environ.get("KUBE_SCHEDULER_BIN_1_35")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("KUBE_SCHEDULER_BIN_1_35 is not set: no real kube-scheduler 1.35 to install (make binaries)")
    with open(path, "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    with os.popen("%s --version" % path) as out:
        release = out.read().split("v", 1)[1].strip()
    return path, digest, release


def install(ansible_playbook, tmp_path, local_path, checksum, release):
    (tmp_path / "play.yml").write_text(PLAY)
    variables = {
        "work": str(tmp_path), "kube_scheduler_version": release, "kube_scheduler_binary_local_path": str(local_path),
        "kube_scheduler_binary_checksum": checksum, "kube_scheduler_binary_install_dir": str(tmp_path / "opt"),
        "kube_scheduler_plan": {"accounts": {"group_exists": True, "user_exists": True},
                                "binary": {"version_output": None}, "host": {"machine": os.uname().machine}}}
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    run = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                            "-e", "@vars.json", "play.yml"], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    error = tmp_path / "error"
    return error.read_text() if error.exists() else None


def link_to(tmp_path, target):
    (tmp_path / "bin").mkdir()
    os.symlink(str(target), str(tmp_path / "bin" / "kube-scheduler"))
    return tmp_path / "bin" / "kube-scheduler"


def test_a_linked_binary_is_resolved_checksummed_installed_and_asked_its_version(ansible_playbook, tmp_path, binary):
    path, digest, release = binary
    link = link_to(tmp_path, path)
    assert install(ansible_playbook, tmp_path, link, "sha256:" + digest, release) is None
    installed = tmp_path / "opt" / release / "kube-scheduler"
    assert not installed.is_symlink() and hashlib.sha256(installed.read_bytes()).hexdigest() == digest


def test_a_wrong_checksum_says_what_the_link_resolves_to_and_what_it_found(ansible_playbook, tmp_path, binary):
    path, digest, release = binary
    link = link_to(tmp_path, path)
    error = install(ansible_playbook, tmp_path, link, "0" * 64, release)
    assert error.startswith("kube_scheduler_binary_local_path: %s on the controller (a link to %s) has sha256 %s ("
                            % (link, os.path.realpath(path), digest))
    assert "kube_scheduler_binary_checksum says %s" % ("0" * 64) in error and "nothing was installed" in error
    assert not (tmp_path / "opt").exists()


def test_a_dangling_link_and_a_directory_are_named_as_such(ansible_playbook, tmp_path, binary):
    _path, digest, release = binary
    link = link_to(tmp_path, tmp_path / "gone")
    assert "(a link to %s) does not exist" % (tmp_path / "gone") in install(ansible_playbook, tmp_path, link, digest, release)
    (tmp_path / "error").unlink()
    assert "%s on the controller is not a regular file" % (tmp_path / "bin") in install(
        ansible_playbook, tmp_path, tmp_path / "bin", digest, release)
