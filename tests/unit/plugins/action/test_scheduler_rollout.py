# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scheduler_rollout action's failures: each one a failed result that says why and what was not done, raised as
one exception type (Refused) and turned into the result in one place, so every failure keeps the task's own result
(a static-pod master's manifest_dir once read) and puts failed first and msg last."""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.kubesched.schedulers.plugins.action.scheduler_rollout import Refused
from ansible_collections.kubesched.schedulers.plugins.module_utils._files import sha256
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout import last_render
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "hardening"))
from action_harness import run_action  # noqa: E402  pylint: disable=wrong-import-position

FQCN = "kubesched.schedulers.scheduler_rollout"
VERSION = "1.35.4"
CONFIG_DIR = "/etc/kubernetes/schedulers"
OTHER = {"name": "other", "secure_port": 11259,
         "config": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                    "profiles": [{"schedulerName": "other"}], "leaderElection": {"resourceName": "other"}}}


def _instances(*extra):
    instances, errors, _warnings = resolve([{"name": "kube-scheduler", "default_scheduler": True}] + list(extra),
                                           VERSION, CONFIG_DIR)
    assert errors == []
    return instances


def _systemd(**changes):
    return dict({"kind": "systemd", "instances": _instances(), "kubernetes_version": VERSION, "config_dir": CONFIG_DIR,
                 "state_dir": "/var/lib/kubesched/systemd", "binary_path": "/opt/kube-scheduler/kube-scheduler"},
                **changes)


def _static_pod(**changes):
    args = _systemd(kind="static_pod", state_dir="/var/lib/kubesched/static-pod", **changes)
    del args["binary_path"]
    return args


def _failure(result):
    """The result without the harness's record of module calls, and those calls."""
    result = dict(result)
    calls = result.pop("_module_calls")
    return result, calls


def test_the_required_options_of_a_plan_or_apply():
    result, calls = _failure(run_action("scheduler_rollout", {"kind": "systemd", "state_dir": "/var/lib/kubesched"}))
    assert result == {"failed": True, "msg": "%s: missing required arguments: instances, kubernetes_version, "
                                             "config_dir (only finish needs none of them)" % FQCN}
    assert calls == []


@pytest.mark.parametrize("args, msg", [
    (_systemd(host_paths={"kube_scheduler_config_dir": CONFIG_DIR}, apply=True),
     "%s: host_paths is checked by the plan (apply: false), before any apply; nothing was changed" % FQCN),
    (_static_pod(host_paths={"kube_scheduler_config_dir": CONFIG_DIR}),
     "%s: host_paths names the systemd role's directories (kind: systemd); a static-pod master's are compared with "
     "the kubelet's directory by the read call" % FQCN),
    (_systemd(health_timeout=0), "%s: nothing was changed:\nhealth_timeout: Invalid value: 0: must be a number of "
                                 "seconds between 1 and 3600" % FQCN),
    (_systemd(binary_path=None), "binary_path: Required value: the systemd kind runs a binary"),
    (_systemd(instances=_instances(OTHER), standbys=["kube-scheduler"]),
     "kube_scheduler_standby_port_offset: Invalid value: 1000: the temporary standby of kube-scheduler "
     "(kubesched-standby-kube-scheduler, port 11259) would clash with instance other (port 11259); choose another "
     "offset, or set kube_scheduler_make_before_break: false"),
])
def test_a_refusal_before_the_host_is_called(args, msg):
    result, calls = _failure(run_action("scheduler_rollout", args))
    assert result == {"failed": True, "msg": msg} and list(result) == ["failed", "msg"]
    assert calls == []


def test_a_refusal_of_the_host_answer_to_the_plan_keeps_what_it_resolved():
    resolved = {path: {"path": "/etc/systemd/system"} for path in (CONFIG_DIR, "/etc/systemd/system")}
    result, calls = _failure(run_action("scheduler_rollout", _systemd(host_paths={
        "kube_scheduler_config_dir": CONFIG_DIR, "kube_scheduler_unit_dir": "/etc/systemd/system"}),
        host_result={"changed": False, "resolved": resolved}))
    assert result == {"failed": True, "resolved": resolved, "msg": "%s: the variables are not valid on this master, "
                      "nothing was changed:\nreal_paths: Required value: kube_scheduler_binary_install_dir, "
                      "kube_scheduler_binary_link, kube_scheduler_state_dir" % FQCN}
    assert list(result) == ["failed", "resolved", "msg"]
    assert len(calls) == 1 and calls[0]["mode"] == "plan"


def test_a_failed_read_of_a_static_pod_master_is_the_result_as_the_host_gave_it():
    answer = {"failed": True, "msg": "cannot read /etc/kubernetes/manifests", "rc": 1}
    result, calls = _failure(run_action("scheduler_rollout", _static_pod(), host_result=answer))
    assert result == answer and list(result) == ["failed", "msg", "rc"]
    assert [call["mode"] for call in calls] == ["read"]


@pytest.mark.parametrize("read, msg", [
    ({"manifest_dir": {"path": "/etc/kubernetes/manifests", "directory": [8, 1]},
      "resolved": {CONFIG_DIR: {"directory": [8, 1]}}},
     "config_dir (kube_scheduler_config_dir in the static_pod role): Invalid value: '/etc/kubernetes/schedulers': on "
     "the host it is the static pod directory /etc/kubernetes/manifests (a symbolic link, or the same directory by "
     "another path); the kubelet would run every file stored there. Choose a directory outside it. Nothing was "
     "changed."),
    ({"manifest_dir": {"path": "/etc/kubernetes", "directory": [8, 2]}, "resolved": {}},
     "/etc/kubernetes/schedulers is inside the static pod directory /etc/kubernetes; the kubelet would run what is "
     "stored there. Choose a directory outside it."),
])
def test_a_refusal_after_the_read_keeps_the_kubelets_directory_in_the_result(read, msg):
    result, calls = _failure(run_action("scheduler_rollout", _static_pod(), host_result=read))
    assert result == {"manifest_dir": read["manifest_dir"], "failed": True, "msg": msg}
    assert list(result) == ["manifest_dir", "failed", "msg"]
    assert [call["mode"] for call in calls] == ["read"]


def test_finish_checks_its_options_before_the_host():
    result, calls = _failure(run_action("scheduler_rollout", {"kind": "systemd", "finish": "commit",
                                                              "state_dir": "/var/lib/kubesched", "settle": -1}))
    assert result == {"failed": True, "msg": "%s: nothing was changed:\nsettle: Invalid value: -1: must be a number "
                                             "of seconds between 0 and 600" % FQCN}
    assert calls == []


def test_a_refusal_carries_failed_first_and_msg_last():
    assert list(Refused("why", resolved={}).fields) == ["failed", "resolved", "msg"]
    answer = {"msg": "the host's words", "failed": True}
    assert Refused.engine(answer).fields is answer


def test_a_record_the_master_cannot_trust_is_pending_never_nothing_pending():
    # The engine fails every mode on it (module_utils/_records.py): something is held there, nothing can be known of it.
    record = "/var/lib/kubesched/systemd/held-change.json"
    answer = {"failed": True, "rolled_back": False, "pending": True, "untrusted_record": record,
              "msg": "%s cannot be trusted: it is not JSON (...)" % record}
    result, calls = _failure(run_action("scheduler_rollout", _systemd(), host_result=answer))
    assert result["failed"] and result["pending"] is True and result["untrusted_record"] == record
    assert result["msg"] == answer["msg"]
    assert [call["mode"] for call in calls] == ["plan"]


# --- a static-pod apply renders from what its plan read ---------------------------------------------------------------
# One call to the master fewer per apply (the benchmark's one-master-at-a-time converge pays it per master); what the
# apply writes is rendered from the same bytes, which the apply call itself checks are still on the master.
MANIFEST_DIR = "/etc/kubernetes/manifests"
KUBECONFIG_PATH = "/etc/kubernetes/scheduler.conf"
KUBECONFIG_SECRET = "client-key-data: a-key-that-never-leaves-the-call"


def _read_answer(args):
    """The master's answer to a read call, as the module gives it: kubeadm's manifest in the kubelet's directory,
    the kubeconfig it names."""
    read = {}
    for path in args["read"] + ["%s/%s.yaml" % (MANIFEST_DIR, name) for name in args["manifest_names"]]:
        if path == KUBECONFIG_PATH:
            read[path] = {"exists": True, "content": KUBECONFIG_SECRET, "sha256": "a" * 64}
        elif path == "%s/kube-scheduler.yaml" % MANIFEST_DIR:
            read[path] = {"exists": True, "content": KUBEADM_MANIFEST, "sha256": sha256(KUBEADM_MANIFEST)}
        else:
            read[path] = {"exists": False, "content": None, "sha256": None}
    return {"changed": False, "read": read,
            "manifest_dir": {"path": MANIFEST_DIR, "source": "staticPodPath in /var/lib/kubelet/config.yaml",
                             "kubelet_config": "/var/lib/kubelet/config.yaml", "directory": [8, 1], "other_files": []},
            "resolved": dict((path, {"path": path, "directory": [8, number]})
                             for number, path in enumerate(args["resolve"], 2))}


KUBEADM_MANIFEST = """apiVersion: v1
kind: Pod
metadata:
  labels: {component: kube-scheduler, tier: control-plane}
  name: kube-scheduler
  namespace: kube-system
spec:
  containers:
  - command: [kube-scheduler, --kubeconfig=/etc/kubernetes/scheduler.conf, --leader-elect=true]
    image: registry.k8s.io/kube-scheduler:v1.35.4
    name: kube-scheduler
  hostNetwork: true
"""


def _master(read_changed=False):
    """A master that answers read calls as _read_answer, and apply calls as the engine does (read_changed: one whose
    files changed since the plan read them, until it is read again)."""
    state = {"read_again": False}

    def answer(args):
        if args["mode"] == "read":
            state["read_again"] = True
            return _read_answer(args)
        if args.get("unchanged") and read_changed and state["read_again"] is False:
            return {"failed": True, "changed": False, "rolled_back": False, "read_changed": [KUBECONFIG_PATH],
                    "msg": "nothing was changed: %s changed on this master since the plan read it; read again"
                           % KUBECONFIG_PATH}
        return {"changed": True, "plan": {"instances": {}}}
    return answer


def _planned():
    plan = run_action("scheduler_rollout", _static_pod(manifest_dir=""), host_result=_master())
    assert [call["mode"] for call in plan["_module_calls"]] == ["read", "plan"]
    return plan


def test_a_static_pod_plan_returns_what_it_read_without_the_kubeconfigs_content():
    host_read = _planned()["host_read"]
    assert host_read["manifest_dir"]["path"] == MANIFEST_DIR
    assert host_read["read"][KUBECONFIG_PATH] == {"exists": True, "sha256": "a" * 64}
    assert host_read["read"]["%s/kube-scheduler.yaml" % MANIFEST_DIR]["content"] == KUBEADM_MANIFEST
    assert KUBECONFIG_SECRET not in repr(host_read)


def test_an_apply_given_its_plans_read_calls_the_master_once_and_writes_what_a_fresh_read_would_render():
    plan = _planned()
    fresh = run_action("scheduler_rollout", _static_pod(apply=True, manifest_dir=MANIFEST_DIR), host_result=_master())
    carried = run_action("scheduler_rollout", _static_pod(apply=True, manifest_dir=MANIFEST_DIR,
                                                          planned_read=plan["host_read"]), host_result=_master())
    assert [call["mode"] for call in fresh["_module_calls"]] == ["read", "apply"]
    assert [call["mode"] for call in carried["_module_calls"]] == ["apply"]
    (apply,) = carried["_module_calls"]
    unchanged = apply.pop("unchanged")
    assert apply == fresh["_module_calls"][1]  # the same files, instances, preflight: rendered from the same bytes
    assert unchanged["files"][KUBECONFIG_PATH] == "a" * 64
    assert unchanged["files"]["%s/kube-scheduler.yaml" % MANIFEST_DIR] == sha256(KUBEADM_MANIFEST)
    assert unchanged["manifest_dir"] == MANIFEST_DIR
    assert unchanged["apart"] == [CONFIG_DIR, "/var/lib/kubesched/static-pod"]
    assert carried["manifest_dir"]["path"] == MANIFEST_DIR and "host_read" not in carried


def test_an_apply_whose_master_changed_since_its_plan_reads_it_again_and_applies_what_that_renders():
    plan = _planned()
    result = run_action("scheduler_rollout", _static_pod(apply=True, manifest_dir=MANIFEST_DIR,
                                                         planned_read=plan["host_read"]),
                        host_result=_master(read_changed=True))
    assert [call["mode"] for call in result["_module_calls"]] == ["apply", "read", "apply"]
    assert "unchanged" not in result["_module_calls"][2]
    assert not result.get("failed") and result["changed"]


def _edited(host_read):
    """The plan's read with kubeadm's manifest edited on its way, its checksum left as the master gave it."""
    path = "%s/kube-scheduler.yaml" % MANIFEST_DIR
    read = dict(host_read["read"], **{path: dict(host_read["read"][path], content=KUBEADM_MANIFEST + "  # edited\n")})
    return {"planned_read": dict(host_read, read=read)}


@pytest.mark.parametrize("change", [
    lambda host_read: {"manifest_dir": "/etc/kubelet.d"},  # another directory than the plan found
    lambda host_read: {"instances": _instances(OTHER)},  # an instance the plan did not read
    _edited,  # a content its checksum does not name: never rendered from
], ids=["another-directory", "another-instance", "content-edited"])
def test_an_apply_given_a_read_of_something_else_reads_first(change):
    plan = _planned()
    args = dict(_static_pod(apply=True, manifest_dir=MANIFEST_DIR, planned_read=plan["host_read"]),
                **change(plan["host_read"]))
    result = run_action("scheduler_rollout", args, host_result=_master())
    assert [call["mode"] for call in result["_module_calls"]] == ["read", "apply"]


# --- a static-pod plan answered in its read call ------------------------------------------------------------------------
# The apply keeps on the master the input of the next plan (module_utils/rollout/last_render.py), which the next read
# call plans with; the controller takes that answer only for the input it renders itself from the fresh read.
def _applied_master():
    """A master whose kubelet directory holds kubeadm's manifest until an apply writes its files; it keeps what the
    apply asks it to remember, and a read call that speculates plans with it as the host side does (the input given
    its per-call options), answering with that input's checksum."""
    files = {}
    state = {"kept": None, "plans": [], "files": files}

    def answer(args):
        if args["mode"] == "read":
            read = _read_answer(args)
            for path, content in files.items():
                if path in read["read"]:
                    read["read"][path] = {"exists": True, "content": content, "sha256": sha256(content)}
            if args.get("speculate") and state["kept"] is not None:
                state["plans"].append(dict(state["kept"], **args["speculate"]))
                read["speculated"] = {"input": last_render.digest(state["kept"]),
                                      "answer": {"changed": False, "plan": {"instances": {}}, "speculated": True}}
            return read
        if args["mode"] == "apply":
            for instance in args["instances"]:
                files.update((spec["path"], spec["content"]) for spec in instance["files"])
            state["kept"] = args.get("remember")
        return {"changed": args["mode"] == "apply", "plan": {"instances": {}}}
    return answer, state


def test_after_an_apply_the_next_plan_is_answered_in_its_read_call_with_what_its_own_call_would_be_given():
    master, state = _applied_master()
    run_action("scheduler_rollout", _static_pod(apply=True, manifest_dir=MANIFEST_DIR), host_result=master)
    assert state["kept"] is not None
    plan = run_action("scheduler_rollout", _static_pod(manifest_dir=""), host_result=master)
    assert [call["mode"] for call in plan["_module_calls"]] == ["read"]
    assert plan["speculated"] is True and not plan.get("failed")
    # What the read call planned with is exactly what the plan's own call would have been given: kubeadm's manifest
    # now adopted, the manifest the apply wrote in its place.
    (planned,) = state["plans"]
    state["kept"] = None  # the same master, nothing kept: the plan takes its own call
    own = run_action("scheduler_rollout", _static_pod(manifest_dir=""), host_result=master)
    assert [call["mode"] for call in own["_module_calls"]] == ["read", "plan"]
    assert planned == own["_module_calls"][1]
    assert plan["host_read"] == own["host_read"] and "speculated" not in own


@pytest.mark.parametrize("change, edit", [
    ({"instances": _instances(OTHER)}, None),  # another instance since the apply
    ({"preflight": False}, None),  # another check asked for
    ({}, KUBECONFIG_PATH),  # the kubeconfig changed on the master: its checksum restarts the pod
    ({}, MANIFEST_DIR + "/kube-scheduler.yaml"),  # kubeadm wrote its manifest again (kubeadm upgrade)
], ids=["another-instance", "another-check", "kubeconfig-changed", "manifest-rewritten"])
def test_a_plan_whose_input_is_not_what_the_apply_kept_takes_its_own_call(change, edit):
    master, state = _applied_master()
    run_action("scheduler_rollout", _static_pod(apply=True, manifest_dir=MANIFEST_DIR), host_result=master)
    if edit:
        state["files"][edit] = KUBEADM_MANIFEST.replace("v1.35.4", "v1.35.5") if edit.endswith(".yaml") else "edited"
    plan = run_action("scheduler_rollout", _static_pod(manifest_dir="", **change), host_result=master)
    assert [call["mode"] for call in plan["_module_calls"]] == ["read", "plan"]
    assert len(state["plans"]) == 1 and "speculated" not in plan  # it planned with the kept input: never used


def test_a_speculated_answer_is_never_taken_for_another_input_and_a_read_without_one_is_as_before():
    forged = {"input": "0" * 64, "answer": {"changed": False, "plan": {"instances": {}}, "forged": True}}

    def master(args):
        if args["mode"] == "read":
            assert args["speculate"]["mode"] == "plan" and args["speculate"]["state_dir"] == "/var/lib/kubesched/static-pod"
            return dict(_read_answer(args), speculated=forged)
        return {"changed": True, "plan": {"instances": {}}}
    plan = run_action("scheduler_rollout", _static_pod(manifest_dir=""), host_result=master)
    assert [call["mode"] for call in plan["_module_calls"]] == ["read", "plan"] and "forged" not in plan
    assert plan["changed"] is False and plan["pending"] is True


def test_an_apply_given_its_plans_read_keeps_the_same_next_plan_input_as_one_that_read_again():
    plan = _planned()
    fresh = run_action("scheduler_rollout", _static_pod(apply=True, manifest_dir=MANIFEST_DIR), host_result=_master())
    carried = run_action("scheduler_rollout", _static_pod(apply=True, manifest_dir=MANIFEST_DIR,
                                                          planned_read=plan["host_read"]), host_result=_master())
    assert carried["_module_calls"][0]["remember"] is not None
    assert carried["_module_calls"][0]["remember"] == fresh["_module_calls"][1]["remember"]
    assert "speculate" not in fresh["_module_calls"][0]  # an apply's read plans nothing ahead
