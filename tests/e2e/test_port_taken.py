"""The plan's port check on a real master (kubelet, containerd, crictl, the kernel's /proc): an unrelated process
listening on the port kubeadm's manifest names is refused, naming it, where the manifest alone once made the plan
say "pending, preflight accepted". The instance's own pod on that port passes: every plan of test_preflight_answers.py
changes the running default scheduler, whose port its own pod holds.

Afterwards m1 runs kubeadm's kube-scheduler again, from the same manifest, listening on its port.
"""
from __future__ import annotations

import re

from cluster import wait_for  # tests/controlplane (realcluster.py puts it on sys.path)
from test_preflight_answers import MANIFEST, plan

ASIDE = "/root/kube-scheduler.yaml.aside"


def listening(real, master):
    """ss's line for the default scheduler's secure port ("" when nothing listens)."""
    return real.node_exec(master, "ss", "-Hltnp", "sport = :10259").strip()


def test_an_unrelated_process_on_the_port_the_manifest_names_is_refused_naming_it(cluster, tmp_path):
    real, m1 = cluster.real, cluster.masters[0]
    manifest = real.node_exec(m1, "sha256sum", MANIFEST)
    real.node_exec(m1, "mv", MANIFEST, ASIDE)
    foreign = None
    try:
        wait_for("m1's kube-scheduler to stop", lambda: not listening(real, m1), timeout=120)
        foreign = real.node_exec(m1, "sh", "-c", "setsid python3 -m http.server 10259 --bind 127.0.0.1 "
                                 ">/dev/null 2>&1 </dev/null & echo $!").strip()
        wait_for("the unrelated process to listen", lambda: "python" in listening(real, m1), timeout=30)
        real.node_exec(m1, "mv", ASIDE, MANIFEST)  # kubeadm's manifest names 10259; its pod cannot bind it
        result = plan(cluster, tmp_path, m1, {"extra_flags": {"v": 3}})
    finally:
        if foreign:
            real.node_exec(m1, "kill", foreign)
        real.node_exec(m1, "sh", "-c", "test -e %s || mv %s %s" % (MANIFEST, ASIDE, MANIFEST))
    assert result.get("failed"), result  # the plan once said: pending, preflight accepted
    assert re.search(r"kube-scheduler: secure port 10259 is taken on this master by process %s \(python3[^)]*\), not "
                     r"by the kube-scheduler this change replaces \((that process runs in no container|its pod "
                     r"kube-system/kube-scheduler-\S+ runs [^)]+)\): kube-scheduler would exit at start" % foreign,
                     result["msg"]), result["msg"]
    assert "would be refused" not in result["msg"] and "stop that process" in result["msg"]
    assert real.node_exec(m1, "sha256sum", MANIFEST) == manifest
    # The kubelet restarts the pod that could not bind once its crash-loop back-off ends, which grows up to five
    # minutes while the plan runs (make test waited 340 s here, nothing else left to run): a restarted kubelet forgets
    # the back-off and starts kubeadm's pod at once, from the same manifest.
    real.node_exec(m1, "systemctl", "restart", "kubelet")
    wait_for("m1's kube-scheduler to listen again", lambda: "kube-scheduler" in listening(real, m1), timeout=300,
             interval=2)
