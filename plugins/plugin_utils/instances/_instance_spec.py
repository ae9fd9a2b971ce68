# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one spec of a scheduler instance, in ansible-core's argument-spec shape (type, default, choices, elements).

model.py validates against it (with the semantic checks ansible-core cannot express: DNS-1123 names, IPs, port
ranges, control characters); tests/unit/plugins/plugin_utils/instances/test_instance_spec.py checks that the docs of
scheduler_instances and the argument specs of the systemd and static_pod roles say the same. Pure data.
"""

from __future__ import annotations

INSTANCE_SPEC = {
    "name": {"type": "str", "required": True},
    "state": {"type": "str", "default": "present", "choices": ["present", "absent"]},
    "default_scheduler": {"type": "bool", "default": False},
    "secure_port": {"type": "int", "default": 10259},
    "bind_address": {"type": "str", "default": "127.0.0.1"},
    "kubeconfig": {"type": "path", "default": "/etc/kubernetes/scheduler.conf"},
    "kubeconfig_content": {"type": "str", "no_log": True},
    "config": {"type": "dict"},
    "config_content": {"type": "str"},
    "extra_plugins": {"type": "list", "elements": "raw", "default": []},
    "extra_flags": {"type": "dict", "default": {}},
    "image": {"type": "str"},
    "strict": {"type": "bool", "default": True},
    "serving_cert": {"type": "bool"},
}
MUTUALLY_EXCLUSIVE = [["config", "config_content"]]
