# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The steps the systemd and static_pod roles share, kept once in the internal role roles/_rollout: every entry point
has an argument spec and refuses to run unless one of the two roles called it; the two roles keep no copy of a shared
step. Through real ansible-playbook runs on localhost (test_rollout_restore_role.py runs its commit and restore
through the static_pod role on a change the real engine held)."""

from __future__ import annotations

import datetime
import json
import os
import sys
from pathlib import Path

import pytest
import yaml

ROLES = Path(__file__).resolve().parents[3] / "roles"
SHARED = ROLES / "_rollout"
PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Call the shared step
      ansible.builtin.include_role:
        name: kubesched.schedulers._rollout
        tasks_from: {entry}
      vars: {inputs}
"""
INPUTS = {
    "resolve": {"_rollout_role": "systemd"},
    "serving_certs": {"_rollout_serving_certs": [], "_rollout_owner": "root", "_rollout_group": "root"},
    "serving_certs_plan": {"_rollout_serving_certs": [], "_rollout_owner": "root", "_rollout_group": "root"},
    "restore": {"_rollout_kind": "static_pod", "_rollout_state_dir": "/var/lib/kubesched/static-pod",
                "_rollout_lock_timeout": 1800, "_rollout_health_timeout": 10, "_rollout_health_settle": 0},
}


def entry_points():
    return sorted(path.stem for path in (SHARED / "tasks").glob("*.yml") if path.stem != "refuse_alone")


def test_every_entry_point_has_a_spec_and_starts_with_the_guard():
    specs = yaml.safe_load((SHARED / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    assert sorted(specs) == entry_points() == sorted(INPUTS)
    for entry in entry_points():
        first = yaml.safe_load((SHARED / "tasks" / (entry + ".yml")).read_text())[0]
        # serving_certs_plan starts with serving_certs, which starts with the guard.
        assert first["ansible.builtin.import_tasks"] in ("refuse_alone.yml", "serving_certs.yml"), entry
        assert set(INPUTS[entry]) == set(specs[entry]["options"])


def run_play(tmp_path, ansible_playbook, entry, inputs):
    (tmp_path / "play.yml").write_text(PLAY.format(entry=entry, inputs=inputs))
    return ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                             "play.yml"], cwd=tmp_path)


@pytest.mark.parametrize("entry", sorted(INPUTS))
def test_an_entry_point_refuses_to_run_from_a_play(entry, tmp_path, ansible_playbook):
    run = run_play(tmp_path, ansible_playbook, entry, INPUTS[entry])
    assert run.returncode != 0
    assert ("kubesched.schedulers._rollout is internal to the roles kubesched.schedulers.systemd and "
            "kubesched.schedulers.static_pod (called from a play)") in run.stdout
    assert "Refuse to run outside the systemd and static_pod roles" in run.stdout


def test_its_inputs_are_checked_against_the_spec_first(tmp_path, ansible_playbook):
    run = run_play(tmp_path, ansible_playbook, "restore", {"_rollout_kind": "docker"})
    assert run.returncode != 0
    assert "_rollout_kind" in run.stdout and "must be one of: systemd, static_pod" in run.stdout
    assert "missing required arguments: _rollout_health_settle, _rollout_health_timeout, _rollout_state_dir" in run.stdout


def calls(tasks):
    for task in tasks or []:
        for key in ("block", "rescue", "always"):
            yield from calls(task.get(key))
        if task.get("ansible.builtin.include_role", {}).get("name") == "kubesched.schedulers._rollout":
            yield task


def test_the_host_roles_pass_each_entry_point_exactly_its_inputs():
    """The two roles include the shared steps without Ansible's validation (rolespec_validate: false: their inputs
    are fixed, and validating them again on every master cost controller CPU), so this checks them instead."""
    specs = yaml.safe_load((SHARED / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    found = set()
    for role in ("systemd", "static_pod"):
        for path in sorted((ROLES / role / "tasks").glob("*.yml")):
            for task in calls(yaml.safe_load(path.read_text())):
                include = task["ansible.builtin.include_role"]
                entry = include["tasks_from"]
                assert include["rolespec_validate"] is False, path
                assert set(task["vars"]) == set(specs[entry]["options"]), (path, entry)
                kinds = [value for name, value in task["vars"].items() if name in ("_rollout_kind", "_rollout_role")]
                assert kinds in ([], [role]), (path, entry)
                found.add((role, entry))
    assert found == {(role, entry) for role in ("systemd", "static_pod") for entry in specs}


@pytest.mark.parametrize("name", ["restore.yml", "serving_certs.yml", "serving_certs_plan.yml", "preflight.yml",
                                  "resolve.yml"])
def test_the_host_roles_keep_no_copy_of_a_shared_step(name):
    """What was a copy in each role is the shared step, or a call of it."""
    for role in ("systemd", "static_pod"):
        path = ROLES / role / "tasks" / name
        if path.is_file():
            tasks = yaml.safe_load(path.read_text())
            assert [task["ansible.builtin.include_role"]["name"] for task in tasks] == ["kubesched.schedulers._rollout"]


SERVING_PLAN = """
- hosts: localhost
  gather_facts: false
  vars:
    kube_scheduler_version: "1.35.4"
    kube_scheduler_config_dir: "{{ work }}/config"
    kube_scheduler_state_dir: "{{ work }}/state"
    kube_scheduler_manifest_dir: "{{ work }}/manifests"
    kube_scheduler_serving_cert_dir: "{{ work }}/pki"
    kube_scheduler_serving_ca_cert: "{{ work }}/ca.crt"
    kube_scheduler_serving_ca_key: "{{ work }}/ca.key"
    kube_scheduler_lease_check: false
    kube_scheduler_static_pod_preflight_binary: "{{ binary }}"
    kube_scheduler_instances:
      - name: kube-scheduler
        default_scheduler: true
        kubeconfig: "{{ work }}/kubeconfig"
        serving_cert: true
  tasks:
    - name: Plan
      ansible.builtin.include_role:
        name: kubesched.schedulers.static_pod
        tasks_from: plan
    - name: Keep what the plan found
      ansible.builtin.copy:
        content: "{{ {'pending': kube_scheduler_plan.pending, 'certs': kube_scheduler_serving_certs.results} | to_json }}"
        dest: "{{ work }}/found.json"
        mode: "0600"
"""


def test_the_plan_asks_the_serving_cert_module_in_check_mode_which_certificate_the_apply_step_would_issue(
        tmp_path, ansible_playbook):
    """The static_pod role's plan on this host, through the shared steps (resolve, serving_certs_plan) and the real
    serving_cert module in check mode, with the real kube-scheduler as the plan's offline check: a certificate that
    does not exist yet would be issued, with the master's names, and nothing is written."""
    binary = os.environ.get("KUBE_SCHEDULER_BIN_1_35")
    if not binary:
        pytest.skip("KUBE_SCHEDULER_BIN_1_35 is not set: no real kube-scheduler 1.35 for the plan's offline check "
                    "(make binaries)")
    from cryptography import x509  # pylint: disable=import-outside-toplevel
    from cryptography.hazmat.primitives import hashes, serialization  # pylint: disable=import-outside-toplevel
    from cryptography.hazmat.primitives.asymmetric import ec  # pylint: disable=import-outside-toplevel
    from cryptography.x509.oid import NameOID  # pylint: disable=import-outside-toplevel

    work = tmp_path / "work"
    (work / "manifests").mkdir(parents=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes")])
    now = datetime.datetime.now(datetime.timezone.utc)
    ca = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
          .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=365))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, hashes.SHA256()))
    (work / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (work / "ca.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()))
    (work / "kubeconfig").write_text("apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n")
    (tmp_path / "play.yml").write_text(SERVING_PLAN)
    run = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                            "-e", "work=%s" % work, "-e", "binary=%s" % binary, "play.yml"], cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    found = json.loads((work / "found.json").read_text())
    ((cert,),) = [found["certs"]]
    assert found["pending"] and cert["changed"]
    assert cert["item"]["cert"] == str(work / "pki" / "kube-scheduler.crt")
    assert "127.0.0.1" in cert["item"]["ip_sans"] and "localhost" in cert["item"]["dns_sans"]
    assert not (work / "pki").exists() and not (work / "config").exists()
