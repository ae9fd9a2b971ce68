# -*- coding: utf-8 -*-
"""Profiling off by default in the roles (CIS Kubernetes Benchmark 1.4.1): the config every host role writes carries
enableProfiling: false unless kube_scheduler_profiling is true or the config sets the field; the
scheduler_config and scheduler_instances modules keep kube-scheduler's default. Through real ansible-playbook runs
of each host role's resolving tasks on localhost (the deployment role's ConfigMap: test_deployment_render.py)."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "hardening"))
from action_harness import run_action  # noqa: E402  pylint: disable=wrong-import-position,import-error

PLAY = """
- name: The {role} role's instances, as its first tasks resolve them
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Resolve as the role does
      ansible.builtin.include_role:
        name: kubesched.schedulers.{role}
        tasks_from: {tasks}
        public: true
    - name: Keep each instance's config
      ansible.builtin.copy:
        dest: "{{{{ out }}}}"
        mode: "0600"
        content: "{{{{ __kube_scheduler_{role}_resolved.instances | map(attribute='config_rendered') | list | to_json }}}}"
"""
ROLES = {"systemd": "resolve.yml", "static_pod": "resolve.yml"}
INSTANCES = [{"name": "kube-scheduler", "default_scheduler": True},
             {"name": "batch", "secure_port": 10300, "config": {
                 "enableProfiling": True, "leaderElection": {"resourceName": "batch"},
                 "profiles": [{"schedulerName": "batch"}]}}]
CASES = {"default": {}, "on": {"kube_scheduler_profiling": True}, "survey_text": {"kube_scheduler_profiling": "true"}}


@pytest.fixture(scope="module")
def configs(tmp_path_factory, ansible_playbook):
    work = tmp_path_factory.mktemp("profiling")
    (work / "inventory.ini").write_text(
        "localhost ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable)
    found = {}
    for role, tasks in ROLES.items():
        (work / ("%s.yml" % role)).write_text(PLAY.format(role=role, tasks=tasks))
        for case, values in CASES.items():
            out = work / ("%s-%s.json" % (role, case))
            variables = dict(values, out=str(out), kube_scheduler_version="1.35.4", kube_scheduler_instances=INSTANCES)
            (work / ("%s-%s-vars.json" % (role, case))).write_text(json.dumps(variables))
            proc = ansible_playbook(["-i", "inventory.ini", "-e", "@%s-%s-vars.json" % (role, case), "%s.yml" % role],
                                    cwd=work)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            found[role, case] = [yaml.safe_load(text) for text in json.loads(out.read_text())]
    return found


@pytest.mark.parametrize("role", sorted(ROLES))
def test_a_host_role_writes_profiling_off_by_default(configs, role):
    default, batch = configs[role, "default"]
    assert default["enableProfiling"] is False
    assert batch["enableProfiling"] is True  # the config's own value wins


@pytest.mark.parametrize("role", sorted(ROLES))
@pytest.mark.parametrize("case", ["on", "survey_text"])
def test_kube_scheduler_profiling_turns_it_on(configs, role, case):
    assert [config["enableProfiling"] for config in configs[role, case]] == [True, True]


def test_the_modules_keep_kube_schedulers_default():
    """The modules validate, they do not harden: without the option, the config is written as given."""
    result = run_action("scheduler_instances", {"instances": INSTANCES[:1], "kubernetes_version": "1.35.4",
                                                "config_dir": "/etc/kubernetes/schedulers"})
    assert "enableProfiling" not in yaml.safe_load(result["instances"][0]["config_rendered"])
    result = run_action("scheduler_config", {"config": {"profiles": [{"schedulerName": "a"}]},
                                             "kubernetes_version": "1.35.4"})
    assert "enableProfiling" not in yaml.safe_load(result["rendered"])


def test_the_option_sets_only_what_the_config_leaves_unset():
    result = run_action("scheduler_instances", {"instances": INSTANCES, "kubernetes_version": "1.35.4",
                                                "config_dir": "/etc/kubernetes/schedulers", "profiling": False})
    assert [yaml.safe_load(instance["config_rendered"])["enableProfiling"] for instance in result["instances"]] == \
        [False, True]


# --- on the real binaries: what the roles' config turns off ---------------------------------------------------

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "controlplane"))
from cluster import free_port, wait_for  # noqa: E402  pylint: disable=wrong-import-position,import-error
from local_apiserver import LocalApiServer, missing_binaries  # noqa: E402  pylint: disable=wrong-import-position,import-error

SCHEDULER = "KUBE_SCHEDULER_BIN_1_35"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    missing = missing_binaries() + ([] if os.access(os.environ.get(SCHEDULER, ""), os.X_OK) else [SCHEDULER])
    if missing:
        pytest.skip("the profiling test on real binaries needs them (make binaries): missing " + ", ".join(missing))
    with LocalApiServer(tmp_path_factory.mktemp("apiserver")) as server:
        yield server


def _get(port, path, kubeconfig):
    """(status, body) of an HTTPS GET to the scheduler as the kubeconfig's client certificate (system:masters)."""
    user = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the scheduler's own self-signed serving certificate
    context.load_cert_chain(user["client-certificate"], user["client-key"])
    try:
        with urllib.request.urlopen("https://127.0.0.1:%d%s" % (port, path), context=context, timeout=5) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@pytest.mark.parametrize("profiling, status", [(False, 404), (True, 200)])
def test_kube_scheduler_serves_pprof_only_when_the_role_turns_it_on(api, tmp_path, profiling, status):
    """The instance as the host roles resolve it (scheduler_instances with kube_scheduler_profiling), run by the real
    kube-scheduler 1.35 with the roles' flags against a real kube-apiserver: /debug/pprof/ is 404 to a client its
    authorization lets in, or served when profiling is on."""
    port = free_port()
    result = run_action("scheduler_instances", {"instances": [{
        "name": "kube-scheduler", "default_scheduler": True, "kubeconfig": str(api.kubeconfig), "secure_port": port,
        "config": {"leaderElection": {"leaderElect": False}}}], "kubernetes_version": "1.35.4",
        "config_dir": str(tmp_path), "profiling": profiling})
    instance = result["instances"][0]
    Path(instance["config_path"]).write_text(instance["config_rendered"])
    with (tmp_path / "kube-scheduler.log").open("wb") as log:
        process = subprocess.Popen([os.environ[SCHEDULER]] + instance["flags"], stdout=log, stderr=subprocess.STDOUT)  # pylint: disable=consider-using-with
    try:
        # /metrics once the client is known and allowed (the scheduler loads the cluster's client CA after it
        # starts): from then on, a 404 is profiling's answer, not authorization's.
        wait_for("kube-scheduler to serve /metrics to the client (log: %s)" % (tmp_path / "kube-scheduler.log"),
                 lambda: process.poll() is None and _get(port, "/metrics", api.kubeconfig)[0] == 200, timeout=90)
        answer, body = _get(port, "/debug/pprof/", api.kubeconfig)
        assert answer == status, body[:300]
    finally:
        process.terminate()
        process.wait(timeout=30)
