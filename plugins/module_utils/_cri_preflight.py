# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The image's kube-scheduler run once through the node's own CRI runtime with ``crictl``, the way the kubelet runs a
pod: on CRI-O masters and on containerd masters without ``ctr``. Every kubeadm node has crictl (kubeadm's preflight
requires it), and it talks to whichever runtime the kubelet uses, so this needs nothing else on the node.

One pod sandbox on the host's network (the run serves nothing and its kubeconfig names an unreachable server, so no
CNI is needed, and a master whose CNI is not up yet can still run it), one container with the manifest's hostPaths
read-only and the run's directory read-write, its exit code and logs; the sandbox is always removed.
Host code: stdlib only.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time

# CRI's NamespaceMode NODE: the sandbox shares the host's network namespace (no CNI call).
_NODE_NETWORK = 2
_EXITED = "CONTAINER_EXITED"


class CriProblem(Exception):
    """crictl could not run the container (not a verdict of kube-scheduler's): the plan says what and stops."""


def run_in_sandbox(run, name, image, command, args, mounts, timeout=120.0, sleep=time.sleep):
    """Run ``command args`` of ``image`` in a sandbox of its own; (exit code, stdout, stderr) of the container.
    ``mounts``: (host path, container path, read-only) triples. ``run``: argv -> (rc, stdout, stderr)."""
    scratch = tempfile.mkdtemp(prefix="kubesched-preflight-cri-")
    try:
        pod_config = _write(scratch, "pod.json", {
            "metadata": {"name": name, "namespace": "kube-system", "uid": name, "attempt": 0},
            "log_directory": os.path.join(scratch, "logs"),
            "linux": {"security_context": {"namespace_options": {"network": _NODE_NETWORK}}},
        })
        container_config = _write(scratch, "container.json", {
            "metadata": {"name": "kube-scheduler"},
            "image": {"image": image},
            "command": [command],
            "args": list(args),
            "log_path": "kube-scheduler.log",
            "mounts": [{"host_path": host, "container_path": inside, "readonly": readonly}
                       for host, inside, readonly in mounts],
        })
        sandbox = _must(run, ["crictl", "runp", pod_config], "start a pod sandbox")
        try:
            container = _must(run, ["crictl", "create", "--no-pull", sandbox, container_config, pod_config],
                              "create the container")
            _must(run, ["crictl", "start", container], "start the container", prints_id=False)
            exit_code = _wait_for_exit(run, container, timeout, sleep)
            rc, out, err = run(["crictl", "logs", container])
            if rc != 0:
                raise CriProblem("crictl logs %s failed (rc %s): %s" % (container, rc, (err or out).strip()))
            return exit_code, out, err
        finally:
            run(["crictl", "rmp", "--force", sandbox])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _write(directory, name, document):
    path = os.path.join(directory, name)
    with open(path, "w") as handle:
        json.dump(document, handle)
    return path


def _must(run, argv, what, prints_id=True):
    """The ID crictl prints for what it made."""
    rc, out, err = run(argv)
    if rc != 0 or (prints_id and not out.strip()):
        raise CriProblem("crictl could not %s (%s, rc %s): %s" % (what, " ".join(argv[:2]), rc, (err or out).strip()))
    return out.strip().splitlines()[-1] if prints_id else None


def _wait_for_exit(run, container, timeout, sleep):
    deadline = time.monotonic() + timeout
    while True:
        rc, out, err = run(["crictl", "inspect", "--output", "json", container])
        if rc != 0:
            raise CriProblem("crictl inspect %s failed (rc %s): %s" % (container, rc, (err or out).strip()))
        status = json.loads(out).get("status") or {}
        if status.get("state") == _EXITED:
            return int(status.get("exitCode") or 0)
        if time.monotonic() > deadline:
            raise CriProblem("the preflight container %s did not exit within %ss (state %s)"
                             % (container, timeout, status.get("state")))
        sleep(0.2)
