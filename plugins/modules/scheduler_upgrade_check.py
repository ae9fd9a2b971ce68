# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# This file holds the documentation only: the work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: scheduler_upgrade_check
short_description: Check a KubeSchedulerConfiguration against the Kubernetes minors you are about to upgrade to
version_added: 1.0.0
description:
  - Runs one config through the library's model of the current and of each target kube-scheduler minor (1.30 to
    1.37 verified against the real upstream binaries, built from upstream's Go modules, and 1.38 as a preview against
    its pre-release v1.38.0-beta.0, with a warning) and reports, per target, whether it would start,
    every error in kube-scheduler's own words and field paths, and what would be different there.
  - C(changes.plugins) lists, per profile and extension point, the enabled plugins that appear, disappear, change
    weight or order in the effective configuration (for example the deprecated volume-limit plugins that leave the
    defaults in 1.31, or DynamicResources from 1.34). C(changes.defaults) lists effective values that differ (a
    plugin's default args, new pluginConfig entries); fields a target refuses show as its errors.
  - With O(convert=true), a C(kubescheduler.config.k8s.io/v1beta2) or C(v1beta3) file (removed in 1.28 and 1.29)
    is first converted to v1 where that is mechanical; C(converted) gives the v1 text, what changed, and what needs
    a human (plugins removed without a replacement), and the converted text is what is checked.
  - With O(kubeconfig) (the cluster scan), every ConfigMap of every namespace is read once and each data value that
    parses as a document whose C(kind) is V(KubeSchedulerConfiguration) (any apiVersion, v1beta2 and v1beta3 included) is
    checked the same way, together with the O(configs) the caller gathered (the masters' static pod configs, this
    inventory's instances; the C(upgrade_scan) playbook does that). The result has a report and a table per object,
    named by namespace/name and key or by host and path. The only API call is a list of ConfigMaps (RBAC - C(list)
    on C(configmaps) cluster-wide); nothing is written, so it runs as a Check job. See C(docs/docsite/rst/upgrade_scan.rst).
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
  scheduler_plugins_version:
    description:
      - The scheduler is this kubernetes-sigs/scheduler-plugins release's (such as V(0.34.7)), which stays as it is
        while the cluster moves. The config is checked as that release's binary checks it (M(kubesched.schedulers.scheduler_config)
        option C(scheduler_plugins_version)), and every minor whose API server the release's Kubernetes is more than one
        minor older than (or newer than) gets a C(skew) line naming the release to move to; C(ok) is then false.
    type: str
  convert:
    description: Convert a v1beta2 or v1beta3 file to v1 first.
    type: bool
    default: false
  fail_on_error:
    description: Fail when the config (in the cluster scan, any object) would not start on a target.
    type: bool
    default: false
  kubeconfig:
    description:
      - The cluster scan - a kubeconfig on the controller (a path, or the kubeconfig as a dict) whose identity may list
        ConfigMaps in every namespace. An empty string uses the C(kubernetes) client's default (C(KUBECONFIG) or
        C(~/.kube/config)). Excludes O(content), O(src) and O(config).
    type: raw
  context:
    description: The kubeconfig context for the cluster scan.
    type: str
  configs:
    description:
      - More configs for the cluster scan, each with C(where) (the label in the table, such as C(host m1 path
        /etc/kubernetes/schedulers/kube-scheduler.yaml)), C(content) (text) or C(config) (a dict), and optionally
        C(extra_plugins) and C(source).
      - "C(flags), a static pod's kube-scheduler command line after the binary, is checked on each minor too (a flag
        that minor does not have is an error, C(unknown flag: --port), with the field C(--port)); given without
        C(content) and C(config), the object is a kube-scheduler that runs without C(--config) (kubeadm's own
        manifest) and the defaults of each minor are checked for it."
    type: list
    elements: dict
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

- name: Every scheduler config in the cluster's ConfigMaps, before the upgrade to 1.35 (a Check job will do)
  kubesched.schedulers.scheduler_upgrade_check:
    kubeconfig: ~/.kube/config
    current_version: "1.30"
    target_versions: ["1.35"]
  delegate_to: localhost
  run_once: true
  register: scan

- name: Show a table per object
  ansible.builtin.debug:
    msg: "{{ scan.table }}"
  run_once: true

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
objects:
  description:
    - The cluster scan - per object C(where), C(source) (V(configmap), or what O(configs) said), C(namespace),
      C(name) and C(key) (ConfigMaps), C(api_version), and the report of a single config (C(current), C(targets),
      C(converted), C(ok)). The config text itself is not returned.
  returned: with O(kubeconfig) or O(configs)
  type: list
  elements: dict
table:
  description: The cluster scan - the lines an operator reads, a table per object (minor, starts, field, finding).
  returned: with O(kubeconfig) or O(configs)
  type: list
  elements: str
scanned:
  description: The cluster scan - how many ConfigMaps were read (C(configmaps)) and how many configs were checked (C(configs)).
  returned: with O(kubeconfig) or O(configs)
  type: dict
current:
  description: The config on O(current_version) - C(minor), C(starts), C(errors), C(warnings), C(profiles).
  returned: without O(kubeconfig) and O(configs)
  type: dict
targets:
  description:
    - Per target minor, C(starts), C(errors) (each with C(field) and C(message)), C(warnings), C(profiles) and, when
      the config starts on both the current and the target minor, C(changes) with C(plugins) and C(defaults).
  returned: without O(kubeconfig) and O(configs)
  type: dict
  sample: {"1.35": {"starts": true, "errors": [], "changes": {"plugins": [{"profile": "default-scheduler",
           "extension_point": "filter", "plugin": "DynamicResources", "change": "appears"}], "defaults": []}}}
converted:
  description: With O(convert=true) and a v1beta2/v1beta3 input, C(converted) (the v1 text), C(from), C(changes) and C(needs_human).
  returned: without O(kubeconfig) and O(configs)
  type: dict
ok:
  description: True when the config (in the cluster scan, every object) starts on every target.
  returned: always
  type: bool
"""
