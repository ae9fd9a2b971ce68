# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the static_pod role: the manifest of a scheduler instance, and whether a pod runs kube-scheduler."""

from __future__ import annotations

import re

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import UnsupportedVersion, normalise
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs import kinds
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.static_pod_manifest import (
    is_scheduler_pod, static_pod_manifest_yaml)

_CHECKSUM = re.compile(r"[0-9a-f]{64}")


def _manifest_yaml(instance, kubernetes_version, checksum, base=None, image=None):
    """The input model's checks of the arguments that reach the manifest, then the manifest."""
    # Imported here so the module stays importable without Ansible.
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    try:
        version = normalise(kubernetes_version)
        if not isinstance(instance, dict):
            raise kinds.InputError("static_pod_manifest_yaml: expected a resolved scheduler instance (a dict), got %s"
                                   % kinds.type_name(instance))
        if not isinstance(checksum, str) or not _CHECKSUM.fullmatch(checksum):
            raise kinds.InputError("checksum: Invalid value: %s: must be a sha256 in hex (64 characters)"
                                   % kinds.shown(checksum))
        if image is not None:
            kinds.image(image, "image")
        if base is not None and not isinstance(base, dict):
            raise kinds.InputError("base: must be a Pod (a dict), got %s" % kinds.type_name(base))
    except (UnsupportedVersion, kinds.InputError) as exc:
        raise AnsibleFilterError("static_pod_manifest_yaml: %s" % exc) from None
    return static_pod_manifest_yaml(instance, version, checksum, base, image)


class FilterModule(object):
    """Static pod manifests for kube-scheduler instances."""

    def filters(self):
        return {
            "static_pod_manifest_yaml": _manifest_yaml,
            "static_pod_is_scheduler_pod": is_scheduler_pod,
        }
