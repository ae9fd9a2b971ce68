# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How each kind of scheduler runs on a master: the only place where systemd units and static pods differ.

The rollout engine (engine.py) is one straight line for both kinds, as kubeadm's upgradeComponent is for every
control-plane component; a strategy owns what the kind decides: what the host must tell the controller, how written
files are made to take effect (a daemon-reload and a restart, or nothing: the kubelet watches its directory), how an
instance stops and is removed, whether it runs, its last log lines, the binary checks and the offline run of the
master's own kube-scheduler against a new config (_offline_scheduler.py, which tells kube-scheduler's refusal from a
run that gave no answer). Host code: stdlib only.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.file_specs import installed_port
from ansible_collections.kubesched.schedulers.plugins.module_utils._files import WriteFailed
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.kubelet_preflight import KubeletProblem, run_as_static_pod
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.host_facts import binary_facts, host_facts, resolve_path
from ansible_collections.kubesched.schedulers.plugins.module_utils._kubelet import find_static_pod_dir, node_name
from ansible_collections.kubesched.schedulers.plugins.module_utils._offline_scheduler import (
    ACCEPTED, NOT_KUBE_SCHEDULER, NOT_RUN, PREFLIGHT_DIR, REFUSED, Workspace, answer, identify, offline_flags)
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import RolloutFailed

# A container's ID as the cgroup of a pod's process names it (containerd's cri-containerd-<id>.scope, CRI-O's
# crio-<id>.scope, or .../pod<uid>/<id> with the cgroupfs driver).
_CONTAINER_ID = re.compile(r"\b[0-9a-f]{64}\b")

# The static_pod role's variable for a host binary of the image's build (named in messages).
HOST_BINARY_VARIABLE = "kube_scheduler_static_pod_preflight_binary"
# The systemd role's variables that choose the binary its units run (named in messages).
BINARY_VARIABLES = "kube_scheduler_binary_url (or kube_scheduler_binary_local_path)"


class Verdict(object):
    """What the master's kube-scheduler said of an instance's new config and flags: ``refused`` is its own message
    (None when it accepted or did not run), ``problem`` why it gave no answer (it could not be run, or what ran is not
    kube-scheduler), ``note`` what ran or why nothing did (for the plan)."""

    def __init__(self, note, refused=None, problem=None):
        self.note = note
        self.refused = refused
        self.problem = problem


def _ask(config, flags, runner_for, inside, ran, could_not_run, not_kube_scheduler):
    """The Verdict of one offline run of ``config`` with ``flags``. ``runner_for(directory)``: the run's directory on
    the host -> a runner, argv tail -> (rc, stdout, stderr), the binary and how it runs before it; ``inside``: where
    kube-scheduler sees that directory (None: where it is, for a binary on the host); ``ran``: what ran, for the note
    ("kube-scheduler in image X (through podman)"); ``could_not_run`` words a run that gave no answer (the tool's own
    words follow), ``not_kube_scheduler(why)`` one whose binary is not kube-scheduler. A refusal is only ever
    kube-scheduler's own (_offline_scheduler.answer)."""
    try:
        with Workspace(config) as workspace:
            tail = offline_flags(flags) + workspace.write(inside or workspace.path)
            try:
                rc, stdout, stderr = runner_for(workspace.path)(tail)
            except KubeletProblem as error:
                return Verdict("not run", problem="%s: %s" % (could_not_run, error))
            except WriteFailed:
                raise
            except OSError as error:  # the command could not be started (strategy_for)
                return Verdict("not run", problem="%s: %s" % (could_not_run, _os_words(error)))
            kind, words = answer(rc, stdout, stderr, workspace.effective())
    except WriteFailed as error:  # the run's own files: the message names the path and the master
        return Verdict("not run", problem=str(error))
    if kind == ACCEPTED:
        return Verdict("accepted by %s" % ran)
    if kind == REFUSED:
        return Verdict("refused by %s" % ran, refused=words)
    if kind == NOT_KUBE_SCHEDULER:
        return Verdict("no answer from %s" % ran, problem=not_kube_scheduler(words))
    return Verdict("no answer from %s" % ran, problem="%s: %s" % (could_not_run, words))


def _identify(cache, run, binary, version, could_not_run, not_kube_scheduler, other_release):
    """A Verdict when the host binary ``binary`` is not a kube-scheduler of ``version``'s minor
    (_offline_scheduler.identify), else None: asked once per binary and call (``cache``), before its answer counts."""
    if (binary, version) not in cache:
        try:
            cache[(binary, version)] = identify(run, binary, version)
        except OSError as error:  # the command could not be started (strategy_for)
            cache[(binary, version)] = NOT_RUN, _os_words(error)
    found = cache[(binary, version)]
    if found is None:
        return None
    kind, why = found
    if kind == NOT_RUN:
        return Verdict("not run", problem="%s: %s" % (could_not_run, why))
    return Verdict("not run", problem=(not_kube_scheduler if kind == NOT_KUBE_SCHEDULER else other_release)(why))


def _os_words(error):
    """An OSError without its file name (the caller names the file; run_command gives it as bytes)."""
    if error.errno is None:
        return str(error)
    return "%s (%s)" % (error.strerror or os.strerror(error.errno), errno.errorcode.get(error.errno, error.errno))


def _host_binary_problem(path):
    """Why the host binary ``path`` (HOST_BINARY_VARIABLE) cannot be run on this master, or None: checked before it
    runs, because running a directory fails with a bare "Permission denied" (os.access says a directory is
    executable)."""
    fix = "set %s to the kube-scheduler file itself, of the image's build" % HOST_BINARY_VARIABLE
    if not os.path.lexists(path):
        return "%s (%s) does not exist on this master: %s" % (path, HOST_BINARY_VARIABLE, fix)
    if os.path.isdir(path):
        return ("%s (%s) is a directory on this master, not a kube-scheduler: %s (such as %s)"
                % (path, HOST_BINARY_VARIABLE, fix, os.path.join(path, "kube-scheduler")))
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        return "%s (%s) is not an executable file on this master: %s" % (path, HOST_BINARY_VARIABLE, fix)
    return None


class SystemdStrategy(object):
    """A unit per instance, all running the binary behind one link; systemd restarts them."""

    kind = "systemd"

    def __init__(self, run):
        self._run = run  # argv -> (rc, stdout, stderr)
        self._identities = {}  # (binary, version) -> what identify said of it in this call

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

    def start_standby(self, standby):
        """A temporary standby's runtime unit is started, never enabled (nothing of it outlives the call)."""
        self._must(["systemctl", "start", standby["unit"]])

    def remove(self, instance, remove_files, waiter, timeout):
        """Stopped first, then its files go (the caller reloads systemd)."""
        del waiter, timeout  # systemctl stop returns once the process is gone
        self.stop(instance)
        remove_files()

    def running(self, instance):
        active = self._run(["systemctl", "is-active", "--quiet", instance["unit"]])[0] == 0
        enabled = self._run(["systemctl", "is-enabled", "--quiet", instance["unit"]])[0] == 0
        return active and enabled

    def foreign(self, instance, holder):
        """None when ``holder`` (_health.Holder: the process listening on a port of ``instance``) is the unit's own,
        the process its restart replaces: the unit's main process, or one in the unit's cgroup (what systemd says,
        not what the unit file says); else what the unit runs, in words."""
        rc, out, _err = self._run(["systemctl", "show", "--property=MainPID", "--property=ControlGroup", instance["unit"]])
        shown = dict(line.partition("=")[::2] for line in out.splitlines()) if rc == 0 else {}
        main = int(shown.get("MainPID") or 0) if (shown.get("MainPID") or "").isdigit() else 0
        group = shown.get("ControlGroup") or ""
        if holder.pid and (holder.pid == main or holder.in_cgroup(group)):
            return None
        return "its unit %s runs %s" % (instance["unit"], "process %d (cgroup %s)" % (main, group) if main else "no process")

    def log_hint(self, instance):
        """Where the operator reads why the instance does not answer."""
        return "journalctl -u %s" % instance["unit"]

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
        could_not_run = "the preflight could not run %s" % binary

        def not_kube_scheduler(why):
            return ("%s, the binary the units are to run, is not kube-scheduler: %s; remove it and set %s to a "
                    "kube-scheduler of v%s" % (binary, why, BINARY_VARIABLES, params["binary"]["version"]))
        return (_identify(self._identities, self._run, binary, params["binary"]["version"], could_not_run,
                          not_kube_scheduler, not_kube_scheduler)
                or _ask(spec["config"], spec["flags"], lambda directory: lambda tail: self._run([binary] + tail), None,
                        binary, could_not_run, not_kube_scheduler))


class StaticPodStrategy(object):
    """A manifest per instance in the kubelet's directory: the kubelet starts, replaces and stops the pods."""

    kind = "static_pod"

    def __init__(self, run, which=shutil.which):
        self._run = run
        self._which = which
        self._identities = {}  # (binary, version) -> what identify said of it in this call

    def facts(self, params):
        """The directory the kubelet watches (given, or found as the kubelet is configured), and the named manifests
        in it to read in the same call."""
        if params.get("manifest_names") is None:
            return {}, []
        found = ({"path": params["manifest_dir"].rstrip("/") or "/", "source": "given", "kubelet_config": None}
                 if params.get("manifest_dir") else find_static_pod_dir(self._run))
        # Its device and inode, so the controller can tell a config or state directory that is this one by another
        # name (O(resolve) in the same call) without a call of its own.
        found["directory"] = resolve_path(found["path"])["directory"]
        # What else the kubelet runs from it (every name that does not start with a dot), for the role's warning about
        # files that do not look like manifests: read here, not by a call of its own.
        mine = set("%s.yaml" % name for name in params["manifest_names"])
        found["other_files"] = (sorted(name for name in os.listdir(found["path"]) if not name.startswith(".") and name not in mine)
                                if os.path.isdir(found["path"]) else [])
        return ({"manifest_dir": found},
                ["%s/%s.yaml" % (found["path"].rstrip("/"), name) for name in params["manifest_names"]])

    def host_problem(self, facts):
        """Any host with a kubelet will do (the read call found its directory, or failed naming why)."""

    def reload(self, paths):
        """Nothing to do: the kubelet watches its directory."""

    def restart(self, instance):
        """Nothing to do: the kubelet replaces a pod whose manifest changed (the gate waits for the new one)."""

    def start_standby(self, standby):
        """Nothing to do: the kubelet starts the temporary standby's pod from its manifest."""

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

    def foreign(self, instance, holder):
        """None when ``holder`` (_health.Holder: the process listening on a port of ``instance``) runs in a container
        of the instance's pod (kube-system/<name>-<node>, as the kubelet names a static pod): its cgroup names the
        container, and crictl lists that container running in that pod (what the runtime says, not the manifest).
        Else what the pod runs, in words. Where crictl cannot be asked, a process in a container is taken for the
        instance's when its installed manifest names that port (which pod it is cannot be told); a process in no
        container never is."""
        if not holder.pid:
            return "its pod's processes are in this master's PID namespace"
        ids = set(_CONTAINER_ID.findall(holder.cgroups))
        if not ids:
            return "that process runs in no container"
        pod = "%s-%s" % (instance["name"], node_name())
        rc, out, err = (self._run(["crictl", "ps", "--quiet", "--state", "running", "--label",
                                   "io.kubernetes.pod.namespace=kube-system", "--label", "io.kubernetes.pod.name=" + pod])
                        if self._which("crictl") else (None, "", "there is no crictl"))
        if rc != 0:
            named = installed_port(instance)
            if named == holder.port:
                return None
            return "the pod kube-system/%s cannot be asked (%s)%s" % (
                pod, (err or out).strip() or "crictl ps: rc %s" % rc,
                " and its manifest names port %d" % named if named is not None else "")
        mine = out.split()
        if ids & set(mine):
            return None
        return "its pod kube-system/%s runs %s" % (pod, "container %s" % ", ".join(c[:13] for c in mine) if mine else "no container")

    def log_hint(self, instance):
        """Where the operator reads why the instance's pod does not answer: its container's log (the container is
        named after the instance), and the kubelet's."""
        return ("crictl ps --all --name %s, then crictl logs <its container ID> (and journalctl -u kubelet)"
                % instance["name"])

    def log_tail(self, instance):
        """The last lines its container wrote, read with crictl as the hint says: the newest container's, or, while
        the kubelet restarts a crashing one (the newest is a later attempt of the same pod that has not exited), the
        attempt before it, which says why it ended. No lines where crictl is missing or the runtime does not answer
        (the hint still says where to look)."""
        if not self._which("crictl"):
            return []
        rc, out, _err = self._run(["crictl", "ps", "--all", "--last", "2", "--output", "json",
                                   "--name", "^%s$" % instance["name"],
                                   "--label", "io.kubernetes.pod.namespace=kube-system"])
        if rc != 0:
            return []
        try:
            found = sorted(json.loads(out).get("containers") or [], key=lambda c: int(c.get("createdAt") or 0),
                           reverse=True)
        except ValueError:
            return []
        if not found:
            return []
        chosen = found[0]
        if (len(found) > 1 and chosen.get("state") != "CONTAINER_EXITED"
                and (chosen.get("metadata") or {}).get("attempt") and found[1].get("state") == "CONTAINER_EXITED"
                and found[1].get("podSandboxId") == chosen.get("podSandboxId")):
            chosen = found[1]
        # kube-scheduler logs on stderr, which crictl logs passes on as stderr.
        rc, out, err = self._run(["crictl", "logs", "--tail", "10", chosen["id"]])
        return [line for line in (err + out).splitlines() if line.strip()][-10:] if rc == 0 else []

    def binary_problems(self, params):
        return []

    def preflight(self, instance, params):
        """The binary inside the image the manifest names, through the node's container runtime with the manifest's
        hostPaths mounted read-only; or the host binary the operator says is the same build."""
        spec = instance.get("preflight")
        if not spec:
            return Verdict("not run: no preflight given")
        binary = spec.get("binary")
        if binary:
            problem = _host_binary_problem(binary)
            if problem:
                return Verdict("not run", problem=problem)
            could_not_run = "the preflight could not run %s (%s)" % (binary, HOST_BINARY_VARIABLE)

            def not_kube_scheduler(why):
                return ("%s (%s) is not kube-scheduler: %s; set %s to a kube-scheduler of the image's build"
                        % (binary, HOST_BINARY_VARIABLE, why, HOST_BINARY_VARIABLE))

            def other_release(why):
                return ("%s (%s) is a kube-scheduler of another release: %s (kube_scheduler_version %s); set %s to a "
                        "kube-scheduler of the image's build" % (binary, HOST_BINARY_VARIABLE, why, spec.get("version"),
                                                                 HOST_BINARY_VARIABLE))
            return (_identify(self._identities, self._run, binary, spec.get("version"), could_not_run,
                              not_kube_scheduler, other_release)
                    or _ask(spec["config"], spec["flags"], lambda directory: lambda tail: self._run([binary] + tail),
                            None, "%s (host binary)" % binary, could_not_run, not_kube_scheduler))
        runtime = self.runtime()
        if runtime.problem:
            return Verdict("not run", problem=runtime.problem)
        problem = self._image_problem(runtime, spec["image"])
        if problem:
            return Verdict("not run", problem=problem)
        # A hostPath that does not exist yet (the config or kubeconfig this change writes) is not mounted: the run
        # reads the new config from its own directory, and a file the config names must exist.
        mounts = [mount for mount in spec.get("mounts") or [] if os.path.exists(mount["host"])]
        name = "kubesched-preflight-%s-%d" % (instance["name"], os.getpid())
        through = "the kubelet" if runtime.tool == "kubelet" else runtime.tool
        return _ask(spec["config"], spec["flags"],
                    lambda directory: runtime.runner(self._run, directory, mounts, spec, name), PREFLIGHT_DIR,
                    "%s in image %s (through %s)" % (spec["command"], spec["image"], runtime.tool),
                    "the preflight could not run the image through %s" % through,
                    lambda why: "the command %s of image %s (through %s) is not kube-scheduler: %s"
                    % (spec["command"], spec["image"], through, why))

    def runtime(self):
        """How this node runs the image's binary (PreflightRuntime): containerd's ctr where containerd answers, else
        podman (CRI-O keeps its images in containers/storage, which podman reads), else the kubelet itself, a static
        pod read with crictl where the node's CRI runtime answers crictl (CRI-O, or containerd without ctr), else a
        problem that says which tool is missing and the variable for a host binary."""
        missing = []
        if self._which("ctr"):
            images = self._answer(CTR + ["images", "list", "--quiet"], "containerd does not answer it", missing)
            if images is not None:
                return PreflightRuntime("ctr", images=images.splitlines())
        if self._which("podman"):
            return PreflightRuntime("podman")
        if self._which("crictl") and self._answer(["crictl", "info"], "no CRI runtime answers it", missing) is not None:
            return PreflightRuntime("kubelet")
        found = (", ".join(missing) + ", and there is no podman" if missing else
                 "this node has none of ctr (containerd's client), podman and crictl (the CRI client kubeadm requires)")
        return PreflightRuntime(None, problem=(
            "%s to run the image's kube-scheduler for the preflight: install crictl (cri-tools; the kubelet then runs "
            "the image as a static pod, on CRI-O or containerd), or ctr on a containerd node, or podman on a CRI-O "
            "node; or set %s to a kube-scheduler on the master of the image's build" % (found, HOST_BINARY_VARIABLE)))

    def _answer(self, argv, silent, missing):
        """What an installed tool printed, or None after noting in ``missing`` that it is ``silent`` and why."""
        rc, out, err = self._run(argv)
        if rc == 0:
            return out
        missing.append("%s is installed but %s (%s)" % (argv[0], silent, (err or out).strip() or "rc %s" % rc))
        return None

    def _image_problem(self, runtime, image):
        """The image must be on the node (the kubelet pulls IfNotPresent): crictl pulls it as the kubelet would,
        into the runtime's store; without crictl, podman pulls into the store it shares with CRI-O."""
        if runtime.has(image, self._run):
            return None
        if self._which("crictl"):
            rc, out, err = self._run(["crictl", "pull", image])
            if rc == 0:
                return None
            return "image %s is not on this node and crictl could not pull it: %s" % (image, (err or out).strip())
        if runtime.tool == "podman":
            rc, out, err = self._run(["podman", "pull", "--quiet", image])
            if rc == 0:
                return None
            return "image %s is not on this node and podman could not pull it: %s" % (image, (err or out).strip())
        return ("image %s is not on this node (and there is no crictl to pull it); pull it first (crictl pull or "
                "ctr --namespace k8s.io images pull) or set %s" % (image, HOST_BINARY_VARIABLE))


# containerd's client on the kubelet's namespace (where the CRI plugin keeps the images the kubelet pulled).
CTR = ["ctr", "--namespace", "k8s.io"]


class PreflightRuntime(object):
    """The tool that runs the image's kube-scheduler once, offline, with the manifest's hostPaths read-only:
    ``ctr`` (containerd), ``podman`` (CRI-O's store) or ``kubelet`` (a static pod read with crictl, on any CRI
    runtime: kubelet_preflight.py); ``problem`` when none can."""

    def __init__(self, tool, images=None, problem=None):
        self.tool = tool
        self.images = images
        self.problem = problem

    def has(self, image, run):
        if self.tool == "ctr":
            return image in self.images
        if self.tool == "kubelet":
            return run(["crictl", "inspecti", image])[0] == 0
        return run(["podman", "image", "exists", image])[0] == 0

    def runner(self, run, workspace, mounts, spec, name):
        """argv tail -> (rc, stdout, stderr): the ``command`` of the ``image`` of ``spec`` (as the manifest's command
        replaces the image's entrypoint), the workspace read-write at PREFLIGHT_DIR, ``mounts`` ({host, container})
        read-only, no network but loopback (ctr's and podman's) or the host's (the kubelet's static pod, like the
        scheduler's own); the flags name an unreachable API server either way."""
        image, command = spec["image"], spec["command"]
        if self.tool == "kubelet":
            binds = [(workspace, PREFLIGHT_DIR, False)] + [(mount["host"], mount["container"], True) for mount in mounts]
            return lambda tail: run_as_static_pod(run, spec["manifest_dir"], name, image, command, tail, binds)
        if self.tool == "ctr":
            head = CTR + ["run", "--rm", "--mount", "type=bind,src=%s,dst=%s,options=rbind:rw" % (workspace, PREFLIGHT_DIR)]
            for mount in mounts:
                head += ["--mount", "type=bind,src=%s,dst=%s,options=rbind:ro" % (mount["host"], mount["container"])]
            head += [image, name, command]
        else:
            # SELinux (CRI-O's usual hosts) would deny the container the host's files; relabelling them (:Z) would
            # change the labels of the kubelet's own files, so the label separation is off for this one run instead.
            head = ["podman", "run", "--rm", "--pull=never", "--network=none", "--security-opt", "label=disable",
                    "--name", name, "--mount", "type=bind,src=%s,dst=%s" % (workspace, PREFLIGHT_DIR)]
            for mount in mounts:
                head += ["--mount", "type=bind,src=%s,dst=%s,ro=true" % (mount["host"], mount["container"])]
            head += ["--entrypoint", command, image]
        return lambda tail: run(head + tail)


def strategy_for(kind, run_command):
    """The strategy of ``kind`` with an AnsibleModule's ``run_command``: a command that cannot be started (a directory,
    a file of another machine's architecture) raises OSError for the caller to word, where run_command would end the
    module with its bare "Error executing command."."""
    def run(argv):
        return run_command(argv, handle_exceptions=False)
    return SystemdStrategy(run) if kind == "systemd" else StaticPodStrategy(run)
