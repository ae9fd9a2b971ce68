"""A full disk in the middle of a rollout, on a real master (m2: real kubelet and containerd).

An instance of its own (its config directory a 256 KiB tmpfs, its manifest in the kubelet's directory) runs on m2;
the tmpfs is filled to its last byte and playbooks/static_pod.yml changes the instance's config. The change fails
naming the file it could not write, the master and the mount, and is rolled back: the config and the manifest are
as they were, no temp file is left, the running process is the one from before. With room again the next run
converges and the one after changes nothing. kubeadm's scheduler on m2 is not touched (another instance).
"""
from __future__ import annotations

from cluster import wait_for  # tests/controlplane (realcluster.py puts it on sys.path)
from realcluster import changed_count

DISK = "/etc/kubesched-full"
PORT = 10300
CONFIG = DISK + "/full-disk.yaml"
MANIFEST = "/etc/kubernetes/manifests/full-disk.yaml"


def run(cluster, master, score, state="present"):
    return cluster.playbook("playbooks/static_pod.yml", {
        "kube_scheduler_version": cluster.version, "kube_scheduler_config_dir": DISK,
        "kube_scheduler_instances": [{"name": "full-disk", "secure_port": PORT, "state": state, "config": {
            "percentageOfNodesToScore": score, "leaderElection": {"leaderElect": False},
            "profiles": [{"schedulerName": "full-disk"}]}}]},
        masters=True, check=False, options=("--limit", master))


def listener(real, master):
    return real.node_exec(master, "ss", "-Hltnp", "sport = :%d" % PORT).strip()


def test_a_full_config_disk_is_named_and_rolled_back_and_the_next_run_converges(cluster):
    real, m2 = cluster.real, cluster.masters[1]
    real.node_exec(m2, "mkdir", "-p", DISK)
    real.node_exec(m2, "mount", "-t", "tmpfs", "-o", "size=256k,mode=0755", "kubesched-full", DISK)
    try:
        first = run(cluster, m2, 50)
        assert first.returncode == 0, first.stdout[-6000:]
        wait_for("full-disk to listen on m2", lambda: listener(real, m2), timeout=60)
        before = {path: real.node_exec(m2, "sha256sum", path) for path in (CONFIG, MANIFEST)}
        process = listener(real, m2)

        real.node_exec(m2, "sh", "-c", "dd if=/dev/zero of=%s/.filler bs=4k 2>/dev/null; true" % DISK)
        failed = run(cluster, m2, 60)
        assert failed.returncode != 0
        assert ("could not write %s on %s: No space left on device (ENOSPC): the file system mounted at %s is full"
                % (CONFIG, m2, DISK)) in failed.stdout, failed.stdout[-6000:]
        assert "Restored: " in failed.stdout and "NOT restored" not in failed.stdout
        assert {path: real.node_exec(m2, "sha256sum", path) for path in (CONFIG, MANIFEST)} == before
        assert ".kubesched-tmp." not in real.node_exec(m2, "ls", "-a", DISK, "/etc/kubernetes/manifests")
        assert listener(real, m2) == process  # the kubelet never saw another manifest

        real.node_exec(m2, "rm", "-f", DISK + "/.filler")
        again = run(cluster, m2, 60)
        assert again.returncode == 0 and changed_count(again) > 0, again.stdout[-6000:]
        assert "percentageOfNodesToScore: 60" in real.node_exec(m2, "cat", CONFIG)
        settled = run(cluster, m2, 60)
        assert settled.returncode == 0 and changed_count(settled) == 0, settled.stdout[-6000:]
    finally:
        real.node_exec(m2, "rm", "-f", DISK + "/.filler")
        run(cluster, m2, 60, state="absent")
        real.node_exec(m2, "umount", "--lazy", DISK)
    wait_for("full-disk to stop on m2", lambda: not listener(real, m2), timeout=60)
