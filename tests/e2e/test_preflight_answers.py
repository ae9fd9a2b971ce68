"""The offline preflight's answers on real masters, through the static_pod role's plan in a Check job: on m1 through
containerd's ctr, on m2 without ctr.

containerd's client leaves m2's PATH for this module (as tests/realnode/node-up.sh --without-ctr does), so the node
answers only through CRI, as a CRI-O master without podman does, and the plan has m2's own kubelet run the image's
kube-scheduler as a static pod, read with crictl. On that real kubelet and containerd the plan:

- accepts a good change (kube-scheduler wrote the effective configuration);
- refuses what kube-scheduler refuses, in its words;
- names the runtime's failure to run an image without kube-scheduler, never as a refusal;
- refuses kube_scheduler_static_pod_preflight_binary set to a directory, and to /bin/true, naming the variable.

Through ctr (m1, whose ctr exits 1 for its own errors as kube-scheduler does for a refusal) the runtime's failure is
named as ctr's too. Nothing is written: kubeadm's manifest stays as it was, no preflight manifest or container is
left.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from realcluster import REPO

PLAY = """
- hosts: "{{ target }}"
  gather_facts: false
  tasks:
    - name: plan
      ansible.builtin.import_role:
        name: kubesched.schedulers.static_pod
        tasks_from: plan
      check_mode: true
"""
MANIFEST_DIR = "/etc/kubernetes/manifests"
MANIFEST = MANIFEST_DIR + "/kube-scheduler.yaml"
HIDDEN_CTR = "/usr/local/lib/kubesched-node/ctr"
COULD_NOT_CHECK = "kube-scheduler: the master's kube-scheduler could not check the new config: "


@pytest.fixture(scope="module")
def master_without_ctr(cluster):
    """m2 without containerd's client on its PATH for this module; put back afterwards."""
    real, m2 = cluster.real, cluster.masters[1]
    ctr = real.node_exec(m2, "sh", "-c", "command -v ctr").strip()
    assert ctr, "m2 has no ctr to take away"
    real.node_exec(m2, "install", "-d", str(Path(HIDDEN_CTR).parent))
    real.node_exec(m2, "mv", ctr, HIDDEN_CTR)
    manifest = real.node_exec(m2, "sha256sum", MANIFEST)
    try:
        yield m2
    finally:
        real.node_exec(m2, "mv", HIDDEN_CTR, ctr)
    # Nothing of the preflight runs or is left: no manifest (also no hidden one), no container, kubeadm's untouched.
    assert real.node_exec(m2, "sha256sum", MANIFEST) == manifest
    assert "kubesched-preflight" not in real.node_exec(m2, "ls", "-a", MANIFEST_DIR)
    running = real.node_exec(m2, "crictl", "ps", "--quiet", "--label", "io.kubernetes.pod.namespace=kube-system",
                             "--name", "^kube-scheduler$")
    pods = [real.node_exec(m2, "crictl", "inspect", "--output", "go-template", "--template",
                           '{{ index .status.labels "io.kubernetes.pod.name" }}', container).strip()
            for container in running.split()]
    assert not [pod for pod in pods if pod.startswith("kubesched-preflight-")], pods


def plan(cluster, tmp_path, master, instance, **role_vars):
    """The result of the role's plan task on ``master`` (a Check job) for the default scheduler with ``instance``'s
    fields; the json callback's report."""
    variables = dict(role_vars, target=master, kube_scheduler_instances=[
        dict({"name": "kube-scheduler", "default_scheduler": True}, **instance)])
    (tmp_path / "play.yml").write_text(PLAY)
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    run = subprocess.run([str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(cluster.real.inventory()),
                          "-e", "@%s" % (tmp_path / "vars.json"), str(tmp_path / "play.yml")],
                         capture_output=True, text=True, cwd=REPO, check=False,
                         env=dict(cluster.real.environment(), ANSIBLE_STDOUT_CALLBACK="ansible.posix.json"))
    report = json.loads(run.stdout[run.stdout.find("{\n"):])
    results = [task["hosts"][master] for play in report["plays"] for task in play["tasks"]
               if task["task"]["name"].endswith("Ask the master what would change") and master in task["hosts"]]
    assert len(results) == 1, run.stdout[-4000:] + run.stderr[-2000:]
    return results[0]


def test_a_good_change_is_accepted_by_the_images_kube_scheduler_run_by_the_kubelet(cluster, tmp_path, master_without_ctr):
    result = plan(cluster, tmp_path, master_without_ctr, {"extra_flags": {"v": 3}})
    assert not result.get("failed"), result.get("msg")
    assert result["plan"]["instances"]["kube-scheduler"]["preflight"] == (
        "accepted by kube-scheduler in image registry.k8s.io/kube-scheduler:v%s (through kubelet)" % cluster.version)


def test_what_kube_scheduler_refuses_is_refused_in_its_words(cluster, tmp_path, master_without_ctr):
    result = plan(cluster, tmp_path, master_without_ctr, {"extra_flags": {"vmodule": "bogus"}})
    assert result["failed"] and result["msg"].startswith(
        "nothing was changed: kube-scheduler would be refused by the master's kube-scheduler: ")
    assert '"bogus" does not have the pattern=N format' in result["msg"] and "(through kubelet" in result["msg"]


def test_an_image_the_runtime_cannot_run_is_the_kubelets_failure_not_a_refusal(cluster, tmp_path, master_without_ctr):
    """The pause image (on every node) has no kube-scheduler: containerd cannot start the manifest's command."""
    result = plan(cluster, tmp_path, master_without_ctr, {"image": "registry.k8s.io/pause:3.10"})
    assert result["failed"] and "would be refused" not in result["msg"]
    assert result["msg"].startswith("nothing was changed: " + COULD_NOT_CHECK + "the preflight could not run the image "
                                    "through the kubelet: its container did not run (StartError): "), result["msg"]
    assert "executable file not found" in result["msg"]


@pytest.mark.parametrize("binary, said", [
    ("/usr/local/bin", "/usr/local/bin (kube_scheduler_static_pod_preflight_binary) is a directory on this master, not "
                       "a kube-scheduler: set kube_scheduler_static_pod_preflight_binary to the kube-scheduler file "
                       "itself, of the image's build (such as /usr/local/bin/kube-scheduler)"),
    # The nodes' GNU true answers --version with its own release (Debian 12's coreutils).
    ("/bin/true", "/bin/true (kube_scheduler_static_pod_preflight_binary) is not kube-scheduler: its --version says "
                  "'true (GNU coreutils) 9.1', not a Kubernetes release (kube-scheduler says \"Kubernetes v<release>\"); "
                  "set kube_scheduler_static_pod_preflight_binary to a kube-scheduler of the image's build"),
])
def test_a_host_binary_that_is_no_kube_scheduler_is_named_with_its_variable(cluster, tmp_path, master_without_ctr,
                                                                            binary, said):
    result = plan(cluster, tmp_path, master_without_ctr, {"extra_flags": {"v": 3}},
                  kube_scheduler_static_pod_preflight_binary=binary)
    assert result["failed"] and result["msg"] == "nothing was changed: " + COULD_NOT_CHECK + said


def test_through_ctr_an_image_the_runtime_cannot_run_is_ctrs_failure_not_a_refusal(cluster, tmp_path):
    m1 = cluster.masters[0]
    manifest = cluster.real.node_exec(m1, "sha256sum", MANIFEST)
    result = plan(cluster, tmp_path, m1, {"image": "registry.k8s.io/pause:3.10"})
    assert result["failed"] and "would be refused" not in result["msg"]
    assert result["msg"].startswith("nothing was changed: " + COULD_NOT_CHECK + "the preflight could not run the image "
                                    "through ctr: ctr: "), result["msg"]
    assert "executable file not found" in result["msg"] and result["msg"].endswith("(exit status 1)")
    assert cluster.real.node_exec(m1, "sha256sum", MANIFEST) == manifest
