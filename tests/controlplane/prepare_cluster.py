"""Makes a fresh test API server ready for schedulers, as an admin (kubeconfig argument 1):
waits for the bootstrap RBAC policy, applies the test-only compatibility manifest for schedulers newer than the
1.24 API server (--compat FILE: ../shared/k8s/apiserver-1.24-compat.yaml), and registers API-only Nodes (--nodes)
with room for many pods, and grants system:kube-scheduler its extra leases (--leases NAME..., in kube-system), as an
operator does for a second scheduler with a lease of its own. No kubelet runs them: the TaintNodesByCondition admission plugin gives each the
node.kubernetes.io/not-ready:NoSchedule taint, which test pods tolerate. Idempotent."""
from __future__ import annotations

import argparse
import sys
import time

import yaml
from kubernetes import client, config, utils

CAPACITY = {"cpu": "64", "memory": "256Gi", "pods": "2000"}


def wait_for_bootstrap_policy(api, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        try:
            rbac = client.RbacAuthorizationV1Api(api)
            rbac.read_cluster_role("system:kube-scheduler")
            rbac.read_namespaced_role("extension-apiserver-authentication-reader", "kube-system")
            return
        except Exception:  # pylint: disable=broad-except  # not served yet
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def apply(api, path):
    """Create every object of the file that does not exist yet (CRDs first; they are created in file order)."""
    with open(path, encoding="utf-8") as handle:
        for document in yaml.safe_load_all(handle):
            if not document:
                continue
            try:
                utils.create_from_dict(api, document)
            except utils.FailToCreateError as exc:
                if any(error.status != 409 for error in exc.api_exceptions):
                    raise


def register_nodes(api, names):
    core = client.CoreV1Api(api)
    existing = {node.metadata.name for node in core.list_node().items}
    for name in names:
        if name not in existing:
            core.create_node(client.V1Node(metadata=client.V1ObjectMeta(
                name=name, labels={"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"})))
        core.patch_node_status(name, {"status": {"capacity": CAPACITY, "allocatable": CAPACITY}})


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
    parser.add_argument("--compat", default="")
    parser.add_argument("--nodes", nargs="*", default=[])
    parser.add_argument("--leases", nargs="*", default=[])
    args = parser.parse_args()
    api = config.new_client_from_config(config_file=args.kubeconfig)
    wait_for_bootstrap_policy(api)
    if args.compat:
        apply(api, args.compat)
    register_nodes(api, args.nodes)
    grant_leases(api, args.leases)
    print("cluster ready: %d nodes" % len(client.CoreV1Api(api).list_node().items))
    return 0


if __name__ == "__main__":
    sys.exit(main())
