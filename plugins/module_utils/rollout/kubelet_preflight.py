# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The image's kube-scheduler run once by the master's own kubelet, as a static pod, and read with ``crictl``.

For CRI-O masters without podman and containerd masters without ``ctr``. Every kubeadm node has crictl (kubeadm's
preflight requires it) and it talks to whichever runtime the kubelet uses, so this needs nothing else on the node.

Why a static pod and not a sandbox of crictl's own (``crictl runp``): the kubelet lists every pod sandbox of its
runtime and kills the ones it did not start ("orphaned" pods, in its housekeeping every 2 s), so a sandbox beside a
running kubelet can be killed mid-run; measured on a real 1.37 node, the run's container was gone before it could be
read. A static pod is the kubelet's own: it runs it as it will run the new manifest (same runtime, same mounts),
``restartPolicy: Never``, on the host's network (the run serves nothing and names an unreachable server), and the
manifest is removed afterwards, also after a failure; the kubelet then stops the pod. Host code: stdlib only.
"""

from __future__ import annotations

import json
import os
import re
import time

from ansible_collections.kubesched.schedulers.plugins.module_utils._files import writing

_EXITED = "CONTAINER_EXITED"
_CONTAINER = "kube-scheduler"
# The reasons the runtime gives a container that ran and exited (CRI: containerd and CRI-O alike); any other one
# (StartError, OOMKilled, ...) means kube-scheduler never gave its answer.
_RAN = ("", "Completed", "Error")
# The error of a kubelet log line (klog's structured form: err="...", quoted as Go quotes).
_KUBELET_ERROR = re.compile(r'\berr="((?:[^"\\]|\\.)*)"')


class KubeletProblem(Exception):
    """The kubelet or crictl could not run the container (not a verdict of kube-scheduler's): the plan says what
    and stops."""


def preflight_pod(name, image, command, args, mounts):
    """The static pod of one run. ``mounts``: (host path, container path, read-only) triples."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "kube-system",
                     "labels": {"app.kubernetes.io/managed-by": "kubesched.schedulers"}},
        "spec": {
            "hostNetwork": True,
            "restartPolicy": "Never",
            "containers": [{
                "name": _CONTAINER,
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "command": [command],
                "args": list(args),
                "volumeMounts": [{"name": "path-%d" % index, "mountPath": inside, "readOnly": readonly}
                                 for index, (_host, inside, readonly) in enumerate(mounts)],
                # SELinux (CRI-O's usual hosts) would deny the container the run's directory; spc_t is the type of
                # an unconfined container, as podman's label=disable is (the host's labels stay as they are).
                "securityContext": {"seLinuxOptions": {"type": "spc_t"}},
            }],
            "volumes": [{"name": "path-%d" % index, "hostPath": {"path": host}}
                        for index, (host, _inside, _readonly) in enumerate(mounts)],
        },
    }


def run_as_static_pod(run, manifest_dir, name, image, command, args, mounts, timeout=90.0, sleep=time.sleep):
    """Run ``command args`` of ``image`` as the static pod ``name`` of the kubelet watching ``manifest_dir``;
    (exit code, stdout, stderr) of its container. ``run``: argv -> (rc, stdout, stderr). The first of ``mounts`` is
    the run's own directory: its container is the one that mounts it (a container of an earlier run that the kubelet
    has not removed yet may have the same pod name, never the same directory)."""
    manifest = os.path.join(manifest_dir, name + ".json")
    # Written under a dot name (the kubelet skips those) and renamed: the kubelet never reads half a file.
    hidden = os.path.join(manifest_dir, "." + name + ".json")
    since = time.strftime("%Y-%m-%d %H:%M:%S")
    try:
        with writing(hidden, purpose="the preflight's static pod"):
            with open(hidden, "w") as handle:
                json.dump(preflight_pod(name, image, command, args, mounts), handle)
            os.rename(hidden, manifest)
        container = _wait_for_exit(run, name, mounts[0][0], timeout, sleep, since)
        rc, out, err = run(["crictl", "logs", container["id"]])
        if rc != 0:
            raise KubeletProblem("crictl logs %s failed (rc %s): %s" % (container["id"], rc, (err or out).strip()))
        return container["exit_code"], out, err
    finally:
        for path in (hidden, manifest):
            if os.path.exists(path):
                os.remove(path)


def _wait_for_exit(run, name, run_dir, timeout, sleep, since):
    """The container of the static pod (the kubelet names it ``name-<node>``) that mounts ``run_dir``, once it
    exited; KubeletProblem with the runtime's or the kubelet's words when it did not run to its end."""
    deadline = time.monotonic() + timeout
    state = "not started"
    while True:
        rc, out, err = run(["crictl", "ps", "--all", "--quiet", "--name", "^%s$" % _CONTAINER,
                            "--label", "io.kubernetes.pod.namespace=kube-system"])
        if rc != 0:
            raise KubeletProblem("crictl ps failed (rc %s): %s" % (rc, (err or out).strip()))
        for container_id in out.split():
            found = _status(run, container_id)
            if found is None or not found["pod"].startswith(name + "-") or run_dir not in found["host_paths"]:
                continue
            state = found["state"]
            if state == _EXITED and found["reason"] not in _RAN:
                raise KubeletProblem("its container did not run (%s): %s" % (found["reason"], found["message"]))
            if state == _EXITED:
                return dict(found, id=container_id)
        if time.monotonic() > deadline:
            said = _kubelet_says(run, name, since)
            raise KubeletProblem("the kubelet did not run the preflight pod %s to its end within %ss (%s)%s" % (
                name, timeout, state, ("; the kubelet's last error about it: %s" % said) if said else
                ": is the kubelet running, and the image on the node?"))
        sleep(0.25)


def _status(run, container_id):
    rc, out, _err = run(["crictl", "inspect", "--output", "json", container_id])
    if rc != 0:
        return None  # gone between ps and inspect: another run's, removed by the kubelet
    status = json.loads(out).get("status") or {}
    labels = status.get("labels") or {}
    return {"pod": labels.get("io.kubernetes.pod.name", ""), "state": status.get("state"),
            "exit_code": int(status.get("exitCode") or 0),
            "reason": status.get("reason") or "", "message": (status.get("message") or "").strip(),
            "host_paths": [mount.get("hostPath") for mount in status.get("mounts") or []]}


def _kubelet_says(run, name, since):
    """The error of the kubelet's last log line about the pod ``name`` since ``since`` (its journal), or None: why it
    could not start the pod (a sandbox the runtime could not create, an image it could not pull)."""
    try:
        rc, out, _err = run(["journalctl", "--unit", "kubelet", "--since", since, "--no-pager", "--output", "cat"])
    except OSError:  # no journalctl (a kubelet outside systemd): the plan says what it knows without it
        return None
    if rc != 0:
        return None
    for line in reversed(out.splitlines()):
        found = _KUBELET_ERROR.search(line) if name in line else None
        if found:
            try:
                return json.loads('"%s"' % found.group(1))
            except ValueError:
                return found.group(1)
    return None
