"""What every test control plane shares (make_control_plane.py, prepare_cluster.py, the end-to-end tests): generated
certificates with the identities kubeadm gives, kube-apiserver's flags as kubeadm sets them where it matters to the
schedulers (RBAC authorization, service-account token signing), and helpers that wait for the API server."""
from __future__ import annotations

import datetime
import ipaddress
import socket
import time
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVICE_CIDR = "10.96.0.0/12"


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
                        .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.ca_key.public_key()),
                                       critical=False)
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

    def write_ca_key(self) -> Path:
        """The CA's key as a kubeadm master keeps it (pki/ca.key), for code that signs with the cluster CA."""
        return self._write("ca.key", _pem_key(self.ca_key))

    def issue(self, name: str, common_name: str, organization=None, server_names=()) -> tuple[Path, Path]:
        """Sign a certificate: a serving one when ``server_names`` (DNS names and IPs) are given, else a client one."""
        key = _key()
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server_names else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (self._builder(_name(common_name, organization), self.ca_cert.subject, key.public_key())
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(True, False, True, False, False, False, False, False, False),
                                  critical=True)
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
                   # Python 3.13's clients verify X.509 strictly (VERIFY_X509_STRICT): a certificate names its issuer's key.
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.ca_key.public_key()),
                                  critical=False))
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


def wait_for(what: str, check, timeout: float = 60, interval: float = 0.5):
    """Poll ``check`` until it returns something truthy; fail with ``what`` and the last error."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except Exception as exc:  # pylint: disable=broad-except  # the API server is not up yet, and the like
            last = exc
        time.sleep(interval)
    raise AssertionError("timed out after %ss waiting for %s (last error: %r)" % (timeout, what, last))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice; free until someone binds it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


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
