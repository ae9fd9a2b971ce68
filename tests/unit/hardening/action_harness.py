"""Run an action plugin of this collection in-process, as ansible-core's TaskExecutor would."""

from __future__ import annotations

from unittest import mock

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible.template import Templar

from ansible_collections.kubesched.schedulers.plugins.action import (
    role_inputs, scheduler_config, scheduler_instances, scheduler_rollout, scheduler_upgrade_check)

PLUGINS = {"scheduler_config": scheduler_config, "scheduler_instances": scheduler_instances,
           "scheduler_rollout": scheduler_rollout, "scheduler_upgrade_check": scheduler_upgrade_check,
           "role_inputs": role_inputs}

# A valid kubeconfig for the actions' input checks; its server (port 1 of the loopback) is never reached.
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
"""


def run_action(name, args, task_vars=None, host_result=None):
    """The action plugin as ansible-core's TaskExecutor runs it: a clean failure is a failed result or an
    AnsibleError (which the executor turns into one); anything else would be a traceback.

    The host is not contacted: the module call is recorded in the result under ``_module_calls`` (its arguments)
    and answered with ``host_result`` (or what ``host_result(module_args)`` returns, when it is callable)."""
    task = Task()
    task.action = "kubesched.schedulers." + name
    task.args = args
    loader = DataLoader()
    plugin = PLUGINS[name]
    action = plugin.ActionModule(task=task, connection=mock.MagicMock(), play_context=PlayContext(), loader=loader,
                                 templar=Templar(loader=loader), shared_loader_obj=None)
    action._load_name = plugin.__name__  # pylint: disable=protected-access  # as ansible-core's plugin loader sets it
    calls = []

    def execute_module(module_name=None, module_args=None, task_vars=None):  # pylint: disable=unused-argument
        calls.append(dict(module_args))
        if callable(host_result):
            return host_result(module_args)
        return dict(host_result or {"changed": True, "dest": module_args.get("dest")})

    action._execute_module = execute_module  # pylint: disable=protected-access
    action._remove_tmp_path = lambda path: None  # pylint: disable=protected-access
    try:
        result = action.run(task_vars=task_vars or {})
    except (AnsibleActionFail, AnsibleError) as exc:
        result = {"failed": True, "msg": str(exc)}
    result["_module_calls"] = calls
    return result
