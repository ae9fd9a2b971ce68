# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hold or release the cluster's rollout Lease for this run, on the controller (plugin_utils/cluster/rollout_lease.py)."""

from __future__ import annotations

import os

from ansible.plugins.action import ActionBase

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster.rollout_lease import (
    KUBECONFIG_VARIABLE, ClusterLock, LeaseRefused)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import plain
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs import kinds
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.action_errors import ControllerOnly
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.run_identity import gone, playbooks_of_this_run, run_identity

ARGUMENT_SPEC = {
    "state": {"type": "str", "choices": ["held", "released"], "default": "held"},
    "kubeconfig": {"type": "str", "default": ""},
    "context": {"type": "str", "default": ""},
    "duration": {"type": "raw", "default": 1800},
    "run": {"type": "dict"},
}


class ActionModule(ControllerOnly, ActionBase):

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        try:
            duration = kinds.integer(60, 86400, "a number of seconds")(args["duration"], "duration")
        except kinds.InputError as exc:
            return dict(result, failed=True, msg=str(exc))
        if not args["kubeconfig"]:
            return dict(result, changed=False, held=False,
                        msg="No cluster lock: %s is not set, so this run does not reach the cluster's API server; "
                            "only each master's own rollout lock keeps two runs apart" % KUBECONFIG_VARIABLE)
        run = plain(args["run"]) if args["run"] else run_identity(task_vars, playbooks_of_this_run())
        if args["state"] == "released" and self._task.check_mode:
            return dict(result, changed=False, held=False, run=run)  # a Check job took nothing
        try:
            lock = ClusterLock(_client(args["kubeconfig"], args["context"]), run, duration, dead=gone)
            if args["state"] == "released":
                released = lock.release()
                return dict(result, changed=released, held=False, run=run)
            answer = lock.hold(check_mode=self._task.check_mode)
        except LeaseRefused as exc:
            return dict(result, failed=True, msg=str(exc), run=run)
        if answer["warning"]:
            result.setdefault("warnings", []).append(answer["warning"])
        return dict(result, changed=answer["changed"], held=not self._task.check_mode, run=run, lease=lock.where)


def _client(kubeconfig, context):
    """An ApiClient of the kubeconfig on the controller (LeaseRefused naming the variable when it cannot be used)."""
    try:
        from kubernetes import config  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise LeaseRefused("%s: the cluster's rollout Lease needs the kubernetes Python package on the controller "
                           "(pip install kubernetes)" % KUBECONFIG_VARIABLE) from None
    try:
        return config.new_client_from_config(config_file=os.path.expanduser(kubeconfig), context=context or None)
    except Exception as exc:  # the client raises many types for a kubeconfig it cannot use
        raise LeaseRefused("%s: %s cannot be used: %s" % (KUBECONFIG_VARIABLE, kubeconfig,
                                                          str(exc).splitlines()[0] if str(exc) else type(exc).__name__)) from None
