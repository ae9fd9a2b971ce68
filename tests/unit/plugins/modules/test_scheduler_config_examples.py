"""Every configuration in the module's EXAMPLES is one kube-scheduler accepts: the docs must not teach errors."""
from __future__ import annotations

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
from ansible_collections.kubesched.schedulers.plugins.modules import scheduler_config

MODULE = "kubesched.schedulers.scheduler_config"
TASKS = [task for task in yaml.safe_load(scheduler_config.EXAMPLES) if MODULE in task]
LITERAL_TASKS = [task for task in TASKS if "{{" not in str(task[MODULE].get("content", ""))]


def test_examples_cover_the_documented_cases():
    names = " ".join(task["name"] for task in TASKS).lower()
    for case in ("bin packing", "without scoring", "leader-election", "validate only"):
        assert case in names
    assert any("errors" in str(task) for task in yaml.safe_load(scheduler_config.EXAMPLES))


@pytest.mark.parametrize("task", LITERAL_TASKS, ids=[task["name"] for task in LITERAL_TASKS])
def test_example_configuration_is_valid(task):
    args = task[MODULE]
    result = process(content=args.get("content"), config=args.get("config"),
                     kubernetes_version=args.get("kubernetes_version"), extra_plugins=args.get("extra_plugins"),
                     scheduler_plugins_version=args.get("scheduler_plugins_version"))
    assert result.errors == []
    assert result.ok
