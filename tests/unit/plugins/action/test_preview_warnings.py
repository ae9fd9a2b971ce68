# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every action that takes a Kubernetes version accepts the preview minor (1.38) and returns its warning, which
Ansible shows; a released minor gets none."""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import preview_warning

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "hardening"))
from action_harness import run_action  # noqa: E402  pylint: disable=wrong-import-position,import-error

DEFAULT = [{"name": "kube-scheduler", "default_scheduler": True}]
CALLS = {
    "scheduler_config": lambda version: run_action("scheduler_config", {"config": {}, "kubernetes_version": version}),
    "scheduler_instances": lambda version: run_action("scheduler_instances", {
        "instances": DEFAULT, "kubernetes_version": version, "config_dir": "/etc/kubernetes/schedulers"}),
    "scheduler_upgrade_check": lambda version: run_action("scheduler_upgrade_check", {
        "config": {}, "current_version": "1.37.2", "target_versions": [version]}),
    "role_inputs": lambda version: run_action("role_inputs", {"role": "deployment"},
                                              task_vars={"kube_scheduler_deployment_version": version}),
}


@pytest.mark.parametrize("action", sorted(CALLS))
def test_the_preview_is_accepted_with_its_warning(action):
    result = CALLS[action]("1.38.0")
    assert not result.get("failed"), result.get("msg")
    assert result["warnings"] == [preview_warning("1.38")]


@pytest.mark.parametrize("action", sorted(CALLS))
def test_a_released_minor_has_no_warning(action):
    result = CALLS[action]("1.37.2")
    assert not result.get("failed"), result.get("msg")
    assert "warnings" not in result


@pytest.mark.parametrize("action", sorted(CALLS))
@pytest.mark.parametrize("version, minor", [("1.38.0-rc.0", "1.38"), ("v1.38.0-beta.0", "1.38"),
                                            ("1.37.0-rc.1", "1.37")])
def test_a_pre_release_is_accepted_naming_its_minor_with_its_warning(action, version, minor):
    result = CALLS[action](version)
    assert not result.get("failed"), result.get("msg")
    [warning] = result["warnings"]
    assert warning.startswith("Kubernetes %s is a pre-release: validated as %s" % (version.lstrip("v"), minor))
