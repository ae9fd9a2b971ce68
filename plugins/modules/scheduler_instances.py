# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# This file holds the documentation only: the work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: scheduler_instances
short_description: Resolve and check the kube-scheduler instances of a control-plane node
version_added: 1.0.0
description:
  - Normalises the instance list shared by the C(kubesched.schedulers.systemd) and
    C(kubesched.schedulers.static_pod) roles, validates every instance's KubeSchedulerConfiguration with the
    same pipeline as M(kubesched.schedulers.scheduler_config), and derives what the roles need (the kube-scheduler
    argv, the config path, the health URL, the lease and the scheduler names).
  - Fails, before anything is changed, with one line per problem naming the field, for bad fields, configs that
    kube-scheduler would reject, instances that share a name, port, lease or schedulerName on this host or with
    another instance on another host of the play, a non-default scheduler on the default lease
    C(kube-system/kube-scheduler), and extra flags that the kube-scheduler version does not accept, that the model
    sets itself, or that kube-scheduler ignores when C(--config) is set.
  - An instance with C(state=absent) is only resolved far enough to be removed (its name, paths, port and health
    URL). Its config and flags are not checked, and its config fields, lease and flags come back empty.
  - Runs on the controller only; no managed host is contacted.
  - Every value that reaches a unit file, a command line, a path or a manifest is checked here, once for every
    role, with an error naming the field. The instance C(name) is a DNS-1123 label; C(kubeconfig) and O(config_dir)
    are absolute paths and C(image) an image reference, all without control characters; C(extra_flags) keys are
    flag names and their values are strings, numbers or booleans without newlines, carriage returns, NUL or other
    control characters (a V(null) value is refused rather than passed as C(--flag=None)); the schedulerNames and
    the lease names of the config must not contain control characters either (kube-scheduler itself only wants
    them non-empty and unique). C(extra_plugins) must be a list of plugin names or of dicts with C(name) (letters,
    digits, C(_), C(.), C(/), C(-); not V(*)), C(extension_points) (a list) and C(args_kind).
  - C(config) and C(config_content) are bounded like M(kubesched.schedulers.scheduler_config) bounds its input
    (size, nesting, YAML aliases); C(config_content) is parsed once.
  - Secrets. The extenders' C(tlsConfig.keyData) and C(tlsConfig.certData) are redacted in every error. When an
    instance's config holds them, C(config_rendered) (which the roles write as it is) holds them too, so the whole
    result is hidden from output as with C(no_log), while a registered variable keeps it. C(kubeconfig_content) is
    never returned.
author:
  - kubesched maintainers (@kubesched)
extends_documentation_fragment:
  - action_common_attributes
  - action_common_attributes.flow
  - kubesched.schedulers.attributes
options:
  instances:
    description:
      - The instances, usually the variable C(kube_scheduler_instances); the fields are checked as kube-scheduler
        and the roles need them (see the description).
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description:
          - DNS-1123 label, not starting with C(kubesched-standby-) (the temporary standbys' names) or
            C(kubesched-preflight-) (the preflight's static pod), and not the name of another component of the master
            (C(kubelet), C(kube-apiserver), C(kube-controller-manager), C(cloud-controller-manager), C(kube-proxy),
            C(etcd), C(containerd), C(crio), C(docker), C(cri-docker)); it names the unit, the manifest and the config
            file.
        type: str
        required: true
      state:
        description: V(absent) is only resolved far enough to be removed.
        type: str
        choices: [present, absent]
        default: present
      default_scheduler:
        description: The cluster's default scheduler; only it may hold the lease C(kube-system/kube-scheduler).
        type: bool
        default: false
      secure_port:
        description: The HTTPS port that serves health (1-65535).
        type: int
        default: 10259
      bind_address:
        description: The address of the secure port, an IP address, or V(node) for O(node_address).
        type: str
        default: 127.0.0.1
      kubeconfig:
        description: Absolute path of the kubeconfig on the master.
        type: path
        default: /etc/kubernetes/scheduler.conf
      kubeconfig_content:
        description: The kubeconfig text the role writes; the result is hidden from every output when given.
        type: str
      config:
        description: KubeSchedulerConfiguration as a dict in upstream field names (apiVersion and kind optional).
        type: dict
      config_content:
        description: The same as YAML or JSON text; exclusive with O(instances[].config).
        type: str
      extra_plugins:
        description: Out-of-tree plugins, as M(kubesched.schedulers.scheduler_config) takes them.
        type: list
        elements: raw
        default: []
      extra_flags:
        description:
          - More kube-scheduler flags, flag name (without dashes) to a string, number or boolean.
          - One key per flag; two keys naming one flag (C(v) and C(--v)) are an error.
        type: dict
        default: {}
      image:
        description: The container image for static pods; defaults to C(registry.k8s.io/kube-scheduler:v<version>).
        type: str
      strict:
        description:
          - Refuse plugin names in the config's C(plugins) (enabled or disabled) and C(pluginConfig) that neither the
            registry of the version nor O(instances[].extra_plugins) knows, with the closest known name.
            kube-scheduler itself ignores such names in C(disabled) and C(pluginConfig); V(false) keeps that tolerance.
        type: bool
        default: true
      serving_cert:
        description:
          - A serving certificate signed by the cluster CA in O(serving_cert_dir), SANs the node's addresses and
            names; unset means on when the instance binds beyond the loopback. Adds C(--tls-cert-file) and
            C(--tls-private-key-file); M(kubesched.schedulers.serving_cert) issues it on the master.
        type: bool
  kubernetes_version:
    description:
      - The Kubernetes version of the schedulers, such as V(1.34.2); configs and flags are checked for its minor.
      - A pre-release such as V(1.38.0-rc.0) is checked as its minor, with a warning that it is a pre-release; the
        default image tag keeps it (V(v1.38.0-rc.0)).
    type: str
    required: true
  config_dir:
    description:
      - The directory on the master that holds the config files; each instance's is C(<config_dir>/<name>.yaml).
    type: path
    required: true
  peers_var:
    description:
      - The name of the variable that holds the instances on the other hosts of the play. When set, the
        instances of every other host are resolved too, and names, leases and schedulerNames are checked across
        hosts. A host without that variable is taken to have the same instances as this one.
    type: str
  node_address:
    description:
      - This master's IP address for C(bind_address=node); default its default IPv4 (then IPv6) address from the
        gathered facts. Without either, C(node) fails naming the variable to set.
    type: str
  serving_cert_dir:
    description: Where serving certificates go on the master, C(<dir>/<name>.crt) and C(<dir>/<name>.key).
    type: path
    default: /etc/kubernetes/pki/schedulers
  serving_cert_extra_sans:
    description: More SANs (IP addresses or names) for every serving certificate, besides the gathered facts' ones.
    type: list
    elements: str
    default: []
  profiling:
    description:
      - The C(enableProfiling) of every instance's config that does not set it. kube-scheduler serves
        C(/debug/pprof) when it is on, its default; with C(--config), the C(--profiling) flag is ignored, so this is
        the config field. The systemd and static_pod roles pass C(kube_scheduler_profiling), false by default (CIS
        Kubernetes Benchmark 1.4.1).
      - Unset, the configs keep kube-scheduler's default.
    type: bool
seealso:
  - module: kubesched.schedulers.scheduler_config
  - module: kubesched.schedulers.serving_cert
"""

EXAMPLES = r"""
- name: Resolve and check the scheduler instances of every master
  kubesched.schedulers.scheduler_instances:
    instances: "{{ kube_scheduler_instances }}"
    kubernetes_version: "{{ kube_scheduler_version }}"
    config_dir: /etc/kubernetes/schedulers
    peers_var: kube_scheduler_instances
  register: resolved

- name: Show each instance's health URL
  ansible.builtin.debug:
    msg: "{{ resolved.instances | map(attribute='health_url') }}"
"""

RETURN = r"""
instances:
  description: The resolved instances, in input order.
  returned: success
  type: list
  elements: dict
  contains:
    name:
      description: The instance name.
      type: str
      sample: kube-scheduler
    state:
      description: V(present) or V(absent).
      type: str
    default_scheduler:
      description: Whether this instance is the cluster's default scheduler.
      type: bool
    secure_port:
      description: The HTTPS port.
      type: int
      sample: 10259
    bind_address:
      description: The address the secure port binds to.
      type: str
      sample: 127.0.0.1
    kubeconfig:
      description: The kubeconfig path on the master.
      type: str
    kubeconfig_content_given:
      description: Whether the input gave kubeconfig content.
      type: bool
    kubeconfig_content:
      description:
        - The kubeconfig text the role writes, or null. When any instance has one, the whole result is hidden from
          every output, as with C(no_log) (the registered variable keeps it for the roles).
      type: str
    config_path:
      description: Where the instance's config file goes.
      type: str
      sample: /etc/kubernetes/schedulers/kube-scheduler.yaml
    config_rendered:
      description:
        - The canonical config text, with clientConnection.kubeconfig set to the instance's kubeconfig.
        - It is the text to write, so it holds extender key material when the config has any; see RV(instances[].config_has_secrets).
      type: str
    config_has_secrets:
      description:
        - Whether RV(instances[].config_rendered) holds extender key material (C(keyData), C(certData)). When any instance's
          does, the task result is hidden from output as with C(no_log).
      type: bool
    config_checksum:
      description: The sha256 of the rendered config.
      type: str
    scheduler_names:
      description: The schedulerNames of the instance's profiles.
      type: list
      elements: str
      sample: [default-scheduler]
    leader_elect:
      description: Whether leader election is on.
      type: bool
    lease:
      description: The lease (namespace and name), or null without leader election.
      type: dict
      sample: {namespace: kube-system, name: kube-scheduler}
    health_path:
      description: V(/livez) from Kubernetes 1.31, V(/healthz) before.
      type: str
    health_url:
      description: The HTTPS health URL to probe on the master (loopback for wildcard bind addresses).
      type: str
      sample: https://127.0.0.1:10259/livez
    serving_cert:
      description: The serving certificate (paths of cert and key, common_name, ip_sans, dns_sans), or null.
      type: dict
      sample: {cert: /etc/kubernetes/pki/schedulers/batch.crt, key: /etc/kubernetes/pki/schedulers/batch.key,
               common_name: batch, ip_sans: [10.0.0.11, 127.0.0.1], dns_sans: [localhost, master-1]}
    serving_cert_files:
      description:
        - Only with state V(absent) - the certificate and key files a serving certificate of the instance would be at;
          the rollout removes them with the instance.
      type: list
      elements: str
      sample: [/etc/kubernetes/pki/schedulers/batch.crt, /etc/kubernetes/pki/schedulers/batch.key]
    flags:
      description: The kube-scheduler arguments after the binary.
      type: list
      elements: str
    image:
      description: The container image for static pods.
      type: str
      sample: registry.k8s.io/kube-scheduler:v1.34.2
    image_given:
      description: Whether the instance names its image (an adopted kubeadm manifest keeps kubeadm's otherwise).
      type: bool
    extra_plugins:
      description: The declared out-of-tree plugins.
      type: list
      elements: raw
minor:
  description: The Kubernetes minor of O(kubernetes_version), as the library parses it; roles use it instead of a regex of their own.
  returned: success
  type: str
  sample: "1.34"
full_version:
  description: The full release of O(kubernetes_version), or null when only a minor was given (it names no binary or image then).
  returned: success
  type: str
  sample: 1.34.2
errors:
  description: One line per problem, each naming the field.
  returned: failure
  type: list
  elements: str
"""
