"""No instance input reaches a unit file, a command line, a path or a manifest unchecked.

Each reproducer of the issue is here, resolved through the instance model (the one place that decides it for every
role) and, when it is accepted, rendered into the systemd unit and read back with systemd's rules.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.extra_plugins import check_extra_plugins
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve
from systemd_unit import exec_words, parse, render

VERSION = "1.33.2"
CONFIG_DIR = "/etc/kubernetes/schedulers"
INJECTION = "batch\n[Service]\nExecStartPre=+/bin/touch /tmp/pwned\n#"


def instance(**overrides):
    value = {"name": "batch", "config": {"leaderElection": {"leaderElect": True, "resourceName": "batch"},
                                         "profiles": [{"schedulerName": "batch"}]}}
    value.update(overrides)
    return value


def errors_of(value):
    resolved, errors, _warnings = resolve([value], VERSION, CONFIG_DIR)
    assert resolved == [] and errors
    return "\n".join(errors)


def assert_unit_is_clean(resolved):
    unit = render(resolved)
    entries = parse(unit)
    assert list(dict.fromkeys(s for s, _k, _v in entries)) == ["Unit", "Service", "Install"]
    exec_starts = [value for section, key, value in entries if key.startswith("ExecStart")]
    assert len(exec_starts) == 1
    assert exec_words(exec_starts[0]) == ["/usr/local/bin/kube-scheduler"] + resolved["flags"]
    return unit


@pytest.mark.parametrize("config, field", [
    ({"profiles": [{"schedulerName": INJECTION}], "leaderElection": {"resourceName": "batch"}},
     "config.profiles[0].schedulerName"),
    ({"profiles": [{"schedulerName": "batch"}], "leaderElection": {"resourceName": INJECTION}},
     "config.leaderElection.resourceName"),
])
def test_scheduler_and_lease_names_with_newlines_are_refused(config, field):
    assert "kube_scheduler_instances[0].%s: Invalid value" % field in errors_of(instance(config=config))


@pytest.mark.parametrize("flags, message", [
    ({"v": "2\n[Service]\nExecStartPre=/bin/true"}, "extra_flags.v: Invalid value"),
    ({"v": "2\r"}, "extra_flags.v: Invalid value"),
    ({"v": "2\x00"}, "extra_flags.v: Invalid value"),
    ({"v": None}, "extra_flags.v: has no value (null)"),
    ({"v\n": 2}, "Invalid flag name"),
    ({5: 2}, "extra_flags.5: unknown flag"),
    ({"V": 2}, "Invalid flag name"),
    ({"v": {"a": 1}}, "takes a single value"),
])
def test_bad_extra_flags_are_refused_by_field(flags, message):
    assert message in errors_of(instance(extra_flags=flags))


@pytest.mark.parametrize("field, value", [
    ("name", "batch\n"),
    ("name", "batch\r"),
    ("kubeconfig", "/etc/kubernetes/a\nb.conf"),
    ("kubeconfig", "/etc/kubernetes/a\x00b.conf"),
    ("image", "registry.k8s.io/kube-scheduler:v1.33.2\n"),
    ("image", "registry.k8s.io/kube-scheduler:v1.33.2 --privileged"),
])
def test_names_paths_and_images_are_refused_with_control_characters(field, value):
    assert "kube_scheduler_instances[0].%s: " % field in errors_of(instance(**{field: value}))


def test_config_dir_with_newline_is_refused():
    _resolved, errors, _warnings = resolve([instance()], VERSION, "/etc/kube\nrnetes")
    assert errors and errors[0].startswith("config_dir: Invalid value")


@pytest.mark.parametrize("plugins, message", [
    ([{"name": "Foo", "extension_points": 5}], "extra_plugins[0].extension_points: must be a list"),
    ([{"name": "Foo", "extension_points": "score"}], "extra_plugins[0].extension_points: must be a list"),
    ([{"name": "Foo", "args_kind": 5}], "extra_plugins[0].args_kind: Invalid value: 5"),
    (["*"], "extra_plugins[0].name: Invalid value: '*'"),
    ([{"name": "Foo", "colour": 1}], "extra_plugins[0]: unknown keys 'colour'"),
    ([5], "extra_plugins[0]: must be a plugin name or a dict"),
    ("Foo", "extra_plugins: must be a list"),
    (["Foo", "Foo"], "extra_plugins[1].name: Duplicate value"),
])
def test_wrong_shaped_extra_plugins_are_clear_errors(plugins, message):
    assert message in "\n".join(check_extra_plugins(plugins))
    if isinstance(plugins, list):
        assert message in errors_of(instance(extra_plugins=plugins))


def test_unknown_extension_point_is_a_clear_error_not_a_traceback():
    assert "unknown extension points bogus" in errors_of(instance(extra_plugins=[{"name": "Foo",
                                                                                 "extension_points": ["bogus"]}]))


def test_config_with_integer_keys_is_an_unknown_field_not_a_traceback():
    config = dict(instance()["config"])
    config[1] = 2
    assert 'unknown field "1"' in errors_of(instance(config=config))


def test_client_connection_of_the_wrong_type_is_a_decode_error():
    config = dict(instance()["config"], clientConnection="x")
    assert "cannot unmarshal string" in errors_of(instance(config=config))


def test_values_with_quotes_specifiers_and_variables_are_quoted_for_systemd():
    value = instance(kubeconfig='/etc/kubernetes/my "odd" %n $HOME \\ dir/scheduler.conf',
                     extra_flags={"vmodule": 'A=1,"B"=${X}%%y\\z'})
    resolved, errors, _warnings = resolve([value], VERSION, CONFIG_DIR)
    assert errors == []
    assert_unit_is_clean(resolved[0])


def test_no_user_text_in_unit_comments():
    config = {"leaderElection": {"leaderElect": True, "resourceName": "zz-lease-q"},
              "profiles": [{"schedulerName": "zz-profile-q"}]}
    resolved, errors, _warnings = resolve([instance(config=config)], VERSION, CONFIG_DIR)
    assert errors == []
    comments = "\n".join(line for line in render(resolved[0]).splitlines() if line.startswith("#"))
    assert "zz-" not in comments


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
@pytest.mark.parametrize("overrides", [
    {"kubeconfig": '/etc/kubernetes/my "odd" %n $HOME \\ dir/scheduler.conf'},
    {"extra_flags": {"vmodule": 'A=1,"B"=${X}%%y\\z;b=2 #c', "v": 4}},
    # schedulerNames and lease names with such characters are refused since the input model (a pod can only
    # select a DNS-1123 subdomain, the API server only accepts such a lease): test_input_model.py.
])
def test_systemd_itself_accepts_the_quoted_unit(tmp_path, overrides):
    resolved, errors, _warnings = resolve([instance(**overrides)], VERSION, CONFIG_DIR)
    assert errors == []
    assert_unit_is_clean(resolved[0])
    unit = tmp_path / "kube-scheduler-batch.service"
    unit.write_text(render(resolved[0], kube_scheduler_binary_link="/bin/true", kube_scheduler_system_user="root",
                           kube_scheduler_system_group="root"))
    proc = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0 and "quoting" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


@pytest.mark.parametrize("text, missing", [
    ("profiles:\n- schedulerName: batch\n", "Kind"),
    ("kind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: batch\n", "apiVersion"),
])
def test_config_content_is_a_whole_file_without_defaults_for_api_version_and_kind(text, missing):
    assert "Object '%s' is missing in '" % missing in errors_of(instance(config=None, config_content=text))
