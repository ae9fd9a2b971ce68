"""The throwaway control plane on real etcd and kube-apiserver: it serves on loopback with its own CA, admits a Node
with exactly the taints it is given, and leaves no process and no directory behind when it ends normally, on an
exception, on SIGTERM, or when its parent is killed."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._control_plane import (
    PREFIX, ControlPlane, remove_leftovers)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._http import ApiError
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._load import (
    Writer, check_taints, load_cluster)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._pki import write_pki


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie is gone too: only its parent may reap it.
    with open("/proc/%d/stat" % pid, encoding="utf-8") as handle:
        return handle.read().split(") ", 1)[1].startswith("Z")


def test_it_serves_on_loopback_keeps_taints_as_given_and_leaves_nothing(binaries, tmp_path):
    _minor, paths = binaries
    node = {"metadata": {"name": "n1", "labels": {"a": "b"}},
            "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"cpu": "2", "memory": "1Gi", "pods": "10"},
                       "capacity": {"cpu": "2", "memory": "1Gi", "pods": "10"},
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "",
                                       "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                                       "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
    bare = {"metadata": {"name": "n2"}, "status": node["status"]}
    with ControlPlane(paths, parent=str(tmp_path)) as plane:
        directory = Path(plane.directory)
        pids = [process.pid for process in plane.processes]
        assert plane.url.startswith("https://127.0.0.1:")
        writer = Writer(plane.client())
        load_cluster(writer, {"namespaces": [{"metadata": {"name": "apps", "labels": {"team": "x"}}}],
                              "priority_classes": [{"metadata": {"name": "high"}, "value": 1000}],
                              "nodes": [node, bare]})
        loaded = dict((item["metadata"]["name"], item) for item in writer.request("GET", "/api/v1/nodes")["items"])
        # No node.kubernetes.io/not-ready taint: the admission that adds it is off, and the check says so.
        assert loaded["n1"]["spec"]["taints"] == node["spec"]["taints"]
        assert "taints" not in loaded["n2"]["spec"]
        assert loaded["n1"]["status"]["allocatable"]["cpu"] == "2"
        assert writer.request("GET", "/api/v1/namespaces/apps")["metadata"]["labels"]["team"] == "x"
        assert writer.request("GET", "/apis/scheduling.k8s.io/v1/priorityclasses/high")["value"] == 1000
        writer.request("PATCH", "/api/v1/nodes/n2", {"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}},
                       content_type="application/merge-patch+json")
        with pytest.raises(Exception, match="nodes whose taints differ from the cluster's after the load: n2"):
            check_taints(writer, {"nodes": [node, bare]})
        # Its own requests trust its own CA alone and authenticate with the preview's client certificate (reading a
        # node needs a user); a server its CA did not sign is an OSError, which the wait for readiness retries.
        assert plane._get(plane.url + "/readyz", raw=True) == "ok"  # pylint: disable=protected-access
        node_read = plane._get(plane.url + "/api/v1/nodes/n1")  # pylint: disable=protected-access
        assert node_read["metadata"]["name"] == "n1"
        # The preview's and kube-scheduler's requests carry a bearer token of this control plane, no client
        # certificate (kube-apiserver verifies a certificate's signature on every request); another token is refused.
        assert writer.api.configuration.cert_file is None and "client-key" not in Path(
            plane.scheduler_kubeconfig).read_text()
        assert oct(os.stat(plane.tokens["file"]).st_mode & 0o777) == "0o600"
        assert oct(os.stat(plane.scheduler_kubeconfig).st_mode & 0o777) == "0o600"
        stranger = plane.client()
        stranger.configuration.api_key = {"authorization": "0" * 64}
        with pytest.raises(ApiError, match="HTTP 401"):
            stranger.request("GET", "/api/v1/nodes/n1")
        with tempfile.TemporaryDirectory() as other:
            stranger = SimpleNamespace(pki=dict(plane.pki, ca=write_pki(other)["ca"]))
            with pytest.raises(OSError, match="CERTIFICATE_VERIFY_FAILED"):
                ControlPlane._get(stranger, plane.url + "/readyz", raw=True)  # pylint: disable=protected-access
    assert all(_gone(pid) for pid in pids)
    assert not directory.exists()
    assert list(tmp_path.iterdir()) == []


# A preview run from a terminal: Ctrl-C reaches it as SIGINT, which Python turns into KeyboardInterrupt. A background
# job of a non-interactive shell (make test's chains) starts with SIGINT ignored, and Python keeps it ignored: the
# child puts Python's own handler back, as a foreground process has it.
CHILD = textwrap.dedent("""
    import json, signal, sys, time
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._control_plane import ControlPlane
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with ControlPlane(json.loads(sys.argv[1]), parent=sys.argv[2]) as plane:
        print(json.dumps({"pids": [p.pid for p in plane.processes], "directory": plane.directory}), flush=True)
        time.sleep(600)
""")


def _child(paths, parent):
    process = subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(paths), str(parent)],  # pylint: disable=consider-using-with
                               stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    started = json.loads(process.stdout.readline())
    return process, started


def _wait_gone(pids, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not all(_gone(pid) for pid in pids):
        time.sleep(0.2)
    return all(_gone(pid) for pid in pids)


# SIGTERM in make test (the engine's own handler); Ctrl-C's SIGINT, Python's KeyboardInterrupt, in make preview-tests.
@pytest.mark.parametrize("number", [signal.SIGTERM, pytest.param(signal.SIGINT, marks=pytest.mark.slow_preview)])
def test_an_interrupted_preview_leaves_no_process_and_no_directory(binaries, tmp_path, number):
    _minor, paths = binaries
    process, started = _child(paths, tmp_path)
    assert Path(started["directory"]).is_dir()
    process.send_signal(number)
    assert process.wait(timeout=60) != 0
    assert _wait_gone(started["pids"])
    assert not Path(started["directory"]).exists()


def test_a_killed_preview_takes_its_processes_with_it_and_the_next_one_removes_its_directory(binaries, tmp_path):
    _minor, paths = binaries
    process, started = _child(paths, tmp_path)
    process.kill()
    process.wait(timeout=30)
    assert _wait_gone(started["pids"])
    assert Path(started["directory"]).is_dir()  # SIGKILL runs no cleanup ...
    assert remove_leftovers(str(tmp_path)) == [started["directory"]]  # ... the next preview's start does
    assert list(tmp_path.iterdir()) == []


def test_a_leftover_of_a_live_process_is_not_touched(tmp_path):
    mine = tempfile.mkdtemp(prefix="%s%d-" % (PREFIX, os.getpid()), dir=tmp_path)
    assert remove_leftovers(str(tmp_path)) == []
    assert Path(mine).is_dir()
