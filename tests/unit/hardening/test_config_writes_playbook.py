"""scheduler_config through real ansible-playbook runs on localhost: all-or-nothing writes, modes,
symbolic links, leftover temp files, and no secret in any output at -vvv with --diff.

Every destination is prepared by the test before the one playbook run and inspected after it, so each task's
effect on its own file is known exactly.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

import hostile
from ansible_collections.kubesched.schedulers.plugins.module_utils._files import remove_leftovers
from ansible_collections.kubesched.schedulers.plugins.module_utils._secrets import redact_text


KEY = hostile.pem_data("PRIVATE KEY", b"SECRET-KEY-MATERIAL-12345")
CERT = hostile.pem_data("CERTIFICATE", b"CERT-MATERIAL-67890")
OLD_KEY = hostile.pem_data("PRIVATE KEY", b"OLD-KEY-MATERIAL")  # in the file that a write replaces
SECRETS = (KEY, CERT, OLD_KEY, "SECRET-KEY-MATERIAL", "CERT-MATERIAL", "OLD-KEY-MATERIAL")
CONFIG = {"profiles": [{"schedulerName": "default-scheduler"}]}
OTHER = {"profiles": [{"schedulerName": "other-scheduler"}]}
WITH_SECRETS = {
    "profiles": [{"schedulerName": "default-scheduler"}],
    "extenders": [{"urlPrefix": "https://extender.example:8443/", "filterVerb": "filter",
                   "tlsConfig": {"keyData": KEY, "certData": CERT}}],
}
OLD_TEXT = ("apiVersion: kubescheduler.config.k8s.io/v1\nextenders:\n- filterVerb: filter\n  tlsConfig:\n"
            "    keyData: %s\n  urlPrefix: https://x/\nkind: KubeSchedulerConfiguration\n" % OLD_KEY)
KIND_MISSING = hostile.kind_missing(KEY, CERT)

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: bad_owner
      kubesched.schedulers.scheduler_config: {config: "{{ other }}", dest: "{{ work }}/owner.yaml", owner: no-such-user-k8s}
      ignore_errors: true
    - name: bad_group
      kubesched.schedulers.scheduler_config: {config: "{{ other }}", dest: "{{ work }}/group.yaml", group: no-such-group-k8s}
      ignore_errors: true
    - name: bad_mode
      kubesched.schedulers.scheduler_config: {config: "{{ other }}", dest: "{{ work }}/mode.yaml", mode: abc}
      ignore_errors: true
    - name: integer_mode
      kubesched.schedulers.scheduler_config: {config: "{{ other }}", dest: "{{ work }}/intmode.yaml", mode: 600}
      ignore_errors: true
    - name: bad_owner_new_file
      kubesched.schedulers.scheduler_config: {config: "{{ other }}", dest: "{{ work }}/new.yaml", owner: no-such-user-k8s}
      ignore_errors: true
    - name: symlink
      kubesched.schedulers.scheduler_config: {config: "{{ other }}", dest: "{{ work }}/link.yaml", mode: "0600"}
      ignore_errors: true
    - name: leftovers
      kubesched.schedulers.scheduler_config: {config: "{{ config }}", dest: "{{ work }}/leftover.yaml"}
    - name: symbolic_mode
      kubesched.schedulers.scheduler_config: {config: "{{ config }}", dest: "{{ work }}/symbolic.yaml", mode: "u=rw,g=r,o="}
    - name: secrets_write
      kubesched.schedulers.scheduler_config: {config: "{{ with_secrets }}", dest: "{{ work }}/secret.yaml"}
      diff: true
      ignore_errors: true
    - name: secrets_validate_only
      kubesched.schedulers.scheduler_config: {config: "{{ with_secrets }}"}
    - name: kind_missing
      kubesched.schedulers.scheduler_config: {content: "{{ kind_missing }}"}
      ignore_errors: true
    - name: instances_with_secrets
      kubesched.schedulers.scheduler_instances:
        instances: [{name: batch, default_scheduler: true, config: "{{ with_secrets }}"}]
        kubernetes_version: "1.33.2"
        config_dir: /etc/kubernetes/schedulers
      register: instances_with_secrets
    - name: instances_secrets_registered
      ansible.builtin.copy:
        content: "{{ instances_with_secrets.instances[0].config_has_secrets | to_json }}"
        dest: "{{ work }}/registered.json"
        mode: "0600"
    - name: instances_kind_missing
      kubesched.schedulers.scheduler_instances:
        instances: [{name: batch, default_scheduler: true, config_content: "{{ kind_missing }}"}]
        kubernetes_version: "1.33.2"
        config_dir: /etc/kubernetes/schedulers
      ignore_errors: true
    - name: alias_bomb
      kubesched.schedulers.scheduler_config: {content: "{{ alias_bomb }}", dest: "{{ work }}/bomb.yaml"}
      ignore_errors: true
"""


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def run(tmp_path_factory, ansible_playbook, json_task_results):
    work = tmp_path_factory.mktemp("hardening")
    before = {}
    for name in ("owner", "group", "mode", "intmode"):
        path = work / ("%s.yaml" % name)
        path.write_text("seed: %s\n" % name)
        os.chmod(path, 0o640)
        before[name] = sha(path)
    (work / "target.yaml").write_text("seed: target\n")
    os.chmod(work / "target.yaml", 0o644)
    os.symlink("target.yaml", work / "link.yaml")
    (work / "leftover.yaml").write_text("seed: leftover\n")
    for stale in (".leftover.yaml.kubesched-tmp.ab12cd", ".leftover.yaml.abcd1234.tmp"):
        (work / stale).write_text("x" * 1000)
    (work / ".leftover.yaml.unrelated").write_text("not ours")
    (work / "secret.yaml").write_text(OLD_TEXT)
    (work / "playbook.yml").write_text(PLAYBOOK)
    (work / "inventory.ini").write_text(
        "localhost ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable)
    (work / "vars.json").write_text(json.dumps(dict(
        work=str(work), config=CONFIG, other=OTHER, with_secrets=WITH_SECRETS, kind_missing=KIND_MISSING,
        alias_bomb=hostile.alias_bomb())))
    env = dict(ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_LOCAL_TEMP=str(work / "local-tmp"),
               ANSIBLE_REMOTE_TEMP=str(work / "remote-tmp"))
    proc = ansible_playbook(["-vvv", "--diff", "-i", "inventory.ini", "-e", "@vars.json", "playbook.yml"],
                            cwd=work, env=env)
    return dict(results=json_task_results(proc), work=work, before=before, output=proc.stdout + proc.stderr)


@pytest.mark.parametrize("task, dest, message", [
    ("bad_owner", "owner", "owner no-such-user-k8s does not exist on the host; nothing was written"),
    ("bad_group", "group", "group no-such-group-k8s does not exist on the host; nothing was written"),
    ("bad_mode", "mode", "mode 'abc' is neither an octal mode"),
    ("integer_mode", "intmode", "mode must be a quoted string such as \"0600\""),
])
def test_a_failed_write_leaves_dest_exactly_as_it_was(run, task, dest, message):
    result = run["results"][task]
    assert result["failed"] and message in result["msg"]
    path = run["work"] / ("%s.yaml" % dest)
    assert sha(path) == run["before"][dest]
    assert os.stat(path).st_mode & 0o7777 == 0o640
    assert not [name for name in os.listdir(run["work"]) if "kubesched-tmp" in name]


def test_a_failed_write_creates_nothing(run):
    assert run["results"]["bad_owner_new_file"]["failed"]
    assert not (run["work"] / "new.yaml").exists()


def test_a_symlinked_dest_is_refused_and_its_target_untouched(run):
    result = run["results"]["symlink"]
    assert result["failed"] and "is a symbolic link (to target.yaml)" in result["msg"]
    target = run["work"] / "target.yaml"
    assert target.read_text() == "seed: target\n"
    assert os.stat(target).st_mode & 0o7777 == 0o644
    assert os.path.islink(run["work"] / "link.yaml")


def test_leftover_temp_files_of_a_killed_run_are_removed(run):
    result = run["results"]["leftovers"]
    assert result["changed"]
    assert sorted(os.path.basename(path) for path in result["removed_temp_files"]) == [
        ".leftover.yaml.abcd1234.tmp", ".leftover.yaml.kubesched-tmp.ab12cd"]
    assert (run["work"] / ".leftover.yaml.unrelated").exists()
    assert os.stat(run["work"] / "leftover.yaml").st_mode & 0o7777 == 0o600


def test_symbolic_modes_are_applied_before_the_rename(run):
    assert run["results"]["symbolic_mode"]["changed"]
    assert os.stat(run["work"] / "symbolic.yaml").st_mode & 0o7777 == 0o640


def test_secrets_are_written_but_never_shown(run):
    written = (run["work"] / "secret.yaml").read_text()
    assert KEY in written and CERT in written
    for secret in SECRETS:
        assert secret not in run["output"], secret
    result = run["results"]["secrets_write"]
    assert "<redacted>" in result["rendered"]
    assert result["effective"]["extenders"][0]["tlsConfig"]["keyData"] == "<redacted>"
    (text_diff,) = [d for d in result["diff"] if "after" in d and isinstance(d["after"], str)]
    assert "keyData: <redacted>" in text_diff["after"] and "keyData: <redacted>" in text_diff["before"]
    assert hashlib.sha256(written.encode()).hexdigest() == result["checksum"]


def test_the_kind_missing_error_does_not_echo_secrets(run):
    result = run["results"]["kind_missing"]
    assert result["failed"] and "Object 'Kind' is missing in '" in result["msg"]
    assert "<redacted>" in result["msg"] and KEY not in result["msg"]


def test_the_alias_bomb_fails_at_once_through_ansible_playbook(run):
    result = run["results"]["alias_bomb"]
    assert result["failed"] and result["msg"] == "yaml: document contains excessive aliasing"
    assert not (run["work"] / "bomb.yaml").exists()


@pytest.mark.parametrize("before, after", [
    ("extenders: [{tlsConfig: {keyData: QUJD, certData: 'REVG'}}]\n",
     "extenders: [{tlsConfig: {keyData: <redacted>, certData: <redacted>}}]\n"),
    ('{"tlsConfig": {"keyData": "QUJD", "certData": "RE\\"VG"}}\n',
     '{"tlsConfig": {"keyData": <redacted>, "certData": <redacted>}}\n'),
    ("tlsConfig:\n  keyData: |\n    QUJD\n    REVG\n  insecure: false\n",
     "tlsConfig:\n  keyData: <redacted>\n  insecure: false\n"),
])
def test_the_replaced_file_is_redacted_in_the_diff_whatever_its_style(before, after):
    assert redact_text(before, ["keyData", "certData"]) == after


def test_scheduler_instances_hides_key_material_at_every_verbosity(run):
    assert run["results"]["instances_with_secrets"].get("censored")
    assert (run["work"] / "registered.json").read_text() == "true"
    failed = run["results"]["instances_kind_missing"]
    assert failed["failed"] and "Object 'Kind' is missing in '" in failed["msg"] and "<redacted>" in failed["msg"]


def test_a_temp_file_that_a_running_task_holds_is_left_alone(tmp_path):
    """Only temp files nobody holds are leftovers: a running write locks its own."""
    live = tmp_path / ".scheduler.yaml.kubesched-tmp.live01"
    stale = tmp_path / ".scheduler.yaml.kubesched-tmp.stale1"
    live.write_text("being written")
    stale.write_text("left by a killed run")
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time\nh = open(sys.argv[1], 'rb')\n"
                               "fcntl.flock(h, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(60)\n",
                               str(live)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        removed = remove_leftovers(str(tmp_path).encode(), b"scheduler.yaml")
    finally:
        holder.kill()
        holder.wait()
    assert removed == [str(stale)] and live.exists() and not stale.exists()
