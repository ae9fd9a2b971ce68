# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# This file holds the documentation only: the work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: scheduler_upgrade_check
short_description: Check a KubeSchedulerConfiguration against the Kubernetes minors you are about to upgrade to
version_added: 0.2.0
description:
  - Runs one config through the library's model of the current and of each target kube-scheduler minor (1.30 to
    1.36 verified against the real binaries, 1.36 against kube-scheduler v1.36.3 built from OpenShift's fork of
    Kubernetes that openshift/microshift release-4.23 carries) and reports, per target, whether it would start,
    every error in kube-scheduler's own words and field paths, and what would be different there.
  - C(changes.plugins) lists, per profile and extension point, the enabled plugins that appear, disappear, change
    weight or order in the effective configuration (for example the deprecated volume-limit plugins that leave the
    defaults in 1.31, or DynamicResources from 1.34). C(changes.defaults) lists effective values that differ (a
    plugin's default args, new pluginConfig entries); fields a target refuses show as its errors.
  - With O(convert=true), a C(kubescheduler.config.k8s.io/v1beta2) or C(v1beta3) file (removed in 1.28 and 1.29)
    is first converted to v1 where that is mechanical; C(converted) gives the v1 text, what changed, and what needs
    a human (plugins removed without a replacement), and the converted text is what is checked.
  - Runs on the controller only and changes nothing. It is a report unless O(fail_on_error=true).
extends_documentation_fragment:
  - action_common_attributes
  - action_common_attributes.flow
  - kubesched.schedulers.attributes
options:
  content:
    description: The config as YAML or JSON text.
    type: str
  src:
    description: A config file on the controller (searched like the C(files) of a role).
    type: path
  config:
    description: The config as a dict in upstream field names.
    type: dict
  current_version:
    description: The Kubernetes version the cluster runs now, such as V(1.30.12) or V(1.30).
    type: str
    required: true
  target_versions:
    description: The versions to check, such as V([1.33, 1.35]).
    type: list
    elements: str
    required: true
  extra_plugins:
    description: Out-of-tree plugins of a custom build, as M(kubesched.schedulers.scheduler_config) takes them.
    type: list
    elements: raw
    default: []
  convert:
    description: Convert a v1beta2 or v1beta3 file to v1 first.
    type: bool
    default: false
  fail_on_error:
    description: Fail when the config would not start on a target.
    type: bool
    default: false
seealso:
  - module: kubesched.schedulers.scheduler_config
author:
  - kubesched maintainers (@kubesched)
"""

EXAMPLES = r"""
- name: Before we upgrade the cluster to 1.35
  kubesched.schedulers.scheduler_upgrade_check:
    src: kube-scheduler.yaml
    current_version: "1.30"
    target_versions: ["1.31", "1.35"]
    fail_on_error: true
  delegate_to: localhost
  run_once: true
  register: upgrade

# A rendered report, abridged (a config with one profile and a pluginConfig for VolumeBinding):
# targets:
#   "1.31":
#     starts: true
#     changes:
#       plugins:
#         - {profile: default-scheduler, extension_point: filter, plugin: EBSLimits, change: disappears}
#         - {profile: default-scheduler, extension_point: filter, plugin: GCEPDLimits, change: disappears}
#         - {profile: default-scheduler, extension_point: filter, plugin: AzureDiskLimits, change: disappears}
#       defaults: []
#   "1.35":
#     starts: true
#     changes:
#       plugins:
#         - {profile: default-scheduler, extension_point: filter, plugin: DynamicResources, change: appears}
#       defaults:
#         - path: "profiles[schedulerName=default-scheduler].pluginConfig[name=DynamicResources]"
#           change: added
#           after: {name: DynamicResources, args: {filterTimeout: 10s, ...}}

- name: Convert an old v1beta3 file and check it on 1.35
  kubesched.schedulers.scheduler_upgrade_check:
    src: old-v1beta3.yaml
    current_version: "1.30"
    target_versions: ["1.35"]
    convert: true
  delegate_to: localhost
  register: converted
"""

RETURN = r"""
current:
  description: The config on O(current_version) - C(minor), C(starts), C(errors), C(warnings), C(profiles).
  returned: always
  type: dict
targets:
  description:
    - Per target minor, C(starts), C(errors) (each with C(field) and C(message)), C(warnings), C(profiles) and, when
      the config starts on both the current and the target minor, C(changes) with C(plugins) and C(defaults).
  returned: always
  type: dict
  sample: {"1.35": {"starts": true, "errors": [], "changes": {"plugins": [{"profile": "default-scheduler",
           "extension_point": "filter", "plugin": "DynamicResources", "change": "appears"}], "defaults": []}}}
converted:
  description: With O(convert=true) and a v1beta2/v1beta3 input, C(converted) (the v1 text), C(from), C(changes) and C(needs_human).
  returned: always
  type: dict
ok:
  description: True when the config starts on every target.
  returned: always
  type: bool
"""
