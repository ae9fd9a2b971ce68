"""The prometheus-operator objects this collection renders, judged by the REAL CRDs.

A real kube-apiserver (1.35, `make binaries`) with etcd (tests/controlplane/local_apiserver.py) gets prometheus-
operator's own CustomResourceDefinitions of ServiceMonitor and PodMonitor (copied from the prometheus-operator
repository, example/prometheus-operator-crd/, into PROMETHEUS_OPERATOR_CRDS_DIR, default ~/.cache/kube-crds; never
committed: tests/README.md). Proven:

- the ServiceMonitor of playbooks/metrics_access.yml and the PodMonitor of the deployment role, as the library
  renders them, are created with server-side field validation Strict (an unknown or misplaced field is an error,
  which a control object with one mistyped field shows);
- the deployment role itself (real ansible-playbook, kubernetes.core) refuses a required PodMonitor before anything
  is applied while the reader is missing, applies it with the reader present (rerun: changed=0), and removes it
  with state absent;
- the role's ServiceAccount, through its binding to system:kube-scheduler of the real bootstrap policy, may create
  the TokenReviews and SubjectAccessReviews kube-scheduler's delegated authentication and authorization of /metrics
  send: no system:auth-delegator binding is needed.

Without the binaries or the CRD files the module is skipped with a line naming the variables and the directory.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster import metrics_access

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "controlplane"))
from cluster import wait_for  # noqa: E402  pylint: disable=wrong-import-position
from local_apiserver import LocalApiServer, missing_binaries, refusal  # noqa: E402  pylint: disable=wrong-import-position

CRDS_VARIABLE = "PROMETHEUS_OPERATOR_CRDS_DIR"
CRDS_DIR = Path(os.environ.get(CRDS_VARIABLE) or Path.home() / ".cache" / "kube-crds")
CRD_FILES = ("monitoring.coreos.com_servicemonitors.yaml", "monitoring.coreos.com_podmonitors.yaml")
MISSING_CRDS = [name for name in CRD_FILES if not (CRDS_DIR / name).is_file()]
if missing_binaries():
    pytest.skip("the prometheus-operator CRD test needs real binaries (make binaries): missing "
                + ", ".join(missing_binaries()), allow_module_level=True)
if MISSING_CRDS:
    pytest.skip("the prometheus-operator CRD test needs the real CRDs in %s=%s (tests/README.md): missing %s"
                % (CRDS_VARIABLE, CRDS_DIR, ", ".join(MISSING_CRDS)), allow_module_level=True)

VERSION = "1.35.4"
READER = ("monitoring", "prometheus")
NAME, NAMESPACE = "crd-scheduler", "kube-system"
SELECTOR = {"app.kubernetes.io/name": "kube-scheduler", "app.kubernetes.io/instance": NAME}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    with LocalApiServer(tmp_path_factory.mktemp("crds")) as server:
        server.namespaces("default", "kube-system", READER[0])
        extensions = client.ApiextensionsV1Api(server.client)
        for name in CRD_FILES:
            crd = yaml.safe_load((CRDS_DIR / name).read_text())
            extensions.create_custom_resource_definition(crd)
            wait_for("CRD %s to be established" % crd["metadata"]["name"], lambda n=crd["metadata"]["name"]: any(
                c.type == "Established" and c.status == "True"
                for c in extensions.read_custom_resource_definition(n).status.conditions or []), timeout=60)
        yield server


def create_strict(api, obj):
    """Create ``obj`` with fieldValidation=Strict: None when accepted, else the API server's message."""
    from kubernetes import dynamic  # pylint: disable=import-outside-toplevel
    from kubernetes.client.exceptions import ApiException  # pylint: disable=import-outside-toplevel
    resources = dynamic.DynamicClient(api.client).resources
    # The discovery cache may predate the CRDs: ask again until the kind is served.
    resource = wait_for("%s to be served" % obj["kind"], lambda: _resource(resources, obj), timeout=30)
    try:
        resource.create(body=obj, namespace=obj["metadata"]["namespace"],
                        query_params=[("fieldValidation", "Strict")])
    except (ApiException, dynamic.exceptions.DynamicApiError) as exc:
        return refusal(exc)
    return None


def _resource(resources, obj):
    from kubernetes.dynamic.exceptions import ResourceNotFoundError  # pylint: disable=import-outside-toplevel
    try:
        return resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
    except ResourceNotFoundError:
        resources.invalidate_cache()
        return None


def read(api, kind, namespace, name):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    try:
        return client.CustomObjectsApi(api.client).get_namespaced_custom_object(
            "monitoring.coreos.com", "v1", namespace, kind.lower() + "s", name)
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def test_the_rendered_monitors_pass_the_real_crds_strictly(api):
    hosts = {"m1": [{"name": "edge-scheduler", "state": "present", "bind_address": "10.0.0.11", "secure_port": 10270}]}
    plan = metrics_access.plan(hosts, READER[0], READER[1], "kube-system", monitors=True)
    (service_monitor,) = plan["monitors"]
    pod_monitor = metrics_access.pod_monitor(NAME, NAMESPACE, SELECTOR, READER[0],
                                             metrics_access.token_secret_name(READER[1]))
    # The control: one mistyped field in the shared endpoint shape, which Strict must refuse by its path.
    mistyped = json.loads(json.dumps(pod_monitor))
    mistyped["metadata"]["name"] = "mistyped"
    mistyped["spec"]["podMetricsEndpoints"][0]["tlsConfig"] = {"insecureSkipVerfy": True}
    refused = create_strict(api, mistyped)
    assert refused and 'unknown field "spec.podMetricsEndpoints[0].tlsConfig.insecureSkipVerfy"' in refused, refused
    assert create_strict(api, service_monitor) is None
    assert create_strict(api, pod_monitor) is None
    stored = read(api, "PodMonitor", READER[0], pod_monitor["metadata"]["name"])
    assert stored["spec"]["podMetricsEndpoints"] == pod_monitor["spec"]["podMetricsEndpoints"]
    assert stored["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    assert stored["spec"]["selector"] == {"matchLabels": SELECTOR}


def _role(ansible_playbook, api, workdir, **overrides):
    values = {"kube_scheduler_deployment_version": VERSION, "kube_scheduler_deployment_name": NAME,
              "kube_scheduler_deployment_namespace": NAMESPACE, "kube_scheduler_deployment_wait": False,
              "kube_scheduler_deployment_k8s_kubeconfig": str(api.kubeconfig),
              "ansible_python_interpreter": sys.executable}
    values.update(overrides)
    variables = workdir / "vars.json"
    variables.write_text(json.dumps(values))
    return ansible_playbook(["-i", "localhost,", "-e", "@%s" % variables, REPO / "playbooks" / "deployment.yml"],
                            cwd=workdir)


def _changed(run):
    return int(re.search(r"localhost\s*: ok=\d+\s+changed=(\d+)", run.stdout).group(1))


def test_the_role_applies_its_pod_monitor_only_beside_the_reader_and_removes_it(api, ansible_playbook, tmp_path):
    from kubernetes import client, dynamic  # pylint: disable=import-outside-toplevel
    monitor_name = metrics_access.pod_monitor_name(NAMESPACE, NAME)
    apps = client.AppsV1Api(api.client)

    required = _role(ansible_playbook, api, tmp_path, kube_scheduler_deployment_pod_monitor="true")
    assert required.returncode != 0, required.stderr[-3000:]
    assert ("kube_scheduler_deployment_pod_monitor: true, but the cluster lacks the reader ServiceAccount "
            "monitoring/prometheus" in required.stdout), required.stdout[-3000:] + required.stderr[-3000:]
    with pytest.raises(client.ApiException) as raised:
        apps.read_namespaced_deployment(NAME, NAMESPACE)
    assert raised.value.status == 404  # refused before the first object

    resources = dynamic.DynamicClient(api.client).resources
    for obj in metrics_access.reader_objects(*reversed(READER)):
        resources.get(api_version=obj["apiVersion"], kind=obj["kind"]).create(
            body=obj, namespace=obj["metadata"].get("namespace"))
    first = _role(ansible_playbook, api, tmp_path)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    stored = read(api, "PodMonitor", READER[0], monitor_name)
    expected = metrics_access.pod_monitor(NAME, NAMESPACE, SELECTOR, READER[0],
                                          metrics_access.token_secret_name(READER[1]))
    assert stored["spec"] == expected["spec"]
    # The port the monitor names is the one the role's pods declare.
    ports = apps.read_namespaced_deployment(NAME, NAMESPACE).spec.template.spec.containers[0].ports
    assert [p.name for p in ports] == [stored["spec"]["podMetricsEndpoints"][0]["port"]]

    again = _role(ansible_playbook, api, tmp_path)
    assert again.returncode == 0 and _changed(again) == 0, again.stdout[-4000:]

    # false: the one it made is removed; the ServiceAccount stays, for the next test.
    switched_off = _role(ansible_playbook, api, tmp_path, kube_scheduler_deployment_pod_monitor="false")
    assert switched_off.returncode == 0 and _changed(switched_off) == 1, switched_off.stdout[-4000:]
    assert read(api, "PodMonitor", READER[0], monitor_name) is None


def test_the_roles_service_account_may_delegate_authentication_and_authorization(api):
    """kube-scheduler checks a scraper's token with a TokenReview and its right to get /metrics with a
    SubjectAccessReview, as its own ServiceAccount (in-cluster config, no --authentication-kubeconfig), and reads the
    client CA from kube-system/extension-apiserver-authentication. The real 1.35 bootstrap policy answers."""
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    client.CoreV1Api(api.client).read_namespaced_service_account(NAME, NAMESPACE)  # the previous test's role run
    user = "system:serviceaccount:%s:%s" % (NAMESPACE, NAME)
    authorization = client.AuthorizationV1Api(api.client)
    asks = [
        client.V1ResourceAttributes(group="authentication.k8s.io", resource="tokenreviews", verb="create"),
        client.V1ResourceAttributes(group="authorization.k8s.io", resource="subjectaccessreviews", verb="create"),
        client.V1ResourceAttributes(resource="configmaps", verb="get", namespace="kube-system",
                                    name="extension-apiserver-authentication"),
    ]
    for ask in asks:
        review = authorization.create_subject_access_review(client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(
            user=user, groups=["system:serviceaccounts", "system:serviceaccounts:" + NAMESPACE], resource_attributes=ask)))
        assert review.status.allowed, (ask, review.status)
    # And the control: the same ServiceAccount may not get /metrics itself (only the reader's binding allows that).
    metrics = authorization.create_subject_access_review(client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(
        user=user, groups=["system:serviceaccounts"],
        non_resource_attributes=client.V1NonResourceAttributes(path="/metrics", verb="get"))))
    assert not metrics.status.allowed


def test_state_absent_removes_the_pod_monitor_with_the_objects(api, ansible_playbook, tmp_path):
    monitor_name = metrics_access.pod_monitor_name(NAMESPACE, NAME)
    created = create_strict(api, metrics_access.pod_monitor(NAME, NAMESPACE, SELECTOR, READER[0],
                                                            metrics_access.token_secret_name(READER[1])))
    assert created is None or "already exists" in created, created
    gone = _role(ansible_playbook, api, tmp_path, kube_scheduler_deployment_state="absent")
    assert gone.returncode == 0, gone.stdout[-4000:]
    assert read(api, "PodMonitor", READER[0], monitor_name) is None
