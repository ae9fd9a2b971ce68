# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The master's own kube-scheduler checks every new config and its flags offline, in the plan, before
anything running is touched. The seams (what each kind's strategy runs, how kube-scheduler's words are found, what
the typed exceptions carry), then the real binary (KUBE_SCHEDULER_BIN_1_35; skipped, loudly, without it) refusing
a bad change rendered by the controller exactly as the static_pod and systemd roles render it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.module_utils._offline_scheduler import (
    ACCEPTED, NOT_KUBE_SCHEDULER, NOT_RUN, PREFLIGHT_KUBECONFIG, REFUSED, answer, last_words, offline_flags)
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.host_facts import binary_facts
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import APPLY, COMMIT, PLAN, Engine
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import (
    PreflightFailed, RolledBack, RolloutFailed)
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.strategies import (
    StaticPodStrategy, SystemdStrategy, Verdict, strategy_for)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.rollout_files import static_pod_host, systemd_host

from test_engine import FakeStrategy, FakeWaiter, instance, params, snapshot

# kube-scheduler v1.35.4's stderr for three refusals (config, feature gate, flag), as it printed them.
CONFIG_REFUSED = ('E1126 04:23:19.655289   14022 run.go:72] "command failed" err="initializing profiles: creating '
                  'profile for scheduler name x: ScorePlugin \\"NoSuch\\" does not exist"\n')
GATE_REFUSED = 'E1126 04:23:11.875620   13924 run.go:72] "command failed" err="unrecognized feature gate: NoSuchGate"\n'
FLAG_REFUSED = "Usage:\n  kube-scheduler [flags]\n\nGlobal flags:\n      --version version\n\nError: unknown flag: --bogus\n"


EFFECTIVE = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: []\n"


def test_kube_schedulers_own_words_are_found_in_each_shape_it_prints():
    assert answer(1, "", CONFIG_REFUSED, None) == (REFUSED, 'initializing profiles: creating profile for scheduler '
                                                            'name x: ScorePlugin "NoSuch" does not exist')
    assert answer(1, "", GATE_REFUSED, None) == (REFUSED, "unrecognized feature gate: NoSuchGate")
    assert answer(1, "", FLAG_REFUSED, None) == (REFUSED, "unknown flag: --bogus")  # not the usage text around it
    assert answer(0, "", "", EFFECTIVE) == (ACCEPTED, None)


def test_only_kube_schedulers_own_answer_counts_as_one():
    # Exit 0 is no acceptance without the effective configuration --write-config-to asks for (/bin/true).
    assert answer(0, "", "", None)[0] == NOT_KUBE_SCHEDULER
    assert answer(0, "", "", "something else\n")[0] == NOT_KUBE_SCHEDULER
    # Exit 1 without kube-scheduler's shapes is a tool's failure (ctr exits 1 for its own errors), and podman's
    # "Error: ..." of exit 125 to 127 is podman's, never a refusal.
    ctr = "ctr: failed to create shim task: OCI runtime create failed: runc create failed: unable to start\n"
    assert answer(1, "", ctr, None) == (NOT_RUN, ctr.strip() + " (exit status 1)")
    assert answer(1, "", "", None) == (NOT_RUN, "exit status 1 and no output")
    podman = "Error: runc: runc create failed: error setting rlimit type 7: operation not permitted: OCI permission denied\n"
    assert answer(126, "", podman, None) == (NOT_RUN, podman.strip() + " (exit status 126)")
    assert answer(2, "a\nb\nc\nd\n", "", None) == (NOT_RUN, "b | c | d (exit status 2)")  # the last three lines


def test_the_instances_config_flag_gives_way_to_the_new_config():
    assert offline_flags(["--bind-address=127.0.0.1", "--config=/etc/k/one.yaml", "--config", "/x", "--v=2"]) == [
        "--bind-address=127.0.0.1", "--v=2"]


class RefusingStrategy(FakeStrategy):
    def __init__(self, refuse):
        super().__init__()
        self.refuse = refuse
        self.asked = []

    def preflight(self, instance, params):
        self.asked.append(instance["name"])
        return Verdict("refused by a fake", self.refuse.get(instance["name"]))


def test_a_refusal_fails_the_plan_with_its_words_and_nothing_is_written_or_restarted(tmp_path):
    strategy = RefusingStrategy({"two": "unrecognized feature gate: NoSuchGate"})
    eng = Engine(params(tmp_path, [instance(tmp_path, "one", 10259), instance(tmp_path, "two", 10260)]), strategy,
                 FakeWaiter())
    with pytest.raises(PreflightFailed) as failure:
        eng.run(APPLY)
    assert str(failure.value) == ("nothing was changed: two would be refused by the master's kube-scheduler: "
                                  "unrecognized feature gate: NoSuchGate (refused by a fake, offline with the new "
                                  "config and flags)")
    # The plan that was refused travels with the exception (a Check job shows it), every instance was asked.
    assert failure.value.plan["instances"]["two"]["action"] == "create" and strategy.asked == ["one", "two"]
    assert snapshot(tmp_path) == {} and strategy.calls == [] and eng.waiter.gates == []
    assert not isinstance(failure.value, RolledBack) and isinstance(failure.value, RolloutFailed)


def test_an_instance_that_starts_no_process_is_not_asked(tmp_path):
    p = params(tmp_path, [instance(tmp_path, "one", 10259)])
    Engine(p, FakeStrategy(), FakeWaiter()).run(APPLY)
    Engine(p, FakeStrategy(), FakeWaiter()).run(COMMIT)
    strategy = RefusingStrategy({"one": "would refuse"})
    result = Engine(p, strategy, FakeWaiter()).run(PLAN)
    assert not result["changed"] and strategy.asked == []  # a rerun stays cheap: changed=0, no binary run


def test_a_failed_gate_is_rolled_back_by_type(tmp_path):
    p = params(tmp_path, [instance(tmp_path, "one", 10259)])
    with pytest.raises(RolledBack, match="After restore|removed the new instance one"):
        Engine(p, FakeStrategy(), FakeWaiter(failing={10259})).run(APPLY)


def write_effective(argv):
    """What kube-scheduler does when it accepts (ctr and podman runs): its effective config, in the run's directory
    (the host side of the bind mount at /kubesched-preflight)."""
    for word in argv:
        for part in word.split(","):
            if word.endswith("dst=/kubesched-preflight") or ",dst=/kubesched-preflight," in word:
                if part.startswith("src="):
                    with open(os.path.join(part[len("src="):], "effective.yaml"), "w") as handle:
                        handle.write(EFFECTIVE)


def recording_run(answers):
    calls = []

    def run(argv):
        calls.append(argv)
        if "--write-config-to" in argv:
            write_effective(argv)
        for prefix, answer in answers:
            if argv[:len(prefix)] == prefix:
                return answer(argv) if callable(answer) else answer
        return 0, "", ""
    return run, calls


def test_static_pods_run_the_images_binary_through_containerd_with_the_manifests_host_paths_read_only(tmp_path):
    present = tmp_path / "scheduler.conf"
    present.write_text("kubeconfig")
    run, calls = recording_run([(["ctr", "--namespace", "k8s.io", "images"], (0, "registry.k8s.io/kube-scheduler:v1.35.4\n", "")),
                                (["ctr", "--namespace", "k8s.io", "run"], (1, "", GATE_REFUSED))])
    strategy = StaticPodStrategy(run, which=lambda name: "/usr/bin/" + name)
    spec = {"config": "clientConnection:\n  kubeconfig: %s\n" % PREFLIGHT_KUBECONFIG, "command": "kube-scheduler",
            "flags": ["--config=/etc/k/one.yaml", "--feature-gates=NoSuchGate=true", "--secure-port=10259"],
            "image": "registry.k8s.io/kube-scheduler:v1.35.4",
            "mounts": [{"host": str(present), "container": "/etc/kubernetes/scheduler.conf"},
                       {"host": str(tmp_path / "not-written-yet.yaml"), "container": "/etc/k/one.yaml"}]}
    verdict = strategy.preflight({"name": "one", "preflight": spec}, {})
    assert verdict.refused == "unrecognized feature gate: NoSuchGate" and verdict.problem is None
    argv = calls[-1]
    mounts = [argv[i + 1] for i, word in enumerate(argv) if word == "--mount"]
    assert mounts[1:] == ["type=bind,src=%s,dst=/etc/kubernetes/scheduler.conf,options=rbind:ro" % present]
    assert mounts[0].endswith(",dst=/kubesched-preflight,options=rbind:rw")
    tail = argv[argv.index("registry.k8s.io/kube-scheduler:v1.35.4") + 2:]
    assert tail == ["kube-scheduler", "--feature-gates=NoSuchGate=true", "--secure-port=10259",
                    "--config", "/kubesched-preflight/config.yaml", "--write-config-to",
                    "/kubesched-preflight/effective.yaml", "--secure-port", "0", "--master", "https://127.0.0.1:1"]
    assert not os.path.exists(mounts[0].split(",")[1][len("src="):])  # the run's directory is gone


def test_static_pods_without_containerd_say_which_variable_helps():
    strategy = StaticPodStrategy(lambda argv: (0, "", ""), which=lambda name: None)
    verdict = strategy.preflight({"name": "one", "preflight": {"config": "", "flags": [], "command": "kube-scheduler",
                                                               "image": "x", "mounts": []}}, {})
    assert verdict.refused is None and "kube_scheduler_static_pod_preflight_binary" in verdict.problem


# --- The preflight on any CRI runtime ---------------------------------------------------------------------

IMAGE = "registry.k8s.io/kube-scheduler:v1.35.4"


def preflight_on(tools, answers, tmp_path):
    """The static-pod preflight of one instance on a node with ``tools`` on its PATH; returns (verdict, calls)."""
    run, calls = recording_run(answers)
    strategy = StaticPodStrategy(run, which=lambda name: "/usr/bin/" + name if name in tools else None)
    present = tmp_path / "scheduler.conf"
    present.write_text("kubeconfig")
    manifests = tmp_path / "manifests"
    manifests.mkdir(exist_ok=True)
    spec = {"config": "clientConnection:\n  kubeconfig: %s\n" % PREFLIGHT_KUBECONFIG, "command": "kube-scheduler",
            "flags": ["--config=/etc/k/one.yaml", "--secure-port=10259"], "image": IMAGE,
            "manifest_dir": str(manifests),
            "mounts": [{"host": str(present), "container": "/etc/kubernetes/scheduler.conf"},
                       {"host": str(tmp_path / "not-written-yet.yaml"), "container": "/etc/k/one.yaml"}]}
    return strategy.preflight({"name": "one", "preflight": spec}, {}), calls


CONTAINERD_DOWN = (["ctr", "--namespace", "k8s.io", "images"],
                   (1, "", "ctr: failed to dial \"/run/containerd/containerd.sock\": connection refused\n"))


CRI_DOWN = (["crictl", "info"], (1, "", "validate service connection: connection refused\n"))


def exited(exit_code, manifests, pod="kubesched-preflight-one-%d-m1" % os.getpid(), mounted=None, reason=None,
           message=""):
    """crictl inspect of an exited container of ``pod``, as the kubelet ran it from the manifest in ``manifests``: it
    mounts that pod's hostPaths (or ``mounted``, for a container of another run); exit 0 wrote the effective config
    into the first, the run's directory, as kube-scheduler does."""
    def inspect(_argv):
        paths = mounted or [volume["hostPath"]["path"] for name in os.listdir(manifests) if not name.startswith(".")
                            for volume in json.loads((manifests / name).read_text())["spec"]["volumes"]]
        if exit_code == 0 and not mounted and reason is None:
            with open(os.path.join(paths[0], "effective.yaml"), "w") as handle:
                handle.write(EFFECTIVE)
        status = {"state": "CONTAINER_EXITED", "exitCode": exit_code, "labels": {"io.kubernetes.pod.name": pod},
                  "mounts": [{"hostPath": path} for path in paths],
                  "reason": reason or ("Completed" if exit_code == 0 else "Error"), "message": message}
        return (0, json.dumps({"status": status}), "")
    return inspect


@pytest.mark.parametrize("tools, answers, runner", [
    # containerd: its own client, as before.
    (("ctr", "crictl", "podman"), [(["ctr", "--namespace", "k8s.io", "images"], (0, IMAGE + "\n", ""))], "ctr"),
    # CRI-O: no ctr; podman reads CRI-O's image store.
    (("crictl", "podman"), [], "podman"),
    # ctr installed (a containerd package) but CRI-O runs the pods: containerd does not answer, podman runs it.
    (("ctr", "crictl", "podman"), [CONTAINERD_DOWN], "podman"),
    # CRI-O without podman, or containerd without ctr: the kubelet runs it as a static pod, read with crictl (the
    # static_pod Molecule scenario runs this on a real node whose containerd answers only through CRI).
    (("crictl",), [], "kubelet"),
    (("ctr", "crictl"), [CONTAINERD_DOWN], "kubelet"),
])
def test_the_preflight_runs_through_the_tool_of_the_nodes_runtime(tmp_path, tools, answers, runner):
    answers = answers + [(["crictl", "ps"], (0, "container-1\n", "")), (["crictl", "inspect"], exited(0, tmp_path / "manifests"))]
    verdict, calls = preflight_on(tools, answers, tmp_path)
    assert verdict.problem is None and verdict.refused is None, verdict.problem
    assert verdict.note == "accepted by kube-scheduler in image %s (through %s)" % (IMAGE, runner)
    argv = calls[-1]
    assert argv[0] == {"kubelet": "crictl"}.get(runner, runner)
    if runner == "podman":
        assert calls[-2] == ["podman", "image", "exists", IMAGE]  # present: nothing pulled
        # The manifest's command replaces the image's entrypoint, as in the pod; no network, no pull, no relabelling
        # of the host's files.
        image_at = argv.index(IMAGE)
        assert argv[image_at - 2:image_at] == ["--entrypoint", "kube-scheduler"]
        assert argv[image_at + 1:] == ["--secure-port=10259", "--config", "/kubesched-preflight/config.yaml",
                                       "--write-config-to", "/kubesched-preflight/effective.yaml",
                                       "--secure-port", "0", "--master", "https://127.0.0.1:1"]
        for word in ("--rm", "--pull=never", "--network=none", "label=disable"):
            assert word in argv[:image_at]
        mounts = [argv[i + 1] for i, word in enumerate(argv[:image_at]) if word == "--mount"]
        assert mounts[0].endswith(",dst=/kubesched-preflight")
        assert mounts[1:] == ["type=bind,src=%s,dst=/etc/kubernetes/scheduler.conf,ro=true" % (tmp_path / "scheduler.conf")]
    if runner == "kubelet":
        assert argv == ["crictl", "logs", "container-1"] and os.listdir(tmp_path / "manifests") == []


def kubelet_session(tmp_path, answers):
    """One preflight through the kubelet: the calls, and the static pod as the kubelet found it in its directory."""
    manifests = tmp_path / "manifests"
    manifests.mkdir(exist_ok=True)
    seen = []

    def run(argv):
        calls.append(argv)
        seen.extend(json.loads((manifests / name).read_text()) for name in os.listdir(manifests)
                    if not name.startswith("."))
        for prefix, answer in answers:
            if argv[:len(prefix)] == prefix:
                return answer(argv) if callable(answer) else answer
        return 0, "", ""
    calls = []
    strategy = StaticPodStrategy(run, which=lambda name: "/usr/bin/crictl" if name == "crictl" else None)
    present = tmp_path / "scheduler.conf"
    present.write_text("kubeconfig")
    spec = {"config": "clientConnection:\n  kubeconfig: %s\n" % PREFLIGHT_KUBECONFIG, "command": "kube-scheduler",
            "flags": ["--vmodule=bogus"], "image": IMAGE, "manifest_dir": str(manifests),
            "mounts": [{"host": str(present), "container": "/etc/kubernetes/scheduler.conf"}]}
    verdict = strategy.preflight({"name": "one", "preflight": spec}, {})
    return verdict, calls, seen


def test_through_the_kubelet_a_static_pod_runs_the_images_command_with_the_host_paths_read_only(tmp_path):
    manifests = tmp_path / "manifests"
    verdict, calls, seen = kubelet_session(tmp_path, [
        # A container the kubelet removed meanwhile, one of another pod, one of an earlier run of the same name (its
        # own directory), then this run's.
        (["crictl", "ps"], (0, "gone\nother\nearlier\nmine\n", "")),
        (["crictl", "inspect", "--output", "json", "gone"], (1, "", "not found")),
        (["crictl", "inspect", "--output", "json", "other"], exited(0, manifests, pod="kube-scheduler-m1")),
        (["crictl", "inspect", "--output", "json", "earlier"], exited(0, manifests, mounted=["/tmp/kubesched-preflight-old"])),
        (["crictl", "inspect", "--output", "json", "mine"], exited(1, manifests)),
        (["crictl", "logs"], (0, "", 'Error: invalid argument "bogus" for "--vmodule" flag: "bogus" does not have the '
                                     'pattern=N format\n'))])
    assert verdict.refused == 'invalid argument "bogus" for "--vmodule" flag: "bogus" does not have the pattern=N format'
    assert verdict.note == "refused by kube-scheduler in image %s (through kubelet)" % IMAGE
    pod = seen[0]
    assert pod["metadata"]["name"] == "kubesched-preflight-one-%d" % os.getpid()
    assert pod["metadata"]["namespace"] == "kube-system" and pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["hostNetwork"] is True  # no CNI: the run serves nothing
    container = pod["spec"]["containers"][0]
    assert container["image"] == IMAGE and container["command"] == ["kube-scheduler"]
    assert container["args"][:3] == ["--vmodule=bogus", "--config", "/kubesched-preflight/config.yaml"]
    volumes = dict((volume["name"], volume["hostPath"]["path"]) for volume in pod["spec"]["volumes"])
    mounts = [(volumes[mount["name"]], mount["mountPath"], mount["readOnly"]) for mount in container["volumeMounts"]]
    assert mounts[1:] == [(str(tmp_path / "scheduler.conf"), "/etc/kubernetes/scheduler.conf", True)]
    assert mounts[0][1:] == ("/kubesched-preflight", False)
    assert calls[-1] == ["crictl", "logs", "mine"]
    assert os.listdir(tmp_path / "manifests") == []  # the manifest is gone: the kubelet stops the pod


def test_when_the_kubelet_does_not_run_it_the_plan_says_so_and_the_manifest_goes(tmp_path, monkeypatch):
    monkeypatch.setattr("time.monotonic", iter(range(0, 1000, 50)).__next__)  # 50 s a poll: the timeout comes at once
    monkeypatch.setattr("time.sleep", lambda seconds: None)
    verdict, _calls, seen = kubelet_session(tmp_path, [(["crictl", "ps"], (0, "", ""))])
    assert verdict.refused is None and verdict.note == "not run" and seen
    assert verdict.problem == ("the preflight could not run the image through the kubelet: the kubelet did not run the "
                               "preflight pod kubesched-preflight-one-%d to its end within 90.0s (not started): is the "
                               "kubelet running, and the image on the node?" % os.getpid())
    assert os.listdir(tmp_path / "manifests") == []


def test_a_container_the_runtime_could_not_start_is_no_refusal_and_says_the_runtimes_words(tmp_path):
    manifests = tmp_path / "manifests"
    message = ('failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create '
               'failed: unable to start container process: exec: "kube-scheduler": executable file not found in $PATH')
    verdict, _calls, _seen = kubelet_session(tmp_path, [
        (["crictl", "ps"], (0, "mine\n", "")),
        (["crictl", "inspect"], exited(128, manifests, reason="StartError", message=message))])
    assert verdict.refused is None and verdict.note == "not run"
    assert verdict.problem == ("the preflight could not run the image through the kubelet: its container did not run "
                               "(StartError): " + message)
    assert os.listdir(manifests) == []


def test_a_pod_the_kubelet_could_not_start_is_named_with_the_kubelets_last_error(tmp_path, monkeypatch):
    monkeypatch.setattr("time.monotonic", iter(range(0, 1000, 50)).__next__)
    monkeypatch.setattr("time.sleep", lambda seconds: None)
    pod = "kubesched-preflight-one-%d" % os.getpid()
    journal = ('I1128 10:00:00.1 1 kubelet.go:2400] "SyncLoop ADD" source="file" pods=["kube-system/%s-m1"]\n'
               'E1128 10:00:00.2 1 pod_workers.go:1301] "Error syncing pod, skipping" err="failed to \\"CreatePodSandbox'
               '\\" for \\"%s-m1_kube-system(1)\\" with CreatePodSandboxError: \\"rpc error: error setting rlimit type 7: '
               'operation not permitted\\"" pod="kube-system/%s-m1"\n'
               'E1128 10:00:00.3 1 other.go:1] "Unrelated" err="not this pod"\n' % (pod, pod, pod))
    verdict, _calls, _seen = kubelet_session(tmp_path, [(["crictl", "ps"], (0, "", "")),
                                                        (["journalctl"], (0, journal, ""))])
    assert verdict.problem == (
        'the preflight could not run the image through the kubelet: the kubelet did not run the preflight pod %s to its '
        'end within 90.0s (not started); the kubelet\'s last error about it: failed to "CreatePodSandbox" for '
        '"%s-m1_kube-system(1)" with CreatePodSandboxError: "rpc error: error setting rlimit type 7: operation not '
        'permitted"' % (pod, pod))


def test_without_journalctl_the_kubelets_failure_is_still_named(tmp_path, monkeypatch):
    monkeypatch.setattr("time.monotonic", iter(range(0, 1000, 50)).__next__)
    monkeypatch.setattr("time.sleep", lambda seconds: None)

    def no_journalctl(_argv):  # a master whose kubelet runs outside systemd: exec fails as it really does
        return subprocess_run(["kubesched-no-such-journalctl"])
    verdict, _calls, _seen = kubelet_session(tmp_path, [(["crictl", "ps"], (0, "", "")), (["journalctl"], no_journalctl)])
    assert verdict.problem.endswith("(not started): is the kubelet running, and the image on the node?")


def test_a_binary_this_master_cannot_execute_says_no_version(tmp_path):
    foreign = tmp_path / "kube-scheduler"
    foreign.write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 200)
    foreign.chmod(0o755)
    assert binary_facts(str(foreign), subprocess_run) == {"exists": True, "version_output": None}


def test_a_missing_image_is_pulled_by_crictl_else_by_podman(tmp_path):
    # The kubelet then runs the pulled image (its container exits at once here, not after the 90 s wait).
    verdict, calls = preflight_on(("crictl",), [(["crictl", "inspecti"], (1, "", "not found")),
                                                (["crictl", "ps"], (0, "container-1\n", "")),
                                                (["crictl", "inspect"], exited(0, tmp_path / "manifests"))], tmp_path)
    assert ["crictl", "pull", IMAGE] in calls and verdict.problem is None
    assert calls.index(["crictl", "pull", IMAGE]) < min(index for index, call in enumerate(calls) if call[:2] == ["crictl", "ps"])
    missing = [(["podman", "image", "exists"], (1, "", ""))]
    _verdict, calls = preflight_on(("crictl", "podman"), missing, tmp_path)
    assert ["crictl", "pull", IMAGE] in calls and not any(call[:2] == ["podman", "pull"] for call in calls)
    verdict, calls = preflight_on(("podman",), missing, tmp_path)
    assert ["podman", "pull", "--quiet", IMAGE] in calls and verdict.problem is None
    verdict, calls = preflight_on(("podman",), missing + [(["podman", "pull"], (125, "", "Error: unauthorized\n"))],
                                  tmp_path)
    assert verdict.problem == "image %s is not on this node and podman could not pull it: Error: unauthorized" % IMAGE
    assert calls[-1][:2] == ["podman", "pull"]  # nothing was run after the failed pull


@pytest.mark.parametrize("tools, answers, missing", [
    ((), [], "this node has none of ctr (containerd's client), podman and crictl (the CRI client kubeadm requires)"),
    (("crictl",), [CRI_DOWN], "crictl is installed but no CRI runtime answers it (validate service connection: "
                              "connection refused), and there is no podman"),
    (("ctr", "crictl"), [CONTAINERD_DOWN, CRI_DOWN],
     "ctr is installed but containerd does not answer it (ctr: failed to dial \"/run/containerd/containerd.sock\": "
     "connection refused), crictl is installed but no CRI runtime answers it (validate service connection: connection "
     "refused), and there is no podman"),
])
def test_without_a_tool_the_problem_names_the_missing_tool_and_the_host_binary_variable(tmp_path, tools, answers, missing):
    verdict, calls = preflight_on(tools, answers, tmp_path)
    assert verdict.refused is None and verdict.note == "not run"
    assert verdict.problem == (
        "%s to run the image's kube-scheduler for the preflight: install crictl (cri-tools; the kubelet then runs the "
        "image as a static pod, on CRI-O or containerd), or ctr on a containerd node, or podman on a CRI-O node; or "
        "set kube_scheduler_static_pod_preflight_binary to a kube-scheduler on the master of the image's build" % missing)
    assert not [call for call in calls if "run" in call or "logs" in call]  # nothing was run


def test_systemd_runs_nothing_before_the_binary_is_installed():
    strategy = SystemdStrategy(lambda argv: (1, "", "no such file"))
    verdict = strategy.preflight({"name": "one", "preflight": {"config": "", "flags": []}},
                                 {"binary": {"path": "/opt/kube-scheduler/1.35.4/kube-scheduler", "version": "1.35.4"}})
    assert verdict.refused is None and verdict.note.startswith("not run yet")


# --- a host binary that is not kube-scheduler, for real ---------------------------------------------------------------

def host_binary_preflight(tmp_path, binary, run=None, version="1.35.4"):
    """The static-pod preflight with ``binary`` as kube_scheduler_static_pod_preflight_binary, for an instance of
    ``version``, run for real (as module.run_command runs it through strategy_for: a command that cannot start raises
    OSError)."""
    calls = []

    def recorded(argv):
        calls.append(argv)
        return (run or subprocess_run)(argv)
    spec = {"config": "clientConnection:\n  kubeconfig: %s\n" % PREFLIGHT_KUBECONFIG, "command": "kube-scheduler",
            "flags": ["--config=/etc/k/one.yaml"], "image": IMAGE, "binary": str(binary), "mounts": [],
            "version": version}
    return StaticPodStrategy(recorded, which=lambda name: None).preflight({"name": "one", "preflight": spec}, {}), calls


FIX = "set kube_scheduler_static_pod_preflight_binary to the kube-scheduler file itself, of the image's build"


def test_a_directory_as_the_host_binary_is_named_with_its_variable_and_the_fix_and_not_run(tmp_path):
    verdict, calls = host_binary_preflight(tmp_path, tmp_path)
    assert verdict.refused is None and calls == []
    assert verdict.problem == ("%s (kube_scheduler_static_pod_preflight_binary) is a directory on this master, not a "
                               "kube-scheduler: %s (such as %s/kube-scheduler)" % (tmp_path, FIX, tmp_path))


def test_a_missing_or_not_executable_host_binary_is_named_with_its_variable(tmp_path):
    verdict, calls = host_binary_preflight(tmp_path, tmp_path / "kube-scheduler")
    assert verdict.problem == ("%s/kube-scheduler (kube_scheduler_static_pod_preflight_binary) does not exist on this "
                               "master: %s" % (tmp_path, FIX)) and calls == []
    (tmp_path / "kube-scheduler").write_text("#!/bin/sh\n")
    verdict, calls = host_binary_preflight(tmp_path, tmp_path / "kube-scheduler")
    assert verdict.problem == ("%s/kube-scheduler (kube_scheduler_static_pod_preflight_binary) is not an executable "
                               "file on this master: %s" % (tmp_path, FIX)) and calls == []


def test_true_is_no_acceptance_because_it_says_no_release(tmp_path):
    true = shutil.which("true")
    verdict, calls = host_binary_preflight(tmp_path, true)
    assert calls == [[true, "--version"]] and verdict.refused is None and verdict.note == "not run"
    said = subprocess_run([true, "--version"])[1].splitlines()[0]  # GNU's "true (GNU coreutils) 9.1"
    assert verdict.problem == (
        "%s (kube_scheduler_static_pod_preflight_binary) is not kube-scheduler: its --version says %r, not a Kubernetes "
        "release (kube-scheduler says \"Kubernetes v<release>\"); set kube_scheduler_static_pod_preflight_binary to a "
        "kube-scheduler of the image's build" % (true, said))


def test_a_kube_scheduler_that_exits_0_without_the_effective_config_is_no_acceptance(tmp_path):
    fake = tmp_path / "kube-scheduler"
    fake.write_text('#!/bin/sh\ncase "$1" in --version) echo "Kubernetes v1.35.4";; '
                    '--help) printf "Usage:\\n  kube-scheduler [flags]\\n";; esac\n')
    fake.chmod(0o755)
    verdict, calls = host_binary_preflight(tmp_path, fake)
    assert len(calls) == 3 and verdict.refused is None and verdict.note == "no answer from %s (host binary)" % fake
    assert verdict.problem == (
        "%s (kube_scheduler_static_pod_preflight_binary) is not kube-scheduler: it exited 0 without writing the "
        "effective configuration that --write-config-to asks for (kube-scheduler writes it, then exits); set "
        "kube_scheduler_static_pod_preflight_binary to a kube-scheduler of the image's build" % fake)


def test_a_binary_that_fails_or_cannot_start_is_no_refusal(tmp_path):
    false = shutil.which("false")
    verdict, _calls = host_binary_preflight(tmp_path, false)
    assert verdict.refused is None
    assert verdict.problem == ("the preflight could not run %s (kube_scheduler_static_pod_preflight_binary): --version "
                               "failed: %s" % (false, last_words(1, subprocess_run([false, "--version"])[1])))
    # A file of another machine (no ELF header this kernel runs, no #! line): exec fails with ENOEXEC, which
    # run_command would turn into the module's bare "Error executing command.".
    foreign = tmp_path / "kube-scheduler"
    foreign.write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 200)
    foreign.chmod(0o755)
    verdict, _calls = host_binary_preflight(tmp_path, foreign)
    assert verdict.refused is None and verdict.note == "not run"
    assert verdict.problem == ("the preflight could not run %s (kube_scheduler_static_pod_preflight_binary): Exec "
                               "format error (ENOEXEC)" % foreign)


def test_the_modules_run_command_raises_for_a_command_that_cannot_start(tmp_path):
    """strategy_for gives the strategies a run that raises OSError where run_command would end the module."""
    seen = []

    def run_command(argv, handle_exceptions=True):
        seen.append(handle_exceptions)
        return subprocess_run(argv)
    verdict, _calls = host_binary_preflight(tmp_path, shutil.which("true"), run=strategy_for("static_pod", run_command)._run)
    assert seen == [False] and "is not kube-scheduler" in verdict.problem


# --- the real binary ----------------------------------------------------------------------------------------------

def real_binary():
    binary = os.environ.get("KUBE_SCHEDULER_BIN_1_35")
    if not binary or not os.access(binary, os.X_OK):
        pytest.skip("KUBE_SCHEDULER_BIN_1_35 is not set: no real kube-scheduler to refuse a change (make binaries)")
    return binary, subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout.split()[-1][1:]


def subprocess_run(argv):
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    return done.returncode, done.stdout, done.stderr


class LiveServer(object):
    """A listening socket standing for a live API server: the offline run must never connect to it."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.accepted = 0
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop:
            try:
                conn, _addr = self.sock.accept()
            except socket.timeout:
                continue
            self.accepted += 1
            conn.close()

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()


def real_master(tmp_path, extra_flags, kind, unchecked_flags=()):
    """A master as the role renders it: the instance's kubeconfig exists and names a live server. ``unchecked_flags``
    go onto the command line after the controller's checks, as a master whose binary differs from the model sees
    them (the controller refuses an unknown feature gate itself now)."""
    binary, version = real_binary()
    server = LiveServer()
    kubeconfig = tmp_path / "scheduler.conf"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "live",
        "clusters": [{"name": "live", "cluster": {"server": "https://127.0.0.1:%d" % server.sock.getsockname()[1],
                                                  "insecure-skip-tls-verify": True}}],
        "contexts": [{"name": "live", "context": {"cluster": "live", "user": "live"}}],
        "users": [{"name": "live", "user": {"token": "t0ken"}}]}))
    raw = [{"name": "batch", "secure_port": 10260, "kubeconfig": str(kubeconfig), "extra_flags": extra_flags,
            "config": {"profiles": [{"schedulerName": "batch"}], "leaderElection": {"resourceName": "batch"}}}]
    instances, errors, _warnings = resolve(raw, version, str(tmp_path / "schedulers"))
    assert not errors, errors
    instances[0]["flags"] = list(instances[0]["flags"]) + list(unchecked_flags)
    if kind == "systemd":
        host = systemd_host(instances, {"unit_dir": str(tmp_path / "units"), "config_dir": str(tmp_path / "schedulers"),
                                        "binary_link": str(tmp_path / "kube-scheduler"), "binary_path": binary,
                                        "version": version, "user": "root", "group": "root"})
        strategy = SystemdStrategy(subprocess_run)
        host["link"] = None  # the link and units are systemd's business; this test is about the binary's verdict
    else:
        (tmp_path / "manifests").mkdir()
        host, _drift = static_pod_host(instances, {"manifest_dir": str(tmp_path / "manifests"),
                                                   "config_dir": str(tmp_path / "schedulers"),
                                                   "state_dir": str(tmp_path / "state"), "version": version,
                                                   "preflight_binary": binary}, {})
        strategy = StaticPodStrategy(subprocess_run)
    host.update(state_dir=str(tmp_path / "state"), health_timeout=5, settle=0, read=[], accounts=None)
    host.setdefault("link", None)
    host.setdefault("binary", None)
    return host, strategy, server


@pytest.mark.parametrize("kind", ["static_pod", "systemd"])
def test_the_real_kube_scheduler_refuses_an_unknown_feature_gate_in_the_plan_and_nothing_is_written(tmp_path, kind):
    host, strategy, server = real_master(tmp_path, {}, kind, ["--feature-gates=NoSuchGate=true"])
    before = snapshot(tmp_path)
    if kind == "systemd":
        strategy.running = lambda instance: True  # no systemd on the test machine; the binary is real
        strategy.facts = lambda params: ({"host": {"systemd": True}}, [])
    try:
        with pytest.raises(PreflightFailed) as failure:
            Engine(host, strategy, FakeWaiter()).run(APPLY)
    finally:
        server.close()
    message = str(failure.value)
    assert message.startswith("nothing was changed: batch would be refused by the master's kube-scheduler: "
                              "unrecognized feature gate: NoSuchGate")
    assert snapshot(tmp_path) == before and server.accepted == 0


def test_the_real_kube_scheduler_accepts_a_good_change_without_contacting_the_live_server(tmp_path):
    host, strategy, server = real_master(tmp_path, {"v": 2}, "static_pod")
    try:
        result = Engine(host, strategy, FakeWaiter()).run(PLAN)
    finally:
        server.close()
    assert result["changed"] and result["plan"]["instances"]["batch"]["preflight"].startswith("accepted by ")
    assert server.accepted == 0  # the instance's kubeconfig names a live server; the run used its offline one


def test_the_real_kube_scheduler_refuses_a_file_the_config_names_that_is_missing_on_this_host(tmp_path):
    host, strategy, server = real_master(tmp_path, {}, "static_pod")
    server.close()
    preflight = host["instances"][0]["preflight"]
    config = yaml.safe_load(preflight["config"])
    config["extenders"] = [{"urlPrefix": "https://127.0.0.1:1/x", "filterVerb": "filter", "enableHTTPS": True,
                            "tlsConfig": {"caFile": str(tmp_path / "missing-ca.crt")}}]
    preflight["config"] = yaml.safe_dump(config)
    verdict = strategy.preflight(host["instances"][0], host)
    assert verdict.refused is not None and "missing-ca.crt" in verdict.refused


# --- another component of the release is no kube-scheduler (the real binaries) ---------------------------------------

def real_component(variable):
    binary = os.environ.get(variable)
    if not binary or not os.access(binary, os.X_OK):
        pytest.skip("%s is not set: no real binary of that component to check (make binaries)" % variable)
    return binary


OTHER_COMPONENTS = [("KUBE_CONTROLLER_MANAGER_BIN_1_35", "kube-controller-manager"),
                    ("KUBE_APISERVER_BIN_1_35", "kube-apiserver")]


@pytest.mark.parametrize("variable, component", OTHER_COMPONENTS)
def test_another_component_as_the_host_binary_is_not_kube_scheduler_and_never_runs_the_config(
        tmp_path, variable, component):
    """It says kube-scheduler's --version ("Kubernetes v1.35.4"); its "unknown flag: --config" was taken for
    kube-scheduler's refusal ("batch would be refused by the master's kube-scheduler")."""
    binary = real_component(variable)
    verdict, calls = host_binary_preflight(tmp_path, binary)
    assert verdict.refused is None and verdict.note == "not run"
    assert verdict.problem == (
        '%s (kube_scheduler_static_pod_preflight_binary) is not kube-scheduler: its --help says it is %s ("Usage: %s '
        '[flags]"), not kube-scheduler; set kube_scheduler_static_pod_preflight_binary to a kube-scheduler of the '
        "image's build" % (binary, component, component))
    assert calls == [[binary, "--version"], [binary, "--help"]]


@pytest.mark.parametrize("variable, component", OTHER_COMPONENTS)
def test_another_component_as_the_systemd_binary_fails_the_plan_naming_the_variables(tmp_path, variable, component):
    binary = real_component(variable)
    host, strategy, server = real_master(tmp_path, {}, "systemd")
    server.close()
    host["binary"]["path"] = binary
    strategy.running = lambda instance: True  # no systemd on the test machine; the binary is real
    strategy.facts = lambda params: ({"host": {"systemd": True}}, [])
    with pytest.raises(PreflightFailed) as failure:
        Engine(host, strategy, FakeWaiter()).run(PLAN)
    assert str(failure.value) == (
        'nothing was changed: batch: the master\'s kube-scheduler could not check the new config: %s, the binary the '
        'units are to run, is not kube-scheduler: its --help says it is %s ("Usage: %s [flags]"), not kube-scheduler; '
        "remove it and set kube_scheduler_binary_url (or kube_scheduler_binary_local_path) to a kube-scheduler of "
        "v%s" % (binary, component, component, host["binary"]["version"]))


def test_a_kube_scheduler_of_another_minor_as_the_host_binary_is_refused_naming_both_releases(tmp_path):
    binary, version = real_binary()
    verdict, calls = host_binary_preflight(tmp_path, binary, version="1.37.2")
    assert verdict.refused is None and calls == [[binary, "--version"]]
    assert verdict.problem == (
        "%s (kube_scheduler_static_pod_preflight_binary) is a kube-scheduler of another release: its --version says "
        "'Kubernetes v%s', not a release of 1.37 (kube_scheduler_version 1.37.2); set "
        "kube_scheduler_static_pod_preflight_binary to a kube-scheduler of the image's build" % (binary, version))


def test_scheduler_plugins_scheduler_is_a_kube_scheduler_and_its_answer_counts(tmp_path):
    """scheduler-plugins' scheduler (cmd/scheduler, built on kube-scheduler's command) names itself kube-scheduler
    and is stamped with the Kubernetes release it is built on."""
    binary = real_component("SCHEDULER_PLUGINS_SCHEDULER_BIN_0_34_7")
    said = subprocess_run([binary, "--version"])[1].strip()
    assert said.startswith("Kubernetes v1.34.")
    config = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection:\n"
              "  kubeconfig: %s\n" % PREFLIGHT_KUBECONFIG)
    spec = {"config": config, "command": "kube-scheduler", "flags": [], "image": IMAGE, "binary": binary, "mounts": [],
            "version": said.split()[-1][1:]}
    verdict = StaticPodStrategy(subprocess_run, which=lambda name: None).preflight({"name": "one", "preflight": spec}, {})
    assert verdict.problem is None and verdict.refused is None and verdict.note == "accepted by %s (host binary)" % binary


def test_the_controller_gives_the_manifests_own_command_image_and_host_paths_and_an_offline_kubeconfig(tmp_path):
    raw = [{"name": "batch", "secure_port": 10260, "kubeconfig": "/etc/kubernetes/batch.conf",
            "extra_flags": {"v": 2},
            "config": {"profiles": [{"schedulerName": "batch"}], "leaderElection": {"resourceName": "batch"}}}]
    instances, errors, _warnings = resolve(raw, "1.35.4", "/etc/kubernetes/schedulers")
    assert not errors, errors
    host, _drift = static_pod_host(instances, {"manifest_dir": "/etc/kubernetes/manifests",
                                               "config_dir": "/etc/kubernetes/schedulers",
                                               "state_dir": "/var/lib/kubesched/static-pod", "version": "1.35.4"}, {})
    entry = host["instances"][0]
    pod = yaml.safe_load(entry["files"][-1]["content"])
    container = pod["spec"]["containers"][0]
    preflight = entry["preflight"]
    assert [preflight["command"]] + preflight["flags"] == container["command"] and "binary" not in preflight
    assert preflight["image"] == container["image"]
    assert sorted((m["host"], m["container"]) for m in preflight["mounts"]) == [
        ("/etc/kubernetes/batch.conf", "/etc/kubernetes/batch.conf"),
        ("/etc/kubernetes/schedulers/batch.yaml", "/etc/kubernetes/schedulers/batch.yaml")]
    # The written config keeps the instance's kubeconfig; the offline run's names its own.
    assert yaml.safe_load(entry["files"][0]["content"])["clientConnection"]["kubeconfig"] == "/etc/kubernetes/batch.conf"
    assert yaml.safe_load(preflight["config"])["clientConnection"]["kubeconfig"] == PREFLIGHT_KUBECONFIG


# --- The podman path for real (a CRI-O master's tool), on this machine's podman -----------------------------

CONTAINERS_CONF = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "hosts", "containers.conf")


def podman_run(argv):
    """subprocess_run with this machine's podman settings (the Makefile exports CONTAINERS_CONF)."""
    env = dict(os.environ, CONTAINERS_CONF=os.environ.get("CONTAINERS_CONF", os.path.abspath(CONTAINERS_CONF)))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180, check=False, env=env)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def scheduler_image(tmp_path_factory):
    """The real kube-scheduler in an image FROM scratch at /usr/local/bin, as registry.k8s.io's image has it, under a
    tag of this run only; removed afterwards."""
    if not shutil.which("podman"):
        pytest.skip("no podman on this machine: the podman path of the preflight is not run for real")
    binary, version = real_binary()
    work = tmp_path_factory.mktemp("image")
    shutil.copy(binary, str(work / "kube-scheduler"))
    (work / "Containerfile").write_text("FROM scratch\nCOPY kube-scheduler /usr/local/bin/kube-scheduler\n")
    tag = "localhost/kubesched-preflight-test/kube-scheduler:v%s-%d" % (version, os.getpid())
    rc, out, err = podman_run(["podman", "build", "--quiet", "--no-cache", "--file", str(work / "Containerfile"),
                               "--tag", tag, str(work)])
    assert rc == 0, out + err
    yield tag
    podman_run(["podman", "rmi", "--force", tag])


def podman_master(tmp_path, unchecked_flags, image):
    """real_master's static pod, its preflight through the image on a node without ctr and crictl (podman only)."""
    host, _strategy, server = real_master(tmp_path, {}, "static_pod", unchecked_flags)
    preflight = host["instances"][0]["preflight"]
    del preflight["binary"]
    preflight["image"] = image
    strategy = StaticPodStrategy(podman_run, which=lambda name: None if name in ("ctr", "crictl") else shutil.which(name))
    return host, strategy, server


def test_through_real_podman_an_unknown_feature_gate_is_refused_with_kube_schedulers_words(tmp_path, scheduler_image):
    host, strategy, server = podman_master(tmp_path, ["--feature-gates=NoSuchGate=true"], scheduler_image)
    before = snapshot(tmp_path)
    try:
        with pytest.raises(PreflightFailed) as failure:
            Engine(host, strategy, FakeWaiter()).run(APPLY)
    finally:
        server.close()
    assert str(failure.value).startswith("nothing was changed: batch would be refused by the master's kube-scheduler: "
                                         "unrecognized feature gate: NoSuchGate (refused by kube-scheduler in image "
                                         "%s (through podman)" % scheduler_image)
    assert snapshot(tmp_path) == before and server.accepted == 0


def test_through_real_podman_a_good_change_is_accepted_with_the_manifests_host_paths(tmp_path, scheduler_image):
    host, strategy, server = podman_master(tmp_path, ["--v=2"], scheduler_image)
    try:
        result = Engine(host, strategy, FakeWaiter()).run(PLAN)
    finally:
        server.close()
    assert result["plan"]["instances"]["batch"]["preflight"] == (
        "accepted by kube-scheduler in image %s (through podman)" % scheduler_image)
    rc, out, _err = podman_run(["podman", "ps", "--all", "--quiet", "--filter", "name=kubesched-preflight-batch"])
    assert rc == 0 and out.strip() == ""  # --rm: nothing is left behind


# --- podman that cannot run the image: its own words, never a refusal (real podman, real runc) --------------------------

@pytest.fixture(scope="module")
def empty_image(tmp_path_factory):
    """An image FROM scratch with one text file: nothing in it runs, which is all these tests need (the container
    never starts). Tagged for this run only; removed afterwards."""
    if not shutil.which("podman"):
        pytest.skip("no podman on this machine: podman's failures to run the preflight are not run for real")
    work = tmp_path_factory.mktemp("empty-image")
    (work / "note").write_text("no kube-scheduler here\n")
    (work / "Containerfile").write_text("FROM scratch\nCOPY note /note\n")
    tag = "localhost/kubesched-preflight-test/empty:%d" % os.getpid()
    rc, out, err = podman_run(["podman", "build", "--quiet", "--no-cache", "--file", str(work / "Containerfile"),
                               "--tag", tag, str(work)])
    assert rc == 0, out + err
    yield tag
    podman_run(["podman", "rmi", "--force", tag])


def podman_plan(tmp_path, image, run=podman_run):
    """The plan of a new static-pod instance whose preflight runs ``image`` through podman on a node without ctr and
    crictl; returns the PreflightFailed."""
    raw = [{"name": "batch", "secure_port": 10260, "image": image,
            "config": {"profiles": [{"schedulerName": "batch"}], "leaderElection": {"resourceName": "batch"}}}]
    instances, errors, _warnings = resolve(raw, "1.35.4", str(tmp_path / "schedulers"))
    assert not errors, errors
    (tmp_path / "manifests").mkdir()
    host, _drift = static_pod_host(instances, {"manifest_dir": str(tmp_path / "manifests"),
                                               "config_dir": str(tmp_path / "schedulers"),
                                               "state_dir": str(tmp_path / "state"), "version": "1.35.4"}, {})
    host.update(state_dir=str(tmp_path / "state"), health_timeout=5, settle=0, read=[], accounts=None, link=None,
                binary=None)
    strategy = StaticPodStrategy(run, which=lambda name: None if name in ("ctr", "crictl") else shutil.which(name))
    with pytest.raises(PreflightFailed) as failure:
        Engine(host, strategy, FakeWaiter()).run(PLAN)
    assert snapshot(tmp_path / "schedulers") == {} and os.listdir(str(tmp_path / "manifests")) == []
    return str(failure.value)


def test_podman_that_cannot_start_the_container_is_named_with_its_own_words_not_as_a_refusal(tmp_path, empty_image):
    """The master of the report: runc cannot set the open-files limit podman asks for (here: above fs.nr_open, which
    no process may exceed), so the container never starts; kube-scheduler refused nothing."""
    with open("/proc/sys/fs/nr_open") as handle:
        above = int(handle.read()) + 1
    conf = tmp_path / "containers.conf"
    conf.write_text('[containers]\ndefault_ulimits = ["nofile=%d:%d"]\n[engine]\nruntime = "runc"\n' % (above, above))

    def limited_podman(argv):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=180, check=False,
                              env=dict(os.environ, CONTAINERS_CONF=str(conf)))
        return done.returncode, done.stdout, done.stderr
    message = podman_plan(tmp_path, empty_image, run=limited_podman)
    assert "would be refused" not in message
    assert message.startswith("nothing was changed: batch: the master's kube-scheduler could not check the new config: "
                              "the preflight could not run the image through podman: Error: ")
    assert "error setting rlimit type 7: operation not permitted" in message and message.endswith("(exit status 126)")


def test_an_image_without_the_command_is_podmans_failure_not_a_refusal(tmp_path, empty_image):
    message = podman_plan(tmp_path, empty_image)
    assert "would be refused" not in message
    assert message.startswith("nothing was changed: batch: the master's kube-scheduler could not check the new config: "
                              "the preflight could not run the image through podman: Error: ")
    assert '"kube-scheduler": executable file not found in $PATH' in message and message.endswith("(exit status 127)")
