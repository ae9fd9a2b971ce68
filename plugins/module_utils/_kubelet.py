# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which static pod directory the kubelet on this host really watches: --pod-manifest-path from its running
process, or else from its systemd unit, drop-ins and environment files; else staticPodPath from the kubelet config
file that --config names (default /var/lib/kubelet/config.yaml). And the node name it gives its static pods. Host
code: stdlib only (PyYAML when present)."""

from __future__ import annotations

import os
import re
import shlex
import shutil

DEFAULT_CONFIG = "/var/lib/kubelet/config.yaml"
ENV_FILES = ("/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet", "/etc/sysconfig/kubelet")
KUBEADM_DEFAULT = "/etc/kubernetes/manifests"
# staticPodPath in a kubelet config (YAML or JSON text). The indentation is whitespace other than a newline: with
# \s, every line start would scan every blank line after it (quadratic in a file of newlines).
_STATIC_POD_PATH = re.compile(r'^[^\S\n]*"?staticPodPath"?\s*:\s*"?([^"\s,]+)"?', re.MULTILINE)


class KubeletError(Exception):
    """The kubelet's static pod directory cannot be known; the message says why and what to do."""


def _mount_namespace(pid):
    try:
        return os.readlink("/proc/%s/ns/mnt" % pid)
    except OSError:
        return None


def running_kubelet_args():
    """argv of a running kubelet process of this host, or None. A kubelet in another mount namespace (a node
    container of kind or podman on this host) is not this host's: its paths name files of another filesystem."""
    own = _mount_namespace("self")
    for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                argv = handle.read().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == "kubelet" and _mount_namespace(pid) in (own, None):
            return [arg for arg in argv[1:] if arg]
    return None


def node_name():
    """The node name this host's kubelet gives its static pods' mirror pods (<pod>-<node>): its --hostname-override,
    else the host's name, lower-cased (as the kubelet's GetHostname, and the static_pod role's mirror pod gate)."""
    override = flag_value(running_kubelet_args() or [], "hostname-override")
    return (override or os.uname().nodename).strip().lower()


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


def unit_kubelet_args(run, env_files):
    """Arguments the kubelet unit would start with, as (argv, places read); argv is None without a unit.
    ``run``: argv -> (rc, stdout, stderr)."""
    places = []
    env = {}
    exec_start = None
    systemctl = shutil.which("systemctl")
    unit_text = ""
    if systemctl:
        rc, out, _err = run([systemctl, "cat", "--no-pager", "kubelet.service"])
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
            raise KubeletError("cannot parse the kubelet's ExecStart: %s" % exec_start) from None
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
        match = _STATIC_POD_PATH.search(text)
        return match.group(1) if match else None
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise ValueError("it is not a YAML or JSON object")
    return data.get("staticPodPath") or None


def find_static_pod_dir(run, default_config=DEFAULT_CONFIG, env_files=ENV_FILES):
    """{path, source, kubelet_config}: the directory, where it came from in words, and the config file read.
    With no kubelet at all on the host, kubeadm's default. Raises KubeletError."""
    args = running_kubelet_args()
    if args is not None:
        where = "the running kubelet's arguments"
    else:
        args, places = unit_kubelet_args(run, env_files)
        where = " and ".join(places)
    manifest_flag = flag_value(args or [], "pod-manifest-path")
    if manifest_flag:
        return {"path": manifest_flag.rstrip("/") or "/", "source": "--pod-manifest-path in %s" % where,
                "kubelet_config": None}
    config_path = flag_value(args or [], "config") or default_config
    if os.path.isfile(config_path):
        try:
            path = static_pod_path_in(config_path)
        except (OSError, ValueError) as exc:
            raise KubeletError("cannot read the kubelet config file %s: %s" % (config_path, exc)) from None
        except Exception as exc:  # pylint: disable=broad-except  # yaml.YAMLError without importing yaml at load
            raise KubeletError("cannot parse the kubelet config file %s: %s" % (config_path, exc)) from None
        if path:
            return {"path": path.rstrip("/") or "/", "source": "staticPodPath in %s" % config_path,
                    "kubelet_config": config_path}
    elif args is None:
        return {"path": KUBEADM_DEFAULT, "kubelet_config": None,
                "source": "kubeadm's default: no kubelet process, unit, flags or config file on this host"}
    raise KubeletError(
        "the kubelet on this host has no static pod directory: no --pod-manifest-path in %s and no staticPodPath in "
        "%s. Configure the kubelet (staticPodPath) or set kube_scheduler_manifest_dir." % (
            where or "its arguments", config_path))
