# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every object the deployment role manages for one in-cluster scheduler, in the order they are applied (the role
removes them in reverse).

One place says how they look, as kubeadm's GetStaticPodSpecs does for its control plane: scheduler-plugins' CRDs
that the enabled plugins need (the scheduler's informers wait for them), the PriorityClasses asked for, the
ServiceAccount and the in-cluster RBAC kube-scheduler documents, the ConfigMap with the configuration, the
Deployment or DaemonSet, a PodDisruptionBudget (Deployment only), and the scheduler-plugins controller when it runs.
The role's filter ``deployment_objects`` calls ``objects``; no API server is contacted, so unit tests validate each
object against the Kubernetes OpenAPI schema.

``settings`` are the role's variables (whole numbers already converted, as the role does for survey strings) and
the names it derives from them (vars/main.yml); ``config`` is scheduler_config's result.

Pure Python: no Ansible imports.
"""

from __future__ import annotations

import re

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import (
    ANNOTATIONS, POD_CONFIG_DIR, PROBE_TIMINGS)

# The ClusterRoles every in-cluster kube-scheduler is bound to (kube-scheduler's documented in-cluster RBAC).
SCHEDULER_CLUSTER_ROLES = ("system:kube-scheduler", "system:volume-scheduler")
# scheduler-plugins' controller elects its leader on this Lease in kube-system, a fixed name
# (cmd/controller/app/server.go).
CONTROLLER_LEASE = "sched-plugins-controllers"


def _whole(value):
    """A whole number as the role's templates convert one (Jinja's int filter): digits, else through a float
    ("1e3" is 1000), else 0. The role refused anything else before (role_inputs); tests render without that check."""
    try:
        return int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError):
            return 0


def _flag(value):
    """A boolean as ansible-core's bool filter reads one: true, yes, on, 1 in any case."""
    return str(value).lower() in ("yes", "on", "true", "1")


def _whole_or_text(value):
    """A PodDisruptionBudget's maxUnavailable as surveys give it: digits become a number, "25%" stays text."""
    return _whole(value) if re.match(r"^[0-9]+$", str(value)) else value


def _merged(base, extra):
    """``base`` with ``extra`` merged in, dicts key by key (ansible-core's recursive combine)."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(merged.get(key), dict) and isinstance(value, dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def _subject(name, namespace):
    return [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]


def _binding(kind, name, labels, role_kind, role, subject, namespace=None):
    metadata = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    metadata["labels"] = labels
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": metadata,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
            "subjects": subject}


def priority_class(item, labels):
    """One PriorityClass of kube_scheduler_deployment_priority_classes."""
    obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
           "metadata": {"name": item["name"], "labels": labels},
           "value": _whole(item["value"]), "globalDefault": _flag(item.get("global_default", False))}
    if "description" in item:
        obj["description"] = item["description"]
    if "preemption_policy" in item:
        obj["preemptionPolicy"] = item["preemption_policy"]
    return obj


def _scheduler_rbac(settings, needs):
    """The ServiceAccount and what kube-scheduler documents for an in-cluster scheduler: the system ClusterRoles,
    what the enabled scheduler-plugins plugins read beyond them, the authentication reader, and get/update on its
    own Lease (system:kube-scheduler may create any Lease but get/update only the one named kube-scheduler)."""
    name, namespace, labels, prefix = settings["name"], settings["namespace"], settings["labels"], settings["rbac_prefix"]
    subject = _subject(name, namespace)
    found = [{"apiVersion": "v1", "kind": "ServiceAccount",
              "metadata": {"name": name, "namespace": namespace, "labels": labels}}]
    found.extend(_binding("ClusterRoleBinding", prefix + ":" + re.sub(r"^system:", "", role), labels, "ClusterRole",
                          role, subject) for role in SCHEDULER_CLUSTER_ROLES)
    if needs is not None and needs["rules"]:
        found.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                      "metadata": {"name": prefix + ":scheduler-plugins", "labels": labels}, "rules": needs["rules"]})
        found.append(_binding("ClusterRoleBinding", prefix + ":scheduler-plugins", labels, "ClusterRole",
                              prefix + ":scheduler-plugins", subject))
    found.append(_binding("RoleBinding", prefix + ":authentication-reader", labels, "Role",
                          "extension-apiserver-authentication-reader", subject, "kube-system"))
    found.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                  "metadata": {"name": prefix + ":leader-election", "namespace": namespace, "labels": labels},
                  "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                             "resourceNames": [settings["lease_name"]], "verbs": ["get", "update"]}]})
    found.append(_binding("RoleBinding", prefix + ":leader-election", labels, "Role", prefix + ":leader-election",
                          subject, namespace))
    return found


def config_map(settings, config, real_config):
    """The configuration, and what the verify role reads to find this scheduler: its checksum, its profiles'
    scheduler names, its lease (empty without leader election), its workload. The configuration with its secrets
    (an extender's keyData) comes from ``real_config`` when ``config`` shows it redacted."""
    name, namespace = settings["name"], settings["namespace"]
    election = config.get("effective", {}).get("leaderElection", {})
    lease = namespace + "/" + settings["lease_name"] if election.get("leaderElect", True) else ""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": dict(settings["labels"], **{"app.kubernetes.io/component": "scheduler-config"}),
                         "annotations": {ANNOTATIONS["config_checksum"]: config["checksum"],
                                         ANNOTATIONS["scheduler_names"]: ",".join(config["profiles"]),
                                         ANNOTATIONS["lease"]: lease,
                                         ANNOTATIONS["deployment"]: name,
                                         ANNOTATIONS["workload"]: settings["kind"] + "/" + name}},
            "data": {"config.yaml": real_config["rendered"] if config.get("redacted", False) else config["rendered"]}}


def _pod_security(settings):
    user = settings["run_as_user"]
    return {"runAsNonRoot": True, "runAsUser": user, "runAsGroup": user, "seccompProfile": {"type": "RuntimeDefault"}}


def _container_security():
    return {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}


def _rolling_update():
    # A new pod must be ready before an old one goes (per node for a DaemonSet, whose pods do not use the host
    # network, so both fit): a bad configuration never takes the scheduler away.
    return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}


def workload(settings, config):
    """The Deployment, or the DaemonSet with one pod on every control-plane node (kubeadm's node-role label and
    taint, besides the user's own selector and tolerations)."""
    name, namespace, kind, port = settings["name"], settings["namespace"], settings["kind"], settings["secure_port"]
    daemon_set = kind == "DaemonSet"
    node_selector = dict(settings["node_selector"])
    tolerations = list(settings["tolerations"])
    if daemon_set:
        node_selector.update(settings["control_plane_selector"])
        tolerations += [item for item in settings["control_plane_tolerations"] if item not in settings["tolerations"]]
    # A new pod counts as available (and the rollout as ready) once it has stayed ready for the settle without a
    # container restart: the host roles' health gate, as the workload controllers judge it.
    spec = {"revisionHistoryLimit": 5, "minReadySeconds": settings["settle"]}
    if daemon_set:
        spec["updateStrategy"] = _rolling_update()
    else:
        spec.update(replicas=settings["replicas"], progressDeadlineSeconds=settings["wait_timeout"],
                    strategy=_rolling_update())
    pod_spec = {"serviceAccountName": name, "priorityClassName": settings["priority_class_name"],
                "securityContext": _pod_security(settings), "nodeSelector": node_selector, "tolerations": tolerations}
    if not daemon_set:
        pod_spec["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": settings["spread_when_unsatisfiable"],
            "labelSelector": {"matchLabels": settings["selector"]}, "matchLabelKeys": ["pod-template-hash"]}]
    # The probe timings are kubeadm's for its kube-scheduler static pod.
    paths = config["health_paths"]
    probes = dict((probe, dict(PROBE_TIMINGS[probe], httpGet={"path": path, "port": port, "scheme": "HTTPS"}))
                  for probe, path in (("livenessProbe", paths["liveness"]), ("readinessProbe", paths["readiness"]),
                                      ("startupProbe", paths["liveness"])))
    container = {"name": "kube-scheduler", "image": settings["image"], "imagePullPolicy": settings["image_pull_policy"],
                 "command": ["kube-scheduler", "--config=%s/config.yaml" % POD_CONFIG_DIR, "--secure-port=%s" % port],
                 "ports": [{"name": "https", "containerPort": port, "protocol": "TCP"}]}
    container.update(probes)
    container.update(resources=settings["resources"], securityContext=_container_security(),
                     volumeMounts=[{"name": "config", "mountPath": POD_CONFIG_DIR, "readOnly": True}])
    pod_spec.update(containers=[container], volumes=[{"name": "config", "configMap": {"name": name}}])
    spec.update(selector={"matchLabels": settings["selector"]}, template={
        "metadata": {"labels": settings["labels"], "annotations": {ANNOTATIONS["config_checksum"]: config["checksum"]}},
        "spec": pod_spec})
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": name, "namespace": namespace, "labels": settings["labels"]}, "spec": spec}


def disruption_budget(settings):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": settings["name"], "namespace": settings["namespace"], "labels": settings["labels"]},
            "spec": {"maxUnavailable": _whole_or_text(settings["pdb_max_unavailable"]),
                     "selector": {"matchLabels": settings["selector"]}}}


def controller(settings):
    """scheduler-plugins' controller, which keeps the status of PodGroups and ElasticQuotas, with its RBAC."""
    name, namespace, labels, prefix = (settings["controller_name"], settings["namespace"],
                                       settings["controller_labels"], settings["rbac_prefix"])
    subject = _subject(name, namespace)
    rbac = "rbac.authorization.k8s.io/v1"
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": name, "namespace": namespace, "labels": labels}},
        {"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": prefix + ":controller", "labels": labels},
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
                   {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch", "update"]},
                   {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
                   {"apiGroups": ["scheduling.x-k8s.io"],
                    "resources": ["podgroups", "podgroups/status", "elasticquotas", "elasticquotas/status"],
                    "verbs": ["get", "list", "watch", "create", "delete", "update", "patch"]}]},
        _binding("ClusterRoleBinding", prefix + ":controller", labels, "ClusterRole", prefix + ":controller", subject),
        {"apiVersion": rbac, "kind": "Role",
         "metadata": {"name": prefix + ":controller-leader-election", "namespace": "kube-system", "labels": labels},
         "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
                   {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                    "resourceNames": [CONTROLLER_LEASE], "verbs": ["get", "update"]},
                   {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]}]},
        _binding("RoleBinding", prefix + ":controller-leader-election", labels, "Role",
                 prefix + ":controller-leader-election", subject, "kube-system"),
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": name, "namespace": namespace, "labels": labels},
         "spec": {"replicas": 1, "selector": {"matchLabels": settings["controller_selector"]}, "template": {
             "metadata": {"labels": labels},
             "spec": {"serviceAccountName": name, "priorityClassName": settings["priority_class_name"],
                      "securityContext": _pod_security(settings), "nodeSelector": settings["node_selector"],
                      "tolerations": settings["tolerations"],
                      "containers": [{
                          "name": "controller", "image": settings["controller_image"],
                          "imagePullPolicy": settings["image_pull_policy"],
                          "args": ["--enableLeaderElection", "--metricsAddr=:8080", "--probeAddr=:8081"],
                          "ports": [{"name": "probes", "containerPort": 8081, "protocol": "TCP"}],
                          "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8081}, "periodSeconds": 10,
                                            "failureThreshold": 6},
                          "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8081}, "periodSeconds": 5},
                          "resources": settings["resources"], "securityContext": _container_security()}]}}}},
    ]


def objects(settings, config, real_config, crds):
    """Every object, in the order they are applied. ``crds``: scheduler-plugins' CRDs that ``config``'s
    ``scheduler_plugins`` names, as its release ships them (they get this scheduler's labels)."""
    needs = config.get("scheduler_plugins")
    found = [_merged(crd, {"metadata": {"labels": settings["labels"]}}) for crd in crds]
    found.extend(priority_class(item, settings["labels"]) for item in settings["priority_classes"])
    found.extend(_scheduler_rbac(settings, needs))
    found.append(config_map(settings, config, real_config))
    found.append(workload(settings, config))
    # A Deployment only: the disruption controller cannot count a DaemonSet's expected pods (no scale subresource),
    # so such a budget never allows a disruption (status SyncFailed, seen on a real 1.35 cluster), and drains skip
    # DaemonSet pods anyway.
    if settings["kind"] == "Deployment":
        found.append(disruption_budget(settings))
    if settings["controller"]:
        found.extend(controller(settings))
    return found
