# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Serving beyond the master: the instance model's bind address, serving certificate and flags, the static
pod's mounts, and the scrape targets. The real kube-scheduler serving with them: tests/unit/roles/test_secure_metrics.py."""

from __future__ import annotations

import ipaddress

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster import metrics_access
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.static_pod_manifest import static_pod_manifest

NODE = {"address": "10.0.0.11", "addresses": ["10.0.0.11", "fd00::11", None], "names": ["Master-1", "master-1.example.", None]}
CONFIG = {"leaderElection": {"resourceName": "edge"}, "profiles": [{"schedulerName": "edge"}]}


def one(node=None, **fields):
    instances, errors, warnings = resolve([dict({"name": "edge", "config": CONFIG}, **fields)], "1.35.4", "/etc/k",
                                          node=NODE if node is None else node, cert_dir="/pki")
    return (instances[0] if instances else None), errors, warnings


def flag_names(instance):
    return [flag.split("=", 1)[0] for flag in instance["flags"]]


def test_loopback_by_default_without_a_certificate():
    instance, errors, warnings = one()
    assert not errors and not warnings
    assert instance["bind_address"] == "127.0.0.1" and instance["serving_cert"] is None
    assert "--tls-cert-file" not in flag_names(instance)
    # kube-scheduler delegates authentication and authorization through the instance's kubeconfig (kubeadm's way).
    assert "--authentication-kubeconfig=%s" % instance["kubeconfig"] in instance["flags"]
    assert "--authorization-kubeconfig=%s" % instance["kubeconfig"] in instance["flags"]


def test_node_binds_the_node_address_with_a_certificate_of_its_addresses_and_names():
    instance, errors, _warnings = one(bind_address="node")
    assert not errors
    assert instance["bind_address"] == NODE["address"]
    cert = instance["serving_cert"]
    assert {"--bind-address=10.0.0.11", "--tls-cert-file=%s" % cert["cert"],
            "--tls-private-key-file=%s" % cert["key"]} <= set(instance["flags"])
    assert cert["cert"].startswith("/pki/") and cert["key"].startswith("/pki/") and cert["cert"] != cert["key"]
    assert {"10.0.0.11", "fd00::11", "127.0.0.1"} <= set(cert["ip_sans"])
    assert {"master-1", "master-1.example", "localhost"} <= set(cert["dns_sans"])
    assert instance["health_url"].startswith("https://10.0.0.11:")


def test_node_without_a_known_address_names_the_variable():
    _instance, errors, _warnings = one(node={}, bind_address="node")
    assert len(errors) == 1 and "kube_scheduler_instances[0].bind_address" in errors[0]
    assert "kube_scheduler_node_address" in errors[0]


def test_an_explicit_choice_wins_and_an_unverifiable_listener_warns():
    loopback, _errors, _warnings = one(serving_cert=True)
    assert loopback["serving_cert"] and loopback["bind_address"] == "127.0.0.1"
    anywhere, errors, warnings = one(bind_address="0.0.0.0", serving_cert=False)
    assert not errors and anywhere["serving_cert"] is None
    assert len(warnings) == 1 and "serving_cert" in warnings[0] and "0.0.0.0" in warnings[0]
    # 0.0.0.0 is no SAN (clients use one of the node's addresses).
    unspecified, _errors, _warnings = one(bind_address="0.0.0.0")
    assert "0.0.0.0" not in unspecified["serving_cert"]["ip_sans"]


def test_tls_flags_are_the_collections_once_it_issues_the_certificate():
    _instance, errors, _warnings = one(bind_address="node", extra_flags={"tls-cert-file": "/mine.crt"})
    assert len(errors) == 1 and "extra_flags.tls-cert-file" in errors[0] and "serving_cert" in errors[0]
    own, errors, _warnings = one(bind_address="node", serving_cert=False, extra_flags={"tls-cert-file": "/mine.crt"})
    assert not errors and "--tls-cert-file=/mine.crt" in own["flags"]


def test_replicas_on_other_masters_may_bind_their_own_node_address():
    peers = {"m2": [{"name": "edge", "bind_address": "node", "config": CONFIG}]}
    instances, errors, _warnings = resolve([{"name": "edge", "bind_address": "node", "config": CONFIG}], "1.35.4",
                                           "/etc/k", peers, node=NODE, cert_dir="/pki")
    assert not errors and instances[0]["bind_address"] == "10.0.0.11"


def test_bad_bind_address_is_refused_naming_node():
    _instance, errors, _warnings = one(bind_address="the-node")
    assert len(errors) == 1 and "bind_address" in errors[0] and '"node"' in errors[0]


def test_static_pod_mounts_exactly_its_certificate_and_key_and_drops_them_when_gone():
    instance, _errors, _warnings = one(bind_address="node")
    pod = static_pod_manifest(instance, "1.35.4", "sum")
    mounts = {m["mountPath"]: m for m in pod["spec"]["containers"][0]["volumeMounts"]}
    for path in (instance["serving_cert"]["cert"], instance["serving_cert"]["key"]):
        assert mounts[path]["readOnly"] is True
    plain, _errors, _warnings = one()
    again = static_pod_manifest(plain, "1.35.4", "sum", base=pod)
    paths = [m["mountPath"] for m in again["spec"]["containers"][0]["volumeMounts"]]
    assert not set(paths) & {instance["serving_cert"]["cert"], instance["serving_cert"]["key"]}


def test_scrape_targets_are_the_instances_beyond_the_loopback_on_every_master():
    edge, _errors, _warnings = one(bind_address="node")
    local, _errors, _warnings = one()
    other = dict(edge, bind_address="fd00::12")
    plan = metrics_access.plan({"m1": [edge], "m2": [other], "m3": [local]}, "monitoring", "prometheus", "kube-system",
                               monitors=True, ca_file="/ca", token_file="/token")
    assert plan["targets"] == {"edge": {"port": edge["secure_port"], "addresses": ["10.0.0.11", "fd00::12"]}}
    kinds = [(obj["kind"], obj.get("addressType")) for obj in plan["objects"]]
    assert ("EndpointSlice", "IPv4") in kinds and ("EndpointSlice", "IPv6") in kinds
    role = next(obj for obj in plan["objects"] if obj["kind"] == "ClusterRole")
    assert role["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    binding = next(obj for obj in plan["objects"] if obj["kind"] == "ClusterRoleBinding")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"}]
    targets = plan["scrape_configs"][0]["static_configs"][0]["targets"]
    for target in targets:  # host:port, an IPv6 address in brackets
        host, port = target.rsplit(":", 1)
        ipaddress.ip_address(host.strip("[]"))
        assert int(port) == edge["secure_port"]
    assert plan["scrape_configs"][0]["tls_config"]["insecure_skip_verify"] is False
    monitor = plan["monitors"][0]
    assert monitor["metadata"]["namespace"] == "monitoring"
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == ["kube-system"]
    service = next(obj for obj in plan["objects"] if obj["kind"] == "Service")
    assert all(service["metadata"]["labels"][k] == v for k, v in monitor["spec"]["selector"]["matchLabels"].items())
    assert metrics_access.plan({"m3": [local]}, "monitoring", "prometheus", "kube-system")["scrape_configs"] == []


def test_the_readers_namespace_comes_first_only_when_it_is_missing():
    local, _errors, _warnings = one()
    missing = metrics_access.plan({"m1": [local]}, "monitoring", "prometheus", "kube-system", create_namespace=True)
    present = metrics_access.plan({"m1": [local]}, "monitoring", "prometheus", "kube-system")
    assert missing["objects"][0]["kind"] == "Namespace" and missing["objects"][0]["metadata"]["name"] == "monitoring"
    assert missing["objects"][1:] == present["objects"]
    assert "Namespace" not in [obj["kind"] for obj in present["objects"]]
