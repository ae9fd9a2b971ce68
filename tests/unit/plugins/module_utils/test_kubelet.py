"""The kubelet whose arguments name the static pod directory is this host's: a kubelet process in another mount
namespace (a node container on the same host, as the real-node tests run) is not, and a kubelet process of this
mount namespace is. Real processes named kubelet, one started in a mount namespace of its own (unshare)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils import _kubelet

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                                reason="a mount namespace of its own needs root and unshare")


def start_kubelet(tmp_path, *prefix):
    """A process whose argv[0] is kubelet (Python, which leaves the arguments after its -c program unparsed), with a
    flag only this test gives."""
    flag = "--pod-manifest-path=%s" % (tmp_path / "manifests")
    process = subprocess.Popen([*prefix, "bash", "-c", 'exec -a kubelet "$0" -c "import time; time.sleep(300)" "$1"',
                                sys.executable, flag], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail("the stand-in kubelet process ended at once")
        try:
            with open("/proc/%d/cmdline" % process.pid, "rb") as handle:
                # Once it is the kubelet (unshare's own arguments carry the flag before it made the namespace).
                if handle.read().startswith(b"kubelet\0"):
                    return process, flag
        except OSError:
            pass
        time.sleep(0.05)
    process.kill()
    pytest.fail("the stand-in kubelet process never showed its arguments")


def own_flags(flag):
    args = _kubelet.running_kubelet_args()
    return args is not None and flag in args


def test_a_kubelet_in_another_mount_namespace_is_not_this_hosts(tmp_path):
    process, flag = start_kubelet(tmp_path, "unshare", "--mount", "--propagation", "private")
    try:
        assert os.readlink("/proc/%d/ns/mnt" % process.pid) != os.readlink("/proc/self/ns/mnt")
        assert not own_flags(flag)
    finally:
        process.kill()
        process.wait()


def test_a_kubelet_of_this_mount_namespace_is_found(tmp_path):
    process, flag = start_kubelet(tmp_path)
    try:
        assert own_flags(flag)
    finally:
        process.kill()
        process.wait()
