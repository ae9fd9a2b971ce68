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
kubernetes_version:
  description: The Kubernetes minor version the configuration was checked against.
  returned: always
  type: str
  sample: "1.36"
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

import errno
import fcntl
import grp
import os
import pwd
import re
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_native, to_text

from ansible_collections.kubesched.schedulers.plugins.module_utils import _secrets
from ansible_collections.kubesched.schedulers.plugins.module_utils._named_files import missing_named_files

# Shared with the action plugin, which validates the task arguments against it on the controller.
ARGUMENT_SPEC = dict(
    content=dict(type='str'),
    config=dict(type='dict'),
    kubernetes_version=dict(type='str'),
    dest=dict(type='path'),
    extra_plugins=dict(type='list', elements='raw', default=[]),
    strict=dict(type='bool', default=True),
    backup=dict(type='bool', default=False),
    mode=dict(type='raw', default='0600'),
    check_named_files=dict(type='bool', default=True),
)
# Only from the action plugin: the secret values of the rendered text, so that Ansible masks them in every output
# of the module (arguments at -vvv, diff, messages); and the same keys to mask in the text of the file it replaces.
HOST_ONLY_SPEC = dict(
    secret_values=dict(type='list', elements='str', default=[], no_log=True),
    secret_keys=dict(type='list', elements='str', default=[], no_log=False),
    # The files the validated config names, with their field paths (plugins/plugin_utils/named_files.py).
    named_files=dict(type='list', elements='dict', default=[]),
)

# Temp files are named so that a later run recognises those an earlier, killed run left beside dest.
TMP_MARK = '.kubesched-tmp.'
REDACTED = _secrets.REDACTED
_OCTAL_MODE = re.compile(r'0?o?[0-7]{1,4}')


def temp_pattern(b_base):
    """Our temp files for dest (and the .*.tmp names of earlier versions of this module)."""
    return re.compile(br'\.' + re.escape(b_base) + br'(' + re.escape(to_bytes(TMP_MARK)) + br'[A-Za-z0-9_]+|\.[A-Za-z0-9_]{8}\.tmp)')


def mode_problem(mode):
    """Why ``mode`` cannot be used, or None. Integers are refused: an unquoted 600 is the decimal number 600
    (mode 0o1130), and an unquoted 0600 is 384; only a quoted string says what was meant."""
    if mode is None:
        return None
    if isinstance(mode, bool) or not isinstance(mode, str):
        return ('mode must be a quoted string such as "0600" or "u=rw,g=,o=", got the number %s: an unquoted 600 is '
                'the decimal number 600 (mode 0o1130) and an unquoted 0600 is 384 (0o600), so a number is refused '
                'rather than guessed' % (mode,))
    if _OCTAL_MODE.fullmatch(mode):
        return None
    if re.fullmatch(r'([ugoa]*[-+=]([rwxXst]*|[ugo])(,|$))+', mode) and not mode.endswith(','):
        return None
    return 'mode %r is neither an octal mode such as "0600" nor a symbolic one such as "u=rw,g=,o="' % (mode,)


def _read(b_path):
    try:
        with open(b_path, 'rb') as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def redact_text(text, keys):
    """The text with the value of every secret field masked (module_utils/_secrets.py: the collection's one rule,
    so the old file's kubeconfig token or key is masked too), and the values of ``keys`` whatever their name."""
    return _secrets.redact_text(text, keys)


def remove_leftovers(b_dir, b_base):
    """Remove temp files of earlier runs that were killed before their rename. A temp file is locked while a run
    writes it, so one that can be locked belongs to no running task."""
    pattern = temp_pattern(b_base)
    removed = []
    try:
        names = os.listdir(b_dir)
    except OSError:
        return removed
    for b_name in names:
        if not pattern.fullmatch(b_name):
            continue
        b_path = os.path.join(b_dir, b_name)
        try:
            fd = os.open(b_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if not os.path.isfile(b_path) or os.path.islink(b_path):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a running task is writing it
            os.unlink(b_path)
            removed.append(to_text(b_path, errors='surrogate_or_strict'))
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def check_owner_group(module):
    """Look owner and group up before anything is written, so a name that does not exist fails cleanly."""
    for key, lookup in (('owner', pwd.getpwnam), ('group', grp.getgrnam)):
        value = module.params.get(key)
        if value is None or str(value).isdigit():
            continue
        try:
            lookup(value)
        except (KeyError, ValueError):  # ValueError: a NUL in the name
            module.fail_json(msg='%s %r does not exist on the host; nothing was written' % (key, value)
                             if not value.isprintable() else
                             '%s %s does not exist on the host; nothing was written' % (key, value))


def _write_atomically(module, b_dest, b_text, b_before):
    """Write a temp file beside dest with the final owner, group, mode (and SELinux context, attributes), then
    rename it over dest. Any failure before the rename leaves dest as it was; the temp file is removed."""
    b_dir, b_base = os.path.split(b_dest)
    fd, b_tmp = tempfile.mkstemp(prefix=b'.' + b_base + to_bytes(TMP_MARK), dir=b_dir)
    try:
        with os.fdopen(fd, 'wb') as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # a later run's cleanup leaves a locked temp file alone
            handle.write(b_text)
            handle.flush()
            os.fsync(handle.fileno())
            if b_before is not None:
                # Unspecified attributes stay as dest has them; symbolic modes apply to its current mode.
                current = os.stat(b_dest)
                try:
                    os.chown(b_tmp, current.st_uid, current.st_gid)
                except OSError as exc:
                    if exc.errno != errno.EPERM:
                        raise
                os.chmod(b_tmp, current.st_mode & 0o7777)
                if module.selinux_enabled():  # keep dest's context unless secontext options say otherwise
                    text_tmp = to_text(b_tmp, errors='surrogate_or_strict')
                    module.set_context_if_different(text_tmp, module.selinux_context(to_text(b_dest)), False)
            tmp_args = module.load_file_common_arguments(module.params, path=to_text(b_tmp, errors='surrogate_or_strict'))
            module.set_fs_attributes_if_different(tmp_args, False)  # fails the task (and removes the temp) on error
            if module.params['backup'] and b_before is not None:
                module.backup_file = module.backup_local(to_text(b_dest, errors='surrogate_or_strict'))
            os.rename(b_tmp, b_dest)
        dir_fd = os.open(b_dir, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    finally:
        if os.path.lexists(b_tmp):
            os.unlink(b_tmp)


def _attribute_changes(module, dest):
    """Whether dest's owner, group, mode, ... differ from the requested ones, and Ansible's diff of them; nothing
    is changed (the module's own helpers, run as in check mode)."""
    diff = dict(before={}, after={}, before_header=dest, after_header=dest)
    file_args = module.load_file_common_arguments(module.params, path=dest)
    check_mode = module.check_mode
    module.check_mode = True
    try:
        changed = module.set_fs_attributes_if_different(file_args, False, diff=diff)
    finally:
        module.check_mode = check_mode
    return changed, diff


def main():
    module = AnsibleModule(
        argument_spec=dict(ARGUMENT_SPEC, **HOST_ONLY_SPEC),
        mutually_exclusive=[('content', 'config')],
        add_file_common_args=True,
        supports_check_mode=True,
    )
    module.backup_file = None
    # From the action plugin, content is always the validated, rendered text.
    rendered = module.params['content']
    dest = module.params['dest']
    if rendered is None or not dest:
        module.fail_json(msg='kubesched.schedulers.scheduler_config runs through its action plugin, which validates '
                             'and renders on the controller; the module alone only writes that result to dest')
    problem = mode_problem(module.params['mode'])
    if problem:
        module.fail_json(msg=problem + '; nothing was written')
    check_owner_group(module)
    secret_keys = module.params['secret_keys']
    # kube-scheduler opens these at start-up and exits without them; a Check job shows it too.
    missing = missing_named_files(module.params['named_files']) if module.params['check_named_files'] else []
    if missing:
        module.fail_json(msg='%s; nothing was written (check_named_files=false skips this check for a host that gets '
                             'these files later)' % '; '.join(missing), dest=dest)

    b_dest = to_bytes(dest, errors='surrogate_or_strict')
    if os.path.islink(b_dest):
        module.fail_json(msg='dest %s is a symbolic link (to %s): it is not followed, so that neither the link nor '
                             'its target changes unnoticed; give the target path as dest, or remove the link'
                         % (dest, to_native(os.readlink(b_dest))))
    if os.path.isdir(b_dest):
        module.fail_json(msg='dest %s is a directory' % dest)
    b_dir, b_base = os.path.split(b_dest)
    if not os.path.isdir(b_dir):
        if not module.check_mode:
            module.fail_json(msg='the directory of dest %s does not exist' % dest)
        # In check mode an earlier task of the same run would have created it: report the file as new.
        result = dict(dest=dest, changed=True)
        if module._diff:
            result['diff'] = [dict(before='', after=redact_text(rendered, secret_keys),
                                   before_header='%s (absent)' % dest, after_header=dest)]
        module.exit_json(**result)

    result = dict(dest=dest)
    if not module.check_mode:
        removed = remove_leftovers(b_dir, b_base)
        if removed:
            result['removed_temp_files'] = removed

    b_rendered = to_bytes(rendered, errors='surrogate_or_strict')
    b_before = _read(b_dest)
    content_changed = b_before != b_rendered
    diffs = []
    if content_changed:
        diffs.append(dict(
            before='' if b_before is None else redact_text(to_text(b_before, errors='surrogate_or_strict'), secret_keys),
            after=redact_text(rendered, secret_keys),
            before_header=dest if b_before is not None else '%s (absent)' % dest,
            after_header=dest,
        ))
    attributes_changed = False
    if b_before is not None:
        attributes_changed, attributes_diff = _attribute_changes(module, dest)
        if attributes_diff['before']:
            diffs.append(attributes_diff)
    changed = content_changed or attributes_changed
    if changed and not module.check_mode:
        try:
            _write_atomically(module, b_dest, b_rendered, b_before)
        except (IOError, OSError) as exc:
            module.fail_json(msg='could not write %s (it was left as it was): %s' % (dest, to_native(exc)), **result)
        if module.backup_file:
            result['backup_file'] = module.backup_file

    if module._diff and diffs:
        result['diff'] = diffs
    module.exit_json(changed=changed, **result)


if __name__ == '__main__':
    main()
