"""The scheduler-plugins end-to-end test's cluster: a control plane, one master and one worker of Kubernetes 1.35
(kube-apiserver, kube-controller-manager, kubelet and kube-proxy v1.35.8) for scheduler-plugins 0.34.7, whose
scheduler is built on Kubernetes 1.34.7: one minor older than its API server, as Kubernetes' skew policy allows. Its
scheduler and controller binaries, built by the project from the release's Go module, are imported into the nodes'
containerd as the images the release publishes (tests/realnode/images.sh IMAGE=BINARY)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from realcluster import Cluster, RealCluster  # noqa: E402  pylint: disable=wrong-import-position

RELEASE = "0.34.7"
IMAGES = {"scheduler": "registry.k8s.io/scheduler-plugins/kube-scheduler:v" + RELEASE,
          "controller": "registry.k8s.io/scheduler-plugins/controller:v" + RELEASE}
NEEDS = {"scheduler": "SCHEDULER_PLUGINS_SCHEDULER_BIN_0_34_7", "controller": "SCHEDULER_PLUGINS_CONTROLLER_BIN_0_34_7",
         "cluster": "KUBE_SCHEDULER_BIN_1_35"}


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    missing = [name for name in list(NEEDS.values()) + ["KUBE_APISERVER_BIN_1_35", "KUBELET_BIN_1_35", "ETCD_BIN"]
               if not os.access(os.environ.get(name, ""), os.X_OK)]
    if missing:
        pytest.skip("scheduler-plugins e2e needs real binaries (make binaries): missing " + ", ".join(missing))
    os.environ["TEST_CONTROL_PLANE_MINOR"] = "1.35"
    os.environ["TEST_NODE_EXTRA_IMAGES"] = " ".join(
        "%s=%s" % (IMAGES[part], os.environ[NEEDS[part]]) for part in ("scheduler", "controller"))
    # The cluster's own default scheduler (kubeadm's static pod on the master) is kube-scheduler 1.35.
    real = RealCluster("e2esp", os.environ[NEEDS["cluster"]], tmp_path_factory.mktemp("e2esp"), masters=1, workers=1)
    try:
        yield Cluster(real.up())
    finally:
        if os.environ.get("E2E_KEEP") != "1":
            real.down()
