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


SCHEDULER_PLUGINS_RELEASE = "0.34.7"
SCHEDULER_PLUGINS_GROUP = "scheduling.x-k8s.io"


def scheduler_plugins_scheduler(release=SCHEDULER_PLUGINS_RELEASE):
    """The path of scheduler-plugins' scheduler of ``release`` (make binaries), or None."""
    path = os.environ.get("SCHEDULER_PLUGINS_SCHEDULER_BIN_" + release.replace(".", "_"))
    return path if path and os.access(path, os.X_OK) else None


def serve_scheduler_plugins_objects(api, repo):
    """Install scheduler-plugins' CRDs (PodGroups, ElasticQuotas: the deployment role's copies) in a LocalApiServer
    and wait until both are served; returns the dynamic resources {kind: resource}."""
    import time  # pylint: disable=import-outside-toplevel
    import yaml  # pylint: disable=import-outside-toplevel
    from kubernetes import dynamic  # pylint: disable=import-outside-toplevel
    crds = dynamic.DynamicClient(api.client).resources.get(api_version="apiextensions.k8s.io/v1",
                                                           kind="CustomResourceDefinition")
    for plural in ("podgroups", "elasticquotas"):
        crds.create(body=yaml.safe_load((repo / "roles" / "deployment" / "files" / "scheduler-plugins" / (
            "%s.%s.yaml" % (plural, SCHEDULER_PLUGINS_GROUP))).read_text()))
    deadline = time.monotonic() + 60
    while True:
        try:  # a client of its own each time: discovery is cached
            objects = dynamic.DynamicClient(api.client)
            return dict((kind, objects.resources.get(api_version=SCHEDULER_PLUGINS_GROUP + "/v1alpha1", kind=kind))
                        for kind in ("PodGroup", "ElasticQuota"))
        except Exception:  # pylint: disable=broad-except  # not served yet
            assert time.monotonic() < deadline, "scheduler-plugins' CRDs were not served"
            time.sleep(0.5)
