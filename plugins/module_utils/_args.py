# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Argument specs shared by a module and its action plugin (kubernetes.core's args_common.py): the action plugin
validates a task's arguments against the same spec on the controller that the module applies on the host.

Also the collection's did-you-mean for names (closest: plugin names and config field hints use it too; role
variables are matched by edit distance, plugin_utils/inputs/kinds.py) and the check of a task's option names that every
module and action plugin runs before any other check of its arguments (unsupported_options): ansible-core reports an
unknown option after required_one_of and the like, so a misspelled ``confg:`` would fail as "one of the following
is required: content, config".

Host code: stdlib only.
"""

from __future__ import annotations

import difflib

COLLECTION = 'kubesched.schedulers'
# Option names are few and short: a looser match than for free-form names still finds the one meant.
OPTION_CUTOFF = 0.7


def closest(name, known, cutoff=0.8):
    """The known name closest to ``name`` (a typo), or None."""
    matches = difflib.get_close_matches(name, sorted(known), n=1, cutoff=cutoff)
    return matches[0] if matches else None


def option_names(argument_spec):
    """Every name a task may use for an option of ``argument_spec``: the options and their aliases."""
    names = set()
    for name, spec in argument_spec.items():
        names.add(name)
        names.update((spec or {}).get('aliases') or ())
    return names


def unsupported_options(params, argument_spec, fqcn):
    """The message for the options in ``params`` that ``argument_spec`` does not have, each with the closest valid
    option, or None. ``fqcn`` is the module as a task names it. Ansible's internal ``_ansible_*`` keys are not
    options."""
    known = option_names(argument_spec)
    unknown = sorted(str(name) for name in params
                     if name not in known and not (isinstance(name, str) and name.startswith('_ansible_')))
    if not unknown:
        return None
    named = []
    for name in unknown:
        match = closest(name, known, OPTION_CUTOFF)
        if match is None:  # the same name in another case: CONFIG for config
            lowered = dict((option.lower(), option) for option in known)
            match = lowered.get(name.lower())
        named.append("%s (did you mean %s?)" % (name, match) if match else name)
    return ("Unsupported parameters for (%s) module: %s. Supported parameters include: %s; "
            "fix the option's name in the task" % (fqcn, ", ".join(named), ", ".join(sorted(known))))


# kubesched.schedulers.scheduler_config: what a task may set (the action plugin adds Ansible's file arguments).
SCHEDULER_CONFIG_SPEC = dict(
    content=dict(type='str'),
    config=dict(type='dict'),
    kubernetes_version=dict(type='str'),
    dest=dict(type='path'),
    extra_plugins=dict(type='list', elements='raw', default=[]),
    strict=dict(type='bool', default=True),
    feature_gates=dict(type='raw'),
    scheduler_plugins_version=dict(type='str'),
    backup=dict(type='bool', default=False),
    mode=dict(type='raw', default='0600'),
    check_named_files=dict(type='bool', default=True),
)

# Only from scheduler_config's action plugin: the secret values of the rendered text, so that Ansible masks them in
# every output of the module (arguments at -vvv, diff, messages); the same keys to mask in the text of the file it
# replaces; the files the validated config names, with their field paths (plugins/plugin_utils/config/named_files.py).
SCHEDULER_CONFIG_HOST_SPEC = dict(
    secret_values=dict(type='list', elements='str', default=[], no_log=True),
    secret_keys=dict(type='list', elements='str', default=[], no_log=False),
    named_files=dict(type='list', elements='dict', default=[]),
)
