"""Fixtures of the end-to-end test: a real cluster (realcluster.py: a control plane of the scheduler's minor or one
newer, two kubeadm-like masters and a worker with real kubelets) and a runner for this collection's playbooks
against it, as an operator runs them: from the controller, with the admin kubeconfig, the masters over podman."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from realcluster import REPO, RealCluster, scheduler_version

NEEDS = ("KUBE_SCHEDULER_BIN", "ETCD_BIN")


def require_binaries() -> None:
    """Skip the calling test module, loudly, without the binaries (`make e2e` skips a minor before it gets here;
    the shared playbooks name the control plane's own binaries when one is missing)."""
    missing = [name for name in NEEDS if not os.access(os.environ.get(name, ""), os.X_OK)]
    if missing:
        pytest.skip("end-to-end test needs real binaries (make binaries): missing " + ", ".join(missing),
                    allow_module_level=True)


def pytest_report_header():
    path = os.environ.get("KUBE_SCHEDULER_BIN", "")
    return ["e2e KUBE_SCHEDULER_BIN=%s" % (path or "not set")]


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

    def playbook(self, playbook: str, extra_vars: dict, check: bool = True, options: tuple = (),
                 masters: bool = False) -> subprocess.CompletedProcess:
        """Run one of this collection's playbooks: against localhost only, or with the cluster's masters too."""
        if masters:
            inventory = self.real.inventory()
        else:
            inventory = self.directory / "localhost.yml"
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
    return sum(int(count) for count in re.findall(r"^\S+\s+: ok=\d+\s+changed=(\d+)", run.stdout, re.M))


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    require_binaries()
    binary = os.environ["KUBE_SCHEDULER_BIN"]
    # One cluster per minor (ks-e2e30-api, ...), so two minors may run side by side.
    name = "e2e" + scheduler_version(binary).split(".")[1]
    real = RealCluster(name, binary, tmp_path_factory.mktemp("e2e"))
    try:
        yield Cluster(real.up())
    finally:
        if os.environ.get("E2E_KEEP") != "1":
            real.down()
