# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the static_pod role: the manifest of a scheduler instance, and whether a pod runs kube-scheduler."""

from __future__ import annotations

import re

from ansible_collections.kubesched.schedulers.plugins.plugin_utils import inputs
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.static_pod_manifest import (
    is_scheduler_pod, static_pod_manifest_yaml)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.versions import UnsupportedVersion, normalise

_CHECKSUM = re.compile(r"[0-9a-f]{64}")


def _manifest_yaml(instance, kubernetes_version, checksum, base=None, image=None):
    """The input model's checks of the arguments that reach the manifest, then the manifest."""
    # Imported here so the module stays importable without Ansible.
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    try:
        version = normalise(kubernetes_version)
        if not isinstance(instance, dict):
            raise inputs.InputError("static_pod_manifest_yaml: expected a resolved scheduler instance (a dict), got %s"
                                    % inputs.type_name(instance))
        if not isinstance(checksum, str) or not _CHECKSUM.fullmatch(checksum):
            raise inputs.InputError("checksum: Invalid value: %s: must be a sha256 in hex (64 characters)"
                                    % inputs.shown(checksum))
        if image is not None:
            inputs.image(image, "image")
        if base is not None and not isinstance(base, dict):
            raise inputs.InputError("base: must be a Pod (a dict), got %s" % inputs.type_name(base))
    except (UnsupportedVersion, inputs.InputError) as exc:
        raise AnsibleFilterError("static_pod_manifest_yaml: %s" % exc) from None
    return static_pod_manifest_yaml(instance, version, checksum, base, image)


class FilterModule(object):
    """Static pod manifests for kube-scheduler instances."""

    def filters(self):
        return {
            "static_pod_manifest_yaml": _manifest_yaml,
            "static_pod_is_scheduler_pod": is_scheduler_pod,
        }
