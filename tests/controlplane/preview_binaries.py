"""The real binaries a placement preview's tests run (`make binaries` names them, tests/support/k8s_binaries.py):
a kube-apiserver and a kube-scheduler of one minor, and Debian's etcd."""
from __future__ import annotations

import os
import shutil

# 1.35 first: the minor of local_apiserver.py's API server, which the fidelity test's "cluster" runs.
MINORS = ("1.35", "1.37")


def real_binaries(minors=MINORS):
    """(minor, {component: path}) of the first minor with all three, or (None, what is missing)."""
    etcd = os.environ.get("ETCD_BIN") or shutil.which("etcd")
    for minor in minors:
        suffix = minor.replace(".", "_")
        found = {"etcd": etcd, "kube-apiserver": os.environ.get("KUBE_APISERVER_BIN_" + suffix),
                 "kube-scheduler": os.environ.get("KUBE_SCHEDULER_BIN_" + suffix)}
        if all(path and os.access(path, os.X_OK) for path in found.values()):
            return minor, found
    return None, ("ETCD_BIN, and KUBE_APISERVER_BIN_1_<minor> with KUBE_SCHEDULER_BIN_1_<minor> of one of %s "
                  "(make binaries)" % ", ".join(minors))
