"""Inputs that once crashed (TypeError, RecursionError, Python's own int() limit) are refused with named
errors, in kube-scheduler's words where kube-scheduler refuses them: the real binary's message is the expectation
when the binary is here (KUBE_SCHEDULER_BIN_1_35), otherwise the line it printed when these tests were written."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

import hostile
from action_harness import KUBECONFIG
from ansible_collections.kubesched.schedulers.plugins.filter.kubeadm_scheduler_patch import (
    KubeadmPatchError, kubeadm_scheduler_patch)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import yaml_io
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.upgrade.upgrade_check import check_upgrade

HUGE = "9" * 5000
YAML = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "clientConnection: {kubeconfig: %(kubeconfig)s}\nparallelism: %(value)s\n")
JSON = ('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", '
        '"clientConnection": {"kubeconfig": "%(kubeconfig)s"}, "parallelism": %(value)s}')
# What kube-scheduler v1.35.4 printed (run.go "command failed" err=...) for these inputs.
SEEN = {
    ("yaml", HUGE): "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.parallelism of "
                    "type int32",
    ("yaml", "0x" + "f" * 5000): "json: cannot unmarshal string into Go struct field "
                                 "KubeSchedulerConfiguration.parallelism of type int32",
    ("json", HUGE): "json: cannot unmarshal number %s into Go struct field KubeSchedulerConfiguration.parallelism "
                    "of type int32" % HUGE,
    ("json", "-" + HUGE): "json: cannot unmarshal number -%s into Go struct field "
                          "KubeSchedulerConfiguration.parallelism of type int32" % HUGE,
    ("json", "1e400"): "json: cannot unmarshal number 1e400 into Go struct field "
                       "KubeSchedulerConfiguration.parallelism of type int32",
}


def upstream_error(tmp_path, text):
    """kube-scheduler 1.35's error for ``text`` (offline: --write-config-to, as ../shared/k8s/README.md shows)."""
    binary = os.environ.get("KUBE_SCHEDULER_BIN_1_35")
    if not binary or not os.access(binary, os.X_OK):
        return None
    (tmp_path / "config").write_text(text)
    run = subprocess.run([binary, "--config", str(tmp_path / "config"), "--write-config-to", str(tmp_path / "out"),
                          "--secure-port", "0", "--master", "https://127.0.0.1:1"],
                         capture_output=True, text=True, timeout=60, check=False)
    if run.returncode == 0:
        return ""
    line = run.stderr.strip().splitlines()[-1]
    return yaml.safe_load("{%s}" % line[line.index("err="):].replace("err=", '"err":', 1))["err"]


@pytest.mark.parametrize("form,value", sorted(SEEN))
def test_a_number_longer_than_pythons_int_limit_is_refused_in_kube_schedulers_words(tmp_path, form, value):
    (tmp_path / "kubeconfig").write_text(KUBECONFIG)
    text = (YAML if form == "yaml" else JSON) % {"kubeconfig": tmp_path / "kubeconfig", "value": value}
    result = process(content=text, kubernetes_version="1.35.4")
    messages = [error["message"] for error in result.errors]
    assert "4300" not in " ".join(messages)
    real = upstream_error(tmp_path, text)
    if real is None:
        print("KUBE_SCHEDULER_BIN_1_35 is not set: compared with the message kube-scheduler v1.35.4 printed")
    assert messages == [SEEN[form, value] if real is None else real]


def test_a_huge_number_with_leading_zeros_is_still_the_small_int_go_yaml_reads():
    assert yaml_io.go_yaml_scalar("0" * 5000 + "7") == 7
    assert yaml_io.go_yaml_scalar("0x" + "0" * 5000 + "f") == 15


def test_a_huge_gt_operand_in_a_node_affinity_is_a_validation_error_not_a_value_error():
    term = {"matchExpressions": [{"key": "k", "operator": "Gt", "values": [HUGE]}]}
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": "NodeAffinity", "args": {
                  "addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}}]}]}
    result = process(config=config, kubernetes_version="1.35.4")
    assert any("for 'Gt', 'Lt' operators, the value must be an integer" in e["message"] for e in result.errors)


def test_profiles_a_number_in_a_v1beta3_file_is_converted_and_refused_by_name():
    text = "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\nprofiles: 5\n"
    report = check_upgrade(content=text, current_version="1.35.4", target_versions=["1.35.4"], convert=True)
    assert report["ok"] is False
    assert report["converted"]["from"] == "kubescheduler.config.k8s.io/v1beta3"
    assert [e["message"] for e in report["current"]["errors"]] == [
        "json: cannot unmarshal number into Go struct field KubeSchedulerConfiguration.profiles of type "
        "[]v1.KubeSchedulerProfile"]


@pytest.mark.parametrize("enabled", [5, "x", {"name": "A"}])
def test_a_v1beta2_score_list_that_is_not_a_list_is_carried_over(enabled):
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1beta2", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"plugins": {"score": {"enabled": enabled}}}]}
    report = check_upgrade(config=config, current_version="1.35.4", target_versions=["1.35.4"], convert=True)
    assert report["converted"]["converted"] is not None and report["ok"] is False


@pytest.mark.parametrize("flags", [{"config": "/x"}, 5, "--config=/x", None])
def test_the_kubeadm_patch_filter_names_flags_that_are_not_a_list(flags):
    instance = {"name": "kube-scheduler", "flags": flags, "config_path": "/x", "kubeconfig": "/y"}
    with pytest.raises(KubeadmPatchError, match="flags is .*, not a list of --name=value strings"):
        kubeadm_scheduler_patch(instance, "1.34.2")


class _ShallowLibyaml(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):
    """A libyaml built with a nesting limit (1000 in libyaml's newer releases) stops a deep text at once."""

    def check_event(self, *choices):
        raise yaml.YAMLError("maximum nesting depth exceeded")


@pytest.mark.parametrize("text", [hostile.nested(2000), "a: " + "[" * 2000 + "]" * 2000, "[" * 2000 + "]" * 2000])
def test_nesting_that_libyaml_refuses_is_scanned_again_not_handed_to_the_recursive_composer(monkeypatch, text):
    monkeypatch.setattr(yaml, "CSafeLoader", _ShallowLibyaml, raising=False)
    data, _strict, error = yaml_io.parse_text(text)
    assert data is None and "nesting deeper than 100 levels" in error


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: profiles_five
      kubesched.schedulers.scheduler_upgrade_check:
        content: "apiVersion: kubescheduler.config.k8s.io/v1beta3\\nkind: KubeSchedulerConfiguration\\nprofiles: 5\\n"
        current_version: "1.35.4"
        target_versions: ["1.35.4"]
        convert: true
        fail_on_error: true
      ignore_errors: true
    - name: flags_dict
      ansible.builtin.debug:
        msg: "{{ {'name': 'kube-scheduler', 'flags': {'config': '/x'}, 'config_path': '/x', 'kubeconfig': '/y'}
                 | kubesched.schedulers.kubeadm_scheduler_patch('1.34.2') }}"
      ignore_errors: true
    - name: long_number
      kubesched.schedulers.scheduler_config:
        content: "{{ 'apiVersion: kubescheduler.config.k8s.io/v1\\nkind: KubeSchedulerConfiguration\\nparallelism: ' ~ '9' * 5000 }}"
        kubernetes_version: "1.35.4"
      ignore_errors: true
    - name: deep_flow
      kubesched.schedulers.scheduler_config:
        content: "{{ 'apiVersion: kubescheduler.config.k8s.io/v1\\nkind: KubeSchedulerConfiguration\\nx: ' ~ '[' * 2000 ~ ']' * 2000 }}"
        kubernetes_version: "1.35.4"
      ignore_errors: true
"""


def test_through_ansible_playbook_at_vvvv_each_is_a_named_failure_without_a_traceback(tmp_path, ansible_playbook):
    (tmp_path / "playbook.yml").write_text(PLAYBOOK)
    run = ansible_playbook(["-vvvv", "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                            "playbook.yml"], cwd=tmp_path)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "Traceback" not in output and "TypeError" not in output and "4300" not in output
    assert "ignored=4" in output
    for words in ("the config would not start on 1.35 (json: cannot unmarshal number into Go struct field "
                  "KubeSchedulerConfiguration.profiles",
                  "kubeadm_scheduler_patch: not a resolved scheduler instance: flags is a dict",
                  "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.parallelism",
                  "nesting deeper than 100 levels"):
        assert words in output, words


@pytest.mark.parametrize("value", [HUGE, "1e400"])
def test_a_huge_json_number_in_free_form_plugin_args_is_carried_as_kube_scheduler_does(value):
    # encoding/json decodes args of an unknown type into interface{}: kube-scheduler v1.35.4 accepts both.
    text = ('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": '
            '[{"schedulerName": "s", "pluginConfig": [{"name": "NotAPlugin", "args": {"x": %s}}]}]}' % value)
    result = process(content=text, kubernetes_version="1.35.4", extra_plugins=["NotAPlugin"])
    assert result.errors == [] and "x: .inf" in result.rendered
