# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine's real health gate: /proc for the listener of a port, HTTPS for health (module_utils/_health.py).

The engine asks it through this one seam, so that its tests give it a waiter of their own. Host code: stdlib and
ansible.module_utils only.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.module_utils import _health


class Waiter(object):
    """The real gate: /proc for the listener, HTTPS for health."""

    listener = staticmethod(_health.listener_pid)
    health = staticmethod(_health.probe)
    port_holder = staticmethod(_health.port_holder)
    wait_new_healthy = staticmethod(_health.wait_for_new_healthy)
    wait_port_free = staticmethod(_health.wait_for_port_free)
