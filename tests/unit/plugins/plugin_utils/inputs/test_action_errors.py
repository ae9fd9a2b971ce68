# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugins' argument errors (inputs/action_errors.py) name the plugin as the user wrote it
(kubesched.schedulers.<plugin>), never its Python path, and an unknown option comes with the closest valid one."""

from __future__ import annotations

import os
import sys

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.action_errors import ControllerOnly, NamesItsFqcn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "hardening"))
from action_harness import PLUGINS, run_action  # noqa: E402  pylint: disable=wrong-import-position


def test_an_unknown_option_names_the_plugin_and_the_closest_option():
    result = run_action("scheduler_config", {"content": "{}", "kubernetes_versoin": "1.35"})
    assert result["failed"]
    assert "kubesched.schedulers.scheduler_config" in result["msg"]
    assert "kubernetes_versoin" in result["msg"] and "kubernetes_version" in result["msg"]
    assert "ansible_collections" not in result["msg"]


def test_the_other_argument_errors_are_ansible_cores_own_without_a_python_path():
    result = run_action("scheduler_rollout", {"state_dir": "/var/lib/kubesched"})
    assert result["failed"] and result["msg"] == "missing required arguments: kind"


def test_every_action_plugin_names_itself_and_the_controller_only_ones_open_no_connection():
    for name, plugin in PLUGINS.items():
        assert issubclass(plugin.ActionModule, NamesItsFqcn), name
        if issubclass(plugin.ActionModule, ControllerOnly):
            assert plugin.ActionModule.TRANSFERS_FILES is False
            assert plugin.ActionModule._requires_connection is False  # pylint: disable=protected-access


def test_the_controller_and_the_host_suggest_a_name_by_one_rule():
    # The configuration's field and plugin names, the roles' checks and every module's and action plugin's options.
    from ansible_collections.kubesched.schedulers.plugins.module_utils import _args  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs import kinds  # pylint: disable=import-outside-toplevel
    assert kinds.closest is _args.closest
    assert kinds.closest("percentageOfNodeToScore", ["percentageOfNodesToScore", "parallelism"], 0.6) == \
        "percentageOfNodesToScore"
