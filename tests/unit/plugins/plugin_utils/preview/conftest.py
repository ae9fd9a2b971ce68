"""The real binaries the preview's tests run (`make binaries` names them: tests/support/k8s_binaries.py): the newest
minor with both a kube-apiserver and a kube-scheduler, and Debian's etcd."""
from __future__ import annotations

import os
import shutil

import pytest

MINORS = ("1.37", "1.35")


def real_binaries():
    """(minor, {component: path}) or (None, the variables missing)."""
    etcd = os.environ.get("ETCD_BIN") or shutil.which("etcd")
    for minor in MINORS:
        suffix = minor.replace(".", "_")
        found = {"etcd": etcd, "kube-apiserver": os.environ.get("KUBE_APISERVER_BIN_" + suffix),
                 "kube-scheduler": os.environ.get("KUBE_SCHEDULER_BIN_" + suffix)}
        if all(path and os.access(path, os.X_OK) for path in found.values()):
            return minor, found
    return None, "ETCD_BIN and KUBE_APISERVER_BIN_1_<minor>, KUBE_SCHEDULER_BIN_1_<minor> of one minor (make binaries)"


@pytest.fixture(scope="session")
def binaries():
    minor, found = real_binaries()
    if minor is None:
        pytest.skip("no real binaries: " + found)
    return minor, found
