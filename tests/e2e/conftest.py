"""Fixtures of the end-to-end test: a real cluster (realcluster.py: a control plane of the scheduler's minor or one
newer, two kubeadm-like masters and a worker with real kubelets) and a runner for this collection's playbooks
against it, as an operator runs them: from the controller, with the admin kubeconfig, the masters over podman."""
from __future__ import annotations

import os

import pytest

from realcluster import Cluster, RealCluster, scheduler_version

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
