#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: kubelet_static_pod_path
short_description: Find the static pod directory the kubelet on this host really watches
description:
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
version_added: 0.1.0
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

import os
import re
import shlex

from ansible.module_utils.basic import AnsibleModule

KUBEADM_DEFAULT = "/etc/kubernetes/manifests"


def running_kubelet_args():
    """argv of a running kubelet process, or None."""
    for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                argv = handle.read().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == "kubelet":
            return [arg for arg in argv[1:] if arg]
    return None


def _env_assignments(text):
    """KEY=VALUE pairs of an environment file or of systemd Environment= values."""
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        for word in words:
            key, sep, value = word.partition("=")
            if sep and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key):
                values[key] = value
    return values


def unit_kubelet_args(module, env_files):
    """Arguments the kubelet unit would start with, as (argv, places read); argv is None without a unit."""
    places = []
    env = {}
    exec_start = None
    systemctl = module.get_bin_path("systemctl")
    unit_text = ""
    if systemctl:
        rc, out, _err = module.run_command([systemctl, "cat", "--no-pager", "kubelet.service"])
        if rc == 0:
            unit_text = out
            places.append("systemd unit kubelet.service and its drop-ins")
    unit_env_files = []
    for line in unit_text.splitlines():
        line = line.strip()
        if line.startswith("Environment="):
            env.update(_env_assignments(line[len("Environment="):]))
        elif line.startswith("EnvironmentFile="):
            unit_env_files.append(line[len("EnvironmentFile="):].lstrip("-"))
        elif line.startswith("ExecStart="):
            exec_start = line[len("ExecStart="):] or None  # an empty ExecStart= resets the list
    for path in unit_env_files + [p for p in env_files if p not in unit_env_files]:
        if os.path.isfile(path):
            with open(path) as handle:
                env.update(_env_assignments(handle.read()))
            places.append(path)
    if exec_start:
        expanded = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: env.get(m.group(1), ""), exec_start)
        try:
            return shlex.split(expanded)[1:], places
        except ValueError:
            module.fail_json(msg="cannot parse the kubelet's ExecStart: %s" % exec_start)
    if places:
        # No unit but environment files: their values are the kubelet's extra arguments.
        words = []
        for value in env.values():
            words.extend(shlex.split(value))
        return words, places
    return None, places


def flag_value(args, name):
    """Value of the last --name=value or --name value in args, or None."""
    value = None
    for index, arg in enumerate(args):
        if arg.startswith("--%s=" % name):
            value = arg.split("=", 1)[1]
        elif arg == "--%s" % name and index + 1 < len(args):
            value = args[index + 1]
    return value


def static_pod_path_in(config_path):
    """staticPodPath of a kubelet config file (YAML or JSON), or None."""
    with open(config_path) as handle:
        text = handle.read()
    try:
        import yaml
    except ImportError:  # hosts without PyYAML: the key is a top-level scalar in every kubelet config
        match = re.search(r'^\s*"?staticPodPath"?\s*:\s*"?([^"\s,]+)"?', text, re.MULTILINE)
        return match.group(1) if match else None
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise ValueError("it is not a YAML or JSON object")
    return data.get("staticPodPath") or None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            default_config=dict(type="path", default="/var/lib/kubelet/config.yaml"),
            env_files=dict(type="list", elements="path",
                           default=["/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet",
                                    "/etc/sysconfig/kubelet"]),
        ),
        supports_check_mode=True,
    )
    args = running_kubelet_args()
    if args is not None:
        where = "the running kubelet's arguments"
    else:
        args, places = unit_kubelet_args(module, module.params["env_files"])
        where = " and ".join(places)
    manifest_flag = flag_value(args or [], "pod-manifest-path")
    if manifest_flag:
        module.exit_json(changed=False, path=manifest_flag.rstrip("/") or "/",
                         source="--pod-manifest-path in %s" % where, kubelet_config=None)
    config_path = flag_value(args or [], "config") or module.params["default_config"]
    if os.path.isfile(config_path):
        try:
            path = static_pod_path_in(config_path)
        except (OSError, ValueError) as exc:
            module.fail_json(msg="cannot read the kubelet config file %s: %s" % (config_path, exc))
        except Exception as exc:  # yaml.YAMLError without importing yaml at module load
            module.fail_json(msg="cannot parse the kubelet config file %s: %s" % (config_path, exc))
        if path:
            module.exit_json(changed=False, path=path.rstrip("/") or "/",
                             source="staticPodPath in %s" % config_path, kubelet_config=config_path)
    elif args is None:
        module.exit_json(changed=False, path=KUBEADM_DEFAULT, kubelet_config=None,
                         source="kubeadm's default: no kubelet process, unit, flags or config file on this host")
    module.fail_json(
        msg="the kubelet on this host has no static pod directory: no --pod-manifest-path in %s and no "
            "staticPodPath in %s. Configure the kubelet (staticPodPath) or set kube_scheduler_manifest_dir."
            % (where or "its arguments", config_path))


if __name__ == "__main__":
    main()
