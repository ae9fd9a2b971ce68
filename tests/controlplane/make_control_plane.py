"""Writes what a test control plane in a host of its own needs, on the controller, once per directory:
a CA and the API server's serving certificate for ``--address`` (and ``--name``), the service-account key pair,
kubeconfigs with embedded credentials for the admin (system:masters) and for kube-scheduler (the identity kubeadm's
scheduler.conf has, system:kube-scheduler), and the etcd and kube-apiserver argv with paths inside that host.

The flags come from the end-to-end test's control plane (tests/e2e/cluster.py), so both set up the API server alike.
Usage: make_control_plane.py DIR --address IP [--name HOST] [--port 6443]; prints DIR/facts.json.
"""
from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from cluster import Certificates, apiserver_argv  # noqa: E402  pylint: disable=wrong-import-position

PKI_ON_HOST = "/etc/kubernetes/pki"
ETCD_CLIENT_URL = "http://127.0.0.1:2379"


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
    args = parser.parse_args()
    facts_file = args.directory / "facts.json"
    if facts_file.exists() and json.loads(facts_file.read_text())["address"] == args.address:
        print(facts_file.read_text())
        return 0
    pki = args.directory / "pki"
    pki.mkdir(parents=True, exist_ok=True)
    certs = Certificates(pki)  # the CA key stays in memory: nothing signs later
    names = [args.address, "127.0.0.1", "localhost", "kubernetes", "kubernetes.default", "10.96.0.1"] + (
        [args.name] if args.name else [])
    serving = certs.issue("apiserver", "kube-apiserver", server_names=names)
    server = "https://%s:%d" % (args.address, args.port)
    kubeconfigs = {}
    for name, user, group in (("admin", "kubernetes-admin", "system:masters"), ("scheduler", "system:kube-scheduler", None)):
        cert, key = certs.issue(name, user, group)
        kubeconfigs[name] = args.directory / ("%s.conf" % name)
        kubeconfigs[name].write_text(embedded_kubeconfig(server, certs.ca_file, cert, key))
        kubeconfigs[name].chmod(0o600)
    argv = apiserver_argv("/usr/local/bin/kube-apiserver", certs, serving, ETCD_CLIENT_URL, args.port,
                          pki / "apiserver-generated")
    argv = [arg.replace("--advertise-address=127.0.0.1", "--advertise-address=" + args.address) for arg in argv]
    facts = {
        "address": args.address,
        "server": server,
        "pki_dir": str(pki),
        "pki_on_host": PKI_ON_HOST,
        "admin_kubeconfig": str(kubeconfigs["admin"]),
        "scheduler_kubeconfig": str(kubeconfigs["scheduler"]),
        "apiserver_argv": on_host(argv, pki),
        "etcd_argv": ["/usr/local/bin/etcd", "--name=test", "--data-dir=/var/lib/etcd",
                      "--listen-client-urls=" + ETCD_CLIENT_URL, "--advertise-client-urls=" + ETCD_CLIENT_URL,
                      "--listen-peer-urls=http://127.0.0.1:2380"],
    }
    facts_file.write_text(json.dumps(facts, indent=1))
    print(facts_file.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
