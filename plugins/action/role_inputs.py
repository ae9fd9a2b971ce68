# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check every variable of a role on the controller, first in the role, before any host is touched.

The kinds and the table are plugin_utils/inputs/kinds.py and role_variables.py (the one input model); this plugin only
reads the role's variables from the play (templated, as the role would use them) and every kube_scheduler_* name
the host has (for typos).
"""

from __future__ import annotations

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import preview_warning
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import plain
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_limits import check_structure
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.action_errors import ControllerOnly
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.role_variables import (
    REMOVED_IN, ROLE_VARIABLES, booleans, check_role, deprecations)

ARGUMENT_SPEC = {
    "role": {"type": "str", "required": True, "choices": sorted(ROLE_VARIABLES)},
    "all_hosts": {"type": "bool", "default": False},
}
# The value as written matters for these: YAML reads an unquoted 1.30 as the number 1.3, which templating would
# turn into the text "1.3" (and lose what went wrong).
_UNTEMPLATED_TYPE = ("kube_scheduler_version", "kube_scheduler_deployment_version", "kube_scheduler_verify_version")


class ActionModule(ControllerOnly, ActionBase):

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        task_vars = task_vars or {}
        values, normalised, problems = self._check(args["role"], task_vars, set(task_vars))
        # Each host's booleans as converted here (the role reads them from this result, never with | bool again).
        hosts = {task_vars.get("inventory_hostname"): booleans(args["role"], normalised)}
        if not problems and args["all_hosts"]:
            problems.extend(self._other_hosts(args["role"], task_vars, values, hosts))
        if problems:
            return dict(result, failed=True, errors=problems,
                        msg="kubesched.schedulers.%s: the variables are not valid, nothing was changed:\n%s"
                        % (args["role"], "\n".join(problems)))
        version = next((normalised[name] for name in _UNTEMPLATED_TYPE if normalised.get(name)), None)
        result.update(changed=False, version=version, booleans=hosts[task_vars.get("inventory_hostname")], hosts=hosts)
        if version and preview_warning(version):
            result["warnings"] = [preview_warning(version)]
        old_names = deprecations(args["role"], values)
        if old_names:
            result["deprecations"] = [dict(msg=message, version=REMOVED_IN, collection_name="kubesched.schedulers")
                                      for message in old_names]
        return result

    def _check(self, role, variables, names):
        """(templated values, normalised values, problems) of the role's variables in ``variables``; ``names``: every
        variable name the host has (for typos)."""
        values, problems = {}, []
        for name in sorted(ROLE_VARIABLES[role]):
            if name not in variables:
                continue
            raw = variables[name]
            if name in _UNTEMPLATED_TYPE and isinstance(raw, (float, int)) and not isinstance(raw, bool):
                values[name] = raw
                continue
            too_costly = check_structure(raw, name)
            if too_costly:
                problems.append(too_costly)
                continue
            try:
                values[name] = plain(self._templar.template(raw))
            except AnsibleError as exc:
                problems.append("%s: cannot be templated: %s" % (name, str(exc).splitlines()[0]))
        normalised, found = check_role(role, values, [name for name in names if isinstance(name, str)])
        return values, normalised, problems + found

    def _other_hosts(self, role, task_vars, mine, hosts):
        """The role runs this once for all masters (run_once): every other host of the play is checked too, as it
        would be on its own. What the play and the role give (play vars, defaults, extra vars) is this host's; what
        an inventory gives a host of its own (host_vars, its groups' vars) comes from hostvars, templated there. A
        host whose values and names are this host's is not checked twice."""
        hostvars = task_vars.get("hostvars") or {}
        me = task_vars.get("inventory_hostname")
        problems = []
        for host in task_vars.get("ansible_play_hosts_all") or []:
            if host == me or host not in hostvars:
                continue
            theirs = hostvars[host]
            variables = dict((name, task_vars[name]) for name in ROLE_VARIABLES[role] if name in task_vars)
            try:
                variables.update((name, theirs[name]) for name in ROLE_VARIABLES[role] if name in theirs)
            except AnsibleError as exc:
                problems.append("host %s: cannot be templated: %s" % (host, str(exc).splitlines()[0]))
                continue
            names = set(task_vars) | set(theirs)
            values, normalised, found = self._check(role, variables, names)
            hosts[host] = booleans(role, normalised)
            if values == mine and names == set(task_vars):
                continue
            problems.extend("host %s: %s" % (host, problem) for problem in found)
        return problems
