# -*- coding: utf-8 -*-
"""The host roles' variables in tiers: one public name and one default per concept for systemd and static_pod, the
old static_pod names still working with a deprecation warning that names the new one, internal values as
__kube_scheduler_<role>_*. Through real ansible-playbook runs of the static_pod role's checks on localhost."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import constants
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.role_variables import DEPRECATED, ROLE_VARIABLES

ROOT = Path(__file__).resolve().parents[3]
SHARED = ("kube_scheduler_config_dir", "kube_scheduler_state_dir", "kube_scheduler_health_timeout",
          "kube_scheduler_health_settle")

PLAY = """
- name: The static_pod role's checks and its internal values
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Check the variables as the role does
      ansible.builtin.include_role:
        name: kubesched.schedulers.static_pod
        tasks_from: resolve.yml
        public: true
    - name: Keep what the role would use
      ansible.builtin.copy:
        dest: "{{ out }}"
        mode: "0600"
        content: >-
          {{ {'state_dir': __kube_scheduler_static_pod_state_dir,
              'health_timeout': __kube_scheduler_static_pod_health_timeout | int,
              'health_settle': __kube_scheduler_static_pod_health_settle | int} | to_json }}
"""


def _options(role):
    specs = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text())
    return specs["argument_specs"]["main"]["options"]


@pytest.mark.parametrize("name", SHARED)
def test_one_name_and_one_default_in_both_host_roles(name):
    systemd, static_pod = _options("systemd"), _options("static_pod")
    assert name in ROLE_VARIABLES["systemd"] and name in ROLE_VARIABLES["static_pod"]
    assert systemd[name]["default"] == static_pod[name]["default"]
    defaults = [yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text())[name]
                for role in ("systemd", "static_pod")]
    assert defaults == [systemd[name]["default"]] * 2


def test_deprecated_names_have_no_default_and_name_their_successor():
    options = _options("static_pod")
    for old, new in DEPRECATED.items():
        assert "default" not in options[old] and new in " ".join(options[old]["description"]
                                                                 if isinstance(options[old]["description"], list)
                                                                 else [options[old]["description"]])


@pytest.fixture(scope="module")
def runs(tmp_path_factory, ansible_playbook):
    work = tmp_path_factory.mktemp("tiers")
    (work / "play.yml").write_text(PLAY)
    (work / "inventory.ini").write_text(
        "localhost ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable)
    cases = {"new": {}, "old": {"kube_scheduler_static_pod_state_dir": "/srv/kubesched-old",
                                "kube_scheduler_static_pod_health_timeout": 33,
                                "kube_scheduler_static_pod_health_settle": 4},
             "base": {"kube_scheduler_state_dir": "/srv/kubesched", "kube_scheduler_health_timeout": 44}}
    results = {}
    for case, values in cases.items():
        out = work / ("%s.json" % case)
        variables = dict(values, out=str(out), kube_scheduler_version="1.35.4")
        (work / ("%s-vars.json" % case)).write_text(json.dumps(variables))
        proc = ansible_playbook(["-i", "inventory.ini", "-e", "@%s-vars.json" % case, "play.yml"], cwd=work)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        results[case] = (json.loads(out.read_text()), proc.stdout + proc.stderr)
    return results


def test_defaults_keep_the_paths_of_before(runs):
    used, output = runs["new"]
    assert used == {"state_dir": "%s/%s" % (constants.STATE_DIR, constants.STATE_SUBDIRS["static_pod"]),
                    "health_timeout": 180, "health_settle": 2}
    assert "DEPRECATION" not in output


def test_the_shared_names_drive_the_role(runs):
    used, _output = runs["base"]
    assert used == {"state_dir": "/srv/kubesched/static-pod", "health_timeout": 44, "health_settle": 2}


def test_the_old_names_still_win_and_warn_with_the_new_name(runs):
    used, output = runs["old"]
    assert used == {"state_dir": "/srv/kubesched-old", "health_timeout": 33, "health_settle": 4}
    flat = " ".join(output.split())
    for old, new in DEPRECATED.items():
        assert "%s is deprecated and will be removed in 2.0.0: use %s" % (old, new) in flat, old
