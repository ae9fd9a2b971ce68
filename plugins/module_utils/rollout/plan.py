# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the rollout engine's plan says, as types: the master's plan and one entry per instance.

``Plan`` and ``InstancePlan``: the engine (engine.py) reads and fills them by attribute; the module reports them as the
mapping ``as_dict`` gives, whose keys and their order are the module's documented result (``plan``), so a reader of
that result (the action plugin, the roles, the tests) sees one form. A Plan also reads as that mapping.
Host code: stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Dict, List, Optional

# What the plan says per instance.
NONE = "none"              # nothing differs
CREATE = "create"          # new files: the instance starts for the first time
UPDATE = "update"          # changed content: the instance restarts on it
RESTART = "restart"        # same files, a new binary behind the link
START = "start"            # same files, the instance is not running
ATTRIBUTES = "attributes"  # owner, group or mode only: no restart
REMOVE = "remove"          # an absent instance's files are still there
ACTIONS = (NONE, CREATE, UPDATE, RESTART, START, ATTRIBUTES, REMOVE)
STARTS_A_PROCESS = (CREATE, UPDATE, RESTART, START)

# How an instance the call leaves running answers its health endpoint (InstancePlan.health).
HEALTHY = "healthy"
NOT_HEALTHY = "not healthy"


@dataclass
class InstancePlan(object):
    """One instance: its ``action``, the ``files`` it changes (or, absent, removes), what the lease access check
    found (``lease_access``, lease_access.py's answer as reported; None when not asked), what the master's
    kube-scheduler said of its new config (``preflight``; None when no process would start) and, for an instance the
    call leaves running as it is, how it answers health (``health``: {status, detail}; None when not asked)."""

    action: str = NONE
    files: List[str] = field(default_factory=list)
    lease_access: Optional[dict] = None
    preflight: Optional[str] = None
    health: Optional[dict] = None

    def starts_a_process(self):
        return self.action in STARTS_A_PROCESS

    def writes(self):
        """Whether the apply step backs up the instance and restarts or starts it on its files (a change of owner and
        mode alone is set in place, without either)."""
        return self.action not in (NONE, ATTRIBUTES)

    def pending(self):
        """Whether the instance makes the master's plan a change: an action, or lease RBAC the apply creates."""
        return self.action != NONE or bool((self.lease_access or {}).get("will_create"))

    def as_dict(self):
        out = {"action": self.action, "files": list(self.files)}
        if self.lease_access is not None:
            out["lease_access"] = self.lease_access
        if self.preflight is not None:
            out["preflight"] = self.preflight
        if self.health is not None:
            out["health"] = self.health
        return out


@dataclass
class Plan(Mapping):
    """The master: whether the binary link changes, the directories made or changed, each instance's entry (in the
    order of the instances), and what earlier runs left: the instances of a held change (``held``), backups no change
    names (``stale_backups``), temporary standbys (``standby_leftovers``); None when there is none.

    Two things the plan finds are for the apply step only, never reported: the temporary standbys a killed run left
    (``leftovers``: paths, unit, port and mark of each), and the lease Roles and RoleBindings the operator lets the
    apply step create (``rbac_to_create``: instance, lease spec, objects). A plan read back from its mapping has
    neither."""

    link_changed: bool = False
    directories: List[str] = field(default_factory=list)
    instances: Dict[str, InstancePlan] = field(default_factory=dict)
    held: Optional[List[str]] = None
    stale_backups: Optional[List[str]] = None
    standby_leftovers: Optional[List[str]] = None
    leftovers: List[dict] = field(default_factory=list, repr=False, compare=False)
    rbac_to_create: List[tuple] = field(default_factory=list, repr=False, compare=False)

    @classmethod
    def of(cls, plan):
        """``plan`` as a Plan: itself, or read back from the mapping ``as_dict`` gives (a reported plan)."""
        if isinstance(plan, cls):
            return plan
        return cls(link_changed=bool(plan.get("link_changed")), directories=list(plan.get("directories") or []),
                   instances=dict((name, InstancePlan(**entry)) for name, entry in (plan.get("instances") or {}).items()),
                   held=plan.get("held"), stale_backups=plan.get("stale_backups"),
                   standby_leftovers=plan.get("standby_leftovers"))

    def entry(self, instance):
        """The entry of an instance (its parameters, or its name)."""
        return self.instances[instance if isinstance(instance, str) else instance["name"]]

    def as_dict(self):
        """The plan as the module reports it."""
        out = {"link_changed": self.link_changed, "directories": list(self.directories),
               "instances": dict((name, entry.as_dict()) for name, entry in self.instances.items())}
        for key in ("held", "stale_backups", "standby_leftovers"):
            if getattr(self, key) is not None:
                out[key] = list(getattr(self, key))
        return out

    # Read as the reported mapping (plan["instances"]["batch"]["action"]), as the module's result is read.
    def __getitem__(self, key):
        return self.as_dict()[key]

    def __iter__(self):
        return iter(self.as_dict())

    def __len__(self):
        return len(self.as_dict())
