# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles' one version rule in a template: "1.35.4" and "v1.35.4" alike give "1.35.4", "v1.38.0-rc.0" gives
"1.38.0-rc.0" (plugin_utils/core/versions.py)."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import UnsupportedVersion, normalise


def kube_release(value, variable="kubernetes_version"):
    # Imported here so the module stays importable without Ansible.
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    if not isinstance(variable, str):
        raise AnsibleFilterError("kube_release: variable must be the name of the variable, got %r" % (variable,))
    try:
        return normalise(value, variable, full=True)
    except UnsupportedVersion as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule(object):  # pylint: disable=too-few-public-methods
    """Kubernetes release versions."""

    def filters(self):
        return {"kube_release": kube_release}
