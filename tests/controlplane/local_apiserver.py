"""A real etcd and kube-apiserver as two local processes on loopback (no podman, no kubelet): for tests that only
need the API server's own answer, such as server-side dry runs of the objects the roles render. PKI and flags are
the shared ones of cluster.py (kubeadm's RBAC authorization and admission defaults); every file lives in a
directory of the caller's, and both processes are stopped by their own pids on exit."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import yaml

from cluster import Certificates, apiserver_argv, bootstrap_policy_served, free_port, wait_for

# What `make binaries` names (tests/support/k8s_binaries.py): the API server of the newest tested minor, Debian's etcd.
APISERVER_VARIABLE = "KUBE_APISERVER_BIN_1_35"
ETCD_VARIABLE = "ETCD_BIN"


def missing_binaries() -> list[str]:
    """The variables whose binary is missing (empty when both are there)."""
    return [name for name in (APISERVER_VARIABLE, ETCD_VARIABLE) if not os.access(os.environ.get(name, ""), os.X_OK)]


class LocalApiServer:
    """``with LocalApiServer(directory) as api: api.client`` (a kubernetes ApiClient as system:masters)."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.processes: list[subprocess.Popen] = []
        self.client = None
        self.certs = None
        self.url = None
        self.kubeconfig = directory / "admin.conf"
        self.certs = None  # the cluster's CA, to issue client certificates of other identities

    def _start(self, name: str, argv: list[str]) -> None:
        log = (self.directory / (name + ".log")).open("wb")
        self.processes.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT))  # pylint: disable=consider-using-with

    def __enter__(self) -> "LocalApiServer":
        from kubernetes import client, config  # pylint: disable=import-outside-toplevel
        pki = self.directory / "pki"
        pki.mkdir(parents=True, exist_ok=True)
        certs = self.certs = Certificates(pki)
        serving = certs.issue("apiserver", "kube-apiserver", server_names=["127.0.0.1", "localhost"])
        admin_cert, admin_key = certs.issue("admin", "kubernetes-admin", "system:masters")
        etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
        etcd_url = "http://127.0.0.1:%d" % etcd_port
        self._start("etcd", [os.environ[ETCD_VARIABLE], "--name=dry-run", "--data-dir=%s" % (self.directory / "etcd"),
                             "--listen-client-urls=" + etcd_url, "--advertise-client-urls=" + etcd_url,
                             "--listen-peer-urls=http://127.0.0.1:%d" % peer_port,
                             "--initial-advertise-peer-urls=http://127.0.0.1:%d" % peer_port,
                             "--initial-cluster=dry-run=http://127.0.0.1:%d" % peer_port,
                             "--unsafe-no-fsync"])
        # Advertised on loopback, the `kubernetes` Service's endpoints would be this machine's 127.0.0.1 to every
        # client: no endpoint reconciler (kube-apiserver v1.37.2 exits on a loopback address with one, "cannot use
        # public IP 127.0.0.1 with endpoint reconciler"; v1.35.4 took it).
        self._start("kube-apiserver", apiserver_argv(os.environ[APISERVER_VARIABLE], certs, serving, etcd_url,
                                                     api_port, pki) + ["--endpoint-reconciler-type=none"])
        self.url = "https://127.0.0.1:%d" % api_port
        self.kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "admin",
            "clusters": [{"name": "local", "cluster": {"server": "https://127.0.0.1:%d" % api_port,
                                                       "certificate-authority": str(certs.ca_file)}}],
            "users": [{"name": "admin", "user": {"client-certificate": str(admin_cert),
                                                 "client-key": str(admin_key)}}],
            "contexts": [{"name": "admin", "context": {"cluster": "local", "user": "admin"}}]}))
        try:
            self.client = config.new_client_from_config(config_file=str(self.kubeconfig))
            wait_for("kube-apiserver to serve its bootstrap policy (log: %s)" % (self.directory / "kube-apiserver.log"),
                     lambda: self._alive() and bootstrap_policy_served(self.client), timeout=120)
            wait_for("the default ServiceAccount admission to be ready",
                     lambda: client.CoreV1Api(self.client).read_namespace("default"), timeout=30)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def namespaces(self, *names: str) -> None:
        """Each namespace (created unless it exists) with its ``default`` ServiceAccount, which the ServiceAccount
        admission needs for pods and which only kube-controller-manager would make (there is none here)."""
        from kubernetes import client  # pylint: disable=import-outside-toplevel
        core = client.CoreV1Api(self.client)
        for name in names:
            try:
                core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
            except client.ApiException as exc:
                if exc.status != 409:
                    raise
            core.create_namespaced_service_account(name, client.V1ServiceAccount(
                metadata=client.V1ObjectMeta(name="default")))

    def ready_nodes(self, labels: dict, resources: dict) -> None:
        """A Node per name of ``labels`` (name: its labels beside kubernetes.io/hostname), Ready with ``resources``
        as capacity and allocatable, and only the taints it is given: the API server's admission gives a new Node
        node.kubernetes.io/not-ready:NoSchedule, which only the node lifecycle controller (none here) takes off."""
        from kubernetes import client  # pylint: disable=import-outside-toplevel
        core = client.CoreV1Api(self.client)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for name, extra in labels.items():
            core.create_node({"metadata": {"name": name, "labels": dict(extra, **{"kubernetes.io/hostname": name})}})
            core.patch_node(name, {"spec": {"taints": None}})
            core.patch_node_status(name, {"status": {"capacity": resources, "allocatable": resources, "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "",
                 "lastHeartbeatTime": now, "lastTransitionTime": now}]}})

    def _alive(self) -> bool:
        for process in self.processes:
            if process.poll() is not None:
                raise AssertionError("%s exited with %s; see %s" % (process.args[0], process.returncode,
                                                                    self.directory))
        return True

    def __exit__(self, *_exc) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.processes.clear()


def refusal(exc) -> str:
    """The API server's own message from a refused request (an ApiException or a dynamic client's error)."""
    body = getattr(exc, "body", None) or str(exc)
    try:
        return json.loads(body).get("message", body)
    except (TypeError, ValueError, AttributeError):
        return str(body)
