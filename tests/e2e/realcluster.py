"""A real test cluster for pytest: podman hosts brought up by the same playbooks as the Molecule scenarios and the
demo (extensions/molecule/resources/prepare.yml and nodes.yml).

One host runs etcd, kube-apiserver and kube-controller-manager of the scheduler's minor or one newer (Kubernetes'
skew policy); two masters and a worker are real nodes (containerd, the real kubelet of the control plane's minor,
kubeadm's kubelet layout, tests/realnode/README.md). The masters run kubeadm's own kube-scheduler static pod of
the scheduler's minor, as after `kubeadm init`, and carry kubeadm's control-plane label and taint; the worker takes
ordinary pods. The controller reaches the API server on the podman network.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from kubernetes import client

REPO = Path(__file__).resolve().parents[2]
# The test control plane's helpers (tests/controlplane/cluster.py: wait_for, ...) for every suite that imports this.
sys.path.insert(0, str(REPO / "tests" / "controlplane"))
RESOURCES = REPO / "extensions" / "molecule" / "resources"
HOST_IMAGE = "localhost/kubesched-test-host:bookworm"
NODE_IMAGE = "localhost/kubesched-node:bookworm"
# tests/realnode/README.md: privileged, a cgroup namespace of its own, containerd's store off the overlay root.
NODE_OPTIONS = ["--privileged", "--cgroupns=private", "--tmpfs", "/var/lib/containerd:rw,exec"]


def podman(*args, check=True) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check)


def network_of(name: str) -> str:
    return "ks-%s" % name


def remove(name: str) -> None:
    """Remove the hosts and the network of the cluster ``name``, whatever is left of it (its hosts carry the label
    kubesched.test=<name>). From the shell: python tests/e2e/realcluster.py remove NAME (make test: run-test.sh)."""
    hosts = podman("ps", "--all", "--quiet", "--filter", "label=kubesched.test=%s" % name).stdout.split()
    if hosts:
        podman("rm", "--force", "--time", "2", *hosts, check=False)
    podman("network", "rm", "--force", network_of(name), check=False)


def scheduler_version(binary: str) -> str:
    """'1.35.4' from `kube-scheduler --version`."""
    answer = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout
    return re.search(r"v(\d+\.\d+\.\d+)", answer).group(1)


def link_localhost_vars(inventory_dir: Path) -> None:
    """host_vars/localhost.yml beside an inventory: the Molecule scenarios' (RESOURCES/vars/localhost.yml)."""
    link = inventory_dir / "host_vars" / "localhost.yml"
    link.parent.mkdir(exist_ok=True)
    if not link.exists():
        link.symlink_to(RESOURCES / "vars" / "localhost.yml")


class RealCluster:
    """``name`` prefixes the hosts and the network (ks-<name>-api, -m1, -m2, -w1), so suites run side by side.
    ``masters`` and ``workers`` count the node hosts (the e2e suite: two and one; benchmarks/lease_gaps.py: three
    and none)."""

    def __init__(self, name: str, scheduler_binary: str, directory: Path, masters: int = 2, workers: int = 1):
        self.name, self.directory = name, directory
        self.scheduler_binary = scheduler_binary
        self.version = scheduler_version(scheduler_binary)
        self.minor = self.version.rsplit(".", 1)[0]
        self.network = network_of(name)
        self.api_host = "ks-%s-api" % name
        self.masters = ["ks-%s-m%d" % (name, index) for index in range(1, masters + 1)]
        self.workers = ["ks-%s-w%d" % (name, index) for index in range(1, workers + 1)]
        self.facts: dict = {}

    @property
    def hosts(self):
        return [self.api_host] + self.masters + self.workers

    @property
    def admin_kubeconfig(self) -> Path:
        return Path(self.facts["admin_kubeconfig"])

    @property
    def scheduler_kubeconfig(self) -> Path:
        return Path(self.facts["scheduler_kubeconfig"])

    def api(self):
        from kubernetes import config  # pylint: disable=import-outside-toplevel
        return config.new_client_from_config(config_file=str(self.admin_kubeconfig))

    def environment(self) -> dict:
        """What the shared playbooks read: the Molecule variables a scenario has, and the scheduler binary."""
        return dict(os.environ, MOLECULE_EPHEMERAL_DIRECTORY=str(self.directory), MOLECULE_PROJECT_DIRECTORY=str(REPO),
                    MOLECULE_SCENARIO_NAME=self.name, MOLECULE_KUBE_MINOR=self.minor,
                    **{"KUBE_SCHEDULER_BIN_" + self.minor.replace(".", "_"): self.scheduler_binary},
                    ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", ANSIBLE_HOST_KEY_CHECKING="False",
                    ANSIBLE_RETRY_FILES_ENABLED="False")

    def inventory(self) -> Path:
        path = self.directory / "inventory" / "hosts.yml"
        path.parent.mkdir(parents=True, exist_ok=True)
        group_vars = path.parent / "group_vars"
        group_vars.mkdir(exist_ok=True)
        link = group_vars / "all.yml"
        if not link.exists():
            link.symlink_to(RESOURCES / "vars" / "test-cluster.yml")
        # The masters' plays delegate their API calls to Ansible's implicit localhost, which takes host_vars.
        link_localhost_vars(path.parent)
        path.write_text(yaml.safe_dump({"all": {
            # tests/hosts/connection_plugins/podman_pipelined.py: podman exec with the module on stdin.
            "vars": {"ansible_connection": "podman_pipelined", "ansible_pipelining": True,
                     "ansible_python_interpreter": "/usr/bin/python3"},
            "children": {
                "test_control_plane": {"hosts": {self.api_host: None}},
                "kube_control_plane": {"hosts": {host: None for host in self.masters},
                                       "vars": {"molecule_real_nodes": True}},
                "test_nodes": {"hosts": {host: None for host in self.masters + self.workers}},
            }}}))
        return path

    def up(self) -> "RealCluster":
        self.down()
        podman("network", "create", self.network)
        for host in self.hosts:
            image, options = (HOST_IMAGE, []) if host == self.api_host else (NODE_IMAGE, NODE_OPTIONS)
            podman("run", "--detach", "--name", host, "--hostname", host, "--network", self.network,
                   "--systemd=always", "--label", "kubesched.test=%s" % self.name, *options, image)
        log = self.directory / "prepare.log"
        with open(log, "w", encoding="utf-8") as handle:
            run = subprocess.run([str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(self.inventory()),
                                  str(RESOURCES / "prepare.yml"), str(RESOURCES / "nodes.yml")],
                                 stdout=handle, stderr=subprocess.STDOUT, env=self.environment(), cwd=REPO, check=False)
        if run.returncode != 0:
            raise AssertionError("the test cluster did not come up (exit %d):\n%s"
                                 % (run.returncode, log.read_text()[-8000:]))
        self.facts = json.loads((self.directory / "control-plane" / "facts.json").read_text())
        return self

    def down(self) -> None:
        remove(self.name)

    def node_exec(self, host: str, *argv: str) -> str:
        return podman("exec", host, *argv).stdout


class Cluster:  # pylint: disable=too-few-public-methods
    """The real cluster plus a playbook runner."""

    def __init__(self, real: RealCluster):
        self.real = real
        self.version, self.minor = real.version, real.minor
        self.directory = real.directory
        self.admin_kubeconfig = real.admin_kubeconfig
        self.masters, self.workers = real.masters, real.workers

    def api(self):
        return self.real.api()

    def localhost_inventory(self) -> Path:
        """An inventory of localhost alone, with the scenarios' localhost variables (its Python): the deployment and
        verify roles run there."""
        inventory = self.directory / "localhost.yml"
        inventory.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": {"ansible_connection": "local"}}}}))
        link_localhost_vars(self.directory)
        return inventory

    def deployment_vars(self, name: str, namespace: str, **overrides) -> dict:
        """playbooks/deployment.yml's variables for an in-cluster scheduler NAME of this cluster's minor, waiting for
        its pods; OVERRIDES win."""
        return dict({
            "kube_scheduler_version": self.version,
            "kube_scheduler_deployment_name": name,
            "kube_scheduler_deployment_namespace": namespace,
            "kube_scheduler_deployment_wait": True,
            "kube_scheduler_deployment_k8s_kubeconfig": str(self.admin_kubeconfig),
        }, **overrides)

    def ready_pods(self, namespace: str, selector: str) -> dict:
        """The pods of SELECTOR in NAMESPACE that are Running and Ready, by name."""
        pods = client.CoreV1Api(self.api()).list_namespaced_pod(namespace, label_selector=selector).items
        return {pod.metadata.name: pod for pod in pods if pod.status.phase == "Running" and any(
            c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])}

    def playbook(self, playbook: str, extra_vars: dict, check: bool = True, options: tuple = (),
                 masters: bool = False) -> subprocess.CompletedProcess:
        """Run one of this collection's playbooks: against localhost only, or with the cluster's masters too."""
        inventory = self.real.inventory() if masters else self.localhost_inventory()
        variables = self.directory / "extra-vars.json"
        variables.write_text(json.dumps(extra_vars))
        run = subprocess.run(
            [str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(inventory), "-e", "@%s" % variables,
             *options, playbook],
            capture_output=True, text=True, cwd=REPO, check=False,
            env=dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0"))
        if check:
            assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
        return run


def changed_count(run: subprocess.CompletedProcess) -> int:
    return sum(int(count) for count in re.findall(r"^\S+\s+: ok=\d+\s+changed=(\d+)", run.stdout, re.M))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "remove":
        sys.exit("usage: realcluster.py remove NAME")
    remove(sys.argv[2])
