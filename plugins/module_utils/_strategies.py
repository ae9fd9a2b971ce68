# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How each kind of scheduler runs on a master: the only place where systemd units and static pods differ.

The rollout engine (_rollout.py) is one straight line for both kinds, as kubeadm's upgradeComponent is for every
control-plane component; a strategy owns what the kind decides: what the host must tell the controller, how written
files are made to take effect (a daemon-reload and a restart, or nothing: the kubelet watches its directory), how an
instance stops and is removed, whether it runs, its last log lines, the binary checks and the offline run of the
master's own kube-scheduler against a new config (_offline_scheduler.py). Host code: stdlib only.
"""

from __future__ import annotations

import os
import shutil

from ansible_collections.kubesched.schedulers.plugins.module_utils._host_facts import binary_facts, host_facts
from ansible_collections.kubesched.schedulers.plugins.module_utils._kubelet import find_static_pod_dir
from ansible_collections.kubesched.schedulers.plugins.module_utils._offline_scheduler import (
    PREFLIGHT_DIR, Workspace, offline_flags, refusal)
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import RolloutFailed

# The static_pod role's variable for a host binary of the image's build (named in messages).
HOST_BINARY_VARIABLE = "kube_scheduler_static_pod_preflight_binary"


class Verdict(object):
    """What the master's kube-scheduler said of an instance's new config and flags: ``refused`` is its own message
    (None when it accepted or did not run), ``problem`` why it could not be run where it must, ``note`` what ran or
    why nothing did (for the plan)."""

    def __init__(self, note, refused=None, problem=None):
        self.note = note
        self.refused = refused
        self.problem = problem


def _offline(run, workspace, seen_as, argv_head, flags):
    rc, stdout, stderr = run(argv_head + offline_flags(flags) + workspace.write(seen_as))
    return refusal(rc, stdout, stderr)


class SystemdStrategy(object):
    """A unit per instance, all running the binary behind one link; systemd restarts them."""

    kind = "systemd"

    def __init__(self, run):
        self._run = run  # argv -> (rc, stdout, stderr)

    def _must(self, argv):
        rc, out, err = self._run(argv)
        if rc != 0:
            raise RolloutFailed("%s failed (rc %s): %s" % (" ".join(argv), rc, (err or out).strip()))

    def facts(self, params):
        """The host facts the role needs (machine, systemd) and the side-by-side binary; no extra files to read."""
        out = {"host": host_facts()}
        if params.get("binary"):
            out["binary"] = binary_facts(params["binary"]["path"], self._run)
        return out, []

    def host_problem(self, facts):
        if not facts["host"]["systemd"]:
            return ("this host was not booted with systemd (no /run/systemd/system), so kube-scheduler cannot run here "
                    "as a systemd service; use the static_pod role there. Nothing was changed.")
        return None

    def reload(self, paths):
        """A changed unit file needs a daemon-reload before its restart."""
        if any(path.endswith(".service") for path in paths):
            self._must(["systemctl", "daemon-reload"])

    def restart(self, instance):
        self._must(["systemctl", "enable", instance["unit"]])
        self._must(["systemctl", "restart", instance["unit"]])

    def stop(self, instance):
        self._run(["systemctl", "disable", "--now", instance["unit"]])

    def remove(self, instance, remove_files, waiter, timeout):
        """Stopped first, then its files go (the caller reloads systemd)."""
        del waiter, timeout  # systemctl stop returns once the process is gone
        self.stop(instance)
        remove_files()

    def running(self, instance):
        active = self._run(["systemctl", "is-active", "--quiet", instance["unit"]])[0] == 0
        enabled = self._run(["systemctl", "is-enabled", "--quiet", instance["unit"]])[0] == 0
        return active and enabled

    def log_tail(self, instance):
        rc, out, _err = self._run(["journalctl", "--unit", instance["unit"], "--lines", "10", "--no-pager",
                                   "--output", "cat"])
        return [line for line in out.splitlines() if line.strip()] if rc == 0 else []

    def binary_problems(self, params):
        """The side-by-side binary must be the release the units are to run."""
        if not params.get("binary"):
            return []
        want = "Kubernetes v%s" % params["binary"]["version"]
        said = binary_facts(params["binary"]["path"], self._run)["version_output"]
        if said == want:
            return []
        return ["%s says %r, not %r: install the binary of that release first (nothing was changed)"
                % (params["binary"]["path"], said or "nothing (missing)", want)]

    def preflight(self, instance, params):
        """The binary the unit will run (the link's new target), on the host, with the unit's flags."""
        spec = instance.get("preflight")
        if not spec:
            return Verdict("not run: no preflight given")
        binary = (params.get("binary") or {}).get("path")
        if not binary:
            return Verdict("not run: no binary given")
        if self.binary_problems(params):
            # Planned before install.yml puts the binary there: the apply call runs it before the first write.
            return Verdict("not run yet: %s is not installed; it runs before the change" % binary)
        with Workspace(spec["config"]) as workspace:
            refused = _offline(self._run, workspace, workspace.path, [binary], spec["flags"])
        return Verdict("accepted by %s" % binary if refused is None else "refused by %s" % binary, refused)


class StaticPodStrategy(object):
    """A manifest per instance in the kubelet's directory: the kubelet starts, replaces and stops the pods."""

    kind = "static_pod"

    def __init__(self, run, which=shutil.which):
        self._run = run
        self._which = which

    def facts(self, params):
        """The directory the kubelet watches (given, or found as the kubelet is configured), and the named manifests
        in it to read in the same call."""
        if params.get("manifest_names") is None:
            return {}, []
        found = ({"path": params["manifest_dir"].rstrip("/") or "/", "source": "given", "kubelet_config": None}
                 if params.get("manifest_dir") else find_static_pod_dir(self._run))
        return ({"manifest_dir": found},
                ["%s/%s.yaml" % (found["path"].rstrip("/"), name) for name in params["manifest_names"]])

    def host_problem(self, facts):
        """Any host with a kubelet will do (the read call found its directory, or failed naming why)."""

    def reload(self, paths):
        """Nothing to do: the kubelet watches its directory."""

    def restart(self, instance):
        """Nothing to do: the kubelet replaces a pod whose manifest changed (the gate waits for the new one)."""

    def stop(self, instance):
        """Nothing to do: the manifest is gone (removed, or a new instance's restored away) and the kubelet stops
        the pod."""

    def remove(self, instance, remove_files, waiter, timeout):
        """The manifest goes, the kubelet stops the pod: its port must be free before the next instance starts."""
        remove_files()
        if instance.get("port") and not waiter.wait_port_free(instance["port"], timeout):
            raise RolloutFailed("%s: its manifest is removed but port %s is still taken after %ss"
                                % (instance["name"], instance["port"], timeout))

    def running(self, instance):
        """The kubelet runs what its directory holds: a manifest in place is a pod running or being restarted."""
        return True

    def log_tail(self, instance):
        return []

    def binary_problems(self, params):
        return []

    def preflight(self, instance, params):
        """The binary inside the image the manifest names, through the node's container runtime with the manifest's
        hostPaths mounted read-only; or the host binary the operator says is the same build."""
        spec = instance.get("preflight")
        if not spec:
            return Verdict("not run: no preflight given")
        with Workspace(spec["config"]) as workspace:
            if spec.get("binary"):
                if not os.access(spec["binary"], os.X_OK):
                    return Verdict("not run", problem="%s (%s) is not an executable file on this master"
                                   % (spec["binary"], HOST_BINARY_VARIABLE))
                refused = _offline(self._run, workspace, workspace.path, [spec["binary"]], spec["flags"])
                return Verdict("%s by %s (host binary)" % ("accepted" if refused is None else "refused", spec["binary"]),
                               refused)
            problem = self._image_problem(spec["image"])
            if problem:
                return Verdict("not run", problem=problem)
            head = ["ctr", "--namespace", "k8s.io", "run", "--rm",
                    "--mount", "type=bind,src=%s,dst=%s,options=rbind:rw" % (workspace.path, PREFLIGHT_DIR)]
            for mount in spec.get("mounts") or []:
                # A hostPath that does not exist yet (the config or kubeconfig this change writes) is not mounted:
                # the run reads the new config from its own directory, and a file the config names must exist.
                if os.path.exists(mount["host"]):
                    head += ["--mount", "type=bind,src=%s,dst=%s,options=rbind:ro" % (mount["host"], mount["container"])]
            head += [spec["image"], "kubesched-preflight-%s-%d" % (instance["name"], os.getpid()), spec["command"]]
            refused = _offline(self._run, workspace, PREFLIGHT_DIR, head, spec["flags"])
        verb = "accepted" if refused is None else "refused"
        return Verdict("%s by %s in image %s" % (verb, spec["command"], spec["image"]), refused)

    def _image_problem(self, image):
        """The image must be on the node (the kubelet pulls IfNotPresent; crictl pulls it as the kubelet would)."""
        if not self._which("ctr"):
            return ("this node has no ctr (containerd's client) to run the image's kube-scheduler; set %s to a host "
                    "binary of the same build" % HOST_BINARY_VARIABLE)
        rc, out, _err = self._run(["ctr", "--namespace", "k8s.io", "images", "list", "--quiet"])
        if rc == 0 and image in out.splitlines():
            return None
        if self._which("crictl"):
            rc, out, err = self._run(["crictl", "pull", image])
            if rc == 0:
                return None
            return "image %s is not on this node and crictl could not pull it: %s" % (image, (err or out).strip())
        return ("image %s is not on this node (and there is no crictl to pull it); pull it first or set %s"
                % (image, HOST_BINARY_VARIABLE))


def strategy_for(kind, run):
    return SystemdStrategy(run) if kind == "systemd" else StaticPodStrategy(run)
