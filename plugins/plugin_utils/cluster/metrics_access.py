# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who may read a scheduler's /metrics, and where Prometheus finds it: the Kubernetes objects and the plain
scrape_configs that playbooks/metrics_access.yml applies or writes.

kube-scheduler authorizes /metrics with a SubjectAccessReview for the nonResourceURL ``/metrics``, verb ``get``
(k8s.io/apiserver delegated authorization; kubernetes #69600): a ClusterRole with that one rule, bound to one
ServiceAccount, is all a scraper needs. Host instances (systemd units, static pods on hostNetwork) have no pod a
selector could find, so each instance gets a selector-less headless Service with an EndpointSlice listing the
masters' addresses; a ServiceMonitor (when the monitoring.coreos.com CRDs exist) points at that Service. The
deployment role's in-cluster pods have labels: a PodMonitor selects them. Both monitors live beside the reader's
token Secret (prometheus-operator reads a monitor's Secrets from the monitor's own namespace) and share one endpoint
shape (_endpoint). Pure Python: no Ansible imports.
"""

from __future__ import annotations

import ipaddress

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import constants
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import DOMAIN

READER_ROLE = "metrics-reader"
PORT_NAME = "https-metrics"
MANAGED_BY = "kubesched.schedulers"
_LABELS = {"app.kubernetes.io/managed-by": MANAGED_BY}
# Published in every namespace by kube-controller-manager (root-ca-cert-publisher): the cluster CA, key ca.crt.
CA_CONFIG_MAP = "kube-root-ca.crt"


def reader_objects(service_account, namespace, role_name=READER_ROLE):
    """The ServiceAccount, the ClusterRole that may get /metrics, its ClusterRoleBinding, and a token Secret of the
    ServiceAccount for a Prometheus that reads its token from a Secret (prometheus-operator's authorization)."""
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": service_account, "namespace": namespace, "labels": dict(_LABELS)}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": role_name, "labels": dict(_LABELS)},
         "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": "%s:%s:%s" % (role_name, namespace, service_account), "labels": dict(_LABELS)},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
         "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}]},
        {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
         "metadata": {"name": token_secret_name(service_account), "namespace": namespace, "labels": dict(_LABELS),
                      "annotations": {"kubernetes.io/service-account.name": service_account}}},
    ]


def token_secret_name(service_account):
    return service_account + constants.METRICS_TOKEN_SECRET_SUFFIX


def targets(hosts):
    """Instance name -> {"port": int, "addresses": [IP, ...]} from {host: [resolved instance, ...]}: the present
    instances that serve beyond the loopback (a scraper elsewhere cannot reach 127.0.0.1 of a master)."""
    found = {}
    for host in sorted(hosts):
        for instance in hosts[host]:
            if instance.get("state") != "present":
                continue
            address = ipaddress.ip_address(instance["bind_address"])
            if address.is_loopback or address.is_unspecified:
                continue
            entry = found.setdefault(instance["name"], {"port": instance["secure_port"], "addresses": []})
            entry["addresses"].append(str(address))
    return found


def service_name(instance_name):
    return "%s-metrics" % instance_name


def host_target_objects(instance_name, target, namespace):
    """A headless Service without a selector and its EndpointSlices (one per address family) for one instance."""
    name = service_name(instance_name)
    labels = dict(_LABELS, **{DOMAIN + "/instance": instance_name})
    objects = [{
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"clusterIP": "None",
                 "ports": [{"name": PORT_NAME, "port": target["port"], "targetPort": target["port"], "protocol": "TCP"}]},
    }]
    by_family = {}
    for address in target["addresses"]:
        by_family.setdefault(ipaddress.ip_address(address).version, []).append(address)
    for version in sorted(by_family):
        objects.append({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "%s-ipv%d" % (name, version), "namespace": namespace,
                         "labels": dict(labels, **{"kubernetes.io/service-name": name,
                                                   "endpointslice.kubernetes.io/managed-by": MANAGED_BY})},
            "addressType": "IPv%d" % version,
            "endpoints": [{"addresses": [address], "conditions": {"ready": True}} for address in sorted(by_family[version])],
            "ports": [{"name": PORT_NAME, "port": target["port"], "protocol": "TCP"}],
        })
    return objects


def _endpoint(port_name, token_secret, tls_config):
    """One scrape endpoint of a ServiceMonitor or PodMonitor: HTTPS /metrics with the reader's token (type Bearer,
    from the Secret beside the monitor) and the given tlsConfig."""
    return {"port": port_name, "scheme": "https", "path": "/metrics",
            "authorization": {"type": "Bearer", "credentials": {"name": token_secret, "key": "token"}},
            "tlsConfig": tls_config}


def service_monitor(instance_name, monitor_namespace, service_namespace, token_secret, ca_config_map=CA_CONFIG_MAP):
    """A prometheus-operator ServiceMonitor, beside the reader's token Secret, for the instance's Service: HTTPS
    verified with the cluster CA (the ConfigMap kube-root-ca.crt every namespace has, key ca.crt); each endpoint is
    the address of its own master, a SAN of that master's serving certificate, so no serverName is set."""
    name = service_name(instance_name)
    return {
        "apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
        "metadata": {"name": name, "namespace": monitor_namespace, "labels": dict(_LABELS)},
        "spec": {
            "selector": {"matchLabels": {DOMAIN + "/instance": instance_name}},
            "namespaceSelector": {"matchNames": [service_namespace]},
            "endpoints": [_endpoint(PORT_NAME, token_secret, {
                "ca": {"configMap": {"name": ca_config_map, "key": "ca.crt"}}, "insecureSkipVerify": False})],
        },
    }


def pod_monitor_name(pod_namespace, workload_name):
    """Unique per scheduler in the reader's namespace, where schedulers of several namespaces may meet."""
    return "%s-%s-metrics" % (pod_namespace, workload_name)


def pod_monitor(workload_name, pod_namespace, selector, monitor_namespace, token_secret, port_name="https"):
    """A prometheus-operator PodMonitor, beside the reader's token Secret, for the pods of the deployment role's
    Deployment or DaemonSet (``selector``: their matchLabels), on their container port ``port_name``.

    The pods serve the certificate kube-scheduler generates in memory at start (self-signed, for the pod's own
    names: no cluster CA signs it and nothing could verify it), so the scrape skips the certificate check. The
    bearer token is still checked: kube-scheduler asks the API server (TokenReview, then a SubjectAccessReview for
    get /metrics), so only a token bound to the reader's ClusterRole gets an answer."""
    return {
        "apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
        "metadata": {"name": pod_monitor_name(pod_namespace, workload_name), "namespace": monitor_namespace,
                     # The workload's own labels: the monitor is found as its pods are.
                     "labels": dict(selector, **_LABELS)},
        "spec": {
            "selector": {"matchLabels": dict(selector)},
            "namespaceSelector": {"matchNames": [pod_namespace]},
            "podMetricsEndpoints": [_endpoint(port_name, token_secret, {"insecureSkipVerify": True})],
        },
    }


def plan(hosts, reader_namespace, service_account, targets_namespace, monitors=False, ca_file="", token_file="",
         role_name=READER_ROLE, create_namespace=False):
    """Everything playbooks/metrics_access.yml applies and writes, from {host: [resolved instance, ...]}:
    {"objects": [...], "monitors": [...], "scrape_configs": [...], "targets": {...}}. ``create_namespace``: the
    reader's namespace does not exist yet (no Prometheus installed, or one outside the cluster), so it comes first;
    an existing one is never applied, so its labels stay its owner's."""
    found = targets(hosts)
    objects = ([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": reader_namespace, "labels": dict(_LABELS)}}]
               if create_namespace else [])
    objects += reader_objects(service_account, reader_namespace, role_name)
    for instance_name in sorted(found):
        objects.extend(host_target_objects(instance_name, found[instance_name], targets_namespace))
    return {
        "objects": objects,
        "monitors": [service_monitor(name, reader_namespace, targets_namespace, token_secret_name(service_account))
                     for name in sorted(found)] if monitors else [],
        "scrape_configs": scrape_configs(found, ca_file, token_file),
        "targets": found,
    }


def scrape_configs(all_targets, ca_file, token_file):
    """A plain Prometheus ``scrape_configs`` list for a Prometheus outside the cluster: one job per instance."""
    jobs = []
    for instance_name in sorted(all_targets):
        target = all_targets[instance_name]
        jobs.append({
            "job_name": "kube-scheduler-%s" % instance_name,
            "scheme": "https",
            "metrics_path": "/metrics",
            "authorization": {"type": "Bearer", "credentials_file": token_file},
            "tls_config": {"ca_file": ca_file, "insecure_skip_verify": False},
            "static_configs": [{
                "targets": [_host_port(address, target["port"]) for address in target["addresses"]],
                "labels": {"instance_name": instance_name},
            }],
        })
    return jobs


def _host_port(address, port):
    return ("[%s]:%d" if ipaddress.ip_address(address).version == 6 else "%s:%d") % (address, port)
