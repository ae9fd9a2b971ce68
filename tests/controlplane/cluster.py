"""A throw-away control plane on loopback for the end-to-end test: generated certificates, etcd, kube-apiserver and
kube-scheduler processes, kubeconfigs. Set up as kubeadm would where it matters to the schedulers (client
certificates with the identities kubeadm gives, RBAC authorization, service-account token signing)."""
from __future__ import annotations

import datetime
import ipaddress
import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVICE_CIDR = "10.96.0.0/12"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _pem_key(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


def _name(common_name, organization=None):
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


class Certificates:
    """A CA, the API server's serving certificate and client certificates signed by the CA, plus the
    service-account signing key pair, written to ``directory``."""

    def __init__(self, directory: Path):
        self.directory = directory
        now = datetime.datetime.now(datetime.timezone.utc)
        self._validity = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=1))
        self.ca_key = _key()
        self.ca_cert = (self._builder(_name("kubernetes"), _name("kubernetes"), self.ca_key.public_key())
                        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False),
                                       critical=True)
                        .sign(self.ca_key, hashes.SHA256()))
        self.ca_file = self._write("ca.crt", self.ca_cert.public_bytes(serialization.Encoding.PEM))
        sa_key = _key()
        self.sa_key_file = self._write("sa.key", _pem_key(sa_key))
        self.sa_pub_file = self._write("sa.pub", sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))

    def _builder(self, subject, issuer, public_key):
        return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
                .serial_number(x509.random_serial_number())
                .not_valid_before(self._validity[0]).not_valid_after(self._validity[1]))

    def _write(self, name: str, data: bytes) -> Path:
        path = self.directory / name
        path.write_bytes(data)
        path.chmod(0o600)
        return path

    def issue(self, name: str, common_name: str, organization=None, server_names=()) -> tuple[Path, Path]:
        """Sign a certificate: a serving one when ``server_names`` (DNS names and IPs) are given, else a client one."""
        key = _key()
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server_names else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (self._builder(_name(common_name, organization), self.ca_cert.subject, key.public_key())
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(True, False, True, False, False, False, False, False, False),
                                  critical=True)
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
        if server_names:
            alternative = []
            for entry in server_names:
                try:
                    alternative.append(x509.IPAddress(ipaddress.ip_address(entry)))
                except ValueError:
                    alternative.append(x509.DNSName(entry))
            builder = builder.add_extension(x509.SubjectAlternativeName(alternative), critical=False)
        cert = builder.sign(self.ca_key, hashes.SHA256())
        return (self._write(name + ".crt", cert.public_bytes(serialization.Encoding.PEM)),
                self._write(name + ".key", _pem_key(key)))


def write_kubeconfig(path: Path, server: str, ca_file: Path, user: dict) -> Path:
    """A kubeconfig like kubeadm's admin.conf/scheduler.conf; ``user`` holds client-certificate/-key or token."""
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "e2e",
        "clusters": [{"name": "e2e", "cluster": {"server": server, "certificate-authority": str(ca_file)}}],
        "users": [{"name": "e2e", "user": user}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "e2e"}}],
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


class Processes:
    """Started processes with their logs, stopped (SIGTERM, then SIGKILL) in reverse order."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.started: list[tuple[str, subprocess.Popen]] = []

    def start(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = open(self.directory / (name + ".log"), "wb")  # pylint: disable=consider-using-with
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)  # pylint: disable=consider-using-with
        self.started.append((name, process))
        return process

    def log(self, name: str) -> str:
        text = (self.directory / (name + ".log")).read_text(errors="replace")
        return text[-4000:]

    def stop(self, process: subprocess.Popen) -> None:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def stop_all(self, grace: float = 3) -> None:
        """Everything at once: the control plane is thrown away, and kube-apiserver takes seconds to stop
        gracefully while etcd and the schedulers stop at once."""
        running = [process for _name, process in reversed(self.started) if process.poll() is None]
        for process in running:
            process.terminate()
        deadline = time.monotonic() + grace
        for process in running:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_for(what: str, check, timeout: float = 60, interval: float = 0.5, processes: Processes | None = None):
    """Poll ``check`` until it returns something truthy; fail with ``what`` (and the logs of dead processes)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except Exception as exc:  # pylint: disable=broad-except  # the API server is not up yet, and the like
            last = exc
        if processes:
            for name, process in processes.started:
                if process.poll() is not None:
                    raise AssertionError("%s exited with %s while waiting for %s:\n%s"
                                         % (name, process.returncode, what, processes.log(name)))
        time.sleep(interval)
    raise AssertionError("timed out after %ss waiting for %s (last error: %r)" % (timeout, what, last))


def etcd_argv(binary: str, data_dir: Path, client_port: int, peer_port: int) -> list[str]:
    client, peer = "http://127.0.0.1:%d" % client_port, "http://127.0.0.1:%d" % peer_port
    return [binary, "--name=e2e", "--data-dir=%s" % data_dir, "--listen-client-urls=" + client,
            "--advertise-client-urls=" + client, "--listen-peer-urls=" + peer,
            "--initial-advertise-peer-urls=" + peer, "--initial-cluster=e2e=" + peer,
            "--initial-cluster-state=new"]


def apiserver_argv(binary: str, certs: Certificates, serving: tuple[Path, Path], etcd_url: str, port: int,
                   cert_dir: Path) -> list[str]:
    """kubeadm's kube-apiserver flags that matter here, on loopback, with etcd over plain HTTP on loopback."""
    return [
        binary,
        "--advertise-address=127.0.0.1",
        "--bind-address=127.0.0.1",
        "--secure-port=%d" % port,
        "--etcd-servers=" + etcd_url,
        "--client-ca-file=%s" % certs.ca_file,
        "--tls-cert-file=%s" % serving[0],
        "--tls-private-key-file=%s" % serving[1],
        "--cert-dir=%s" % cert_dir,
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NodeRestriction",
        "--allow-privileged=true",
        "--service-cluster-ip-range=" + SERVICE_CIDR,
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        "--service-account-key-file=%s" % certs.sa_pub_file,
        "--service-account-signing-key-file=%s" % certs.sa_key_file,
        "--enable-bootstrap-token-auth=true",
    ]


def start_control_plane(directory: Path, processes: Processes, certs: Certificates, found: dict[str, str]):
    """etcd and kube-apiserver (``found``: ETCD_BIN, KUBE_APISERVER_BIN) on loopback, with an admin kubeconfig;
    returns (server URL, admin kubeconfig path) once the bootstrap RBAC policy and kube-system are served."""
    from kubernetes import client, config  # pylint: disable=import-outside-toplevel
    client_port, peer_port, api_port = free_port(), free_port(), free_port()
    processes.start("etcd", etcd_argv(found["ETCD_BIN"], directory / "etcd", client_port, peer_port))
    wait_for("etcd", lambda: etcd_healthy(client_port), timeout=30, processes=processes)
    serving = certs.issue("apiserver", "kube-apiserver", server_names=(
        "127.0.0.1", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local", "10.96.0.1"))
    processes.start("kube-apiserver", apiserver_argv(
        found["KUBE_APISERVER_BIN"], certs, serving, "http://127.0.0.1:%d" % client_port, api_port,
        directory / "apiserver-certs"))
    server = "https://127.0.0.1:%d" % api_port
    cert, key = certs.issue("admin", "kubernetes-admin", "system:masters")
    admin = write_kubeconfig(directory / "admin.conf", server, certs.ca_file,
                             {"client-certificate": str(cert), "client-key": str(key)})
    api = config.new_client_from_config(config_file=str(admin))
    wait_for("kube-apiserver and its bootstrap RBAC", lambda: bootstrap_policy_served(api), timeout=90,
             processes=processes)
    return server, admin


def bootstrap_policy_served(api_client) -> bool:
    """True once the API server serves the bootstrap RBAC policy schedulers need and kube-system (raises before)."""
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    rbac = client.RbacAuthorizationV1Api(api_client)
    return bool(rbac.read_cluster_role("system:kube-scheduler")
                and rbac.read_namespaced_role("extension-apiserver-authentication-reader", "kube-system")
                and client.CoreV1Api(api_client).read_namespace("kube-system"))


# TaintNodesByCondition gives a new Node this taint; with no kubelet nothing removes it, so test pods tolerate it.
NOT_READY_TAINT = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}


def register_nodes(api_client, names, capacity=None) -> None:
    """Nodes as a kubelet registers them: labels, the not-ready taint and ``capacity`` (also allocatable).
    A Node that exists already keeps its spec and gets the capacity again."""
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    core = client.CoreV1Api(api_client)
    existing = {node.metadata.name for node in core.list_node().items}
    resources = capacity or {"cpu": "4", "memory": "8Gi", "pods": "110"}
    for name in names:
        if name not in existing:
            core.create_node(client.V1Node(
                metadata=client.V1ObjectMeta(name=name, labels={"kubernetes.io/hostname": name,
                                                                "kubernetes.io/os": "linux"}),
                spec=client.V1NodeSpec(taints=[client.V1Taint(**NOT_READY_TAINT)])))
        core.patch_node_status(name, {"status": {"capacity": resources, "allocatable": resources}})


def etcd_healthy(client_port: int) -> bool:
    """etcd's own health endpoint on its client port."""
    with urllib.request.urlopen("http://127.0.0.1:%d/health" % client_port, timeout=2) as answer:
        return answer.status == 200 and json.loads(answer.read()).get("health") == "true"


BINARY_NAMES = ("KUBE_APISERVER_BIN", "ETCD_BIN", "KUBE_SCHEDULER_BIN")


def binaries() -> dict[str, str]:
    """The binaries named by the environment, or an empty dict when any is missing."""
    found = {name: os.environ.get(name, "") for name in BINARY_NAMES}
    if not missing_binaries(found):
        return found
    return {}


def missing_binaries(found: dict[str, str] | None = None) -> list[str]:
    """'NAME (value)' for each variable that does not name an executable file."""
    found = found if found is not None else {name: os.environ.get(name, "") for name in BINARY_NAMES}
    return ["%s (%s)" % (name, path or "not set") for name, path in found.items()
            if not (path and os.path.isfile(path) and os.access(path, os.X_OK))]


def apply_manifest(api_client, path: Path) -> None:
    """Create every object of a multi-document YAML file as the client's user, leaving ones that exist already
    (so a rerun passes); CRDs are waited for until established, so that the group they add is served before
    anything lists it."""
    from kubernetes import client, dynamic  # pylint: disable=import-outside-toplevel
    objects = dynamic.DynamicClient(api_client)
    crds = []
    for document in yaml.safe_load_all(path.read_text()):
        if not document:
            continue
        try:
            objects.resources.get(api_version=document["apiVersion"], kind=document["kind"]).create(body=document)
        except client.ApiException as exc:
            if exc.status != 409:
                raise
        if document["kind"] == "CustomResourceDefinition":
            crds.append(document["metadata"]["name"])
    extensions = client.ApiextensionsV1Api(api_client)

    def established(name):
        conditions = extensions.read_custom_resource_definition(name).status.conditions or []
        return any(c.type == "Established" and c.status == "True" for c in conditions)
    for name in crds:
        wait_for("CRD %s to be established" % name, lambda name=name: established(name), timeout=30)
