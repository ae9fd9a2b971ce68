"""kubesched.schedulers.scheduler_config through real ansible-playbook runs on localhost (connection local).

One batched playbook exercises the whole life cycle of a file; every task result comes back through the
ansible.posix.json callback and the file system is inspected between steps by stat/find tasks in the same run.
Expected errors are upstream facts: validation.go reports a duplicate profile name as
field.Duplicate(profiles[i].schedulerName) and percentageOfNodesToScore outside [0, 100] as
field.Invalid(..., "not in valid range [0-100]").
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import textwrap

import pytest
import yaml

KUBECONFIG = "/etc/kubernetes/scheduler.conf"
TWO_PROFILES = {
    "clientConnection": {"kubeconfig": KUBECONFIG},
    "profiles": [
        {"schedulerName": "default-scheduler"},
        {
            "schedulerName": "no-scoring-scheduler",
            "plugins": {
                "preScore": {"disabled": [{"name": "*"}]},
                "score": {"disabled": [{"name": "*"}]},
            },
        },
    ],
}
# The same configuration as raw JSON text with apiVersion/kind spelled out and another key order.
TWO_PROFILES_JSON = json.dumps(
    dict(
        reversed(list(TWO_PROFILES.items())),
        kind="KubeSchedulerConfiguration",
        apiVersion="kubescheduler.config.k8s.io/v1",
    ),
    indent=1,
)
# framework.go: a score weight of 0 is set to 1 when the framework is built.
WEIGHT_ZERO = {"profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 0}]}}}]}
# scheduler-plugins' Coscheduling, as its as-a-second-scheduler chart enables it.
COSCHEDULING = {"profiles": [{
    "schedulerName": "scheduler-plugins-scheduler",
    "plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "PrioritySort"}]}},
}]}
COSCHEDULING_PLUGIN = [{"name": "Coscheduling", "args_kind": "CoschedulingArgs",
                        "extension_points": ["queueSort", "preFilter", "postFilter", "reserve", "permit"]}]
# The in-tree volume-limit plugins are registered up to 1.31 and invalid from 1.32 on.
VOLUME_LIMITS = {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "AzureDiskLimits"}]}}}]}
ONE_PROFILE = {"percentageOfNodesToScore": 50, "profiles": [{"schedulerName": "default-scheduler"}]}
BAD = {
    "percentageOfNodesToScore": 150,
    "profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}],
}

PLAYBOOK = """
- name: Life cycle of one file on localhost
  hosts: localhost
  gather_facts: false
  vars:
    out: "{{ work }}/out"
    dest: "{{ work }}/out/scheduler.yaml"
  tasks:
    - {name: prepare, ansible.builtin.file: {path: "{{ out }}", state: directory, mode: "0755"}}
    - name: check_new
      kubesched.schedulers.scheduler_config: {config: "{{ two_profiles }}", dest: "{{ dest }}"}
      check_mode: true
      diff: true
    - {name: stat_after_check, ansible.builtin.stat: {path: "{{ dest }}"}}
    - name: first
      kubesched.schedulers.scheduler_config: {config: "{{ two_profiles }}", dest: "{{ dest }}"}
    - {name: stat_first, ansible.builtin.stat: {path: "{{ dest }}", checksum_algorithm: sha256}}
    - name: second_as_content
      kubesched.schedulers.scheduler_config: {content: "{{ two_profiles_json }}", dest: "{{ dest }}"}
      diff: true
    - name: mode_check
      kubesched.schedulers.scheduler_config: {config: "{{ two_profiles }}", dest: "{{ dest }}", mode: "0640"}
      check_mode: true
      diff: true
    - {name: stat_mode_check, ansible.builtin.stat: {path: "{{ dest }}"}}
    - name: mode
      kubesched.schedulers.scheduler_config: {config: "{{ two_profiles }}", dest: "{{ dest }}", mode: "0640"}
    - {name: stat_mode, ansible.builtin.stat: {path: "{{ dest }}", checksum_algorithm: sha256}}
    - name: invalid
      kubesched.schedulers.scheduler_config: {config: "{{ bad }}", dest: "{{ dest }}", mode: "0640"}
      ignore_errors: true
    - {name: stat_invalid, ansible.builtin.stat: {path: "{{ dest }}", checksum_algorithm: sha256}}
    - {name: find_invalid, ansible.builtin.find: {paths: "{{ out }}", hidden: true, file_type: any}}
    - name: backup
      kubesched.schedulers.scheduler_config:
        {config: "{{ one_profile }}", dest: "{{ dest }}", mode: "0640", backup: true}
      diff: true
    - {name: stat_backup, ansible.builtin.stat: {path: "{{ dest }}", checksum_algorithm: sha256}}
    - {name: find_backup, ansible.builtin.find: {paths: "{{ out }}", hidden: true, file_type: any}}
    - name: check_missing_dir
      kubesched.schedulers.scheduler_config: {config: "{{ two_profiles }}", dest: "{{ work }}/later/scheduler.yaml"}
      check_mode: true
      diff: true
    - name: missing_dir
      kubesched.schedulers.scheduler_config: {config: "{{ two_profiles }}", dest: "{{ work }}/later/scheduler.yaml"}
      ignore_errors: true
    - name: validate_only
      kubesched.schedulers.scheduler_config: {config: "{{ two_profiles }}", kubernetes_version: v1.30.12}
    - name: weight_zero
      kubesched.schedulers.scheduler_config: {config: "{{ weight_zero }}"}
    - name: out_of_tree_undeclared
      kubesched.schedulers.scheduler_config: {config: "{{ coscheduling }}"}
      ignore_errors: true
    - name: out_of_tree_declared
      kubesched.schedulers.scheduler_config: {config: "{{ coscheduling }}", extra_plugins: "{{ coscheduling_plugin }}"}
    - name: volume_limits_1_30
      kubesched.schedulers.scheduler_config: {config: "{{ volume_limits }}", kubernetes_version: "1.30"}
    - name: volume_limits_newest
      kubesched.schedulers.scheduler_config: {config: "{{ volume_limits }}"}
      ignore_errors: true
    - name: config_as_yaml_text
      kubesched.schedulers.scheduler_config: {config: "{{ two_profiles | to_nice_yaml }}"}
      ignore_errors: true
    - name: content_as_mapping
      kubesched.schedulers.scheduler_config: {content: "{{ two_profiles }}"}
      ignore_errors: true
    - name: bad_version
      kubesched.schedulers.scheduler_config: {config: "{{ two_profiles }}", kubernetes_version: "1.12"}
      ignore_errors: true
    - name: both_inputs
      kubesched.schedulers.scheduler_config: {config: "{{ two_profiles }}", content: "{{ two_profiles_json }}"}
      ignore_errors: true
    - name: named_file_missing_check
      kubesched.schedulers.scheduler_config: {config: "{{ missing_kubeconfig }}", dest: "{{ work }}/named.yaml"}
      check_mode: true
      ignore_errors: true
    - name: named_file_missing
      kubesched.schedulers.scheduler_config: {config: "{{ missing_kubeconfig }}", dest: "{{ work }}/named.yaml"}
      ignore_errors: true
    - {name: stat_named_file_missing, ansible.builtin.stat: {path: "{{ work }}/named.yaml"}}
    - name: named_file_check_off
      kubesched.schedulers.scheduler_config:
        {config: "{{ missing_kubeconfig }}", dest: "{{ work }}/named.yaml", check_named_files: false}

- name: A host that cannot run any module, to prove it is never contacted unless a file is written
  hosts: offline
  gather_facts: false
  tasks:
    - name: offline_invalid
      kubesched.schedulers.scheduler_config: {config: "{{ bad }}", dest: "{{ work }}/offline.yaml"}
      ignore_errors: true
    - name: offline_validate_only
      kubesched.schedulers.scheduler_config: {config: "{{ two_profiles }}"}
    - name: offline_write
      kubesched.schedulers.scheduler_config: {config: "{{ two_profiles }}", dest: "{{ work }}/offline.yaml"}
      ignore_errors: true
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory, collections_path, ansible_playbook, json_task_results):
    work = tmp_path_factory.mktemp("playbook")
    (work / "playbook.yml").write_text(PLAYBOOK)
    (work / "inventory.ini").write_text(textwrap.dedent(f"""\
        localhost ansible_connection=local ansible_python_interpreter={sys.executable}
        offline ansible_connection=local ansible_python_interpreter=/nonexistent/python3
        """))
    # kube-scheduler opens clientConnection.kubeconfig at start-up, so the module checks it exists on the host.
    kubeconfig = work / "scheduler.conf"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    (work / "vars.json").write_text(json.dumps(dict(
        work=str(work), two_profiles=json.loads(json.dumps(TWO_PROFILES).replace(KUBECONFIG, str(kubeconfig))),
        two_profiles_json=TWO_PROFILES_JSON.replace(KUBECONFIG, str(kubeconfig)),
        missing_kubeconfig={"clientConnection": {"kubeconfig": str(work / "missing.conf")}},
        one_profile=ONE_PROFILE, bad=BAD, weight_zero=WEIGHT_ZERO, coscheduling=COSCHEDULING,
        coscheduling_plugin=COSCHEDULING_PLUGIN, volume_limits=VOLUME_LIMITS)))
    env = dict(
        ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
        ANSIBLE_LOCAL_TEMP=str(work / "local-tmp"),
        ANSIBLE_REMOTE_TEMP=str(work / "remote-tmp"),
    )
    proc = ansible_playbook(["-i", "inventory.ini", "-e", "@vars.json", "playbook.yml"], cwd=work, env=env)
    # Task names are unique across both plays, each play has one host.
    return dict(results=json_task_results(proc), work=work, dest=work / "out" / "scheduler.yaml")


def test_playbook_has_no_unexpected_failures(run):
    failed = sorted(name for name, result in run["results"].items() if result.get("failed"))
    assert failed == ["bad_version", "both_inputs", "config_as_yaml_text", "content_as_mapping", "invalid",
                      "missing_dir", "named_file_missing", "named_file_missing_check", "offline_invalid",
                      "offline_write", "out_of_tree_undeclared", "volume_limits_newest"]


def test_a_missing_file_the_config_names_fails_with_the_field_and_nothing_is_written(run):
    for name in ("named_file_missing_check", "named_file_missing"):
        msg = run["results"][name]["msg"]
        assert msg.startswith('clientConnection.kubeconfig: Invalid value: "%s": no such file on this host'
                              % (run["work"] / "missing.conf")), msg
        assert "nothing was written" in msg
    assert run["results"]["stat_named_file_missing"]["stat"]["exists"] is False
    assert run["results"]["named_file_check_off"]["changed"] is True


def test_a_directory_an_earlier_task_would_create_is_a_change_in_check_mode_only(run):
    check = run["results"]["check_missing_dir"]
    assert check["changed"] is True and not check.get("failed")
    assert check["diff"][0]["after"] == check["rendered"]
    real = run["results"]["missing_dir"]
    assert "does not exist" in real["msg"]
    assert not (run["work"] / "later").exists()


def test_check_mode_reports_change_with_diff_and_writes_nothing(run):
    check = run["results"]["check_new"]
    assert check["changed"] is True
    assert run["results"]["stat_after_check"]["stat"]["exists"] is False
    (text_diff,) = check["diff"]
    assert text_diff["before"] == ""
    assert text_diff["after"] == check["rendered"]
    assert text_diff["after_header"] == str(run["dest"])


def test_first_run_writes_rendered_text_private(run):
    first, st = run["results"]["first"], run["results"]["stat_first"]["stat"]
    assert first["changed"] is True
    assert first["dest"] == str(run["dest"])
    assert st["mode"] == "0600"
    assert st["checksum"] == hashlib.sha256(first["rendered"].encode()).hexdigest() == first["checksum"]
    # Canonical text of the user's config: it reads back as the input plus apiVersion and kind.
    assert yaml.safe_load(first["rendered"]) == dict(
        TWO_PROFILES, apiVersion="kubescheduler.config.k8s.io/v1", kind="KubeSchedulerConfiguration",
        clientConnection={"kubeconfig": str(run["work"] / "scheduler.conf")})
    assert "!!python" not in first["rendered"]
    assert first["profiles"] == ["default-scheduler", "no-scoring-scheduler"]
    assert first["effective"]["parallelism"] == 16  # upstream SetDefaults_KubeSchedulerConfiguration
    assert first["errors"] == []


def test_second_run_with_content_is_unchanged_and_renders_the_same(run):
    second = run["results"]["second_as_content"]
    assert second["changed"] is False
    assert "diff" not in second or not second["diff"]
    assert second["rendered"] == run["results"]["first"]["rendered"]
    assert second["checksum"] == run["results"]["first"]["checksum"]


def test_attribute_only_change_is_detected_and_applied(run):
    mode_check, mode = run["results"]["mode_check"], run["results"]["mode"]
    assert mode_check["changed"] is True
    assert run["results"]["stat_mode_check"]["stat"]["mode"] == "0600"
    assert [d["after"] for d in mode_check["diff"]] == [{"mode": "0640"}]
    assert mode["changed"] is True
    assert run["results"]["stat_mode"]["stat"]["mode"] == "0640"
    assert run["results"]["stat_mode"]["stat"]["checksum"] == run["results"]["stat_first"]["stat"]["checksum"]


def test_invalid_config_fails_with_field_paths_and_touches_nothing(run):
    invalid = run["results"]["invalid"]
    assert invalid["failed"] is True
    fields = {(e["field"], e["type"]) for e in invalid["errors"]}
    assert ("profiles[1].schedulerName", "Duplicate value") in fields
    assert ("percentageOfNodesToScore", "Invalid value") in fields
    # Upstream's lines in order, each followed by a hint with the fix when there is one (plugin_utils/config/hints.py).
    lines = invalid["msg"].splitlines()
    assert [line for line in lines if not line.startswith("  hint (")] == [e["message"] for e in invalid["errors"]]
    duplicate = next(e["message"] for e in invalid["errors"] if e["type"] == "Duplicate value")
    assert lines[lines.index(duplicate) + 1].startswith("  hint (config.profiles[1].schedulerName): profiles[0] and")
    assert "rendered" not in invalid and "dest" not in invalid
    assert run["results"]["stat_invalid"]["stat"]["checksum"] == run["results"]["stat_mode"]["stat"]["checksum"]
    assert run["results"]["stat_invalid"]["stat"]["mtime"] == run["results"]["stat_mode"]["stat"]["mtime"]
    assert [os.path.basename(f["path"]) for f in run["results"]["find_invalid"]["files"]] == ["scheduler.yaml"]


def test_backup_keeps_previous_text_and_the_write_replaces_the_file(run):
    backup, st = run["results"]["backup"], run["results"]["stat_backup"]["stat"]
    assert backup["changed"] is True
    backup_file = backup["backup_file"]
    with open(backup_file, encoding="utf-8") as handle:
        assert handle.read() == run["results"]["first"]["rendered"]
    assert st["checksum"] == hashlib.sha256(backup["rendered"].encode()).hexdigest()
    assert st["mode"] == "0640"
    # Replaced by rename of a temp file, not rewritten in place: a new inode, and no temp file left behind.
    assert st["inode"] != run["results"]["stat_mode"]["stat"]["inode"]
    names = sorted(os.path.basename(f["path"]) for f in run["results"]["find_backup"]["files"])
    assert names == sorted(["scheduler.yaml", os.path.basename(backup_file)])
    text_diff = backup["diff"][0]
    assert text_diff["before"] == run["results"]["first"]["rendered"]
    assert text_diff["after"] == backup["rendered"]
    assert text_diff["before_header"] == text_diff["after_header"] == str(run["dest"])


def test_validate_only_needs_no_dest(run):
    validate = run["results"]["validate_only"]
    assert validate["changed"] is False
    assert validate["kubernetes_version"] == "1.30"
    assert validate["rendered"] == run["results"]["first"]["rendered"]
    assert "dest" not in validate


def test_usage_errors_are_named(run):
    assert "content" in run["results"]["config_as_yaml_text"]["msg"]
    assert "mapping" in run["results"]["config_as_yaml_text"]["msg"]
    assert "config" in run["results"]["content_as_mapping"]["msg"]
    assert "text" in run["results"]["content_as_mapping"]["msg"]
    assert "1.12" in run["results"]["bad_version"]["msg"]
    assert "mutually exclusive" in run["results"]["both_inputs"]["msg"]


def test_host_is_contacted_only_to_write(run):
    offline_invalid = run["results"]["offline_invalid"]
    assert {e["field"] for e in offline_invalid["errors"]} >= {"profiles[1].schedulerName"}
    assert run["results"]["offline_validate_only"]["rendered"] == run["results"]["first"]["rendered"]
    # Writing does need the host, whose interpreter does not exist: the module run fails there.
    assert "/nonexistent/python3" in json.dumps(run["results"]["offline_write"])
    assert not (run["work"] / "offline.yaml").exists()


def test_probable_mistakes_are_returned_as_warnings(run):
    # A task result's `warnings` is what ansible-core captures and displays as [WARNING] lines.
    warnings = run["results"]["weight_zero"]["warnings"]
    assert any(w.startswith("profiles[0].plugins.score.enabled[0].weight") for w in warnings)
    assert run["results"]["first"].get("warnings", []) == []


def test_out_of_tree_plugins_are_accepted_only_when_declared(run):
    undeclared = run["results"]["out_of_tree_undeclared"]
    assert [e["field"] for e in undeclared["errors"]] == ["profiles[0].plugins.multiPoint.enabled[0]"]
    assert "Coscheduling" in undeclared["msg"]
    declared = run["results"]["out_of_tree_declared"]
    assert declared["errors"] == []
    assert declared["profiles"] == ["scheduler-plugins-scheduler"]


def test_kubernetes_version_selects_the_plugin_registry(run):
    assert run["results"]["volume_limits_1_30"]["kubernetes_version"] == "1.30"
    assert run["results"]["volume_limits_1_30"]["errors"] == []
    newest = run["results"]["volume_limits_newest"]
    assert [e["field"] for e in newest["errors"]] == ["profiles[0].plugins.filter.enabled[0]"]
