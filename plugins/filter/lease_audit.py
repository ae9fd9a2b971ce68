# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verify role's lease audit in a template (plugin_utils/cluster/lease_audit.py)."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster.lease_audit import audit


def lease_audit(leases, expected, now):
    # Imported here so the module stays importable without Ansible.
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    if not isinstance(leases, list) or not isinstance(expected, list):
        raise AnsibleFilterError("lease_audit: the leases and the expected holders must be lists")
    try:
        return audit(leases, expected, str(now))
    except (KeyError, ValueError, TypeError) as exc:
        raise AnsibleFilterError("lease_audit: %s" % exc) from None


class FilterModule(object):  # pylint: disable=too-few-public-methods
    """Scheduler leases against this inventory."""

    def filters(self):
        return {"lease_audit": lease_audit}
