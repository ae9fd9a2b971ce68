"""Makes a fresh test API server ready for schedulers, as an admin (kubeconfig argument 1), with the e2e test's own
helpers (cluster.py beside it): waits for the bootstrap RBAC policy; registers API-only Nodes (--nodes) with room for
many pods and the not-ready taint that no kubelet removes there (test pods tolerate it), for scenarios without
kubelets; or waits until the real kubelets of --control-plane-nodes have registered their Nodes and report Ready,
and marks them as `kubeadm init` marks a control-plane node (label node-role.kubernetes.io/control-plane="", taint
node-role.kubernetes.io/control-plane:NoSchedule), and waits for --worker-nodes alike; and grants system:kube-scheduler its extra leases (--leases
NAME..., in kube-system), as an operator does for a second scheduler with a lease of its own. Idempotent: the demo
runs it again on existing hosts."""
from __future__ import annotations

import argparse
import sys

from kubernetes import client, config

from cluster import bootstrap_policy_served, register_nodes, wait_for

CAPACITY = {"cpu": "64", "memory": "256Gi", "pods": "2000"}
CONTROL_PLANE = "node-role.kubernetes.io/control-plane"


def node_ready(core, name) -> bool:
    conditions = core.read_node(name).status.conditions or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


def wait_ready(api, names, timeout):
    """Until the real kubelet of each named Node has registered it and reports it Ready."""
    core = client.CoreV1Api(api)
    for name in names:
        wait_for("Node %s to be registered by its kubelet and Ready" % name, lambda name=name: node_ready(core, name),
                 timeout=timeout)


def mark_control_plane(api, names, timeout):
    """kubeadm's mark-control-plane phase on each real Node, once its kubelet reports it Ready."""
    core = client.CoreV1Api(api)
    wait_ready(api, names, timeout)
    for name in names:
        taints = [dict({"key": t.key, "effect": t.effect}, **({"value": t.value} if t.value else {}))
                  for t in core.read_node(name).spec.taints or [] if t.key != CONTROL_PLANE]
        core.patch_node(name, {"metadata": {"labels": {CONTROL_PLANE: ""}},
                               "spec": {"taints": taints + [{"key": CONTROL_PLANE, "effect": "NoSchedule"}]}})


def grant_leases(api, names):
    """A Role with get/update on the named Leases, bound to kubeadm's scheduler identity: the built-in
    system:kube-scheduler ClusterRole may create any Lease but get/update only kube-scheduler."""
    if not names:
        return
    rbac = client.RbacAuthorizationV1Api(api)
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "test:scheduler-leases", "namespace": "kube-system"},
            "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "update"],
                       "resourceNames": sorted(names)}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "test:scheduler-leases", "namespace": "kube-system"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "test:scheduler-leases"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-scheduler"}]}
    for create, replace, body in ((rbac.create_namespaced_role, rbac.replace_namespaced_role, role),
                                  (rbac.create_namespaced_role_binding, rbac.replace_namespaced_role_binding, binding)):
        try:
            create("kube-system", body)
        except client.ApiException as exc:
            if exc.status != 409:
                raise
            replace(body["metadata"]["name"], "kube-system", body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kubeconfig")
    parser.add_argument("--nodes", nargs="*", default=[])
    parser.add_argument("--control-plane-nodes", nargs="*", default=[])
    parser.add_argument("--worker-nodes", nargs="*", default=[])
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--leases", nargs="*", default=[])
    args = parser.parse_args()
    api = config.new_client_from_config(config_file=args.kubeconfig)
    wait_for("the bootstrap RBAC policy", lambda: bootstrap_policy_served(api), timeout=args.timeout)
    register_nodes(api, args.nodes, CAPACITY)
    mark_control_plane(api, args.control_plane_nodes, args.timeout)
    wait_ready(api, args.worker_nodes, args.timeout)
    grant_leases(api, args.leases)
    print("cluster ready: %d nodes" % len(client.CoreV1Api(api).list_node().items))
    return 0


if __name__ == "__main__":
    sys.exit(main())
