"""Property-based tests of every input of both action plugins with hostile strings and structures.

Hypothesis generates instances, configs, config texts, extra_plugins, extra_flags, modes, owners and groups from
valid values with hostile ones mixed in (newlines, carriage returns, NUL, Unicode line separators, quotes,
backslashes, systemd specifiers and variables, YAML aliases and tags, odd types, deep and wide structures, key
material). The action plugins run in-process as Ansible runs them (ansible-core's action loader, a real task and
templar); the host-side module runs as a real subprocess with the arguments the action would give it. Properties:

- a clean error (a failed result, or AnsibleActionFail) or accepted: never any other exception;
- never a write on failure: dest keeps its bytes, mode and kind, and no temp file is left;
- never an injected unit line: an accepted instance renders plugins/plugin_utils/render/systemd_unit.py into
  exactly the baseline's sections and keys, read with systemd's rules, with ExecStart's words exactly the argv;
  the static pod manifest parses back to the same command;
- never a secret (extender keyData/certData) in any result, message, diff or module output;
- the input model (role_inputs over every role variable, scheduler_rollout's options): a refusal names a variable and
  contacts no host; what is accepted is normalised (absolute paths without '.', '..' or '//', no control characters)
  and renders a unit with exactly the baseline's keys;
- the newest surfaces in every form and size (--feature-gates strings with a gate given twice, AllAlpha and AllBeta,
  =false, spaces, unknown gates, up to a mebibyte; the args of every scheduler-plugins kind through the deployment
  role; the fleet's variables as text, multi-select list, integer, mapping, empty or a mebibyte; instance names
  against every reserved name space and the master's other components): each call ends within BOUND, a refusal names
  the variable (the instance's flag, the role variable, the fleet variable, the instance's name), and no kubeconfig
  token or extender key beside the input is ever shown.

Example counts are modest (see SETTINGS) so the suite runs in well under two minutes on a shared CI machine;
`make fuzz` runs FUZZ_SCALE (default 20) times as many, with a new seed each run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import subprocess
import sys
import time

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import (
    OTHER_COMPONENTS, PREFLIGHT_NAME_PREFIX, STANDBY_NAME_PREFIX)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.kinds import CONTROL
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.role_variables import ROLE_VARIABLES, check_role
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.static_pod_manifest import static_pod_manifest_yaml
import hostile
from action_harness import run_action
from systemd_unit import exec_words, parse, render

# `make fuzz` runs FUZZ_SCALE times the examples with a new random seed each run (printed by Hypothesis on a
# failure); `make test` runs them as set here with a fixed seed.
FUZZ_SCALE = int(os.environ.get("FUZZ_SCALE") or 1)
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                      HealthCheck.filter_too_much], derandomize=FUZZ_SCALE == 1,
                database=None, print_blob=True)


def examples(count):
    return count * FUZZ_SCALE


VERSION = "1.33.2"
CONFIG_DIR = "/etc/kubernetes/schedulers"


KEY = hostile.pem_data("PRIVATE KEY", b"PROPERTY-KEY-MATERIAL-4711")
CERT = hostile.pem_data("CERTIFICATE", b"PROPERTY-CERT-MATERIAL-0815")
SECRETS = (KEY, CERT, "PROPERTY-KEY-MATERIAL", "PROPERTY-CERT-MATERIAL")

HOSTILE = [
    "batch\n[Service]\nExecStartPre=+/bin/touch /tmp/pwned\n#", "2\r", "x\x00y", "a\nb", "\r\n", "\u2028", "\u0085",
    '"', "'", "\\", "\\\n", "%n", "%%", "$HOME", "${X}", "$$", "*", "", " ", "--v=1", "-", "a b", "\t", "#", ";",
    "[Service]", "=", "&a", "*a", "!!python/object:os.system", "<<", "~", "null", "true", "1e400", ".nan", "x" * 300,
    "\U0001F600", "\x7f", "\x1b[31m",
]
hostile_text = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(max_size=12),
    st.builds(lambda a, b: a + b, st.sampled_from(["batch", "/etc/kubernetes/x", "v", "kube-system"]),
              st.sampled_from(HOSTILE)),
)
scalar = st.one_of(hostile_text, st.integers(-2 ** 70, 2 ** 70), st.floats(), st.booleans(), st.none())
structure = st.recursive(
    scalar,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.one_of(hostile_text, st.integers(), st.booleans()), children,
                                               max_size=4)),
    max_leaves=10)
names = st.one_of(st.sampled_from(["batch", "kube-scheduler", "a", "x-1"]), hostile_text, scalar)
scheduler_names = st.one_of(st.sampled_from(["batch", "gpu", "default-scheduler"]), hostile_text)
tls = st.fixed_dictionaries({}, optional={"keyData": st.just(KEY), "certData": st.just(CERT),
                                          "insecure": st.booleans(), "serverName": hostile_text})
extender = st.fixed_dictionaries({"urlPrefix": st.sampled_from(["https://extender.example/", "http://e/"])},
                                 optional={"filterVerb": st.just("filter"), "tlsConfig": tls, "weight": scalar})
valid_ish_config = st.fixed_dictionaries(
    {"profiles": st.lists(st.fixed_dictionaries({"schedulerName": scheduler_names}), min_size=1, max_size=2)},
    optional={
        "leaderElection": st.fixed_dictionaries({"leaderElect": st.booleans(), "resourceName": scheduler_names},
                                                optional={"resourceNamespace": hostile_text}),
        "extenders": st.lists(extender, max_size=1),
        "clientConnection": st.one_of(structure, st.fixed_dictionaries({"qps": scalar})),
        "percentageOfNodesToScore": scalar,
        "bogus": structure,
    })
configs = st.one_of(valid_ish_config, valid_ish_config, structure)
# Printable text with everything systemd's quoting must handle (quotes, backslashes, specifiers, variables, spaces).
safe_text = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=16),
    st.sampled_from(['"', "'", "\\", "%n", "%%", "$HOME", "${X}", "$$", "a b", "#", ";", "[Service]", "=", "*"]))
# Names pods can select and leases the API server accepts (DNS-1123 subdomains), mixed with the hostile ones.
dns_names = st.from_regex(r"[a-z0-9]([a-z0-9.-]{0,10}[a-z0-9])?", fullmatch=True)
safe_config = st.fixed_dictionaries(
    {"profiles": st.lists(st.fixed_dictionaries({"schedulerName": st.one_of(dns_names, safe_text)}), min_size=1,
                          max_size=2, unique_by=lambda profile: profile["schedulerName"])},
    optional={"leaderElection": st.fixed_dictionaries({"leaderElect": st.booleans(),
                                                       "resourceName": st.one_of(dns_names, safe_text)}),
              "extenders": st.lists(st.fixed_dictionaries({"urlPrefix": st.just("https://extender.example/"),
                                                           "filterVerb": st.just("filter"), "tlsConfig": tls}),
                                    max_size=1)})


def _as_text(config, style):
    if style == "json":
        return json.dumps(config)
    return yaml.safe_dump(config, default_flow_style=style == "flow")


YAML_SNIPPETS = ["profiles: &p [{schedulerName: a}]\nx: *p\n", "a: &a [*a]\n", "profiles: !!binary aGk=\n",
                 "profiles: !!python/object:os.system ls\n", "{\"a\": [[[[", "---\n---\n", "\t", "profiles: [\n",
                 "kind: KubeSchedulerConfiguration\nextenders: [{urlPrefix: 'https://x/', tlsConfig: {keyData: %s}}]\n"
                 % KEY, "? [a]\n: b\n", "<<: {a: 1}\n", "a: 1\na: 2\n", "profiles:\n- schedulerName: a\n" * 2]
config_texts = st.one_of(
    st.builds(_as_text, valid_ish_config, st.sampled_from(["block", "flow", "json"])),
    st.sampled_from(YAML_SNIPPETS),
    hostile_text,
    st.builds(lambda text, junk: text + junk, st.builds(_as_text, valid_ish_config, st.just("block")),
              st.sampled_from(HOSTILE)),
)
flag_names = st.one_of(st.sampled_from(["v", "feature-gates", "kube-api-qps", "log-flush-frequency", "leader-elect",
                                        "config", "permit-address-sharing", "--v", "vmodule"]), hostile_text,
                       st.integers())
extra_plugins = st.one_of(
    st.lists(st.one_of(
        st.sampled_from(["Coscheduling", "*", ""]), hostile_text, scalar,
        st.fixed_dictionaries(
            {"name": st.one_of(st.just("Coscheduling"), hostile_text, scalar)},
            optional={"extension_points": st.one_of(st.lists(st.sampled_from(["queueSort", "score", "bogus"]), max_size=3), scalar),
                      "args_kind": st.one_of(st.just("CoschedulingArgs"), scalar),
                      "colour": scalar})), max_size=3),
    structure)
valid_instance = st.fixed_dictionaries(
    {"name": st.sampled_from(["batch", "kube-scheduler", "a", "x-1"]), "default_scheduler": st.just(True)},
    optional={
        "config": safe_config,
        "kubeconfig": st.builds(lambda text: "/etc/kubernetes/" + text, safe_text),
        "extra_flags": st.dictionaries(st.sampled_from(["v", "feature-gates", "vmodule", "kube-api-qps",
                                                        "log-flush-frequency", "permit-address-sharing"]),
                                       st.one_of(safe_text, st.integers(0, 10), st.booleans()), max_size=3),
        "bind_address": st.sampled_from(["127.0.0.1", "0.0.0.0", "::", "fe80::1%eth0"]),
        "image": st.just("registry.k8s.io/kube-scheduler:v1.33.2"),
    })
instances = st.fixed_dictionaries(
    {"name": names},
    optional={
        "state": st.one_of(st.sampled_from(["present", "absent"]), scalar),
        "default_scheduler": st.one_of(st.booleans(), scalar),
        "secure_port": st.one_of(st.integers(1, 65535), scalar),
        "bind_address": st.one_of(st.sampled_from(["127.0.0.1", "0.0.0.0", "::", "fe80::1%eth0"]), scalar),
        "kubeconfig": st.one_of(st.sampled_from(["/etc/kubernetes/scheduler.conf", '/etc/k "q" %n $X\\.conf']),
                                st.builds(lambda s: "/etc/" + s, hostile_text), scalar),
        "kubeconfig_content": st.one_of(st.just("apiVersion: v1\nkind: Config\nusers: [{user: {token: %s}}]\n" % KEY),
                                        scalar),
        "config": configs,
        "config_content": config_texts,
        "extra_plugins": extra_plugins,
        "extra_flags": st.one_of(st.dictionaries(flag_names, st.one_of(scalar, structure), max_size=3), structure),
        "image": st.one_of(st.just("registry.k8s.io/kube-scheduler:v1.33.2"), hostile_text, scalar),
        "bogus": scalar,
    })


def _baseline_unit_keys():
    resolved, errors, _warnings = resolve([{"name": "batch", "default_scheduler": True}], VERSION, CONFIG_DIR)
    assert errors == []
    return [(section, key) for section, key, _value in parse(render(resolved[0]))]


BASELINE_KEYS = _baseline_unit_keys()


def _no_secret(text):
    for secret in SECRETS:
        assert secret not in text, "a secret in the output: %s" % text[:300]


def _check_unit(instance, **role_vars):
    entries = parse(render(instance, **role_vars))
    assert [(section, key) for section, key, _value in entries] == BASELINE_KEYS
    values = dict((key, value) for _section, key, value in entries)
    link = role_vars.get("kube_scheduler_binary_link", "/usr/local/bin/kube-scheduler")
    assert exec_words(values["ExecStart"]) == [link] + instance["flags"]
    assert values["Description"] == "Kubernetes scheduler " + instance["name"]
    assert values["SyslogIdentifier"] == instance["name"]


def _check_manifest(instance):
    pod = yaml.safe_load(static_pod_manifest_yaml(instance, VERSION, "0" * 64))
    (container,) = pod["spec"]["containers"]
    assert sorted(container["command"][1:]) == sorted(instance["flags"])
    assert pod["metadata"]["name"] == instance["name"]


@settings(max_examples=examples(500), **SETTINGS)
@given(st.one_of(st.lists(valid_instance, min_size=1, max_size=1), st.lists(valid_instance, min_size=2, max_size=2),
                 st.lists(instances, min_size=1, max_size=2)))
def test_scheduler_instances_clean_error_or_safe_unit(value):
    result = run_action("scheduler_instances", {"instances": value, "kubernetes_version": VERSION,
                                                "config_dir": CONFIG_DIR})
    shown = json.dumps({k: v for k, v in result.items() if k != "instances"}, default=str)
    _no_secret(shown)
    event("refused" if result.get("failed") else "accepted")
    if result.get("failed"):
        assert result["msg"]
        for error in result.get("errors", []):
            assert isinstance(error, str) and error and "\n" not in error and "Traceback" not in error
        return
    has_secret = False
    for instance in result["instances"]:
        has_secret = has_secret or instance["config_has_secrets"]
        if instance["state"] == "present":
            _check_unit(instance)
            _check_manifest(instance)
            _no_secret(json.dumps(dict(instance, config_rendered=None)))
            assert all(KEY not in flag for flag in instance["flags"])
    if has_secret:
        assert result["_ansible_no_log"] is True


modes = st.one_of(st.sampled_from(["0600", "0640", "600", "0o644", "u=rw,g=r,o=", "u=rw,g=,o=", "abc", "", "7777",
                                   "u+x,g-w"]), st.integers(0, 5000), scalar)
owners = st.one_of(st.sampled_from(["root", "0", "no-such-user-k8s", "nobody"]), hostile_text, st.none())
versions = st.one_of(st.sampled_from(["1.30", "1.33.2", "v1.35.4", "1.36", "1.29", "2.0", "latest"]), scalar)


@settings(max_examples=examples(500), **SETTINGS)
@given(inputs=st.one_of(
    st.fixed_dictionaries({"config": st.one_of(safe_config, configs)}, optional={
        "kubernetes_version": st.sampled_from(["1.30", "1.33.2", "v1.35.4"]), "mode": st.sampled_from(["0600", "0640"]),
        "dest": st.just("/etc/kubernetes/scheduler.yaml")}),
    st.fixed_dictionaries({"content": st.one_of(st.builds(_as_text, safe_config, st.sampled_from(["block", "json"])),
                                                config_texts)}),
    st.fixed_dictionaries({}, optional={
        "config": configs, "content": config_texts, "kubernetes_version": versions, "extra_plugins": extra_plugins,
        "mode": modes, "owner": owners, "group": owners, "backup": scalar,
        "dest": st.one_of(st.just("/etc/kubernetes/scheduler.yaml"), hostile_text, scalar)})))
def test_scheduler_config_clean_error_or_accepted_and_no_secret(inputs):
    result = run_action("scheduler_config", inputs)
    calls = result.pop("_module_calls")
    _no_secret(json.dumps(result, default=str))
    event("refused" if result.get("failed") else ("written" if calls else "accepted"))
    if result.get("failed"):
        assert calls == []  # never a write on failure: the host is not even contacted
        assert result["msg"] and "Traceback" not in result["msg"]
        for error in result.get("errors", []):
            assert set(error) == {"field", "type", "message"}
        return
    assert result["checksum"] and result["rendered"].startswith("apiVersion:")
    assert len(calls) == (1 if inputs.get("dest") else 0)
    for call in calls:
        # The real text goes to the host, with every secret in it named for Ansible's no_log masking.
        assert hashlib.sha256(call["content"].encode()).hexdigest() == result["checksum"]
        for secret in (KEY, CERT):
            assert (secret in call["content"]) == (secret in call["secret_values"])


# --------------------------------------------------------------------------------------------------------------
# The host side: the module's writes, run as a subprocess with the arguments the action gives it.

def _state(path):
    if os.path.islink(path):
        return ("link", os.readlink(path))
    if os.path.isdir(path):
        return ("dir",)
    if not os.path.exists(path):
        return ("absent",)
    with open(path, "rb") as handle:
        return ("file", handle.read(), stat.S_IMODE(os.stat(path).st_mode), os.stat(path).st_uid)


def _run_module(args):
    argv = [sys.executable, "-m", "ansible_collections.kubesched.schedulers.plugins.modules.scheduler_config"]
    proc = subprocess.run(argv, input=json.dumps({"ANSIBLE_MODULE_ARGS": args}), capture_output=True, text=True,
                          timeout=60, check=False, env=dict(os.environ))
    return proc


ATTRIBUTES = {
    "valid": dict(mode=st.sampled_from(["0600", "0640", "0o644", "u=rw,g=r,o=", "g+r", None]),
                  owner=st.sampled_from([None, "root", "0"]), group=st.sampled_from([None, "root", "0"])),
    "hostile": dict(mode=modes, owner=owners, group=owners),
}


@pytest.mark.parametrize("attributes", sorted(ATTRIBUTES))
@settings(max_examples=examples(40), **SETTINGS)
@given(data=st.data(), dest_kind=st.sampled_from(["absent", "file", "secret-file", "link", "dir", "missing-dir"]),
       content=st.one_of(st.sampled_from(["a: 1\n", "keyData: %s\n" % KEY, ""]), st.text(max_size=20)),
       backup=st.booleans(), check_mode=st.booleans(), leftover=st.booleans())
def test_module_writes_all_or_nothing(tmp_path_factory, attributes, data, dest_kind, content, backup, check_mode,
                                      leftover):
    mode, owner, group = (data.draw(ATTRIBUTES[attributes][key], label=key) for key in ("mode", "owner", "group"))
    work = tmp_path_factory.mktemp("write")
    dest = work / "sub" / "scheduler.yaml" if dest_kind == "missing-dir" else work / "scheduler.yaml"
    if dest_kind in ("file", "secret-file"):
        dest.write_text("old: 1\n" if dest_kind == "file" else "keyData: %s\n" % CERT)
        os.chmod(dest, 0o640)
    elif dest_kind == "link":
        (work / "target.yaml").write_text("target: 1\n")
        os.chmod(work / "target.yaml", 0o644)
        os.symlink("target.yaml", dest)
    elif dest_kind == "dir":
        dest.mkdir()
    if leftover:
        (work / ".scheduler.yaml.kubesched-tmp.abc123").write_text("stale")
    before = _state(str(dest))
    target_before = _state(str(work / "target.yaml"))
    args = {"content": content, "dest": str(dest), "backup": backup, "_ansible_check_mode": check_mode,
            "_ansible_diff": True, "secret_values": [KEY, CERT], "secret_keys": ["keyData", "certData"]}
    for key, value in (("mode", mode), ("owner", owner), ("group", group)):
        if value is not None:
            args[key] = value
    proc = _run_module(args)
    assert "Traceback" not in proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    assert "exception" not in result
    event("failed" if result.get("failed") else ("check mode" if check_mode else "written"))
    # From ansible-core 2.22 a module hands the values it registered as secrets to the controller under this key,
    # which the controller takes out of the result and masks wherever the value would show: the module's only place
    # for them, and only the secrets it was given (test_secrets_in_every_output.py runs the controller's side).
    handed = set(result.pop("_ansible_new_secrets", ()))
    assert handed <= {KEY, CERT}, handed
    _no_secret(json.dumps(result) + proc.stderr)
    temps = [name for name in os.listdir(work) if name.startswith(".scheduler.yaml.") and "kubesched-tmp" in name]
    assert _state(str(work / "target.yaml")) == target_before
    if result.get("failed") or check_mode:
        assert _state(str(dest)) == before
        if not check_mode and not leftover:
            assert temps == []
        return
    assert temps == []
    after = _state(str(dest))
    assert after[0] == "file" and after[1] == content.encode("utf-8", "surrogateescape")
    if isinstance(mode, str) and mode.isdigit():
        assert after[2] == int(mode, 8)


# --- the input model: every role variable (role_variables.py), as ansible-playbook would pass it to role_inputs ---

VALID_PATHS = st.sampled_from(["/etc/kubernetes/schedulers", "/etc/systemd/system", "/var/lib/kubesched/x",
                               "/opt/kube-scheduler", "/usr/local/bin/kube-scheduler", "/srv/a b/%n$x\"q"])
ROLE_VALUES = {
    "path": st.one_of(VALID_PATHS, VALID_PATHS,
                      st.sampled_from(["", "/", "/a/../b", "/a//b", "relative/path", "/a/./b", "/etc/kubernetes/schedulers/"]),
                      st.builds(lambda a, b: a + b, st.sampled_from(["/etc/", "/usr/local/bin/"]), hostile_text)),
    "version": st.one_of(versions, st.floats(1.0, 2.0), st.sampled_from(["v1.35.4", "1.35.4", "1.35", "", "{{ x }}"])),
    "other": st.one_of(scalar, structure, st.sampled_from(["{{ undefined_variable }}", "{{ 1/0 }}", "{% for %}"])),
}


def _role_defaults():
    """Every role's defaults that are plain values (no template): the valid half of each variable's strategy."""
    from pathlib import Path
    values = {"kube_scheduler_version": "1.35.4", "kube_scheduler_deployment_version": "v1.35.4",
              "kube_scheduler_verify_version": "1.35.4"}
    for defaults in (Path(__file__).resolve().parents[3] / "roles").glob("*/defaults/main.yml"):
        for name, value in (yaml.safe_load(defaults.read_text()) or {}).items():
            if "{{" not in json.dumps(value) and value not in (None, ""):
                values.setdefault(name, value)
    return values


ROLE_DEFAULTS = _role_defaults()


def _role_value(name):
    if name.endswith(("_dir", "_link", "_path", "_kubeconfig")):
        hostile_values = ROLE_VALUES["path"]
    elif name.endswith("_version"):
        hostile_values = ROLE_VALUES["version"]
    else:
        hostile_values = ROLE_VALUES["other"]
    if name in ROLE_DEFAULTS:
        return st.one_of(st.just(ROLE_DEFAULTS[name]), hostile_values)
    return hostile_values


@settings(max_examples=examples(300), **SETTINGS)
@given(data=st.data(), role=st.sampled_from(sorted(ROLE_VARIABLES)))
def test_role_inputs_clean_error_or_values_safe_for_every_destination(data, role):
    names = sorted(ROLE_VARIABLES[role])
    chosen = data.draw(st.lists(st.sampled_from(names), max_size=4, unique=True))
    task_vars = dict((name, data.draw(_role_value(name), label=name)) for name in chosen)
    extra = data.draw(st.sampled_from([None, None, None, "instance", "verison", "bogus_thing", "unit_dirs"]))
    if extra:
        task_vars["kube_scheduler_" + extra] = 1
    result = run_action("role_inputs", {"role": role}, task_vars=task_vars)
    event("refused" if result.get("failed") else "accepted")
    if result.get("failed"):
        assert result["msg"] and "Traceback" not in result["msg"]
        for error in result.get("errors", []):
            assert isinstance(error, str) and error.startswith("kube_scheduler_") and "\n" not in error
        return
    normalised, problems = check_role(role, task_vars, list(task_vars))
    assert problems == []
    for name, value in normalised.items():
        if isinstance(value, str) and name.endswith(("_ca_cert_content", "_ca_key_content")):
            # PEM reaches a module argument only; its lines are armour and base64, nothing a unit could run.
            assert not CONTROL.search(value.replace("\n", "").replace("\r", "")), (name, value)
            assert value == "" or value.lstrip().startswith("-----BEGIN "), (name, value)
        elif isinstance(value, str):
            assert not CONTROL.search(value), (name, value)
        if name.endswith(("_dir", "_link")) and value:
            assert value.startswith("/") and "/../" not in value + "/" and "//" not in value and "/./" not in value + "/"
    if role == "systemd" and "kube_scheduler_binary_link" in normalised:
        instance = resolve([{"name": "batch", "default_scheduler": True}], VERSION, CONFIG_DIR)[0][0]
        _check_unit(instance, kube_scheduler_binary_link=normalised["kube_scheduler_binary_link"])


@settings(max_examples=examples(200), **SETTINGS)
@given(options=st.fixed_dictionaries({}, optional={
    "unit_dir": ROLE_VALUES["path"], "binary_link": ROLE_VALUES["path"], "config_dir": ROLE_VALUES["path"],
    "state_dir": ROLE_VALUES["path"], "user": st.one_of(st.just("kube-scheduler"), hostile_text),
    "group": st.one_of(st.just("kube-scheduler"), hostile_text), "kubernetes_version": ROLE_VALUES["version"],
    "health_timeout": scalar}))
def test_scheduler_rollout_refuses_before_the_host_or_renders_a_safe_unit(options):
    instance = resolve([{"name": "batch", "default_scheduler": True}], VERSION, CONFIG_DIR)[0]
    args = dict({"kind": "systemd", "instances": instance, "kubernetes_version": VERSION, "config_dir": CONFIG_DIR,
                 "state_dir": "/var/lib/kubesched/systemd", "binary_path": "/opt/kube-scheduler/1.33.2/kube-scheduler"},
                **options)
    result = run_action("scheduler_rollout", args)
    event("refused" if result.get("failed") else "accepted")
    if result.get("failed"):
        assert result["msg"] and "Traceback" not in result["msg"] and result["_module_calls"] == []
        return
    (call,) = result["_module_calls"]
    (entry,) = call["instances"]
    unit = [f for f in entry["files"] if f["path"].endswith(".service")][0]
    entries = parse(unit["content"])
    assert [(section, key) for section, key, _value in entries] == BASELINE_KEYS
    assert dict((key, value) for _s, key, value in entries)["User"] == call["accounts"]["user"]
    for spec in entry["files"]:
        assert spec["path"].startswith("/") and not CONTROL.search(spec["path"]) and "/../" not in spec["path"]


# --- --feature-gates: every string an operator or a survey may give ----------------------------------------------

GATE_NAMES = ["AllAlpha", "AllBeta", "GenericWorkload", "StorageCapacityScoring", "VolumeCapacityPriority",
              "DynamicResourceAllocation", "TopologyAwareWorkloadScheduling", "PodGroupPreemptionPolicy",
              "NodeDeclaredFeatures", "DRADeviceBindingConditions", "NoSuchGate", "allalpha", ""]
gate_values = st.one_of(st.sampled_from(["true", "false", "True", "FALSE", "1", "0", "t", "F", "maybe", "", " true "]),
                        hostile_text)
gate_pairs = st.builds(lambda component, name, equals, value: component + name + equals + value,
                       st.sampled_from(["", "", "kube:", "foo:", " "]), st.one_of(st.sampled_from(GATE_NAMES), hostile_text),
                       st.sampled_from(["=", "=", "", "=="]), gate_values)
gate_strings = st.one_of(st.lists(gate_pairs, max_size=4).map(",".join), hostile_text,
                         st.dictionaries(st.sampled_from(GATE_NAMES), st.one_of(st.booleans(), gate_values), max_size=3),
                         scalar, structure)


@settings(max_examples=examples(300), **SETTINGS)
@given(value=gate_strings, minor=st.sampled_from(["1.30", "1.33", "1.35", "1.36", "1.37", "1.38"]))
def test_a_feature_gate_string_is_refused_in_kube_schedulers_words_or_sets_what_it_names(value, minor):
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _feature_gates as feature_gates  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process  # pylint: disable=import-outside-toplevel
    try:
        gates = feature_gates.parse(value, minor)
    except feature_gates.FeatureGateError as exc:
        event("refused")
        assert str(exc) and "Traceback" not in str(exc)
        result = process(config={"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                         kubernetes_version=minor, feature_gates=value)
        assert [error["message"] for error in result.errors] == [str(exc)]
        return
    event("accepted")
    named = dict((name.strip(), text) for name, text in (value.items() if isinstance(value, dict) else []))
    for name, text in named.items():
        if isinstance(text, bool):
            assert gates[name] is text  # a gate given by name keeps its value, whatever AllAlpha and AllBeta set
    result = process(config={"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                     kubernetes_version=minor, feature_gates=value)
    assert result.ok, result.errors


@settings(max_examples=examples(150), **SETTINGS)
@given(flags=st.dictionaries(st.sampled_from(["feature-gates", "--feature-gates", "-feature-gates", "v", "--v"]),
                             st.one_of(gate_strings, st.integers(0, 9)), min_size=1, max_size=3))
def test_extra_flags_with_gates_give_one_flag_of_each_name_or_a_clean_refusal(flags):
    resolved, errors, _warnings = resolve([{"name": "batch", "default_scheduler": True, "extra_flags": flags}],
                                          "1.37.2", CONFIG_DIR)
    event("refused" if errors else "accepted")
    if errors:
        assert all(isinstance(error, str) and "Traceback" not in error and "\n" not in error for error in errors)
        spellings = [flag.lstrip("-") for flag in flags]
        if len(set(spellings)) < len(spellings):
            assert any(" name one flag, --" in error for error in errors), errors
        return
    names = [flag.split("=", 1)[0] for flag in resolved[0]["flags"]]
    assert len(names) == len(set(names))


# --- the plugin args of every scheduler-plugins kind, as a config gives them --------------------------------------

def _scheduler_plugins_kinds():
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import scheduler_plugins  # pylint: disable=import-outside-toplevel
    kinds = []
    for release in sorted(scheduler_plugins.RELEASES):
        tree = scheduler_plugins.OutOfTree(release)
        for kind, node in sorted(tree.args_types.items()):
            kinds.append((release, tree.args_kinds[kind], sorted(set(node.fields) - {"apiVersion", "kind"})))
    return kinds


SCHEDULER_PLUGINS_KINDS = _scheduler_plugins_kinds()
arg_values = st.one_of(scalar, structure, st.sampled_from(
    ["1.5", "0x1p-2", "1e400", "nan", "inf", "9" * 5000 + "x", "", "Prometheus", "http://127.0.0.1:2020", "Least",
     "Most", "LeastAllocated"]),
    st.fixed_dictionaries({}, optional={"type": st.sampled_from(["Prometheus", "SignalFx", "KubernetesMetricsServer",
                                                                 "", "LeastNUMANodes"]),
                                        "address": hostile_text, "token": st.just(KEY), "insecureSkipVerify": scalar}),
    st.lists(st.fixed_dictionaries({"name": hostile_text}, optional={"weight": scalar}), max_size=2))


@settings(max_examples=examples(400), **SETTINGS)
@given(data=st.data(), case=st.sampled_from(SCHEDULER_PLUGINS_KINDS), enabled=st.booleans())
def test_scheduler_plugins_args_of_every_kind_are_refused_cleanly_or_defaulted(data, case, enabled):
    release, plugin, fields = case
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import scheduler_plugins  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import plain  # pylint: disable=import-outside-toplevel
    args = data.draw(st.dictionaries(st.sampled_from(fields + ["notAField"]), arg_values, max_size=4), label="args")
    profile = {"schedulerName": "sp", "pluginConfig": [{"name": plugin, "args": args}]}
    if enabled:
        profile["plugins"] = {"multiPoint": {"enabled": [{"name": plugin}]}}
    kubernetes = scheduler_plugins.RELEASES[release]
    # As every entry point hands a config to the library: plain types, keys as sigs.k8s.io/yaml makes them.
    result = process(config=plain({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                                   "profiles": [profile]}), kubernetes_version=kubernetes, scheduler_plugins_version=release)
    event("refused" if result.errors else "accepted")
    for error in result.errors:
        assert error["message"] and "Traceback" not in error["message"] and KEY not in error["message"]
    if not result.errors and enabled:
        # The effective config keeps the args of the plugins a profile enables (kube-scheduler drops the others').
        defaulted = [entry for entry in result.effective["profiles"][0]["pluginConfig"] if entry["name"] == plugin]
        assert defaulted and defaulted[0]["args"]["kind"] == plugin + "Args"


# --- the fleet's variables in every form an AWX survey gives: text, multi-select list, integer, empty -------------

survey_forms = st.one_of(st.sampled_from(["east", "west", "", " east", "east,west"]), hostile_text,
                         st.lists(st.sampled_from(["east", "west", ""]), max_size=2), st.integers(-1, 3),
                         st.booleans(), st.none())
kubeconfigs = st.one_of(st.none(), st.just(""), st.sampled_from(["~/.kube/east.conf", "/k/west.conf"]), hostile_text,
                        st.fixed_dictionaries({"apiVersion": st.just("v1"), "kind": st.just("Config"),
                                               "users": st.just([{"name": "u", "user": {"token": KEY}}])},
                                              optional={"clusters": st.lists(st.fixed_dictionaries(
                                                  {"name": st.just("c"), "cluster": st.fixed_dictionaries(
                                                      {"server": st.sampled_from(["https://127.0.0.1:6443",
                                                                                  "https://127.0.0.2:6443"])})}),
                                                  max_size=1)}),
                        st.integers(0, 2), st.lists(hostile_text, max_size=2))


@settings(max_examples=examples(300), **SETTINGS)
@given(data=st.data(), canary=survey_forms, gate=st.booleans(), groups=st.booleans())
def test_the_fleet_variables_in_any_survey_form_plan_or_are_refused_naming_the_variable(data, canary, gate, groups):
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubesched.schedulers.plugins.filter.rollout_order import rollout_waves  # pylint: disable=import-outside-toplevel
    hostvars = {}
    for host in ("e1", "e2", "w1", "w2"):
        variables = {"group_names": ["kube_control_plane", "east" if host[0] == "e" else "west"],
                     "kube_scheduler_plan": {"pending": True, "plan": {"instances": {}}}}
        if groups:
            variables["kube_scheduler_cluster_groups"] = data.draw(st.one_of(st.just(["east", "west"]), survey_forms),
                                                                   label="groups")
        else:
            variables["kube_scheduler_cluster"] = data.draw(survey_forms, label="cluster of " + host)
        for name in ("kube_scheduler_make_before_break", "kube_scheduler_verify_k8s_context"):
            if data.draw(st.booleans(), label="set " + name):
                variables[name] = data.draw(survey_forms, label=name)
        variables["kube_scheduler_verify_k8s_kubeconfig"] = data.draw(kubeconfigs, label="kubeconfig of " + host)
        hostvars[host] = variables
    try:
        result = rollout_waves(["e1", "e2", "w1", "w2"], hostvars, canary, gate=gate, kind="systemd")
    except AnsibleFilterError as exc:
        event("refused")
        message = str(exc)
        assert message.startswith("kube_scheduler_"), message
        assert KEY not in message and "Traceback" not in message and "unhashable" not in message
        return
    event("planned")
    assert sorted(result["order"]) == ["e1", "e2", "w1", "w2"]
    assert KEY not in json.dumps(result, default=str)


# --- the newest surfaces, bounded and named: every form and size of a gate string, scheduler-plugins args through
# --- the deployment role, the fleet's variables, and every reserved instance name ---------------------------------

# One call ends within this, even on a mebibyte (measured: a 1 MiB gate string or float 0.1 s to 0.6 s); a hang or a
# backtracking parse goes far past it (a 120,000-digit float once took a minute).
BOUND = 8.0
MEBIBYTE = 1 << 20


def _bounded(call, *args, **kwargs):
    """What ``call`` returns, once it used less than BOUND seconds of CPU (make test's other chains stretch the
    clock, not the work) and ended within ten times that by the clock (a wait that never ends uses no CPU)."""
    start, started = time.process_time(), time.monotonic()
    out = call(*args, **kwargs)
    used, elapsed = time.process_time() - start, time.monotonic() - started
    name = getattr(call, "__name__", call)
    assert used < BOUND, "%s used %.1f s of CPU" % (name, used)
    assert elapsed < 10 * BOUND, "%s took %.1f s" % (name, elapsed)
    return out


def _huge_gate_string(kind, size):
    """A --feature-gates string of about ``size`` characters, as a careless template or a survey could give it."""
    if kind == "name":
        return "A" * size + "=true"
    if kind == "value":
        return "StorageCapacityScoring=" + "t" * size
    if kind == "digits":
        return "StorageCapacityScoring=" + "1" * size
    unit = {"pairs": "StorageCapacityScoring=true,", "duplicates": "AllAlpha=false,AllAlpha=true,", "commas": ",",
            "spaces": " ", "blank pairs": " ,", "equals": "="}[kind]
    return unit * (size // len(unit))


huge_gate_strings = st.builds(_huge_gate_string, st.sampled_from(["name", "value", "digits", "pairs", "duplicates",
                                                                  "commas", "spaces", "blank pairs", "equals"]),
                              st.sampled_from([1 << 16, MEBIBYTE]))
duplicate_gate_strings = st.builds(lambda name, values, separator: separator.join("%s=%s" % (name, value) for value in values),
                                   st.sampled_from(GATE_NAMES), st.lists(gate_values, min_size=2, max_size=4),
                                   st.sampled_from([",", ", ", " , ", ",,", ", ,"]))
spaced_gate_strings = st.builds(lambda pairs, pad: pad + (pad + "," + pad).join(pairs) + pad,
                                st.lists(gate_pairs, min_size=1, max_size=3), st.sampled_from([" ", "\t", "  ", ""]))
every_gate_string = st.one_of(gate_strings, duplicate_gate_strings, spaced_gate_strings, huge_gate_strings)
# A kubeconfig token and an extender's key beside the gates: no refusal of the gates may show them.
SECRET_BEARING = {"kubeconfig_content": "apiVersion: v1\nkind: Config\nusers: [{name: u, user: {token: %s}}]\n" % KEY,
                  "config": {"extenders": [{"urlPrefix": "https://extender.example/", "filterVerb": "filter",
                                            "tlsConfig": {"keyData": KEY}}]}}


@settings(max_examples=examples(150), **SETTINGS)
@given(value=every_gate_string, version=st.sampled_from(["1.30.14", "1.33.2", "1.35.4", "1.36.3", "1.37.2"]),
       key=st.sampled_from(["feature-gates", "--feature-gates"]))
def test_a_gate_string_of_any_form_or_size_is_one_flag_or_refused_naming_the_instances_flag_in_bounded_time(
        value, version, key):
    instance = dict(SECRET_BEARING, name="batch", default_scheduler=True, extra_flags={key: value})
    resolved, errors, warnings = _bounded(resolve, [instance], version, CONFIG_DIR)
    _no_secret(json.dumps([errors, warnings]))
    event("refused" if errors else "accepted")
    if errors:
        assert all(isinstance(error, str) and "Traceback" not in error and "\n" not in error for error in errors)
        assert errors[0].startswith("kube_scheduler_instances[0].extra_flags"), errors[0][:300]
        return
    gates = [flag for flag in resolved[0]["flags"] if flag.startswith("--feature-gates=")]
    assert len(gates) <= 1 and all(KEY not in flag for flag in resolved[0]["flags"])


@settings(max_examples=examples(60), **SETTINGS)
@given(value=every_gate_string, version=st.sampled_from(["1.30.14", "1.35.4", "1.37.2"]))
def test_scheduler_config_refuses_a_gate_string_of_any_form_or_size_by_the_flag_in_bounded_time(value, version):
    result = _bounded(run_action, "scheduler_config", {"config": SECRET_BEARING["config"], "kubernetes_version": version,
                                                       "feature_gates": value})
    result.pop("_module_calls")
    _no_secret(json.dumps(result, default=str))
    event("refused" if result.get("failed") else "accepted")
    if result.get("failed"):
        assert result["msg"] and "Traceback" not in result["msg"]
        assert [error["field"] for error in result["errors"]][:1] == ["--feature-gates"], result["errors"][:1]


huge_arg_values = st.sampled_from(["9" * MEBIBYTE + "x", "1" * MEBIBYTE, "1." + "0" * MEBIBYTE + "1e", "a" * MEBIBYTE,
                                   " " * MEBIBYTE + "1"])


@settings(max_examples=examples(150), **SETTINGS)
@given(data=st.data(), case=st.sampled_from(SCHEDULER_PLUGINS_KINDS))
def test_scheduler_plugins_args_of_every_kind_through_the_deployment_role_are_refused_naming_its_variable_in_bounded_time(
        data, case):
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import scheduler_plugins  # pylint: disable=import-outside-toplevel
    release, plugin, fields = case
    args = data.draw(st.dictionaries(st.sampled_from(fields + ["notAField"]), st.one_of(arg_values, huge_arg_values),
                                     max_size=3), label="args")
    config = {"profiles": [{"schedulerName": "sp", "plugins": {"multiPoint": {"enabled": [{"name": plugin}]}},
                            "pluginConfig": [{"name": plugin, "args": args}]}]}
    values = {"kube_scheduler_deployment_version": scheduler_plugins.RELEASES[release],
              "kube_scheduler_deployment_scheduler_plugins_version": release, "kube_scheduler_deployment_config": config}
    # As ansible-playbook runs the role's first task: role_inputs, in-process, with the values as task variables.
    result = _bounded(run_action, "role_inputs", {"role": "deployment"}, task_vars=values)
    _no_secret(json.dumps(result, default=str))
    event("refused" if result.get("failed") else "accepted")
    if result.get("failed"):
        assert result["msg"] and "Traceback" not in result["msg"]
        for problem in result.get("errors", []):
            assert problem.startswith(("kube_scheduler_deployment_config", "  hint (kube_scheduler_deployment_config")), problem[:300]


huge_survey_forms = st.sampled_from(["e" * MEBIBYTE, "east," * (MEBIBYTE // 5), ["east"] * 10000, " " * MEBIBYTE])
every_survey_form = st.one_of(survey_forms, huge_survey_forms, st.dictionaries(st.sampled_from(["east", "west"]),
                                                                               st.one_of(st.booleans(), st.integers()),
                                                                               max_size=2))


@settings(max_examples=examples(150), **SETTINGS)
@given(data=st.data(), canary=every_survey_form, gate=st.booleans(),
       variable=st.sampled_from(["kube_scheduler_cluster", "kube_scheduler_cluster_groups",
                                 "kube_scheduler_make_before_break", "kube_scheduler_control_plane_group"]))
def test_every_fleet_variable_in_any_survey_form_or_size_plans_or_is_refused_naming_it_in_bounded_time(
        data, canary, gate, variable):
    """One fleet variable in a drawn form, the others as a correct survey gives them; the canary in any form too."""
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubesched.schedulers.plugins.filter.rollout_order import rollout_waves  # pylint: disable=import-outside-toplevel
    form = data.draw(every_survey_form, label=variable)
    group = form if variable == "kube_scheduler_control_plane_group" else "kube_control_plane"
    hostvars = {}
    for host in ("e1", "e2", "w1", "w2"):
        variables = {"group_names": ["kube_control_plane", "east" if host[0] == "e" else "west"],
                     "kube_scheduler_plan": {"pending": True, "plan": {"instances": {}}},
                     "kube_scheduler_cluster": "east" if host[0] == "e" else "west",
                     "kube_scheduler_verify_k8s_kubeconfig": {"apiVersion": "v1", "kind": "Config",
                                                              "users": [{"name": "u", "user": {"token": KEY}}]}}
        if variable != "kube_scheduler_control_plane_group":
            variables[variable] = form
        hostvars[host] = variables
    try:
        result = _bounded(rollout_waves, ["e1", "e2", "w1", "w2"], hostvars, canary, group, gate=gate, kind="static_pod")
    except AnsibleFilterError as exc:
        event("refused")
        message = str(exc)
        assert message.startswith("kube_scheduler_"), message[:300]
        assert KEY not in message and "Traceback" not in message and "unhashable" not in message
        return
    event("planned")
    assert sorted(result["order"]) == ["e1", "e2", "w1", "w2"]
    assert KEY not in json.dumps(result, default=str)


# Every name space the collection reserves for itself, and the names of the master's other components.
RESERVED_PREFIXES = (STANDBY_NAME_PREFIX, PREFLIGHT_NAME_PREFIX)
reserved_names = st.one_of(
    st.builds(lambda prefix, rest: prefix + rest, st.sampled_from(RESERVED_PREFIXES),
              st.one_of(st.sampled_from(["batch", "kube-scheduler", "x", "", "-", "a" * 50]), dns_names, hostile_text)),
    st.sampled_from(OTHER_COMPONENTS))
beside_reserved_names = st.one_of(
    st.sampled_from([prefix.rstrip("-") for prefix in RESERVED_PREFIXES] + [name + "-1" for name in OTHER_COMPONENTS]
                    + ["x-" + prefix + "a" for prefix in RESERVED_PREFIXES] + ["batch", "gpu"]),
    dns_names)
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


@settings(max_examples=examples(150), **SETTINGS)
@given(names=st.lists(st.one_of(reserved_names, beside_reserved_names), min_size=1, max_size=4, unique=True),
       absent=st.lists(st.booleans(), min_size=4, max_size=4))
def test_every_reserved_instance_name_is_refused_naming_it_and_no_other_name_is(names, absent):
    instances = []
    for index, name in enumerate(names):
        instance = {"name": name, "config": {"leaderElection": {"leaderElect": True, "resourceName": "lease-%d" % index},
                                             "profiles": [{"schedulerName": "profile-%d" % index}]}}
        instances.append(dict(instance, state="absent") if absent[index] else instance)
    resolved, errors, _warnings = _bounded(resolve, instances, VERSION, CONFIG_DIR)
    event("refused" if errors else "accepted")
    for index, name in enumerate(names):
        named = [error for error in errors if error.startswith("kube_scheduler_instances[%d].name: " % index)]
        label = len(name) <= 63 and DNS_LABEL.fullmatch(name) is not None
        reserved = name.startswith(RESERVED_PREFIXES) or name in OTHER_COMPONENTS
        if reserved and label:
            assert len(named) == 1 and named[0].endswith("give the instance another name"), (name, errors)
        elif label:
            assert not named, (name, errors)
        else:
            assert named, (name, errors)
    if not errors:
        assert [instance["name"] for instance in resolved] == names
