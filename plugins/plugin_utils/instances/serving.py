# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a host instance serves /metrics and health, and with which certificate.

kube-scheduler serves on --bind-address:--secure-port; without --tls-cert-file it makes a self-signed certificate in
memory that no client can verify (kubeadm #2244, prometheus-operator #2354). An instance may bind to the node's
address (``bind_address: node``) and get a serving certificate signed by the cluster CA whose SANs carry the node's
addresses and names; kube-scheduler then delegates authentication and authorization of every request to the API
server through --authentication-kubeconfig/--authorization-kubeconfig (the instance's kubeconfig, as kubeadm passes
scheduler.conf for both), so only a token allowed to ``get`` the nonResourceURL /metrics may read it.
Secure by default: an instance binds to 127.0.0.1 unless told otherwise, and gets a signed certificate as soon as it
listens anywhere else. Pure Python: no Ansible imports.
"""

from __future__ import annotations

import ipaddress

# bind_address: this word instead of an IP address means the node's address (the role's kube_scheduler_node_address,
# else the master's default IPv4 address).
NODE = "node"
# Beside kubeadm's own PKI, in a directory of its own: a static pod mounts just the two files of its instance.
CERT_DIR = "/etc/kubernetes/pki/schedulers"
CLUSTER_CA_CERT = "/etc/kubernetes/pki/ca.crt"
CLUSTER_CA_KEY = "/etc/kubernetes/pki/ca.key"


class NodeUnknown(ValueError):
    """``bind_address: node`` on a host whose address is not known."""


def bind_address(value, node_address, field):
    """The IP address to bind: ``value`` itself, or the node's address for ``node``."""
    if value != NODE:
        return value
    if not node_address:
        raise NodeUnknown("%s: Invalid value: \"node\": the node's address is not known on this host: set "
                          "kube_scheduler_node_address (an IP address of the master) or let the role gather the "
                          "network facts" % field)
    try:
        return str(ipaddress.ip_address(str(node_address)))
    except ValueError:
        raise NodeUnknown("%s: Invalid value: \"node\": the node's address %r is not an IP address: set "
                          "kube_scheduler_node_address to one" % (field, node_address))


def wants_certificate(serving_cert, address):
    """An explicit choice wins; unset (None) means: signed when the instance listens beyond the loopback."""
    if serving_cert is not None:
        return bool(serving_cert)
    return not ipaddress.ip_address(address).is_loopback


def files(instance_name, cert_dir=CERT_DIR):
    """Where an instance's certificate and key are on the master."""
    directory = cert_dir.rstrip("/")
    return {"cert": "%s/%s.crt" % (directory, instance_name), "key": "%s/%s.key" % (directory, instance_name)}


def certificate(instance_name, address, node, cert_dir=CERT_DIR):
    """The serving certificate of one instance: its two paths and its SANs. ``node``: {"addresses": [...],
    "names": [...]} (the master's addresses and host names). The bind address is a SAN unless it is unspecified
    (0.0.0.0 or ::: clients then use one of the node's addresses); 127.0.0.1 and localhost always are, so a client on
    the master can verify it too."""
    addresses = set()
    for value in list(node.get("addresses") or []) + [address, "127.0.0.1"]:
        try:
            parsed = ipaddress.ip_address(str(value))
        except ValueError:
            continue
        if not parsed.is_unspecified:
            addresses.add(parsed)
    names = set(["localhost"])
    for value in node.get("names") or []:
        if isinstance(value, str) and value and not _is_ip(value):
            names.add(value.lower().rstrip("."))
    return dict(files(instance_name, cert_dir), **{
        "common_name": instance_name,
        "ip_sans": [str(ip) for ip in sorted(addresses, key=lambda ip: (ip.version, int(ip)))],
        "dns_sans": sorted(names),
    })


def _is_ip(value):
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True
