# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host-side half of kubesched.schedulers.scheduler_config.

The action plugin of the same name validates and renders the configuration on the controller, then runs this
module with the rendered text as ``content``; the module only compares, diffs and writes that text on the host, so
masters need nothing but Python (no PyYAML, no collection library). The spec is module_utils/_args.py's (the action
plugin checks tasks against it too); the write, its attributes and the leftover cleanup are module_utils/_files.py's,
the collection's one writer, which the rollout engine uses too.
"""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: scheduler_config
short_description: Validate, render and write a KubeSchedulerConfiguration as kube-scheduler would load it
version_added: 1.0.0
description:
  - Decodes a C(kubescheduler.config.k8s.io/v1) C(KubeSchedulerConfiguration) strictly, applies the defaults and
    runs every validation and profile-building check of the real C(kube-scheduler) of the chosen Kubernetes minor
    version (1.30 to 1.37, and 1.38 as a preview measured on kube-scheduler v1.38.0-beta.0, which the result's
    C(warnings) say), including the leader-election rule that would only fail after start-up.
  - Validation and rendering run on the controller, so the managed hosts need nothing but Python.
  - Without O(dest) it only validates and renders, and contacts no host. With O(dest) it writes the canonical text
    atomically on the host, with check mode, diff mode and file attributes.
  - Nothing is written and no host is contacted when the configuration is invalid; the task fails with one line per
    problem in RV(msg) and the problems in RV(errors), each named by its upstream field path.
  - Writes are all-or-nothing. The new text goes to a temp file beside O(dest), named C(.<name>.kubesched-tmp.<random>)
    and locked while it is written; O(owner), O(group) and O(mode) (and SELinux context, attributes) are looked up and
    applied to it, and only then is it renamed over O(dest). When anything fails, O(dest) is left exactly as it was
    (or absent) and the temp file is removed. Temp files that an earlier, killed run left beside O(dest) are removed
    on the next run that writes (RV(removed_temp_files)).
  - Input is bounded before it is parsed or copied. O(content) may be at most 1 MiB (a ConfigMap's limit). YAML
    aliases are refused by go-yaml v2's own rule (kube-scheduler's C(document contains excessive aliasing)), counted
    without expanding them. Nesting deeper than 100 levels and more than 50000 values (aliases expanded) are
    refused too (kube-scheduler's decoder stops at 10000 levels; no configuration needs more than a dozen). The
    text is parsed once.
  - Secrets. The extenders' C(tlsConfig.keyData) (client key) and C(tlsConfig.certData) (client certificate), and
    any field whose name contains C(key), C(token), C(password) or C(secret) (a kubeconfig's C(token) and
    C(client-key-data) among them; label-key fields such as C(topologyKey) and path fields such as C(keyFile) are
    shown), are written to O(dest) as given, but replaced by C(<redacted>) in RV(rendered), RV(effective), the diff
    (also in the text of the file being replaced, whatever it was), warnings and errors, including C(Object 'Kind'
    is missing in '...'), which kube-scheduler prints with the whole input and this module prints as redacted JSON.
    Their values are passed to the host as a C(no_log) option, so Ansible masks them in the module's arguments at
    C(-vvv) too. RV(checksum) is of the real text.
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
      - A pre-release such as V(1.38.0-rc.0) or V(v1.38.0-beta.0) is checked as its minor, with a warning that it is
        a pre-release.
      - Defaults to the newest supported minor version.
    type: str
  dest:
    description:
      - Path of the file to write on the host.
      - Without it the configuration is only validated and rendered, and no host is contacted.
      - The parent directory must exist.
      - A symbolic link is refused (it is neither followed nor replaced), so that neither the link nor its target
        changes unnoticed; give the target's path.
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
  feature_gates:
    description:
      - The instance's C(--feature-gates), as the text kube-scheduler takes
        (V(GenericWorkload=true,kube:StorageCapacityScoring=false)) or a mapping of gate names to booleans.
        Defaults, default plugins and validation then follow the gates in force, as kube-scheduler's do
        (V(GenericWorkload=true) on 1.37 adds GangScheduling to the default plugins; V(StorageCapacityScoring=false)
        refuses VolumeBindingArgs' C(shape)).
      - A value kube-scheduler refuses at start is an error in its words - an unknown gate (C(unrecognized feature
        gate)), a locked one, a gate whose dependencies are off - checked against the gates measured on that minor's
        binary (1.30 to 1.37, and v1.38.0-beta.0 for the 1.38 preview).
    type: raw
  scheduler_plugins_version:
    description:
      - The configuration is for the kube-scheduler of this kubernetes-sigs/scheduler-plugins release (its
        C(cmd/scheduler), image C(registry.k8s.io/scheduler-plugins/kube-scheduler)), such as V(0.33.5).
      - That release's plugins (Coscheduling, CapacityScheduling, NodeResourceTopologyMatch, NodeResourcesAllocatable,
        the Trimaran plugins, NetworkOverhead, TopologicalSort, PreemptionToleration, SySched, Peaks, PodState,
        QOSSort) are known with their extension points, and their C(pluginConfig) args are decoded, defaulted and
        checked as its binary does (an unknown field, a negative C(permitWaitingTimeSeconds), an invalid
        C(scoringStrategy.type)); no O(extra_plugins) entry is needed for them.
      - O(kubernetes_version) must be the minor the release is built on (0.33.5 is built on 1.33.5, 0.34.7 on
        1.34.7); another one is an error naming both.
      - Known releases, each measured on its binary built from its Go module - V(0.33.5), V(0.34.7).
    type: str
  strict:
    description:
      - Refuse plugin names that neither the in-tree registry of O(kubernetes_version) nor O(extra_plugins) knows,
        also where kube-scheduler itself only ignores them - in a profile's C(plugins.<point>.disabled) and in
        C(pluginConfig) (a typo such as C(NodeResourceFit) would silently leave the profile as it was) - with the
        closest known name.
      - V(false) keeps kube-scheduler's tolerance (a C(pluginConfig) of an unknown plugin is then a warning).
    type: bool
    default: true
  mode:
    description:
      - The permissions of the written file, as for M(ansible.builtin.file).
      - Give it as a quoted octal string such as V('0600') or a symbolic mode such as V(u=rw,g=,o=).
      - A number is refused, because unquoted V(600) is the decimal number 600 (mode C(0o1130)) and unquoted V(0600) is 384,
        so only a quoted string says what was meant.
    type: raw
    default: '0600'
  secret_values:
    description:
      - B(Internal.) Set by the action plugin from the configuration; a task cannot set it.
      - The secret values of the rendered text (extender C(keyData), C(certData), any secret field), so that
        Ansible masks them in everything the host-side module returns.
    type: list
    elements: str
    default: []
  secret_keys:
    description:
      - B(Internal.) Set by the action plugin; a task cannot set it.
      - Keys whose values are redacted in the diff besides every secret field, also in the text of the file being
        replaced.
    type: list
    elements: str
    default: []
  check_named_files:
    description:
      - Before writing O(dest), check on the host that every file the config names exists and is readable
        (C(clientConnection.kubeconfig), C(extenders[].tlsConfig.certFile), C(keyFile), C(caFile)), because
        kube-scheduler opens them at start-up and exits without them. The error names the field; nothing is
        written, also in check mode.
      - Set V(false) for a host that gets those files later in the same play.
    type: bool
    default: true
  named_files:
    description:
      - B(Internal.) Set by the action plugin from the validated config; a task cannot set it.
      - The files the config names, each with its C(field) and C(path).
    type: list
    elements: dict
    default: []
extends_documentation_fragment:
  - action_common_attributes
  - action_common_attributes.files
  - action_common_attributes.flow
  - ansible.builtin.backup
  - ansible.builtin.files
  - kubesched.schedulers.attributes
attributes:
  check_mode:
    support: full
    details: Validates, renders and compares; writes nothing.
  diff_mode:
    support: full
    details: Shows the file text before and after, and attribute changes such as the mode.
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
- name: Three profiles from the Kubernetes docs - the default, one without scoring, one bin packing (MostAllocated)
  kubesched.schedulers.scheduler_config:
    kubernetes_version: "1.33"
    dest: /etc/kubernetes/scheduler-config.yaml
    owner: root
    group: root
    backup: true
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

- name: Gang scheduling on scheduler-plugins 0.33.5 - its plugins and their args checked as its own binary does
  kubesched.schedulers.scheduler_config:
    kubernetes_version: "1.33"
    scheduler_plugins_version: "0.33.5"
    dest: /etc/kubernetes/scheduler-plugins-config.yaml
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
      or would be written to O(dest), except that extender C(keyData) and C(certData) values read C(<redacted>).
    - On a task with C(no_log) (nothing of its result is shown) it is the real text, for a task that hands it on,
      as the deployment role does for its ConfigMap; RV(redacted) says whether the two differ.
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
      profile's merged plugin set and the defaulted plugin args; extender C(keyData) and C(certData) are redacted.
  returned: success
  type: dict
  sample:
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    parallelism: 16
    percentageOfNodesToScore: 0
    podInitialBackoffSeconds: 1
    podMaxBackoffSeconds: 10
redacted:
  description: Whether the configuration has secret values, shown as C(<redacted>) in RV(rendered) and RV(effective).
  returned: success
  type: bool
  sample: false
checksum:
  description: The SHA-256 hex digest of the real rendered text (what is written to O(dest)).
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
scheduler_plugins:
  description:
    - With O(scheduler_plugins_version), what the plugins the profiles enable need in the cluster - C(plugins) (the
      scheduler-plugins plugins enabled), C(crds) (scheduler-plugins' own CRDs, which the deployment role applies),
      C(external_crds) (CRDs of other projects that must exist), C(rules) (RBAC rules the scheduler needs beyond the
      cluster's C(system:kube-scheduler) role), C(controller) (whether the scheduler-plugins controller must run to
      keep PodGroup and ElasticQuota status) and C(release).
  returned: success and O(scheduler_plugins_version) given
  type: dict
  sample:
    plugins: [CapacityScheduling, Coscheduling]
    crds: [elasticquotas.scheduling.x-k8s.io, podgroups.scheduling.x-k8s.io]
    external_crds: []
    rules:
      - apiGroups: [scheduling.x-k8s.io]
        resources: [podgroups, podgroups/status, elasticquotas, elasticquotas/status]
        verbs: [get, list, watch, update, patch]
    controller: true
    release: 0.34.7
kubernetes_version:
  description: The Kubernetes minor version the configuration was checked against.
  returned: always
  type: str
  sample: "1.37"
health_paths:
  description:
    - The HTTPS health endpoints of kube-scheduler of that version, C(liveness) and C(readiness) (V(/livez) and
      V(/readyz) from 1.31, V(/healthz) before). Roles take them from here rather than parsing the version.
  returned: always
  type: dict
  sample: {liveness: /livez, readiness: /readyz}
warnings:
  description:
    - Things kube-scheduler accepts that are probably mistakes, such as pluginConfig for a plugin no profile
      enables, or a score weight of 0 that kube-scheduler turns into 1. They are shown as Ansible warnings too.
    - For a preview minor (1.38) the first one says which pre-release of kube-scheduler its facts were measured on,
      whether the config is accepted or not.
  returned: when there are any
  type: list
  elements: str
dest:
  description: The path written, or that would be written in check mode.
  returned: when O(dest) is set and the configuration is valid
  type: str
  sample: /etc/kubernetes/scheduler-config.yaml
removed_temp_files:
  description: Temp files that an earlier, killed run left beside O(dest), removed by this run.
  returned: when there were any
  type: list
  elements: str
  sample: [/etc/kubernetes/.scheduler-config.yaml.kubesched-tmp.k2j4x9_a]
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

from ansible.module_utils.common.text.converters import to_bytes, to_native, to_text

from ansible_collections.kubesched.schedulers.plugins.module_utils._module import CollectionModule
from ansible_collections.kubesched.schedulers.plugins.module_utils._args import (
    SCHEDULER_CONFIG_HOST_SPEC, SCHEDULER_CONFIG_SPEC)
from ansible_collections.kubesched.schedulers.plugins.module_utils._files import (
    WriteFailed, account_problem, attribute_changes, file_arguments, mode_problem, read_bytes, remove_leftovers,
    write_atomically)
from ansible_collections.kubesched.schedulers.plugins.module_utils._named_files import missing_named_files
from ansible_collections.kubesched.schedulers.plugins.module_utils._secrets import redact_text


def main():
    module = CollectionModule('kubesched.schedulers.scheduler_config',
                              argument_spec=dict(SCHEDULER_CONFIG_SPEC, **SCHEDULER_CONFIG_HOST_SPEC),
                              mutually_exclusive=[('content', 'config')], add_file_common_args=True,
                              supports_check_mode=True)
    params = module.params
    dest, rendered, keys = params['dest'], params['content'], params['secret_keys']
    if rendered is None or not dest:
        module.fail_json(msg='kubesched.schedulers.scheduler_config runs through its action plugin, which validates '
                             'and renders on the controller; the module alone only writes that result to dest')
    # kube-scheduler opens the files the config names at start-up and exits without them; a Check job shows it too.
    missing = missing_named_files(params['named_files']) if params['check_named_files'] else []
    problems = [mode_problem(params['mode']), account_problem('owner', params['owner']),
                account_problem('group', params['group'])] + missing
    b_dest = to_bytes(dest, errors='surrogate_or_strict')
    b_dir, b_base = os.path.split(b_dest)
    if os.path.islink(b_dest):
        problems.append('dest %s is a symbolic link (to %s): it is not followed, so that neither the link nor its '
                        'target changes unnoticed; give the target path as dest, or remove the link'
                        % (dest, to_native(os.readlink(b_dest))))
    elif os.path.isdir(b_dest):
        problems.append('dest %s is a directory' % dest)
    elif not os.path.isdir(b_dir) and not module.check_mode:  # in check mode an earlier task would have made it
        problems.append('the directory of dest %s does not exist' % dest)
    if any(problems):
        module.fail_json(dest=dest, msg='; '.join(problem for problem in problems if problem) + '; nothing was written'
                         + (' (check_named_files=false skips this check for a host that gets these files later)'
                            if missing else ''))

    result = dict(dest=dest)
    removed = [] if module.check_mode else remove_leftovers(b_dir, b_base)
    if removed:
        result['removed_temp_files'] = removed
    b_before, b_text = read_bytes(b_dest), to_bytes(rendered, errors='surrogate_or_strict')
    content_changed = b_before != b_text
    diff = dict(before='' if b_before is None else redact_text(to_text(b_before, errors='surrogate_or_strict'), keys),
                after=redact_text(rendered, keys), before_header=dest if b_before is not None else '%s (absent)' % dest,
                after_header=dest)
    attributes = dict(before={}, after={}, before_header=dest, after_header=dest)
    attributes_changed = b_before is not None and attribute_changes(module, dest, attributes)
    changed = content_changed or attributes_changed
    if changed and not module.check_mode:
        if params['backup'] and b_before is not None:
            result['backup_file'] = module.backup_local(dest)
        try:
            write_atomically(b_dest, b_text, prepare=lambda b_tmp: file_arguments(module, b_tmp, b_dest))
        except WriteFailed as exc:
            # The writer's words name the path, the master and the file system.
            module.fail_json(msg='%s; %s was left as it was' % (exc, dest), **result)
    if module._diff:
        result['diff'] = [diff] * content_changed + [attributes] * bool(attributes['before'])
    module.exit_json(changed=changed, **result)


if __name__ == '__main__':
    main()
