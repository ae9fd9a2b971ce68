# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host-side half of kubesched.schedulers.scheduler_config.

The action plugin of the same name validates and renders the configuration on the controller, then runs this
module with the rendered text as ``content``; the module only compares, diffs and writes that text atomically on the
host, so masters need nothing but Python (no PyYAML, no collection library).
"""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: scheduler_config
short_description: Validate, render and write a KubeSchedulerConfiguration as kube-scheduler would load it
version_added: 0.1.0
description:
  - Decodes a C(kubescheduler.config.k8s.io/v1) C(KubeSchedulerConfiguration) strictly, applies the defaults and
    runs every validation and profile-building check of the real C(kube-scheduler) of the chosen Kubernetes minor
    version (1.30 to 1.36), including the leader-election rule that would only fail after start-up.
  - Validation and rendering run on the controller, so the managed hosts need nothing but Python.
  - Without O(dest) it only validates and renders, and contacts no host. With O(dest) it writes the canonical text
    atomically on the host, with check mode, diff mode and file attributes.
  - Nothing is written and no host is contacted when the configuration is invalid; the task fails with one line per
    problem in RV(msg) and the problems in RV(errors), each named by its upstream field path.
author:
  - kubesched maintainers (@kubesched)
options:
  content:
    description:
      - The raw YAML or JSON text of a whole C(KubeSchedulerConfiguration), exactly as C(kube-scheduler --config)
        would read it, so duplicate keys and unknown fields are found as kube-scheduler finds them.
      - Exactly one of O(content) and O(config) is required.
    type: str
  config:
    description:
      - The configuration as a dictionary in upstream field names (C(apiVersion), C(profiles), C(schedulerName),
        C(pluginConfig), ...), as it appears in the Kubernetes documentation.
      - C(apiVersion) and C(kind) may be omitted; they default to C(kubescheduler.config.k8s.io/v1) and
        C(KubeSchedulerConfiguration).
      - Must be a mapping. To pass YAML or JSON text, use O(content).
      - Exactly one of O(content) and O(config) is required.
    type: dict
  kubernetes_version:
    description:
      - The Kubernetes version whose C(kube-scheduler) the configuration is checked against, such as V(1.30),
        V(1.30.12) or V(v1.30.12). Only the minor version matters.
      - Defaults to the newest supported minor version.
    type: str
  dest:
    description:
      - Path of the file to write on the host.
      - Without it the configuration is only validated and rendered, and no host is contacted.
      - The parent directory must exist.
    type: path
  extra_plugins:
    description:
      - Out-of-tree plugins compiled into a custom scheduler build, such as C(Coscheduling) from
        scheduler-plugins. Plugins not declared here and not in the in-tree registry of O(kubernetes_version) are
        rejected, so typos in plugin names are still caught.
      - Each element is a plugin name, or a dictionary with C(name), C(extension_points) (the profile C(plugins)
        field names the plugin implements, such as C(queueSort), C(preFilter), C(score)) and optionally C(args_kind)
        (the kind its C(pluginConfig) args decode as, such as C(CoschedulingArgs)).
      - A plugin given by name only is accepted at every extension point.
    type: list
    elements: raw
    default: []
  mode:
    description:
      - The permissions of the written file, as for M(ansible.builtin.file).
      - Give it as a quoted octal string such as V('0600') or a symbolic mode such as V(u=rw,g=,o=).
    type: raw
    default: '0600'
extends_documentation_fragment:
  - action_common_attributes
  - action_common_attributes.files
  - action_common_attributes.flow
  - ansible.builtin.backup
  - ansible.builtin.files
attributes:
  action:
    support: full
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
  diff_mode:
    support: full
    details: Shows the file text before and after, and attribute changes such as the mode.
  platform:
    platforms: posix
  safe_file_operations:
    support: full
  vault:
    support: none
notes:
  - The written text is the canonical form of the given configuration, not the defaulted one, with sorted keys,
    block style and no Python-specific YAML tags. The same configuration given as O(content) or as O(config) renders to the
    same text, so a second run with the same input reports no change.
  - The defaulted configuration, as C(kube-scheduler --write-config-to) would write it, is returned in
    RV(effective).
  - C(kube-scheduler) reads the file only at start-up; restarting it after a change is up to the caller.
seealso:
  - name: Scheduler configuration
    description: The Kubernetes documentation of KubeSchedulerConfiguration and profiles.
    link: https://kubernetes.io/docs/reference/scheduling/config/
  - name: kube-scheduler configuration (v1)
    description: The field reference of kubescheduler.config.k8s.io/v1.
    link: https://kubernetes.io/docs/reference/config-api/kube-scheduler-config.v1/
"""

EXAMPLES = r"""
- name: Two profiles from the Kubernetes docs, the second one without scoring
  kubesched.schedulers.scheduler_config:
    kubernetes_version: "1.33"
    dest: /etc/kubernetes/scheduler-config.yaml
    config:
      clientConnection:
        kubeconfig: /etc/kubernetes/scheduler.conf
      profiles:
        - schedulerName: default-scheduler
        - schedulerName: no-scoring-scheduler
          plugins:
            preScore:
              disabled:
                - name: '*'
            score:
              disabled:
                - name: '*'

- name: Bin packing with NodeResourcesFit MostAllocated next to the default profile
  kubesched.schedulers.scheduler_config:
    dest: /etc/kubernetes/scheduler-config.yaml
    owner: root
    group: root
    backup: true
    config:
      clientConnection:
        kubeconfig: /etc/kubernetes/scheduler.conf
      profiles:
        - schedulerName: default-scheduler
        - schedulerName: bin-packing-scheduler
          pluginConfig:
            - name: NodeResourcesFit
              args:
                scoringStrategy:
                  type: MostAllocated
                  resources:
                    - name: cpu
                      weight: 1
                    - name: memory
                      weight: 1
                    - name: intel.com/foo
                      weight: 3
                    - name: intel.com/bar
                      weight: 3

- name: A second scheduler with its own leader-election lease, from raw YAML text
  kubesched.schedulers.scheduler_config:
    kubernetes_version: v1.32.4
    dest: /etc/kubernetes/my-scheduler-config.yaml
    content: |
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: KubeSchedulerConfiguration
      clientConnection:
        kubeconfig: /etc/kubernetes/my-scheduler.conf
      leaderElection:
        leaderElect: true
        resourceName: my-scheduler
        resourceNamespace: kube-system
      profiles:
        - schedulerName: my-scheduler

- name: A scheduler-plugins build with Coscheduling, declared so that typos in other names are still caught
  kubesched.schedulers.scheduler_config:
    dest: /etc/kubernetes/scheduler-plugins-config.yaml
    extra_plugins:
      - name: Coscheduling
        extension_points: [queueSort, preFilter, postFilter, reserve, permit]
        args_kind: CoschedulingArgs
    config:
      clientConnection:
        kubeconfig: /etc/kubernetes/scheduler.conf
      profiles:
        - schedulerName: scheduler-plugins-scheduler
          plugins:
            multiPoint:
              enabled:
                - name: Coscheduling
              disabled:
                - name: PrioritySort
          pluginConfig:
            - name: Coscheduling
              args:
                permitWaitingTimeSeconds: 10

- name: Validate only (no dest, no host contacted) and list each problem by field path
  kubesched.schedulers.scheduler_config:
    kubernetes_version: "1.31"
    content: "{{ lookup('ansible.builtin.file', 'files/scheduler-config.yaml') }}"
  register: scheduler_check
  ignore_errors: true

- name: Show the problems the way kube-scheduler reports them
  ansible.builtin.debug:
    msg: "{{ item.field }} ({{ item.type }}): {{ item.message }}"
  loop: "{{ scheduler_check.errors | default([]) }}"
  when: scheduler_check is failed

- name: Stop with a short summary when the candidate is invalid
  ansible.builtin.assert:
    that: scheduler_check is succeeded
    fail_msg: "{{ scheduler_check.errors | map(attribute='field') | join(', ') }} would stop kube-scheduler"
"""

RETURN = r"""
rendered:
  description:
    - The canonical YAML text of the given configuration with C(apiVersion) and C(kind), exactly what is written
      or would be written to O(dest).
  returned: success
  type: str
  sample: |
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    profiles:
    - schedulerName: default-scheduler
effective:
  description:
    - The defaulted configuration as C(kube-scheduler --write-config-to) writes it for that version, with every
      profile's merged plugin set and the defaulted plugin args.
  returned: success
  type: dict
  sample:
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    parallelism: 16
    percentageOfNodesToScore: 0
    podInitialBackoffSeconds: 1
    podMaxBackoffSeconds: 10
checksum:
  description: The SHA-256 hex digest of RV(rendered).
  returned: success
  type: str
  sample: 6f1ed002ab5595859014ebf0951522d9d8b7a3ad8b6cd5d1a5b3c3e4f1a2b3c4
profiles:
  description: The scheduler names of the profiles, after defaulting.
  returned: success
  type: list
  elements: str
  sample: [default-scheduler, no-scoring-scheduler]
plugins:
  description:
    - The effective plugins of each profile, keyed by scheduler name, as the scheduling framework runs them after
      merging C(multiPoint), C(enabled) and C(disabled) with the defaults of that version. Per extension point
      (in upstream's order, points without plugins left out) the ordered list of enabled plugins; at C(score) each
      with the weight it scores with (an unset or 0 weight is 1).
    - The sample is a profile that disables every default with C(multiPoint) and enables four plugins there and
      C(NodeName) at C(filter), for Kubernetes 1.35.
  returned: success
  type: dict
  sample:
    bin-packing:
      queueSort:
        - {name: PrioritySort}
      preFilter:
        - {name: NodeResourcesFit}
      filter:
        - {name: NodeResourcesFit}
        - {name: NodeName}
      preScore:
        - {name: NodeResourcesFit}
      score:
        - {name: NodeResourcesFit, weight: 2}
        - {name: ImageLocality, weight: 1}
      bind:
        - {name: DefaultBinder}
kubernetes_version:
  description: The Kubernetes minor version the configuration was checked against.
  returned: always
  type: str
  sample: "1.36"
warnings:
  description:
    - Things kube-scheduler accepts that are probably mistakes, such as pluginConfig for a plugin no profile
      enables, or a score weight of 0 that kube-scheduler turns into 1. They are shown as Ansible warnings too.
  returned: when there are any
  type: list
  elements: str
dest:
  description: The path written, or that would be written in check mode.
  returned: when O(dest) is set and the configuration is valid
  type: str
  sample: /etc/kubernetes/scheduler-config.yaml
backup_file:
  description: The backup of the previous file, when O(backup) is set and the file changed.
  returned: when a backup was made
  type: str
  sample: /etc/kubernetes/scheduler-config.yaml.12345.2024-05-01@10:11:12~
errors:
  description:
    - The problems that would stop kube-scheduler, in the order kube-scheduler finds them. Empty on success.
  returned: always
  type: list
  elements: dict
  contains:
    field:
      description: The upstream field path, such as C(profiles[1].schedulerName).
      type: str
      sample: profiles[1].schedulerName
    type:
      description: The upstream error type, such as C(Duplicate value), C(Invalid value) or C(Required value).
      type: str
      sample: Duplicate value
    message:
      description: The whole line as kube-scheduler prints it.
      type: str
      sample: 'profiles[1].schedulerName: Duplicate value: "default-scheduler"'
msg:
  description: On failure, one line per problem.
  returned: failure
  type: str
"""

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native, to_text

# Shared with the action plugin, which validates the task arguments against it on the controller.
ARGUMENT_SPEC = dict(
    content=dict(type='str'),
    config=dict(type='dict'),
    kubernetes_version=dict(type='str'),
    dest=dict(type='path'),
    extra_plugins=dict(type='list', elements='raw', default=[]),
    backup=dict(type='bool', default=False),
    mode=dict(type='raw', default='0600'),
)


def _read(b_path):
    try:
        with open(b_path, 'rb') as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _write_atomically(module, b_dest, b_text, creating):
    """Write through a temp file in the destination directory, then rename it over dest."""
    b_dir = os.path.dirname(b_dest)
    fd, b_tmp = tempfile.mkstemp(prefix=b'.' + os.path.basename(b_dest) + b'.', suffix=b'.tmp', dir=b_dir)
    try:
        with os.fdopen(fd, 'wb') as handle:
            handle.write(b_text)
            handle.flush()
            os.fsync(handle.fileno())
        # atomic_move gives a new file 0666 & ~umask; keep it private until the requested mode is applied.
        old_umask = os.umask(0o077) if creating else None
        try:
            module.atomic_move(b_tmp, b_dest, unsafe_writes=module.params['unsafe_writes'])
        finally:
            if old_umask is not None:
                os.umask(old_umask)
    finally:
        if os.path.lexists(b_tmp):
            os.unlink(b_tmp)


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        mutually_exclusive=[('content', 'config')],
        add_file_common_args=True,
        supports_check_mode=True,
    )
    # From the action plugin, content is always the validated, rendered text.
    rendered = module.params['content']
    dest = module.params['dest']
    if rendered is None or not dest:
        module.fail_json(msg='kubesched.schedulers.scheduler_config runs through its action plugin, which validates '
                             'and renders on the controller; the module alone only writes that result to dest')

    # Write through a symlink rather than replacing it.
    dest = os.path.realpath(dest)
    b_dest = to_bytes(dest, errors='surrogate_or_strict')
    if os.path.isdir(b_dest):
        module.fail_json(msg='dest %s is a directory' % dest)
    if not os.path.isdir(os.path.dirname(b_dest)):
        if not module.check_mode:
            module.fail_json(msg='the directory of dest %s does not exist' % dest)
        # In check mode an earlier task of the same run would have created it: report the file as new.
        result = dict(dest=dest, changed=True)
        if module._diff:
            result['diff'] = [dict(before='', after=rendered, before_header='%s (absent)' % dest, after_header=dest)]
        module.exit_json(**result)

    b_rendered = to_bytes(rendered, errors='surrogate_or_strict')
    b_before = _read(b_dest)
    changed = b_before != b_rendered
    result = dict(dest=dest)
    diffs = []
    if changed:
        diffs.append(dict(
            before='' if b_before is None else to_text(b_before, errors='surrogate_or_strict'),
            after=rendered,
            before_header=dest if b_before is not None else '%s (absent)' % dest,
            after_header=dest,
        ))
        if not module.check_mode:
            if module.params['backup'] and b_before is not None:
                result['backup_file'] = module.backup_local(dest)
            try:
                _write_atomically(module, b_dest, b_rendered, creating=b_before is None)
            except Exception as exc:  # atomic_move raises plain Exception
                module.fail_json(msg='could not write %s: %s' % (dest, to_native(exc)), **result)

    # A file that check mode did not create has no attributes to compare; its creation is the change.
    if os.path.exists(b_dest):
        attributes_diff = dict(before={}, after={}, before_header=dest, after_header=dest)
        file_args = module.load_file_common_arguments(module.params, path=dest)
        changed = module.set_fs_attributes_if_different(file_args, changed, diff=attributes_diff)
        if attributes_diff['before']:
            diffs.append(attributes_diff)

    if module._diff and diffs:
        result['diff'] = diffs
    module.exit_json(changed=changed, **result)


if __name__ == '__main__':
    main()
