# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a master's instances need its network facts (plugin_utils/instances/model.py: needs_node_facts): the one
answer the systemd, static_pod and verify roles gather facts by."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import needs_node_facts


class FilterModule(object):  # pylint: disable=too-few-public-methods
    """Scheduler instances."""

    def filters(self):
        return {"needs_node_facts": needs_node_facts}
