# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the static_pod role: the manifest of a scheduler instance, and whether a pod runs kube-scheduler."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.static_pod_manifest import (
    is_scheduler_pod, static_pod_manifest_yaml)


class FilterModule(object):
    """Static pod manifests for kube-scheduler instances."""

    def filters(self):
        return {
            "static_pod_manifest_yaml": static_pod_manifest_yaml,
            "static_pod_is_scheduler_pod": is_scheduler_pod,
        }
