"""One redaction for every secret (extender TLS data, a kubeconfig's token and client key, any
*key*/*token*/*password* field) in every result, diff, warning and error, through real ansible-playbook runs at
-vvv with --diff; and what is written (a host's file, the deployment role's ConfigMap) is the real value.

The known leaks of the issue are the cases: scheduler_upgrade_check's "converted" and its "Kind is missing" echo,
a kubeconfig's token in the diff of a file that replaces it (scheduler_config and the rollout engine), and the
deployment role's ConfigMap, which carried "keyData: <redacted>".
"""
from __future__ import annotations

import hashlib
import json
import sys

import pytest
import yaml

import hostile
from ansible_collections.kubesched.schedulers.plugins.module_utils._secrets import (
    redact, redact_text, register_secrets, secret_field)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.redaction import redact_result

KEY = hostile.pem_data("PRIVATE KEY", b"CANARY-EXTENDER-KEY")
CERT = hostile.pem_data("CERTIFICATE", b"CANARY-EXTENDER-CERT")
TOKEN = "canary.kubeconfig-bearer-token-0123456789"
CLIENT_KEY = "Q0FOQVJZLUNMSUVOVFMtS0VZ"  # base64 of CANARY-CLIENTS-KEY
SECRETS = (KEY, CERT, TOKEN, CLIENT_KEY, "CANARY-")
KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- cluster: {server: "https://127.0.0.1:6443"}
  name: c
users:
- name: u
  user:
    token: %s
    client-key-data: %s
contexts:
- context: {cluster: c, user: u}
  name: c
current-context: c
""" % (TOKEN, CLIENT_KEY)
# A token pasted with its trailing newline: no HTTP request can carry it.
NEWLINE_KUBECONFIG = KUBECONFIG.replace("token: %s" % TOKEN, "token: \"%s\\n\"" % TOKEN)
EXTENDER = {"urlPrefix": "https://extender.example:8443/", "filterVerb": "filter",
            "tlsConfig": {"keyData": KEY, "certData": CERT}}
V1BETA3 = ("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n"
           "extenders:\n- urlPrefix: https://extender.example:8443/\n  filterVerb: filter\n  tlsConfig:\n"
           "    keyData: %s\n    certData: %s\nprofiles:\n- schedulerName: default-scheduler\n" % (KEY, CERT))
KIND_MISSING = hostile.kind_missing(KEY, CERT)

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: upgrade_convert
      kubesched.schedulers.scheduler_upgrade_check:
        content: "{{ v1beta3 }}"
        current_version: "1.35.4"
        target_versions: ["1.35.4"]
        convert: true
      register: upgrade_convert
    - name: upgrade_kind_missing
      kubesched.schedulers.scheduler_upgrade_check:
        content: "{{ kind_missing }}"
        current_version: "1.35.4"
        target_versions: ["1.35.4"]
        fail_on_error: true
      ignore_errors: true
      register: upgrade_kind_missing
    - name: config_over_kubeconfig
      kubesched.schedulers.scheduler_config:
        config: {profiles: [{schedulerName: default-scheduler}]}
        dest: "{{ work }}/over-kubeconfig.yaml"
        kubernetes_version: "1.35.4"
    - name: rollout_over_kubeconfig
      ansible.legacy.scheduler_rollout:
        kind: static_pod
        instances:
          - name: one
            port: 10999
            health_url: https://127.0.0.1:10999/livez
            files:
              - {path: "{{ work }}/rollout-over-kubeconfig.yaml", content: "plain: text\\n", mode: "0600"}
    - name: rollout_lease_check_token_with_newline
      ansible.legacy.scheduler_rollout:
        kind: static_pod
        mode: plan
        instances:
          - name: one
            port: 10999
            health_url: https://127.0.0.1:10999/livez
            files:
              - {path: "{{ work }}/newline-token.conf", content: "{{ newline_kubeconfig }}", mode: "0600", secret: true}
            lease_access: {kubeconfig: "{{ work }}/newline-token.conf", namespace: kube-system, name: one}
      register: newline_token
    - name: Keep the results
      ansible.builtin.copy:
        content: "{{ {'convert': upgrade_convert, 'kind_missing': upgrade_kind_missing, 'newline_token': newline_token} | to_json }}"
        dest: "{{ work }}/results.json"
        mode: "0600"
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory, ansible_playbook, host_side_env):
    work = tmp_path_factory.mktemp("secrets")
    for name in ("over-kubeconfig.yaml", "rollout-over-kubeconfig.yaml"):
        (work / name).write_text(KUBECONFIG)
    (work / "playbook.yml").write_text(PLAYBOOK)
    (work / "vars.json").write_text(json.dumps({"work": str(work), "v1beta3": V1BETA3, "kind_missing": KIND_MISSING,
                                                "newline_kubeconfig": NEWLINE_KUBECONFIG}))
    proc = ansible_playbook(["-vvv", "--diff", "-i", "localhost,", "-c", "local",
                             "-e", "ansible_python_interpreter=" + sys.executable, "-e", "@vars.json", "playbook.yml"],
                            cwd=work, env=host_side_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((work / "results.json").read_text())
    return dict(work=work, output=proc.stdout + proc.stderr, results=results)


def test_no_secret_shows_anywhere_in_the_output_at_vvv_with_diff(run):
    shown = [secret for secret in SECRETS if secret in run["output"]]
    assert shown == [], "shown: %s" % shown
    assert "Traceback" not in run["output"]


def test_the_upgrade_check_shows_its_conversion_with_the_key_redacted(run):
    converted = run["results"]["convert"]["converted"]
    assert "keyData: <redacted>" in converted["converted"] and "certData: <redacted>" in converted["converted"]
    assert "apiVersion: kubescheduler.config.k8s.io/v1\n" in converted["converted"]
    # The report itself is shown, not hidden as a whole.
    assert run["results"]["convert"]["ok"] is True and "censored" not in json.dumps(run["results"]["convert"])


def test_the_upgrade_checks_kind_missing_echo_is_redacted_data(run):
    result = run["results"]["kind_missing"]
    assert result["failed"] and "Object 'Kind' is missing in '" in result["msg"]
    assert '"keyData": "<redacted>"' in result["msg"] and "https://x/" in result["msg"]


def test_a_token_with_a_trailing_newline_makes_the_lease_check_not_possible_and_is_never_shown(run):
    result = run["results"]["newline_token"]
    assert not result.get("failed"), result
    lease = result["plan"]["instances"]["one"]["lease_access"]
    assert lease["status"] == "not checked" and "line break" in lease["detail"], lease
    assert any("line break" in warning for warning in result["warnings"]), result["warnings"]
    assert TOKEN not in json.dumps(result)


@pytest.mark.parametrize("name", ["over-kubeconfig.yaml", "rollout-over-kubeconfig.yaml"])
def test_the_diff_of_a_file_that_replaces_a_kubeconfig_masks_its_token_and_key(run, name):
    # scheduler_config wrote its file (the real text); the rollout engine only planned. Both diffs were printed.
    assert "token: <redacted>" in run["output"] and "client-key-data: <redacted>" in run["output"]
    written = (run["work"] / name).read_text()
    assert written == (KUBECONFIG if name.startswith("rollout") else
                       "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                       "profiles:\n- schedulerName: default-scheduler\n")


@pytest.mark.parametrize("name,secret", [
    ("keyData", True), ("certData", True), ("token", True), ("client-key-data", True), ("password", True),
    ("apiToken", True), ("client_secret", True), ("key", False), ("topologyKey", False), ("matchLabelKeys", False),
    ("keyFile", False), ("tokenFile", False), ("urlPrefix", False), ("kubeconfig", False)])
def test_one_rule_names_the_secret_fields(name, secret):
    assert secret_field(name) is secret


def test_structures_and_text_are_redacted_by_the_same_rule():
    data = yaml.safe_load(KUBECONFIG)
    assert redact(data)["users"][0]["user"] == {"token": "<redacted>", "client-key-data": "<redacted>"}
    # A task result hides what redact() hides, a number under a secret name too (a numeric PIN or password).
    result = {"msg": "ok", "config": {"password": 123456, "apiToken": 7.5, "automountServiceAccountToken": False,
                                      "percentageOfNodesToScore": 50, "users": data["users"]}}
    assert redact_result(result) == redact(result)
    assert redact_result(result)["config"]["password"] == "<redacted>"
    assert yaml.safe_load(redact_text(KUBECONFIG)) == redact(data)
    flow = json.dumps({"automountServiceAccountToken": False, "tolerations": [{"key": "k"}], "password": "pw12"})
    assert json.loads(redact_text(flow).replace("<redacted>", '"<redacted>"')) == {
        "automountServiceAccountToken": False, "tolerations": [{"key": "k"}], "password": "<redacted>"}


RENDER = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Render the role's objects
      ansible.builtin.include_role:
        name: kubesched.schedulers.deployment
        tasks_from: render.yml
    - name: Keep them
      ansible.builtin.copy:
        content: "{{ __kube_scheduler_deployment_objects | to_json }}"
        dest: "{{ work }}/objects.json"
        mode: "0600"
      no_log: true
"""


def test_the_deployment_roles_configmap_carries_the_real_key_and_no_output_shows_it(tmp_path, ansible_playbook):
    (tmp_path / "render.yml").write_text(RENDER)
    variables = {"work": str(tmp_path), "kube_scheduler_deployment_version": "1.35.4",
                 "kube_scheduler_deployment_config": {"extenders": [EXTENDER],
                                                      "profiles": [{"schedulerName": "kubesched-scheduler"}]}}
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    proc = ansible_playbook(["-vvv", "--diff", "-i", "localhost,", "-c", "local",
                             "-e", "ansible_python_interpreter=" + sys.executable, "-e", "@vars.json", "render.yml"],
                            cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [s for s in SECRETS if s in proc.stdout + proc.stderr] == []
    (config_map,) = [o for o in json.loads((tmp_path / "objects.json").read_text()) if o["kind"] == "ConfigMap"]
    text = config_map["data"]["config.yaml"]
    assert yaml.safe_load(text)["extenders"][0]["tlsConfig"] == {"keyData": KEY, "certData": CERT}
    # The checksum the pods roll on is of this very text.
    assert hashlib.sha256(text.encode()).hexdigest() in config_map["metadata"]["annotations"].values()


STANDBY_TOKEN = "canary.standby-bearer-token-9876543210"
INVOCATION = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: rollout_plan_with_secret_files
      ansible.legacy.scheduler_rollout:
        kind: static_pod
        mode: plan
        instances:
          - name: one
            port: 10999
            health_url: https://127.0.0.1:10999/livez
            files:
              - {path: "{{ work }}/one.conf", content: "{{ kubeconfig }}", mode: "0600", secret: true}
            standby:
              name: standby-one
              standby_for: one
              port: 10998
              health_url: https://127.0.0.1:10998/readyz
              files:
                - {path: "{{ work }}/standby-one.conf", content: "{{ standby_kubeconfig }}", mode: "0600", secret: true}
"""


def test_a_modules_arguments_shown_with_its_result_mask_the_secret_files_it_was_handed(
        tmp_path, ansible_playbook, host_side_env):
    # The rollout engine's host side takes the content of every file as a plain option (a no_log option would mask every diff)
    # and hides the content of the files marked secret itself, a standby's too. Its arguments come back with its
    # result when asked (`inject_invocation`, ansible-core 2.21 on; always before) and -vvv shows them: on 2.22,
    # which removes nothing from results, they are masked only when registered with its secrets API.
    (tmp_path / "playbook.yml").write_text(INVOCATION)
    (tmp_path / "vars.json").write_text(json.dumps({
        "work": str(tmp_path), "kubeconfig": KUBECONFIG,
        "standby_kubeconfig": KUBECONFIG.replace(TOKEN, STANDBY_TOKEN).replace(CLIENT_KEY, "c3RhbmRieS1rZXk=")}))
    proc = ansible_playbook(["-vvv", "--diff", "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter="
                             + sys.executable, "-e", "@vars.json", "playbook.yml"], cwd=tmp_path,
                            env=dict(host_side_env, ANSIBLE_INJECT_INVOCATION="1"))
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "module_args" in output, "the arguments were not shown: nothing was proven"
    shown = [secret for secret in SECRETS + (STANDBY_TOKEN, "c3RhbmRieS1rZXk=") if secret in output]
    assert shown == [], "shown: %s" % shown


HANDED_ON = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Render with the real key, to hand it on (as the deployment role does)
      kubesched.schedulers.scheduler_config:
        config: "{{ config }}"
        kubernetes_version: "1.35.4"
      register: real
      no_log: true
    - name: A later task of the operator's shows the text in its diff
      ansible.builtin.copy:
        content: "{{ real.rendered }}"
        dest: "{{ work }}/handed-on.yaml"
        mode: "0600"
"""


@pytest.mark.skipif(not register_secrets([]), reason="this ansible-core has no secrets API (2.22 on): a task that "
                    "hands scheduler_config's real text on must be no_log itself, as the module's docs say")
def test_the_keys_the_action_found_stay_masked_in_every_later_output(tmp_path, ansible_playbook):
    # On a core with a secrets API the keys scheduler_config finds in a config are registered with it, so an
    # operator's later task that shows the real text (a --diff of a file it writes) masks them too.
    (tmp_path / "playbook.yml").write_text(HANDED_ON)
    (tmp_path / "vars.json").write_text(json.dumps({
        "work": str(tmp_path), "config": {"extenders": [EXTENDER], "profiles": [{"schedulerName": "default-scheduler"}]}}))
    proc = ansible_playbook(["-vvv", "--diff", "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter="
                             + sys.executable, "-e", "@vars.json", "playbook.yml"], cwd=tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "keyData" in output, "the written text was not shown: nothing was proven"
    assert [secret for secret in (KEY, CERT) if secret in output] == []
    assert yaml.safe_load((tmp_path / "handed-on.yaml").read_text())["extenders"][0]["tlsConfig"]["keyData"] == KEY


@pytest.mark.skipif(not register_secrets([]), reason="this ansible-core has no secrets API (2.22 on)")
def test_a_value_too_short_to_scrub_is_not_registered():
    # ansible-core's masker masks any length: a secret file holding "5" would blank every 5 of every output.
    from ansible.module_utils.secrets import mask_secrets  # pylint: disable=import-outside-toplevel,import-error

    register_secrets(["5", "canary-registered-long-value"])
    assert mask_secrets("5 canary-registered-long-value") == "5 $REDACTED$"
