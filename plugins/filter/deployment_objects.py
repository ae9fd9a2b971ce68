# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deployment role's objects (plugin_utils/render/deployment_objects.py), and the scheduler names a Check job
previews (plugin_utils/preview/changes.py)."""

from __future__ import annotations

import os

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview import changes
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render import deployment_objects as built

# What the library reads of each argument: a missing one is the role's mistake, named here.
SETTINGS = ("name", "namespace", "kind", "replicas", "lease_name", "secure_port", "image", "image_pull_policy",
            "resources", "priority_class_name", "priority_classes", "run_as_user", "node_selector", "tolerations",
            "spread_when_unsatisfiable", "pdb_max_unavailable", "wait_timeout", "settle", "labels", "selector", "rbac_prefix",
            "control_plane_selector", "control_plane_tolerations", "controller", "controller_name",
            "controller_labels", "controller_selector", "controller_image")
CONFIG = ("checksum", "profiles", "rendered", "health_paths")


def _error(message):
    # Imported here so the module stays importable without Ansible.
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    return AnsibleFilterError("deployment_objects: %s" % message)


def _crds(needs, crd_dir):
    """scheduler-plugins' CRDs that the enabled plugins need, read as the release ships them in ``crd_dir``."""
    # Imported here so the module stays importable without Ansible; the same loader as the from_yaml filter.
    from ansible.plugins.filter.core import from_yaml  # pylint: disable=import-outside-toplevel

    found = []
    for name in (needs or {}).get("crds", []):
        path = os.path.join(crd_dir, name + ".yaml")
        try:
            with open(path, encoding="utf-8") as handle:
                found.append(from_yaml(handle.read()))
        except OSError as exc:
            raise _error("cannot read the CRD %s: %s" % (path, exc.strerror)) from None
    return found


def deployment_objects(settings, config, real_config, crd_dir):
    if not isinstance(settings, dict) or not isinstance(config, dict):
        raise _error("needs the role's settings and scheduler_config's result (dicts), got %s and %s"
                     % (type(settings).__name__, type(config).__name__))
    missing = [name for name in SETTINGS if name not in settings] + [
        "config." + name for name in CONFIG if name not in config]
    if missing:
        raise _error("missing %s" % ", ".join(missing))
    if config.get("redacted", False) and "rendered" not in (real_config or {}):
        raise _error("the configuration is redacted, and the unredacted one was not given")
    return built.objects(settings, config, real_config or {}, _crds(config.get("scheduler_plugins"), crd_dir))


def deployment_previews(previous, objects, host_vars):
    """A Check job's placement previews of the deployment role (plugin_utils/preview/changes.py): the ConfigMap the
    cluster holds (``previous``, deployment_previous_objects) against the rendered one (``objects``)."""
    return changes.deployment_previews(previous, objects, host_vars)


class FilterModule(object):  # pylint: disable=too-few-public-methods
    """The in-cluster scheduler's objects."""

    def filters(self):
        return {"deployment_objects": deployment_objects, "deployment_previews": deployment_previews}
