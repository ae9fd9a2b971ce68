# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the action plugins of this collection share: argument errors that name the plugin as the user wrote it, and
the settings of those that work on the controller alone."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail

from ansible_collections.kubesched.schedulers.plugins.module_utils._args import COLLECTION, unsupported_options
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.kinds import fqcn_message


class NamesItsFqcn:  # pylint: disable=too-few-public-methods
    """Mixed into an ActionBase: ansible-core's "Unsupported parameters for (<Python path>) module" names the
    plugin's Python path; this names kubesched.schedulers.<plugin> instead.

    An option the plugin does not have fails first, with the closest valid option (the same check as the modules',
    module_utils/_args.py): ansible-core would report it only after required_one_of and the like."""

    def validate_argument_spec(self, *args, **kwargs):
        # An action built outside a play (ansible-runner's and the tests' harnesses) may have no load name: the
        # plugin's own module path says the same.
        load_name = getattr(self, "_load_name", None) or type(self).__module__
        fqcn = "%s.%s" % (COLLECTION, load_name.rsplit(".", 1)[-1])
        argument_spec = kwargs.get("argument_spec", args[0] if args else None) or {}
        unsupported = unsupported_options(self._task.args, argument_spec, fqcn)  # pylint: disable=no-member
        if unsupported:
            raise AnsibleActionFail(unsupported)
        try:
            return super().validate_argument_spec(*args, **kwargs)  # pylint: disable=no-member
        except AnsibleActionFail as exc:
            raise AnsibleActionFail(fqcn_message(exc.message, load_name, fqcn)) from None


class ControllerOnly(NamesItsFqcn):  # pylint: disable=too-few-public-methods
    """Mixed into an ActionBase that works on the controller alone: it opens no connection and copies no file."""

    TRANSFERS_FILES = False
    _requires_connection = False
