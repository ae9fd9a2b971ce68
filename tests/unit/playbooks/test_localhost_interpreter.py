"""The playbooks' localhost plays run their modules on the controller's own Python, with no warning, when the
inventory lists localhost and the machine's PATH has pyenv shims of Python versions that are not enabled: interpreter
discovery picked such a shim (``pyenv: python3.13: command not found``) and every module of the play failed. An
interpreter the inventory names for localhost still wins."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
PLAYBOOKS = REPO / "playbooks"
# What pyenv's shim says for a version that is installed but not enabled, and its exit status.
SHIM = """#!/bin/sh
echo "pyenv: $(basename "$0"): command not found" >&2
exit 127
"""


def _has_tasks(role):
    """Whether a role of a play's roles: runs a task (roles/_control_plane only gives a default)."""
    name = role["role"] if isinstance(role, dict) else role
    return (REPO / "roles" / name.rsplit(".", 1)[-1] / "tasks" / "main.yml").is_file()


def localhost_plays_with_modules():
    """(playbook, play) for every play on localhost that runs a module (a role, or a task other than assert/debug)."""
    found = []
    for path in sorted(PLAYBOOKS.glob("*.yml")):
        for play in yaml.safe_load(path.read_text()):
            if play.get("hosts") != "localhost":
                continue
            actions = {key for task in play.get("tasks", []) for key in task} - {"name", "vars", "when", "register"}
            plain = {"ansible.builtin.assert", "ansible.builtin.debug"}
            if any(_has_tasks(role) for role in play.get("roles", [])) or actions - plain:
                found.append((path.name, play))
    return found


def test_every_localhost_play_that_runs_modules_uses_the_controllers_python_unless_the_inventory_says():
    plays = localhost_plays_with_modules()
    assert {name for name, _play in plays} >= {"deployment.yml", "metrics_access.yml"}
    for name, play in plays:
        interpreter = (play.get("vars") or {}).get("ansible_python_interpreter", "")
        assert interpreter == ("{{ hostvars[inventory_hostname]['ansible_python_interpreter'] "
                               "| default(ansible_playbook_python) }}"), (name, play["name"])


@pytest.fixture
def shims(tmp_path):
    """A PATH whose first directory holds failing shims of every python3.N discovery tries before /usr/bin/python3."""
    directory = tmp_path / "shims"
    directory.mkdir()
    for minor in range(6, 16):
        shim = directory / ("python3.%d" % minor)
        shim.write_text(SHIM)
        shim.chmod(0o755)
    return str(directory) + os.pathsep + os.environ.get("PATH", "")


def play_with_the_playbooks_interpreter(tmp_path):
    """The deployment playbook's localhost play, its roles replaced by a module that reports the Python it ran on."""
    play = next(play for name, play in localhost_plays_with_modules() if name == "deployment.yml")
    play = dict(play, roles=[], tasks=[{"name": "Report the Python", "ansible.builtin.setup": {
        "gather_subset": ["!all"], "filter": ["ansible_python"]}, "register": "python"}, {
            "name": "Show it", "ansible.builtin.debug": {"msg": "PYTHON={{ python.ansible_facts.ansible_python.executable }}"}}])
    path = tmp_path / "play.yml"
    path.write_text(yaml.safe_dump([play], sort_keys=False))
    return path


@pytest.mark.parametrize("inventory, expected", [
    ("localhost ansible_connection=local\n", sys.executable),
    ("localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n", "/usr/bin/python3"),
], ids=["inventory-lists-localhost", "inventory-names-its-python"])
def test_the_play_runs_on_the_controllers_python_past_pyenv_shims(tmp_path, ansible_playbook, shims, inventory, expected):
    (tmp_path / "inventory.ini").write_text(inventory)
    run = ansible_playbook(["-i", tmp_path / "inventory.ini", play_with_the_playbooks_interpreter(tmp_path)],
                           env={"PATH": shims})
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "PYTHON=%s" % expected in output
    assert "WARNING" not in output and "command not found" not in output, output


def test_without_the_playbooks_interpreter_discovery_picks_a_shim(tmp_path, ansible_playbook, shims):
    # What the play's variable prevents: the same play without it fails on these machines.
    path = play_with_the_playbooks_interpreter(tmp_path)
    (play,) = yaml.safe_load(path.read_text())
    play["vars"].pop("ansible_python_interpreter")
    path.write_text(yaml.safe_dump([play], sort_keys=False))
    (tmp_path / "inventory.ini").write_text("localhost ansible_connection=local\n")
    run = ansible_playbook(["-i", tmp_path / "inventory.ini", path], env={"PATH": shims})
    assert run.returncode != 0 and "command not found" in run.stdout + run.stderr
