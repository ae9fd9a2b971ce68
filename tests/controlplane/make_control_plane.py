"""Writes what a test control plane in a host of its own needs, on the controller, once per directory:
a CA and the API server's serving certificate for ``--address`` (and ``--name``), the service-account key pair,
kubeconfigs with embedded credentials for the admin (system:masters), for kube-scheduler (the identity kubeadm's
scheduler.conf has, system:kube-scheduler), for kube-controller-manager and for the kubelet of each ``--nodes`` host
(system:node:<name> in system:nodes, as kubeadm's kubelet.conf) and for kube-proxy, and the etcd, kube-apiserver and
kube-controller-manager argv with paths inside that host.

The API server's flags are the shared ones (cluster.py beside it: apiserver_argv) plus what kubeadm
adds for a cluster with kubelets (../shared/k8s/real-node.md): the front-proxy (requestheader) client, the
apiserver's kubelet client certificate, InternalIP first when it calls a kubelet.
Usage: make_control_plane.py DIR --address IP [--name HOST] [--port 6443] [--nodes NAME...]; prints DIR/facts.json.
"""
from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path

import yaml

from cluster import Certificates, apiserver_argv

PKI_ON_HOST = "/etc/kubernetes/pki"
ETCD_CLIENT_URL = "http://127.0.0.1:2379"
# Bump when what this script writes changes: a directory written by an older one is written again.
LAYOUT = 4


def embedded_kubeconfig(server: str, ca_file: Path, cert: Path, key: Path) -> str:
    """A kubeconfig that travels as one file: CA, client certificate and key are inlined."""
    def data(path):
        return base64.b64encode(path.read_bytes()).decode()
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "test",
        "clusters": [{"name": "test", "cluster": {"server": server, "certificate-authority-data": data(ca_file)}}],
        "users": [{"name": "test", "user": {"client-certificate-data": data(cert), "client-key-data": data(key)}}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
    })


def kubelet_cluster_flags(certs: Certificates) -> list[str]:
    """kubeadm's kube-apiserver flags for a cluster with kubelets and aggregated APIs (real-node.md section 5)."""
    proxy_cert, proxy_key = certs.issue("front-proxy-client", "front-proxy-client")
    kubelet_cert, kubelet_key = certs.issue("apiserver-kubelet-client", "kube-apiserver-kubelet-client",
                                            "system:masters")
    return [
        "--requestheader-client-ca-file=%s" % certs.ca_file,
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        "--proxy-client-cert-file=%s" % proxy_cert,
        "--proxy-client-key-file=%s" % proxy_key,
        "--kubelet-client-certificate=%s" % kubelet_cert,
        "--kubelet-client-key=%s" % kubelet_key,
        "--kubelet-preferred-address-types=InternalIP,Hostname",
    ]


def controller_manager_argv(kubeconfig: str) -> list[str]:
    """kubeadm's kube-controller-manager flags that matter here (ServiceAccounts, tokens, garbage collection, node
    lifecycle); no node CIDRs: each node's CNI config names its own pod subnet."""
    return [
        "/usr/local/bin/kube-controller-manager",
        "--kubeconfig=" + kubeconfig,
        "--authentication-kubeconfig=" + kubeconfig,
        "--authorization-kubeconfig=" + kubeconfig,
        "--bind-address=127.0.0.1",
        "--secure-port=10257",
        "--leader-elect=false",
        "--use-service-account-credentials=true",
        "--service-account-private-key-file=%s/sa.key" % PKI_ON_HOST,
        "--root-ca-file=%s/ca.crt" % PKI_ON_HOST,
        "--controllers=*,bootstrapsigner,tokencleaner",
        "--allocate-node-cidrs=false",
    ]


def on_host(argv: list[str], pki: Path) -> list[str]:
    """The e2e's loopback argv, with paths inside the control-plane host and listening on every address."""
    return [arg.replace(str(pki), PKI_ON_HOST) for arg in argv if not arg.startswith("--bind-address=")] + [
        "--bind-address=0.0.0.0"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--address", required=True, help="the control-plane host's address, in the serving certificate")
    parser.add_argument("--name", default="", help="its host name, also in the serving certificate")
    parser.add_argument("--port", type=int, default=6443)
    parser.add_argument("--nodes", nargs="*", default=[], help="hosts whose kubelets join: a kubelet.conf each")
    args = parser.parse_args()
    facts_file = args.directory / "facts.json"
    if facts_file.exists():
        old = json.loads(facts_file.read_text())
        if (old["address"], old.get("layout"), sorted(old.get("node_kubeconfigs", {}))) == (
                args.address, LAYOUT, sorted(args.nodes)):
            print(facts_file.read_text())
            return 0
    pki = args.directory / "pki"
    pki.mkdir(parents=True, exist_ok=True)
    certs = Certificates(pki)
    # A kubeadm master keeps the CA key: the host roles sign serving certificates for /metrics with it.
    ca_key_file = certs.write_ca_key()
    names = [args.address, "127.0.0.1", "localhost", "kubernetes", "kubernetes.default", "10.96.0.1"] + (
        [args.name] if args.name else [])
    serving = certs.issue("apiserver", "kube-apiserver", server_names=names)
    server = "https://%s:%d" % (args.address, args.port)
    kubeconfigs = {}
    identities = [("admin", "kubernetes-admin", "system:masters", server),
                  ("scheduler", "system:kube-scheduler", None, server),
                  # used inside the control-plane host, next to the API server
                  ("controller-manager", "system:kube-controller-manager", None, "https://127.0.0.1:%d" % args.port)]
    identities += [("kubelet-" + node, "system:node:" + node, "system:nodes", server) for node in args.nodes]
    # kube-proxy on real nodes: the bootstrap policy binds system:node-proxier to this user.
    identities.append(("kube-proxy", "system:kube-proxy", None, server))
    for name, user, group, url in identities:
        cert, key = certs.issue(name, user, group)
        kubeconfigs[name] = args.directory / ("%s.conf" % name)
        kubeconfigs[name].write_text(embedded_kubeconfig(url, certs.ca_file, cert, key))
        kubeconfigs[name].chmod(0o600)
    # The controller-manager's kubeconfig travels with the PKI into the control-plane host.
    (pki / "controller-manager.conf").write_text(kubeconfigs["controller-manager"].read_text())
    (pki / "controller-manager.conf").chmod(0o600)
    argv = apiserver_argv("/usr/local/bin/kube-apiserver", certs, serving, ETCD_CLIENT_URL, args.port,
                          pki / "apiserver-generated") + kubelet_cluster_flags(certs)
    argv = [arg.replace("--advertise-address=127.0.0.1", "--advertise-address=" + args.address) for arg in argv]
    facts = {
        "layout": LAYOUT,
        "address": args.address,
        "server": server,
        "port": args.port,
        "pki_dir": str(pki),
        "pki_on_host": PKI_ON_HOST,
        "admin_kubeconfig": str(kubeconfigs["admin"]),
        "scheduler_kubeconfig": str(kubeconfigs["scheduler"]),
        "ca_file": str(certs.ca_file),
        "ca_key_file": str(ca_key_file),
        "node_kubeconfigs": {node: str(kubeconfigs["kubelet-" + node]) for node in args.nodes},
        "kube_proxy_kubeconfig": str(kubeconfigs["kube-proxy"]),
        "apiserver_argv": on_host(argv, pki),
        "controller_manager_argv": controller_manager_argv(PKI_ON_HOST + "/controller-manager.conf"),
        "etcd_argv": ["/usr/local/bin/etcd", "--name=test", "--data-dir=/var/lib/etcd",
                      "--listen-client-urls=" + ETCD_CLIENT_URL, "--advertise-client-urls=" + ETCD_CLIENT_URL,
                      "--listen-peer-urls=http://127.0.0.1:2380"],
    }
    facts_file.write_text(json.dumps(facts, indent=1))
    print(facts_file.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
