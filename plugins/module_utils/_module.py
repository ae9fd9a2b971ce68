# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AnsibleModule of every module of this collection: an option the module does not have fails first, naming
the option, the module's FQCN and the closest valid option (_args.unsupported_options, which the action plugins
run too), before ansible-core's required_one_of, mutually_exclusive and type checks would report something else.

Host code: ansible.module_utils and the standard library only.
"""

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.kubesched.schedulers.plugins.module_utils._args import unsupported_options
from ansible_collections.kubesched.schedulers.plugins.module_utils._secrets import register_secrets


class CollectionModule(AnsibleModule):
    """AnsibleModule(argument_spec, ...) for the module ``fqcn`` (kubesched.schedulers.<name>). ``accepted``: the
    options the module itself takes, when its documented ``argument_spec`` also has the options only its action
    plugin reads (a task's): the module checks its parameters against ``accepted`` alone, so any other option fails
    as an unknown one, and its parameters are exactly its own."""

    def __init__(self, fqcn, *args, **kwargs):
        self._collection_fqcn = fqcn
        self._accepted = kwargs.pop("accepted", None)
        self._options_checked = False
        super().__init__(*args, **kwargs)

    def _set_internal_properties(self, argument_spec=None, module_parameters=None):
        super()._set_internal_properties(argument_spec, module_parameters)
        # AnsibleModule.__init__ calls this once, after reading the parameters and the internal settings (no_log,
        # check mode) that fail_json needs, and before it validates them.
        if argument_spec is None and module_parameters is None and not self._options_checked:
            self._options_checked = True
            if self._accepted is not None:
                self.argument_spec = self._accepted  # before AnsibleModule makes its validator of it
            problem = unsupported_options(self.params, self.argument_spec, self._collection_fqcn)
            if problem:
                self.fail_json(msg=problem)

    def hide(self, values):
        """Keep ``values`` (secrets the module learns of at run time, such as the content of a file marked secret)
        out of everything Ansible shows, as a no_log option's value is: removed from the result on cores before
        2.22 (no_log_values), masked in every output through ansible-core's secrets API where it exists."""
        values = [value for value in values if isinstance(value, str) and value]
        self.no_log_values.update(values)
        register_secrets(values)
