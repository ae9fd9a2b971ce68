"""kube_scheduler_static_pod_preflight_binary as a careless operator sets it, through the static_pod role's plan in a
Check job on localhost (real ansible-playbook, the real module, real processes): a directory (the module ended with
"Error executing command." and rc 13, the variable unnamed), /bin/true (the plan said "accepted by /bin/true"), a
binary that fails, and a file this machine cannot execute. Each is refused naming the variable, never accepted,
never called a refusal of kube-scheduler's; nothing is written."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

PLAY = """
- hosts: localhost
  gather_facts: false
  vars:
    kube_scheduler_version: "1.35.4"
    kube_scheduler_instances: [{name: batch, secure_port: 10260, kubeconfig: "{{ work }}/batch.conf",
                                config: {profiles: [{schedulerName: batch}], leaderElection: {resourceName: batch}}}]
    kube_scheduler_config_dir: "{{ work }}/schedulers"
    kube_scheduler_manifest_dir: "{{ work }}/manifests"
    kube_scheduler_state_dir: "{{ work }}/state"
    kube_scheduler_lease_check: false
  tasks:
    - name: plan
      ansible.builtin.import_role:
        name: kubesched.schedulers.static_pod
        tasks_from: plan
"""
VARIABLE = "kube_scheduler_static_pod_preflight_binary"
PREFIX = "nothing was changed: batch: the master's kube-scheduler could not check the new config: "


def plan_with(tmp_path, ansible_playbook, binary):
    (tmp_path / "manifests").mkdir()
    (tmp_path / "play.yml").write_text(PLAY)
    proc = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                             "-e", "work=%s" % tmp_path, "-e", "%s=%s" % (VARIABLE, binary), "--check", "play.yml"],
                            cwd=tmp_path, env=dict(ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
                                                   ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp")))
    report = json.loads(proc.stdout[proc.stdout.find("{\n"):])
    results = [task["hosts"]["localhost"] for play in report["plays"] for task in play["tasks"]
               if task["hosts"].get("localhost", {}).get("failed")]
    assert len(results) == 1, proc.stdout[-3000:]
    # Nothing written: no config, no state, no manifest.
    assert not (tmp_path / "schedulers").exists() and not (tmp_path / "state").exists()
    assert list((tmp_path / "manifests").iterdir()) == []
    assert "Traceback" not in proc.stdout + proc.stderr and "Error executing command" not in proc.stdout
    return results[0]["msg"]


def test_a_directory_is_refused_naming_the_variable_and_the_file_to_give(tmp_path, ansible_playbook):
    (tmp_path / "bin").mkdir()
    msg = plan_with(tmp_path, ansible_playbook, tmp_path / "bin")
    assert msg == PREFIX + ("%s/bin (%s) is a directory on this master, not a kube-scheduler: set %s to the "
                            "kube-scheduler file itself, of the image's build (such as %s/bin/kube-scheduler)"
                            % (tmp_path, VARIABLE, VARIABLE, tmp_path))


def test_true_is_never_an_acceptance(tmp_path, ansible_playbook):
    true = shutil.which("true")
    msg = plan_with(tmp_path, ansible_playbook, true)
    said = subprocess.run([true, "--version"], capture_output=True, text=True, check=False).stdout.splitlines()[0]
    assert msg == PREFIX + ("%s (%s) is not kube-scheduler: its --version says %r, not a Kubernetes release "
                            "(kube-scheduler says \"Kubernetes v<release>\"); set %s to a kube-scheduler of the "
                            "image's build" % (true, VARIABLE, said, VARIABLE))


@pytest.mark.parametrize("make, said", [
    (lambda path: path.write_text("#!/bin/sh\necho 'half a line' >&2\nexit 3\n"),
     "--version failed: half a line (exit status 3)"),
    (lambda path: path.write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 200), "Exec format error (ENOEXEC)"),
])
def test_a_binary_that_fails_or_cannot_start_is_no_refusal(tmp_path, ansible_playbook, make, said):
    binary = tmp_path / "bin" / "kube-scheduler"
    binary.parent.mkdir()
    make(binary)
    binary.chmod(0o755)
    msg = plan_with(tmp_path, ansible_playbook, binary)
    assert msg == PREFIX + "the preflight could not run %s (%s): %s" % (binary, VARIABLE, said)
    assert "would be refused" not in msg
