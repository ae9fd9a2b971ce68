# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scheduler_config returns the effective plugins view (``plugins``), as its RETURN documentation shows it."""

from __future__ import annotations

import json
import sys

import yaml

from ansible_collections.kubesched.schedulers.plugins.modules import scheduler_config

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: The RETURN sample's profile
      kubesched.schedulers.scheduler_config:
        kubernetes_version: "1.35"
        config:
          profiles:
            - schedulerName: bin-packing
              plugins:
                multiPoint:
                  disabled: [{name: '*'}]
                  enabled: [{name: PrioritySort}, {name: DefaultBinder}, {name: NodeResourcesFit, weight: 2},
                            {name: ImageLocality}]
                filter:
                  enabled: [{name: NodeName}]
      register: result
    - name: Keep the result
      ansible.builtin.copy:
        content: "{{ result | to_json }}"
        dest: "{{ out }}"
        mode: "0600"
"""


def test_plugins_view_is_returned_as_documented(ansible_playbook, tmp_path):
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    out = tmp_path / "result.json"
    proc = ansible_playbook(["-i", "localhost,", "-c", "local", "play.yml", "-e", "out=%s" % out,
                             "-e", "ansible_python_interpreter=%s" % sys.executable], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    documented = yaml.safe_load(scheduler_config.RETURN)["plugins"]["sample"]
    assert result["plugins"] == documented
    assert list(result["plugins"]["bin-packing"]) == ["queueSort", "preFilter", "filter", "preScore", "score", "bind"]
