"""Run an action plugin of this collection in-process, as ansible-core's TaskExecutor would."""

from __future__ import annotations

from unittest import mock

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible.template import Templar

from ansible_collections.kubesched.schedulers.plugins.action import scheduler_config, scheduler_instances


def run_action(name, args, task_vars=None):
    """The action plugin as ansible-core's TaskExecutor runs it: a clean failure is a failed result or an
    AnsibleError (which the executor turns into one); anything else would be a traceback."""
    task = Task()
    task.action = "kubesched.schedulers." + name
    task.args = args
    loader = DataLoader()
    plugin = {"scheduler_config": scheduler_config, "scheduler_instances": scheduler_instances}[name]
    action = plugin.ActionModule(task=task, connection=mock.MagicMock(), play_context=PlayContext(), loader=loader,
                                 templar=Templar(loader=loader), shared_loader_obj=None)
    try:
        return action.run(task_vars=task_vars or {})
    except (AnsibleActionFail, AnsibleError) as exc:
        return {"failed": True, "msg": str(exc)}
