# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options of kubesched.schedulers.scheduler_rollout: what a task gives it, what its action plugin gives the host.

TASK_SPEC is what a task may set; the action plugin checks a task against it. HOST_SPEC is what the action plugin
gives the module on the master, which the module checks (as kubernetes.core's args_common.py and module_utils/_args.py
for scheduler_config). The module's documentation is of both (MODULE_SPEC), the host's options marked internal.
Host code: stdlib only.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import MODES, PLAN
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.lock import DEFAULT_TIMEOUT

# The kinds of master the engine rolls out (strategies.py has one strategy for each).
KINDS = ["systemd", "static_pod"]

TASK_SPEC = {
    "kind": {"type": "str", "required": True, "choices": KINDS},
    "apply": {"type": "bool", "default": False},
    "hold": {"type": "bool", "default": True},
    "host_paths": {"type": "dict"},
    "finish": {"type": "str", "choices": ["commit", "restore"]},
    "instances": {"type": "list", "elements": "dict"},
    "kubernetes_version": {"type": "str"},
    "config_dir": {"type": "path"},
    "state_dir": {"type": "path", "required": True},
    "health_timeout": {"type": "int", "default": 180},
    "settle": {"type": "int", "default": 2},
    "unit_dir": {"type": "path", "default": "/etc/systemd/system"},
    "binary_link": {"type": "path", "default": "/usr/local/bin/kube-scheduler"},
    "binary_path": {"type": "path"},
    "user": {"type": "str", "default": "kube-scheduler"},
    "group": {"type": "str", "default": "kube-scheduler"},
    "manifest_dir": {"type": "path", "default": ""},
    "preflight_binary": {"type": "path", "default": ""},
    "preflight": {"type": "bool", "default": True},
    "lease_check": {"type": "bool", "default": True},
    "lease_rbac_create": {"type": "bool", "default": False},
    "lease_rbac_kubeconfig": {"type": "path", "default": "/etc/kubernetes/admin.conf"},
    # Make before break (plugin_utils/rollout/temporary_standby.py): the instances the plan of all masters gave a
    # standby.
    "standbys": {"type": "list", "elements": "str", "default": []},
    "standby_port_offset": {"type": "int", "default": 1000},
    # One rollout at a time (module_utils/rollout/lock.py): the run that holds the master's lock (derived from this
    # ansible-playbook run unless given) and the seconds after which a lock nobody renewed is taken over.
    "run": {"type": "dict"},
    "lock_timeout": {"type": "int", "default": DEFAULT_TIMEOUT},
    # A static-pod apply renders from what its plan read (the plan's host_read) once the master says it is unchanged.
    "planned_read": {"type": "dict"},
}

# content is not no_log: that would mask every diff; the contents of secret files are masked in main().
_FILE = dict(path=dict(type="path", required=True), content=dict(type="str"),
             owner=dict(type="str", default="root"), group=dict(type="str", default="root"),
             mode=dict(type="str", default="0600"), secret=dict(type="bool", default=False))
HOST_SPEC = dict(
    kind=dict(type="str", required=True, choices=KINDS),
    mode=dict(type="str", default=PLAN, choices=list(MODES)),
    state_dir=dict(type="path"),
    directories=dict(type="list", elements="dict", default=[], options=dict(
        path=dict(type="path", required=True), owner=dict(type="str", default="root"),
        group=dict(type="str", default="root"), mode=dict(type="str"))),
    link=dict(type="dict", options=dict(path=dict(type="path", required=True), src=dict(type="path", required=True))),
    binary=dict(type="dict", options=dict(path=dict(type="path", required=True), version=dict(type="str", required=True))),
    accounts=dict(type="dict", options=dict(user=dict(type="str", required=True), group=dict(type="str", required=True))),
    read=dict(type="list", elements="path", default=[]),
    resolve=dict(type="list", elements="path", default=[]),
    unchanged=dict(type="dict", options=dict(files=dict(type="dict", default={}), manifest_dir=dict(type="path"),
                                             apart=dict(type="list", elements="path", default=[]))),
    hold=dict(type="bool", default=True),
    manifest_names=dict(type="list", elements="str"),
    manifest_dir=dict(type="path"),
    instances=dict(type="list", elements="dict", default=[], options=dict(
        name=dict(type="str", required=True),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        unit=dict(type="str"), port=dict(type="int"), health_url=dict(type="str"),
        named_files=dict(type="list", elements="dict", default=[]),
        preflight=dict(type="dict", options=dict(
            config=dict(type="str", required=True), flags=dict(type="list", elements="str", default=[]),
            secret=dict(type="bool", default=False), command=dict(type="str", default="kube-scheduler"),
            image=dict(type="str"), binary=dict(type="path"), version=dict(type="str"), manifest_dir=dict(type="path"),
            mounts=dict(type="list", elements="dict", default=[], options=dict(
                host=dict(type="path", required=True), container=dict(type="path", required=True))))),
        files=dict(type="list", elements="dict", default=[], options=_FILE),
        lease_access=dict(type="dict", options=dict(
            kubeconfig=dict(type="path", required=True), namespace=dict(type="str", required=True),
            name=dict(type="str", required=True))),
        standby=dict(type="dict", options=dict(
            name=dict(type="str", required=True), standby_for=dict(type="str", required=True),
            unit=dict(type="str"), port=dict(type="int", required=True), health_url=dict(type="str", required=True),
            files=dict(type="list", elements="dict", required=True, options=_FILE))),
        standby_leftover=dict(type="dict", options=dict(
            paths=dict(type="list", elements="path", required=True), unit=dict(type="str"),
            port=dict(type="int", required=True), mark=dict(type="str", required=True))))),
    lease_rbac=dict(type="dict", options=dict(create=dict(type="bool", default=False),
                                              kubeconfig=dict(type="path", default="/etc/kubernetes/admin.conf"))),
    health_timeout=dict(type="int", default=180),
    settle=dict(type="int", default=2),
    health_check=dict(type="bool", default=True),
    lock=dict(type="dict", options=dict(run=dict(type="dict"), timeout=dict(type="int", default=DEFAULT_TIMEOUT),
                                        take_over=dict(type="str"))),
    # A static-pod master's plan answered in its read call (last_render.py): what an apply keeps for the next plan,
    # and what the read call adds to that kept input to plan with it.
    remember=dict(type="dict"),
    speculate=dict(type="dict"),
)

# Documented once, for both: an option of both has the host's spec (the action plugin checks a task against its own).
MODULE_SPEC = dict(HOST_SPEC, **dict((name, spec) for name, spec in TASK_SPEC.items() if name not in HOST_SPEC))
