"""A scheduler's /metrics, secure by default, proven on real parts.

A real kube-apiserver (1.35) with etcd (tests/controlplane/local_apiserver.py) and a real kube-scheduler 1.35 run as
local processes. The kube-scheduler runs with exactly the flags the instance model gives it, and with the serving
certificate the collection's own host module (kubesched.schedulers.serving_cert, through real ansible-playbook)
issued from the cluster CA. Proven:

- a client with the token of a ServiceAccount bound to the metrics-reader ClusterRole (metrics_access.py's objects,
  created in the API server) scrapes /metrics over TLS verifying the cluster CA, and reads
  scheduler_schedule_attempts_total per profile after pods with each schedulerName were scheduled or not;
- an anonymous request is refused (401/403), a token without the role gets 403;
- the listener is on 127.0.0.1 (the default) and nowhere else;
- the certificate is issued again when its SANs or its CA change, and only then (changed=0 on a rerun), and the
  running kube-scheduler serves a renewed certificate without a restart;
- the key never appears in the module's output.

Without the binaries the module is skipped with a line naming the variables.
"""
from __future__ import annotations

import json
import os
import re
import socket
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster import metrics_access
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster import scheduler_activity
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "controlplane"))
from cluster import free_port, wait_for  # noqa: E402  pylint: disable=wrong-import-position
from local_apiserver import LocalApiServer, missing_binaries  # noqa: E402  pylint: disable=wrong-import-position

SCHEDULER_VARIABLE = "KUBE_SCHEDULER_BIN_1_35"
MISSING = missing_binaries() + ([] if os.access(os.environ.get(SCHEDULER_VARIABLE, ""), os.X_OK)
                                else [SCHEDULER_VARIABLE])
if MISSING:
    pytest.skip("the secure-metrics test needs real binaries (make binaries): missing " + ", ".join(MISSING),
                allow_module_level=True)

VERSION = "1.35.4"
READER = ("monitoring", "prometheus")
PROFILES = ("default-scheduler", "batch")


def issue_cert(ansible_playbook, workdir, args):
    """Run the collection's serving_cert module with real ansible-playbook on localhost; returns (result, output)."""
    playbook = workdir / "serving_cert.yml"
    playbook.write_text(yaml.safe_dump([{
        "hosts": "localhost", "gather_facts": False, "connection": "local",
        "tasks": [{"name": "Serving certificate", "kubesched.schedulers.serving_cert": args, "register": "cert"},
                  {"name": "Keep the result",
                   "ansible.builtin.copy": {"content": "{{ cert | to_json }}", "dest": str(workdir / "result.json")}}]}]))
    run = ansible_playbook(["-i", "localhost,", "-v", "-e", "ansible_python_interpreter=" + sys.executable, playbook],
                           cwd=workdir)
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads((workdir / "result.json").read_text()), run.stdout + run.stderr


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, ansible_playbook):
    workdir = tmp_path_factory.mktemp("secure-metrics")
    with LocalApiServer(workdir / "api") as api:
        api.namespaces("default", "kube-system", READER[0])
        ca_key = api.certs.write_ca_key()
        # kubeadm's scheduler.conf: a client certificate for system:kube-scheduler, used for the API and to delegate.
        cert, key = api.certs.issue("scheduler", "system:kube-scheduler")
        kubeconfig = workdir / "scheduler.conf"
        kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "s",
            "clusters": [{"name": "c", "cluster": {"server": api.url, "certificate-authority": str(api.certs.ca_file)}}],
            "users": [{"name": "u", "user": {"client-certificate": str(cert), "client-key": str(key)}}],
            "contexts": [{"name": "s", "context": {"cluster": "c", "user": "u"}}]}))
        port = free_port()
        # The instance as an operator writes it, with a signed certificate on the default (loopback) address.
        instances, errors, _warnings = resolve(
            [{"name": "batch-scheduler", "secure_port": port, "kubeconfig": str(kubeconfig), "serving_cert": True,
              "default_scheduler": True,
              "config": {"leaderElection": {"leaderElect": False},
                         "profiles": [{"schedulerName": name} for name in PROFILES]}}],
            VERSION, str(workdir / "etc"), node={"address": None, "addresses": [], "names": [socket.gethostname()]},
            cert_dir=str(workdir / "pki"))
        assert not errors, errors
        instance = instances[0]
        serving = instance["serving_cert"]
        result, output = issue_cert(ansible_playbook, workdir, dict(
            cert_path=serving["cert"], key_path=serving["key"], common_name=serving["common_name"],
            ip_sans=serving["ip_sans"], dns_sans=serving["dns_sans"], ca_cert=str(api.certs.ca_file),
            ca_key=str(ca_key), owner=str(os.getuid()), group=str(os.getgid())))
        (workdir / "etc").mkdir()
        Path(instance["config_path"]).write_text(instance["config_rendered"])
        log = (workdir / "kube-scheduler.log").open("wb")
        scheduler = subprocess.Popen([os.environ[SCHEDULER_VARIABLE]] + instance["flags"],  # pylint: disable=consider-using-with
                                     stdout=log, stderr=subprocess.STDOUT)
        try:
            context = ssl.create_default_context(cafile=str(api.certs.ca_file))
            wait_for("kube-scheduler to answer /livez (log: %s)" % log.name,
                     lambda: scheduler.poll() is None and _get(instance, "/livez", context)[0] == 200, timeout=90)
            yield {"api": api, "instance": instance, "context": context, "workdir": workdir, "issued": result,
                   "issue_output": output, "ca_key": ca_key, "scheduler": scheduler}
        finally:
            scheduler.terminate()
            scheduler.wait(timeout=30)


def _get(instance, path, context, token=None, host="127.0.0.1"):
    request = urllib.request.Request("https://%s:%d%s" % (host, instance["secure_port"], path))
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _token(api, namespace, name):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=600))
    return client.CoreV1Api(api.client).create_namespaced_service_account_token(name, namespace, request).status.token


def _create(api, objects):
    from kubernetes import dynamic  # pylint: disable=import-outside-toplevel
    resources = dynamic.DynamicClient(api.client).resources
    for obj in objects:
        resources.get(api_version=obj["apiVersion"], kind=obj["kind"]).create(
            body=obj, namespace=obj["metadata"].get("namespace"))


def attempts(text):
    """(profile, result) -> value of scheduler_schedule_attempts_total in a /metrics text."""
    found = {}
    for match in re.finditer(r'^scheduler_schedule_attempts_total\{([^}]*)\} (\S+)$', text, re.MULTILINE):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
        found[(labels["profile"], labels["result"])] = float(match.group(2))
    return found


def test_reader_token_scrapes_attempts_per_profile_over_verified_tls(cluster):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    api, instance, context = cluster["api"], cluster["instance"], cluster["context"]
    _create(api, metrics_access.reader_objects(READER[1], READER[0]))
    token = _token(api, *READER)
    # One node (no kubelet: the scheduler only needs the object) and three pods: each profile binds one, and the
    # batch profile cannot place one that asks for more CPU than any node has.
    core = client.CoreV1Api(api.client)
    _create(api, [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}])
    core.patch_node_status("node-1", {"status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                                                 "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                                                 "conditions": [{"type": "Ready", "status": "True"}]}})
    pods = [("on-default", "default-scheduler", "100m"), ("on-batch", "batch", "100m"), ("too-big", "batch", "64")]
    for name, scheduler, cpu in pods:
        _create(api, [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                       # The API server taints a new node not-ready (TaintNodesByCondition); no kubelet clears it.
                       "spec": {"schedulerName": scheduler, "automountServiceAccountToken": False,
                                "tolerations": [{"operator": "Exists"}],
                                "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10.1",
                                                "resources": {"requests": {"cpu": cpu}}}]}}])
    wait_for("both fitting pods to be bound", lambda: all(
        core.read_namespaced_pod(name, "default").spec.node_name == "node-1" for name in ("on-default", "on-batch")))

    def scraped():
        status, text = _get(instance, "/metrics", context, token)
        assert status == 200, text[:300]
        seen = attempts(text)
        return seen if seen.get(("batch", "unschedulable"), 0) >= 1 else None
    seen = wait_for("an unschedulable attempt of profile batch in /metrics", scraped, timeout=60)
    assert seen[("default-scheduler", "scheduled")] >= 1
    assert seen[("batch", "scheduled")] >= 1
    assert seen[("batch", "unschedulable")] >= 1
    assert not any(value for (profile, result), value in seen.items() if result == "error"), seen
    # Kept for the docs page (docs/docsite/rst/metrics.rst shows a run's lines).
    _status, text = _get(instance, "/metrics", context, token)
    (cluster["workdir"] / "metrics-sample.txt").write_text("\n".join(
        line for line in text.splitlines() if line.startswith(("scheduler_schedule_attempts_total", "scheduler_pending_pods"))))


def test_the_verify_roles_reading_of_the_real_metrics_is_a_scrapers(cluster):
    """The verify role's parser (scheduler_activity.parse) reads from the real /metrics the same attempts as the
    plain scraper above."""
    api, instance, context = cluster["api"], cluster["instance"], cluster["context"]
    status, text = _get(instance, "/metrics", context, _token(api, *READER))
    assert status == 200, text[:300]
    parsed = scheduler_activity.parse(text)
    assert attempts(text), "no scheduler_schedule_attempts_total series: the first test scheduled pods"
    assert {(profile, result): value for profile, results in parsed["attempts"].items()
            for result, value in results.items()} == attempts(text)


def test_anonymous_and_unbound_tokens_are_refused(cluster):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    api, instance, context = cluster["api"], cluster["instance"], cluster["context"]
    status, body = _get(instance, "/metrics", context)
    (cluster["workdir"] / "anonymous-sample.txt").write_text("%s %s" % (status, body))
    assert status in (401, 403), (status, body[:200])
    client.CoreV1Api(api.client).create_namespaced_service_account("default", client.V1ServiceAccount(
        metadata=client.V1ObjectMeta(name="no-metrics")))
    status, body = _get(instance, "/metrics", context, _token(api, "default", "no-metrics"))
    (cluster["workdir"] / "refused-sample.txt").write_text(body)
    assert status == 403, (status, body[:200])
    assert "system:serviceaccount:default:no-metrics" in body


def test_listens_on_loopback_only_by_default(cluster):
    instance = cluster["instance"]
    assert instance["bind_address"] == "127.0.0.1"
    listeners = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port = local.split(":")
            if state == "0A" and int(port, 16) == instance["secure_port"]:  # LISTEN
                listeners.add(address)
    assert listeners == {"0100007F"}, listeners  # 127.0.0.1, and no 0.0.0.0 (00000000) or [::]


def test_certificate_verifies_and_names_the_node(cluster):
    instance, context = cluster["instance"], cluster["context"]
    with socket.create_connection(("127.0.0.1", instance["secure_port"])) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            peer = tls.getpeercert()
    names = sorted(value for kind, value in peer["subjectAltName"])
    assert socket.gethostname().lower() in names and "127.0.0.1" in names and "localhost" in names, names
    assert "PRIVATE KEY" not in cluster["issue_output"]
    assert cluster["issued"]["changed"] and cluster["issued"]["reason"] == "the certificate or its key is missing"


def test_renewed_only_on_change_and_served_without_restart(cluster, ansible_playbook):
    api, instance, workdir = cluster["api"], cluster["instance"], cluster["workdir"]
    serving = instance["serving_cert"]
    args = dict(cert_path=serving["cert"], key_path=serving["key"], common_name=serving["common_name"],
                ip_sans=serving["ip_sans"], dns_sans=serving["dns_sans"], ca_cert=str(api.certs.ca_file),
                ca_key=str(cluster["ca_key"]), owner=str(os.getuid()), group=str(os.getgid()))
    again, _output = issue_cert(ansible_playbook, workdir, args)
    assert not again["changed"] and again["reason"] is None
    before = again["certificate"]["sha256_fingerprint"]
    renewed, output = issue_cert(ansible_playbook, workdir, dict(args, dns_sans=serving["dns_sans"] + ["metrics.example"]))
    assert renewed["changed"] and renewed["reason"].startswith("its SANs differ"), renewed
    assert "PRIVATE KEY" not in output
    after = renewed["certificate"]["sha256_fingerprint"]
    assert after != before

    def served_fingerprint():
        pem = ssl.get_server_certificate(("127.0.0.1", instance["secure_port"]))
        der = ssl.PEM_cert_to_DER_cert(pem)
        import hashlib  # pylint: disable=import-outside-toplevel
        digest = hashlib.sha256(der).hexdigest().upper()
        return ":".join(digest[i:i + 2] for i in range(0, len(digest), 2)) == after
    wait_for("the running kube-scheduler to serve the renewed certificate", served_fingerprint, timeout=90)
    assert cluster["scheduler"].poll() is None
    # Another CA: issued again, since the certificate no longer verifies against it.
    other = workdir / "other-ca"
    other.mkdir()
    from cluster import Certificates  # pylint: disable=import-outside-toplevel
    other_certs = Certificates(other)
    changed_ca, _output = issue_cert(ansible_playbook, workdir, dict(
        args, dns_sans=serving["dns_sans"] + ["metrics.example"], ca_cert=str(other_certs.ca_file),
        ca_key=str(other_certs.write_ca_key())))
    assert changed_ca["changed"] and "not signed by the cluster CA" in changed_ca["reason"], changed_ca


def test_host_scrape_targets_are_accepted_by_the_api_server(cluster):
    """The Service and EndpointSlice for host instances, created for real (not a dry run)."""
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    api = cluster["api"]
    targets = metrics_access.targets({"m1": [dict(cluster["instance"], bind_address="10.0.0.11")],
                                      "m2": [dict(cluster["instance"], bind_address="fd00::12")]})
    objects = metrics_access.host_target_objects("batch-scheduler", targets["batch-scheduler"], "kube-system")
    _create(api, objects)
    slices = client.DiscoveryV1Api(api.client).list_namespaced_endpoint_slice(
        "kube-system", label_selector="kubernetes.io/service-name=batch-scheduler-metrics").items
    assert sorted(s.address_type for s in slices) == ["IPv4", "IPv6"]
    assert sorted(a for s in slices for e in s.endpoints for a in e.addresses) == ["10.0.0.11", "fd00::12"]


def test_metrics_access_playbook_creates_the_reader_and_the_targets(cluster, ansible_playbook):
    """playbooks/metrics_access.yml with real ansible-playbook and kubernetes.core against the real API server: two
    masters (both this machine, by a local connection) whose instance serves on its node address; without the
    ServiceMonitor CRD it creates the reader, its binding, the Service and EndpointSlice, and writes the plain
    scrape_configs. A second run changes nothing."""
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    api, workdir = cluster["api"], cluster["workdir"]
    inventory = workdir / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"kube_control_plane": {"hosts": {
        "m1": {"kube_scheduler_node_address": "10.0.0.11"}, "m2": {"kube_scheduler_node_address": "10.0.0.12"}}}},
        "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                 "kube_scheduler_version": VERSION, "kube_scheduler_metrics_reader": "observability/scraper",
                 "kube_scheduler_instances": [{"name": "edge-scheduler", "bind_address": "node", "secure_port": 10270,
                                               "config": {"leaderElection": {"resourceName": "edge-scheduler"},
                                                          "profiles": [{"schedulerName": "edge"}]}}]}}}))
    client.CoreV1Api(api.client).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="observability")))
    scrape = workdir / "scrape.yml"
    args = ["-i", inventory, str(REPO / "playbooks" / "metrics_access.yml"),
            "-e", "kube_scheduler_metrics_scrape_config_path=%s" % scrape]
    env = {"K8S_AUTH_KUBECONFIG": str(api.kubeconfig)}
    first = ansible_playbook(args, cwd=workdir, env=env)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    rbac = client.RbacAuthorizationV1Api(api.client)
    rule = rbac.read_cluster_role("metrics-reader").rules[0]
    urls = getattr(rule, "non_resource_urls", None) or getattr(rule, "non_resource_ur_ls", None)
    assert urls == ["/metrics"]
    assert rule.verbs == ["get"]
    binding = rbac.read_cluster_role_binding("metrics-reader:observability:scraper")
    assert [(s.kind, s.namespace, s.name) for s in binding.subjects] == [("ServiceAccount", "observability", "scraper")]
    slices = client.DiscoveryV1Api(api.client).list_namespaced_endpoint_slice(
        "kube-system", label_selector="kubernetes.io/service-name=edge-scheduler-metrics").items
    assert sorted(a for s in slices for e in s.endpoints for a in e.addresses) == ["10.0.0.11", "10.0.0.12"]
    jobs = yaml.safe_load(scrape.read_text())["scrape_configs"]
    assert [job["static_configs"][0]["targets"] for job in jobs] == [["10.0.0.11:10270", "10.0.0.12:10270"]]
    (workdir / "scrape-sample.yml").write_text(scrape.read_text())
    again = ansible_playbook(args, cwd=workdir, env=env)
    assert again.returncode == 0 and re.search(r"localhost\s*: ok=\d+\s+changed=0", again.stdout), again.stdout[-3000:]
