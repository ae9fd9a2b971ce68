# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build a kube-scheduler static pod manifest at parity with kubeadm's for one scheduler instance.

Pure Python: no Ansible imports (the static_pod role uses it through the filters in plugins/filter).

kubeadm facts (cmd/kubeadm/app/phases/controlplane/manifests.go, volumes.go, util/staticpod/utils.go):
ComponentPod sets labels component/tier, hostNetwork, priorityClassName system-node-critical with priority
2000001000 and a RuntimeDefault seccomp profile; the scheduler container requests 100m CPU, pulls IfNotPresent
and mounts its kubeconfig read-only from a FileOrCreate hostPath volume named "kubeconfig". Probes are HTTPS on
the scheduler's port: liveness 10/15/8/10 and startup 10/15/24/10 (initialDelay/timeout/failureThreshold/period);
kubeadm 1.32 (kubernetes#126945) moved them from /healthz to /livez and added readiness on /readyz 0/15/3/1.
From 1.34 kubeadm names the port: the container declares ``ports: [{containerPort: <port>, name: probe-port,
protocol: TCP}]`` and every probe says ``port: probe-port``; before 1.34 the probes carry the number and there is no
``ports``. Probe host: the bind address, omitted for 0.0.0.0 and :: so the kubelet probes the pod (node) IP.
Volumes and mounts are sorted by name, and the YAML keys alphabetically, like kubeadm's writer.
"""

from __future__ import annotations

import copy

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.kube_scheduler_flags import dropped_from_adopted_command
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import CHECKSUM_ANNOTATION, PROBE_TIMINGS
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import since
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import dump_yaml, plain

CONFIG_VOLUME = "kubesched-config"
KUBECONFIG_VOLUME = "kubeconfig"
# The instance's serving certificate and key (serving.py), only those two files of the PKI directory.
SERVING_CERT_VOLUME = "kubesched-serving-cert"
SERVING_KEY_VOLUME = "kubesched-serving-key"
PROBE_PORT_NAME = "probe-port"


def _probe(kind, host, path, port):
    """One of kubeadm's probes (PROBE_TIMINGS: constants.py, which the deployment role's pods use too)."""
    http_get = {"path": path, "port": port, "scheme": "HTTPS"}
    if host:
        http_get["host"] = host
    return dict(PROBE_TIMINGS[kind], httpGet=http_get)


def named_probe_port(kubernetes_version):
    """Whether kubeadm of this minor version probes the port by its name (probe-port) rather than its number."""
    return since("kubeadm_named_probe_port", kubernetes_version)


def kubeadm_probes(bind_address, port, kubernetes_version):
    """The probes kubeadm of this minor version writes for a scheduler bound to bind_address:port."""
    host = "" if bind_address in ("0.0.0.0", "::") else bind_address
    if named_probe_port(kubernetes_version):
        port = PROBE_PORT_NAME
    if since("kubeadm_probes_livez_readyz", kubernetes_version):
        return {
            "livenessProbe": _probe("livenessProbe", host, "/livez", port),
            "readinessProbe": _probe("readinessProbe", host, "/readyz", port),
            "startupProbe": _probe("startupProbe", host, "/livez", port),
        }
    return {
        "livenessProbe": _probe("livenessProbe", host, "/healthz", port),
        "startupProbe": _probe("startupProbe", host, "/healthz", port),
    }


def _set_probe_port(container, port, kubernetes_version):
    """The container's probe-port entry as kubeadm of this version writes it: added from 1.34, and wherever it is
    present its containerPort (and a hostPort) is the instance's port - an adopted kubeadm manifest's 10259 would
    be stale once the port changes. Other ports stay as they are."""
    ports = [dict(entry) for entry in container.get("ports") or []]
    named = [entry for entry in ports if entry.get("name") == PROBE_PORT_NAME]
    for entry in named:
        entry["containerPort"] = port
        if "hostPort" in entry:  # with hostNetwork a hostPort must equal the containerPort
            entry["hostPort"] = port
    if not named and named_probe_port(kubernetes_version):
        ports.append({"containerPort": port, "name": PROBE_PORT_NAME, "protocol": "TCP"})
    if ports:
        container["ports"] = ports


def _volumes(instance):
    volumes = {
        KUBECONFIG_VOLUME: ({"name": KUBECONFIG_VOLUME,
                             "hostPath": {"path": instance["kubeconfig"], "type": "FileOrCreate"}},
                            {"name": KUBECONFIG_VOLUME, "mountPath": instance["kubeconfig"], "readOnly": True}),
        CONFIG_VOLUME: ({"name": CONFIG_VOLUME, "hostPath": {"path": instance["config_path"], "type": "File"}},
                        {"name": CONFIG_VOLUME, "mountPath": instance["config_path"], "readOnly": True}),
    }
    cert = instance.get("serving_cert")
    if cert:
        for name, path in ((SERVING_CERT_VOLUME, cert["cert"]), (SERVING_KEY_VOLUME, cert["key"])):
            volumes[name] = ({"name": name, "hostPath": {"path": path, "type": "File"}},
                             {"name": name, "mountPath": path, "readOnly": True})
    return volumes


def _drop_serving_volumes(pod, container):
    """An instance that no longer has a serving certificate loses its two mounts (its flags are gone already)."""
    ours = (SERVING_CERT_VOLUME, SERVING_KEY_VOLUME)
    pod["spec"]["volumes"] = [v for v in pod["spec"].get("volumes") or [] if v.get("name") not in ours]
    container["volumeMounts"] = [m for m in container.get("volumeMounts") or [] if m.get("name") not in ours]


def _flag_name(arg):
    return arg[2:].split("=", 1)[0] if arg.startswith("--") else None


def _merged_command(base_command, instance_flags):
    """kubeadm's command with the flags we own replaced by the instance's, every flag sorted by name."""
    ours = {_flag_name(arg) for arg in instance_flags}
    kept = [arg for arg in base_command[1:]
            if not (_flag_name(arg) and (dropped_from_adopted_command(_flag_name(arg)) or _flag_name(arg) in ours))]
    flags = sorted(kept + list(instance_flags), key=lambda arg: _flag_name(arg) or arg)
    return [base_command[0]] + flags


def _upsert(items, wanted, key="name"):
    others = [item for item in items or [] if item.get(key) != wanted[key]]
    return sorted(others + [wanted], key=lambda item: item[key])


def _new_pod(instance):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": instance["name"], "namespace": "kube-system",
                     "labels": {"component": instance["name"], "tier": "control-plane"}},
        "spec": {
            "containers": [{
                "name": instance["name"],
                "command": ["kube-scheduler"],
                "imagePullPolicy": "IfNotPresent",
                "resources": {"requests": {"cpu": "100m"}},
            }],
            "hostNetwork": True,
            "priority": 2000001000,
            "priorityClassName": "system-node-critical",
            "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        },
    }


def scheduler_container(pod):
    """The container running kube-scheduler in a pod, or None."""
    for container in pod.get("spec", {}).get("containers", []):
        command = container.get("command") or []
        if command and command[0].rsplit("/", 1)[-1] == "kube-scheduler":
            return container
    return None


def static_pod_manifest(instance, kubernetes_version, checksum, base=None, image=None):
    """The manifest of ``instance`` (a resolved scheduler instance) as a Pod dict.

    ``base`` is a kube-scheduler pod written by someone else (kubeadm) to adopt: everything in it is kept except
    what the instance defines (managed flags, the two volumes, probe endpoints) and the checksum annotation.
    ``image`` is the image to run; None keeps the base's image (kubeadm's) or uses the instance's default.
    """
    pod = copy.deepcopy(base) if base else _new_pod(instance)
    container = scheduler_container(pod)
    if container is None:
        raise ValueError("the pod to adopt has no container whose command is kube-scheduler")
    container["command"] = _merged_command(container["command"], instance["flags"])
    container["image"] = image or (container.get("image") if base else None) or instance["image"]
    # The probes follow the port and bind address; probe timings kubeadm (or a kubeadm patch) set stay.
    for name, probe in kubeadm_probes(instance["bind_address"], instance["secure_port"],
                                      kubernetes_version).items():
        existing = container.get(name)
        if existing and "httpGet" in existing:
            existing["httpGet"] = probe["httpGet"]
        else:
            container[name] = probe
    _set_probe_port(container, instance["secure_port"], kubernetes_version)
    volumes = _volumes(instance)
    if not instance.get("serving_cert"):
        _drop_serving_volumes(pod, container)
    for volume, mount in volumes.values():
        pod["spec"]["volumes"] = _upsert(pod["spec"].get("volumes"), volume)
        container["volumeMounts"] = _upsert(container.get("volumeMounts"), mount)
    metadata = pod.setdefault("metadata", {})
    metadata.pop("creationTimestamp", None)
    pod.pop("status", None)
    annotations = metadata.get("annotations") or {}
    annotations[CHECKSUM_ANNOTATION] = checksum
    metadata["annotations"] = annotations
    return pod


def to_manifest_yaml(pod):
    """YAML as kubeadm writes it: keys sorted, block style, no line folding (the library's one dumper)."""
    return dump_yaml(plain(pod))


def static_pod_manifest_yaml(instance, kubernetes_version, checksum, base=None, image=None):
    return to_manifest_yaml(static_pod_manifest(instance, kubernetes_version, checksum, base, image))


def is_scheduler_pod(pod):
    return isinstance(pod, dict) and pod.get("kind") == "Pod" and scheduler_container(pod) is not None
