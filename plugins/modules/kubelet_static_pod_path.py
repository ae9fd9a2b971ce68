#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: kubelet_static_pod_path
short_description: Internal - find the static pod directory the kubelet on this host really watches
description:
  - B(Internal.) Part of the rollout engine of the C(kubesched.schedulers.systemd) and
    C(kubesched.schedulers.static_pod) roles, documented for those who read the roles; not a public interface,
    and its options may change in any release. Use the roles or the playbooks.
  - Reads the kubelet's arguments from its running process, or else from its systemd unit, drop-ins and
    environment files (such as C(/var/lib/kubelet/kubeadm-flags.env) and C(/etc/default/kubelet)).
  - The directory is C(--pod-manifest-path) when given (a flag overrides the config file), else C(staticPodPath)
    from the kubelet config file named by C(--config) (default C(/var/lib/kubelet/config.yaml)).
  - Fails when a kubelet is configured without a static pod path. With no kubelet at all on the host, returns
    C(/etc/kubernetes/manifests), kubeadm's default, and says so.
  - Reads only; supports check mode.
options:
  default_config:
    description: Kubelet config file assumed when no C(--config) flag is found.
    type: path
    default: /var/lib/kubelet/config.yaml
  env_files:
    description: Environment files read besides those the unit names.
    type: list
    elements: path
    default: [/var/lib/kubelet/kubeadm-flags.env, /etc/default/kubelet, /etc/sysconfig/kubelet]
version_added: 1.0.0
author:
  - kubesched maintainers (@kubesched)
"""

EXAMPLES = r"""
- name: Find the static pod directory of the kubelet
  kubesched.schedulers.kubelet_static_pod_path:
  register: kubelet_pods

- name: Show it
  ansible.builtin.debug:
    msg: "{{ kubelet_pods.path }} ({{ kubelet_pods.source }})"
"""

RETURN = r"""
path:
  description: The static pod directory.
  returned: success
  type: str
source:
  description: Where the directory came from, in words.
  returned: success
  type: str
kubelet_config:
  description: The kubelet config file that was read, if any.
  returned: success
  type: str
"""

from ansible_collections.kubesched.schedulers.plugins.module_utils._module import CollectionModule
from ansible_collections.kubesched.schedulers.plugins.module_utils._kubelet import (
    DEFAULT_CONFIG, ENV_FILES, KubeletError, find_static_pod_dir)


def main():
    module = CollectionModule(
        'kubesched.schedulers.kubelet_static_pod_path',
        argument_spec=dict(
            default_config=dict(type="path", default=DEFAULT_CONFIG),
            env_files=dict(type="list", elements="path", default=list(ENV_FILES)),
        ),
        supports_check_mode=True,
    )
    try:
        found = find_static_pod_dir(module.run_command, module.params["default_config"], module.params["env_files"])
    except KubeletError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, **found)


if __name__ == "__main__":
    main()
