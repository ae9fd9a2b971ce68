"""A misspelled option of every module and action plugin of the collection, through ansible-playbook: the failure
names the option as written, the module's FQCN and the option meant, before ansible-core's own checks (required,
required_one_of, mutually_exclusive) would report something that names neither."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from ansible.module_utils.testing import patch_module_args

from ansible_collections.kubesched.schedulers.plugins.module_utils._args import unsupported_options
from ansible_collections.kubesched.schedulers.plugins.modules import scheduler_config as scheduler_config_module

REPO = Path(__file__).resolve().parents[4]
MODULES = sorted(path.stem for path in (REPO / "plugins" / "modules").glob("*.py") if path.stem != "__init__")
ACTIONS = sorted(path.stem for path in (REPO / "plugins" / "action").glob("*.py") if path.stem != "__init__")


def documented_options(name):
    """The options a module's DOCUMENTATION gives its users (what a task may set)."""
    text = (REPO / "plugins" / "modules" / (name + ".py")).read_text()
    namespace = {}
    start = text.index("DOCUMENTATION")
    exec(text[start:text.index('"""', text.index('"""', start) + 3) + 3], namespace)  # pylint: disable=exec-used
    return sorted(yaml.safe_load(namespace["DOCUMENTATION"])["options"])


def misspelling(name, options):
    """The option of ``name`` with one letter dropped, as a typo would, that is no option itself: (typo, option)."""
    for option in sorted(options, key=len, reverse=True):
        for index in range(2, len(option) - 1):
            typo = option[:index] + option[index + 1:]
            if typo not in options and option[index] != "_":
                return typo, option
    raise AssertionError("%s: no option to misspell in %s" % (name, options))


def test_every_action_plugin_has_a_documented_module():
    assert set(ACTIONS) <= set(MODULES)


@pytest.fixture(scope="module")
def run(tmp_path_factory, ansible_playbook):
    """One play with one task per module: only the misspelled option, so that without the check ansible-core would
    report a missing required option or required_one_of first."""
    tmp_path = tmp_path_factory.mktemp("misspelled")
    typos = dict((name, misspelling(name, documented_options(name))) for name in MODULES)
    tasks = [{"name": name, "kubesched.schedulers." + name: {typo: "x"}, "ignore_errors": True}
             for name, (typo, _option) in typos.items()]
    (tmp_path / "play.yml").write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False,
                                                        "tasks": tasks}]))
    proc = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                             "play.yml"], cwd=tmp_path,
                            env=dict(ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp")))
    report = json.loads(proc.stdout[proc.stdout.find("{\n"):])
    results = dict((task["task"]["name"], task["hosts"]["localhost"]) for task in report["plays"][0]["tasks"])
    return typos, results


@pytest.mark.parametrize("name", MODULES)
def test_a_misspelled_option_names_itself_the_fqcn_and_the_option_meant(run, name):
    typos, results = run
    typo, option = typos[name]
    result = results[name]
    assert result.get("failed"), result
    msg = result["msg"]
    assert msg.startswith("Unsupported parameters for (kubesched.schedulers.%s) module: %s (did you mean %s?)"
                          % (name, typo, option)), msg
    assert "ansible_collections" not in msg and "one of the following" not in msg and "missing required" not in msg


def test_the_config_module_on_the_host_refuses_a_misspelled_option_before_required_one_of(capsys):
    # The action plugin hands the module only its own arguments; the module checks anyway (ansible.builtin.raw-like
    # callers, a future action that forgets one).
    with patch_module_args({"dest": "/nonexistent/kube-scheduler.yaml", "contnet": "x", "confg": {}}):
        with pytest.raises(SystemExit):
            scheduler_config_module.main()
    result = json.loads(capsys.readouterr().out)
    assert result["failed"]
    assert result["msg"].startswith("Unsupported parameters for (kubesched.schedulers.scheduler_config) module: "
                                    "confg (did you mean config?), contnet (did you mean content?)"), result["msg"]


@pytest.mark.parametrize("typo, meant", [("CONFIG", "config"), ("conf", "config"), ("attr", None)])
def test_the_closest_option_is_one_the_spec_accepts(typo, meant):
    spec = {"config": {"type": "dict"}, "content": {"type": "str"}, "attributes": {"aliases": ["attr"]}}
    message = unsupported_options({typo: 1}, spec, "kubesched.schedulers.x")
    if meant is None:  # an alias is an option
        assert message is None
    else:
        assert "%s (did you mean %s?)" % (typo, meant) in message


def test_an_unrelated_name_lists_the_options_instead():
    message = unsupported_options({"zzz": 1, "_ansible_check_mode": False}, {"config": {}, "content": {}}, "k.s.m")
    assert message.startswith("Unsupported parameters for (k.s.m) module: zzz. Supported parameters include: "
                              "config, content;"), message
