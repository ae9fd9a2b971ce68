# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A master that cannot be planned holds back every other master's change, and they say so: the real
playbooks/static_pod.yml, unchanged, through ansible-playbook, with the real static_pod role planning this host
(its directories in a temporary one, the real kube-scheduler 1.35 as the plan's offline check) and a second master
that cannot be reached (a TEST-NET address). The reachable master fails naming its pending change and the
unreachable master; nothing is written on it. A Check job says the same and still shows the diff; without the second
master it shows the diff and the order."""

from __future__ import annotations

import os
import re
import sys

import pytest
import yaml

from pathlib import Path

PLAYBOOK = Path(__file__).resolve().parents[3] / "playbooks" / "static_pod.yml"


@pytest.fixture
def work(tmp_path):
    binary = os.environ.get("KUBE_SCHEDULER_BIN_1_35")
    if not binary:
        pytest.skip("KUBE_SCHEDULER_BIN_1_35 is not set: no real kube-scheduler 1.35 for the plan's offline check "
                    "(make binaries)")
    (tmp_path / "manifests").mkdir()
    (tmp_path / "kubeconfig").write_text("apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n")
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "group_vars" / "kube_control_plane.yml").write_text(yaml.safe_dump({
        "kube_scheduler_version": "1.35.4",
        "kube_scheduler_config_dir": str(tmp_path / "config"),
        "kube_scheduler_state_dir": str(tmp_path / "state"),
        "kube_scheduler_manifest_dir": str(tmp_path / "manifests"),
        "kube_scheduler_lease_check": False,
        "kube_scheduler_static_pod_preflight_binary": binary,
        "kube_scheduler_instances": [{"name": "kube-scheduler", "default_scheduler": True,
                                      "kubeconfig": str(tmp_path / "kubeconfig")}],
    }))
    return tmp_path


def inventory(work, unreachable):
    lines = ["[kube_control_plane]",
             # The play becomes root; this test runs as the user it has.
             "m1 ansible_connection=local ansible_python_interpreter=%s ansible_become=false" % sys.executable]
    if unreachable:
        # ssh to a port of the loopback that nothing listens on: a master that cannot be reached.
        lines.append("m2 ansible_host=127.0.0.1 ansible_port=1 ansible_connection=ssh ansible_python_interpreter=%s "
                     "ansible_ssh_common_args='-o ConnectTimeout=5 -o BatchMode=yes -o StrictHostKeyChecking=no'"
                     % sys.executable)
    (work / "inventory.ini").write_text("\n".join(lines) + "\n")


def run(ansible_playbook, work, *options):
    proc = ansible_playbook(["-i", "inventory.ini", str(PLAYBOOK)] + list(options), cwd=work,
                            env={"ANSIBLE_LOCAL_TEMP": str(work / "tmp"), "ANSIBLE_HOST_KEY_CHECKING": "0"}, timeout=600)
    print(proc.stdout[-8000:] + proc.stderr[-4000:])
    recap = dict((host, (int(ok), int(unreachable), int(failed))) for host, ok, unreachable, failed in re.findall(
        r"^(\w+)\s+: ok=(\d+)\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)", proc.stdout, re.M))
    return proc, recap


def held_back_message(proc):
    found = re.search(r'fatal: \[m1\]: FAILED! => \{"changed": false, "msg": "(.*)"\}', proc.stdout)
    return found.group(1) if found else None


def untouched(work):
    """Nothing written: no config, no manifest, no state (no backup, no record of a change)."""
    state = [path for path in (work / "state").rglob("*") if path.is_file()] if (work / "state").exists() else []
    return not (work / "config").exists() and not list((work / "manifests").iterdir()) and not state


@pytest.mark.parametrize("check", [False, True])
def test_an_unreachable_master_holds_back_the_reachable_masters_change_and_it_says_so(work, check, ansible_playbook):
    inventory(work, unreachable=True)
    proc, recap = run(ansible_playbook, work, *(["--check", "--diff"] if check else []))
    assert proc.returncode == 4  # ansible-playbook's code for a run with an unreachable master
    message = held_back_message(proc)
    assert message is not None, "m1 did not say its change was held back"
    config = str(work / "config" / "kube-scheduler.yaml")
    manifest = str(work / "manifests" / "kube-scheduler.yaml")
    assert message.startswith("m1: its pending change %s: kube-scheduler: create (%s, %s); directories: %s, " % (
        "would not be applied" if check else "was not applied", config, manifest, work / "config")), message
    assert ". The rollout changes no master while a master of the run could not be planned" in message
    assert "m2 (unreachable: Failed to connect to the host via ssh" in message
    assert message.endswith("Fix m2 and run again, or leave it out of the run (--limit).")
    assert recap["m1"][1:] == (0, 1) and recap["m2"][1:] == (1, 0)
    assert "PLAY [Apply" not in proc.stdout or "skipping: no hosts matched" in proc.stdout
    assert untouched(work)
    if check:
        # The Check job still shows the reachable master's diff.
        assert "+++ after: %s" % config in proc.stdout


def test_without_the_unreachable_master_a_check_job_shows_the_diff_and_the_order(work, ansible_playbook):
    inventory(work, unreachable=False)
    proc, recap = run(ansible_playbook, work, "--check", "--diff")
    assert proc.returncode == 0 and recap["m1"][1:] == (0, 0)
    assert "+++ after: %s" % (work / "config" / "kube-scheduler.yaml") in proc.stdout
    assert '"apply order: m1 (inventory order: no lease to read' in proc.stdout
    assert held_back_message(proc) is None and untouched(work)
