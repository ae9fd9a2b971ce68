# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A boolean the playbooks (or a role's later step) read from the user, converted by the input model's one rule
(plugin_utils/inputs/kinds.py boolean), the same rule role_inputs applies to the roles' variables: never | bool."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.kinds import InputError, boolean


def boolean_input(value, name):
    try:
        return boolean(value, name)
    except InputError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule(object):  # pylint: disable=too-few-public-methods
    """The input model's one boolean rule."""

    def filters(self):
        return {"boolean_input": boolean_input}
