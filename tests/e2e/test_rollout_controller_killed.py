"""The controller SIGKILLed in the middle of a rollout, the engine on the master too, on a real master (m2).

An instance of its own runs on m2; playbooks/static_pod.yml changes its config, and once the new config is on the
master (before the health gate of the new pod ended) the controller's whole process group and the engine's python on
the master are killed. The master then runs one config: the config file and the manifest are both the old ones or
both the new ones, the pod the kubelet runs is the manifest's, and no temp file is left. The next run converges and
the one after changes nothing. kubeadm's scheduler on m2 is not touched (another instance).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from cluster import wait_for  # tests/controlplane (realcluster.py puts it on sys.path)
from realcluster import REPO, changed_count

PORT = 10301
CONFIG = "/etc/kubernetes/schedulers/killed.yaml"
MANIFEST = "/etc/kubernetes/manifests/killed.yaml"
CHECKSUM = "kubesched.schedulers/checksum"


def variables(cluster, score, state="present"):
    return {"kube_scheduler_version": cluster.version, "kube_scheduler_instances": [
        {"name": "killed", "secure_port": PORT, "state": state, "config": {
            "percentageOfNodesToScore": score, "leaderElection": {"leaderElect": False},
            "profiles": [{"schedulerName": "killed"}]}}]}


def run(cluster, master, score, state="present"):
    return cluster.playbook("playbooks/static_pod.yml", variables(cluster, score, state), masters=True, check=False,
                            options=("--limit", master))


def manifest_checksum(real, master):
    text = real.node_exec(master, "cat", MANIFEST)
    return next(line.split(":", 1)[1].strip().strip("'\"") for line in text.splitlines()
                if line.strip().startswith(CHECKSUM + ":"))


def running_checksum(real, master):
    """The checksum annotation of the ready pod the kubelet runs for the instance ("" while none is ready)."""
    pods = real.node_exec(master, "crictl", "pods", "--quiet", "--state", "ready", "--name", "^killed-").split()
    return "".join(real.node_exec(master, "crictl", "inspectp", "--output", "go-template", "--template",
                                  '{{ index .status.annotations "%s" }}' % CHECKSUM, pod).strip() for pod in pods)


def test_a_controller_killed_mid_apply_leaves_one_config_and_the_next_run_converges(cluster, tmp_path):
    real, m2 = cluster.real, cluster.masters[1]
    try:
        first = run(cluster, m2, 50)
        assert first.returncode == 0, first.stdout[-6000:]
        old = (real.node_exec(m2, "sha256sum", CONFIG), manifest_checksum(real, m2))

        extra = tmp_path / "vars.json"
        extra.write_text(json.dumps(variables(cluster, 70)))
        controller = subprocess.Popen(  # pylint: disable=consider-using-with
            [str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(real.inventory()), "-e", "@%s" % extra,
             "--limit", m2, "playbooks/static_pod.yml"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO, start_new_session=True,
            env=dict(os.environ, ANSIBLE_NOCOLOR="1"))
        try:
            wait_for("the new config on m2", lambda: "percentageOfNodesToScore: 70" in real.node_exec(m2, "cat", CONFIG),
                     timeout=300, interval=0.2)
        finally:
            os.killpg(controller.pid, signal.SIGKILL)
            controller.wait()
        # The engine on the master: the module's python, the only one on the node while the controller ran it.
        engines = [line.split()[0] for line in real.node_exec(m2, "ps", "-eo", "pid=,args=").splitlines()
                   if line.split()[1:] == ["/usr/bin/python3"]]
        if engines:
            subprocess.run(["podman", "exec", m2, "kill", "-KILL"] + engines, check=False)
        time.sleep(2)

        config = real.node_exec(m2, "cat", CONFIG)
        pair = (real.node_exec(m2, "sha256sum", CONFIG), manifest_checksum(real, m2))
        # One config: both files old, or both new.
        assert pair == old or ("percentageOfNodesToScore: 70" in config and pair[1] != old[1]), (pair, old)
        # The process the kubelet runs is the manifest's (once the kubelet has replaced the pod, if it had to).
        wait_for("the pod of m2's manifest", lambda: running_checksum(real, m2) == pair[1], timeout=120)
        assert ".kubesched-tmp." not in real.node_exec(m2, "ls", "-a", "/etc/kubernetes/schedulers",
                                                       "/etc/kubernetes/manifests")

        again = run(cluster, m2, 70)
        assert again.returncode == 0, again.stdout[-6000:]
        assert "percentageOfNodesToScore: 70" in real.node_exec(m2, "cat", CONFIG)
        settled = run(cluster, m2, 70)
        assert settled.returncode == 0 and changed_count(settled) == 0, settled.stdout[-6000:]
        assert running_checksum(real, m2) == manifest_checksum(real, m2)
    finally:
        run(cluster, m2, 70, state="absent")
    wait_for("killed to stop on m2", lambda: not real.node_exec(m2, "ss", "-Hltn", "sport = :%d" % PORT).strip(),
             timeout=60)
