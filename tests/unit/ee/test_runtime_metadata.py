"""meta/runtime.yml and the roles' meta/main.yml claim only what is tested, and the action group works with
module_defaults on the ansible-core the venv has."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import ansible.release
import yaml
from ansible.module_utils.compat.version import LooseVersion

REPO = Path(__file__).resolve().parents[3]

PLAY = """
- name: module_defaults through the action group
  hosts: localhost
  gather_facts: false
  module_defaults:
    group/kubesched.schedulers.schedulers:
      kubernetes_version: "1.30.2"
  tasks:
    - name: Validate without naming the version
      kubesched.schedulers.scheduler_config:
        config: {profiles: [{schedulerName: grouped}]}
      register: result
    - name: The group's default reached the action
      ansible.builtin.assert:
        that: result.kubernetes_version == '1.30'
"""


def _makefile_list(name):
    return re.search(r"^%s :=(.*)$" % name, (REPO / "Makefile").read_text(), re.M).group(1).split()


def test_requires_ansible_is_the_tested_core():
    # The oldest core of the Makefile's CORES (each one's sanity and unit tests run: make matrix), and the core
    # running this test is one of them, or a pre-release of a core tried before it ships (PRERELEASE_CORES), which
    # nothing claims: its release is moved to CORES.
    cores = _makefile_list("CORES")
    claim = yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())["requires_ansible"]
    assert claim == ">=%s.0" % cores[0]
    tested = LooseVersion(ansible.release.__version__)
    assert tested >= LooseVersion(cores[0] + ".0"), tested
    core = ".".join(ansible.release.__version__.split(".")[:2])
    if core in _makefile_list("PRERELEASE_CORES"):
        assert re.search(r"\d(a|b|rc)\d+$", ansible.release.__version__), (
            "ansible-core %s is released: move %s from PRERELEASE_CORES to CORES" % (ansible.release.__version__, core))
    else:
        assert core in cores


def test_roles_claim_only_the_platform_the_scenarios_run():
    scenario_images = {p["image"] for f in (REPO / "extensions" / "molecule").glob("*/molecule.yml")
                       for p in yaml.safe_load(f.read_text())["platforms"]}
    # Both local images are Debian bookworm (tests/hosts/build-image.sh): test hosts, and real nodes for static_pod.
    assert scenario_images == {"localhost/kubesched-test-host:bookworm", "localhost/kubesched-node:bookworm"}
    for meta in (REPO / "roles").glob("*/meta/main.yml"):
        info = yaml.safe_load(meta.read_text())["galaxy_info"]
        assert info["platforms"] == [{"name": "Debian", "versions": ["bookworm"]}], meta
        assert info["min_ansible_version"] == "2.19", meta


def test_the_action_group_gives_module_defaults(tmp_path, ansible_playbook):
    groups = yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())["action_groups"]
    for module in groups["schedulers"]:
        assert (REPO / "plugins" / "modules" / (module + ".py")).is_file(), module
    (tmp_path / "play.yml").write_text(PLAY)
    run = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                            tmp_path / "play.yml"])
    assert run.returncode == 0, run.stdout + run.stderr
