"""Fixtures of the end-to-end test: a control plane on loopback (etcd, kube-apiserver) with three API-registered
Nodes, and a runner for this collection's playbooks against it."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cluster import (Certificates, Processes, binaries, missing_binaries, register_nodes, start_control_plane,
                     write_kubeconfig)

REPO = Path(__file__).resolve().parents[2]

BINARIES = binaries()
MISSING_REASON = ("end-to-end test needs real binaries: set KUBE_APISERVER_BIN (of the scheduler's minor or one newer), "
                  "ETCD_BIN and KUBE_SCHEDULER_BIN (`make e2e` does, from `make binaries`; Debian's etcd-server gives "
                  "/usr/bin/etcd); missing: ")


def require_binaries() -> None:
    """Skip the calling test module, loudly, without the binaries (`make e2e` skips a minor before it gets here)."""
    if not BINARIES:
        pytest.skip(MISSING_REASON + ", ".join(missing_binaries()), allow_module_level=True)


def pytest_report_header():
    """Which binaries this run used, and what each says it is."""
    lines = []
    for name in ("KUBE_SCHEDULER_BIN", "KUBE_APISERVER_BIN", "ETCD_BIN"):
        path = os.environ.get(name, "")
        version = ""
        if path and os.access(path, os.X_OK):
            answer = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
            version = (answer.stdout or answer.stderr).strip().partition("\n")[0]
        lines.append("e2e %s=%s (%s)" % (name, path or "not set", version or "no version"))
    return lines


class Cluster:  # pylint: disable=too-few-public-methods
    def __init__(self, directory: Path, processes: Processes, control_plane: tuple[str, Path], certs: Certificates,
                 version: str):
        self.directory, self.processes, self.certs, self.version = directory, processes, certs, version
        self.server, self.admin_kubeconfig = control_plane
        self.minor = int(version.split(".")[1])
        # kubeadm's scheduler.conf identity: the built-in RBAC binds system:kube-scheduler to this user.
        self.scheduler_kubeconfig = self._client_kubeconfig("scheduler", "system:kube-scheduler")

    def _client_kubeconfig(self, name, user, group=None):
        cert, key = self.certs.issue(name, user, group)
        return write_kubeconfig(self.directory / (name + ".conf"), self.server, self.certs.ca_file,
                                {"client-certificate": str(cert), "client-key": str(key)})

    def api(self):
        from kubernetes import config  # pylint: disable=import-outside-toplevel
        return config.new_client_from_config(config_file=str(self.admin_kubeconfig))

    def playbook(self, playbook: str, extra_vars: dict, check: bool = True,
                 options: tuple = ()) -> subprocess.CompletedProcess:
        """Run one of this collection's playbooks with localhost as the only (local) host."""
        inventory = self.directory / "inventory.yml"
        inventory.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": {
            "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}))
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
    return int(re.search(r"localhost\s+: ok=\d+\s+changed=(\d+)", run.stdout).group(1))


def binary_version() -> str:
    """'1.34.2' from `kube-scheduler --version` ('Kubernetes v1.34.2')."""
    text = subprocess.run([BINARIES["KUBE_SCHEDULER_BIN"], "--version"], capture_output=True, text=True,
                          check=True).stdout
    return re.search(r"v(\d+\.\d+\.\d+)", text).group(1)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    directory = tmp_path_factory.mktemp("e2e")
    processes = Processes(directory)
    certs = Certificates(directory)
    try:
        result = Cluster(directory, processes, start_control_plane(directory, processes, certs, BINARIES), certs,
                         binary_version())
        register_nodes(result.api(), ["node-%d" % index for index in range(1, 4)])
        yield result
    finally:
        processes.stop_all()
