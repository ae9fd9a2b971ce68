# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Argument specs shared by a module and its action plugin (kubernetes.core's args_common.py): the action plugin
validates a task's arguments against the same spec on the controller that the module applies on the host.

Host code: stdlib only.
"""

from __future__ import annotations

# kubesched.schedulers.scheduler_config: what a task may set (the action plugin adds Ansible's file arguments).
SCHEDULER_CONFIG_SPEC = dict(
    content=dict(type='str'),
    config=dict(type='dict'),
    kubernetes_version=dict(type='str'),
    dest=dict(type='path'),
    extra_plugins=dict(type='list', elements='raw', default=[]),
    strict=dict(type='bool', default=True),
    feature_gates=dict(type='raw'),
    backup=dict(type='bool', default=False),
    mode=dict(type='raw', default='0600'),
    check_named_files=dict(type='bool', default=True),
)

# Only from scheduler_config's action plugin: the secret values of the rendered text, so that Ansible masks them in
# every output of the module (arguments at -vvv, diff, messages); the same keys to mask in the text of the file it
# replaces; the files the validated config names, with their field paths (plugins/plugin_utils/named_files.py).
SCHEDULER_CONFIG_HOST_SPEC = dict(
    secret_values=dict(type='list', elements='str', default=[], no_log=True),
    secret_keys=dict(type='list', elements='str', default=[], no_log=False),
    named_files=dict(type='list', elements='dict', default=[]),
)
