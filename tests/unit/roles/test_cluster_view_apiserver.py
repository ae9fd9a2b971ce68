"""Against a real kube-apiserver: the plan's lease access check, verify's lease audit and the
cluster-wide pre-upgrade scan.

A real kube-apiserver (1.35, `make binaries`) and etcd run as local processes (tests/controlplane/local_apiserver.py)
with kubeadm's RBAC bootstrap policy. The instance's identity is kubeadm's: a client certificate for
``system:kube-scheduler``, embedded in its kubeconfig as kubeadm writes scheduler.conf. The bootstrap ClusterRole
lets it hold the lease named ``kube-scheduler`` only, so an extra scheduler with a lease of its own starts and never
leads (kubespray #11134): the plan must refuse with the Role and RoleBinding to add, pass once they exist, create
them in the apply call when the operator opts in (never in a plan), and say so when the API server is unreachable.
The verify role (real ansible-playbook, a Check job) reads planted leases and flags a foreign contender, a stale
holder and two configs behind one lease. The upgrade scan (playbooks/upgrade_scan.yml) finds a v1beta3 config and
a v1 config with a plugin removed in 1.31 in ConfigMaps of two namespaces, and a static pod's config on a master.

Without the binaries the module is skipped with a line naming the variables.
"""
from __future__ import annotations

import base64
import datetime
import json
import socket
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.kube_api import _BlockReader
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import APPLY, PLAN, Engine
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import PreflightFailed

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "controlplane"))
sys.path.insert(0, str(REPO / "tests" / "unit" / "plugins" / "module_utils" / "rollout"))
from cluster import wait_for  # noqa: E402  pylint: disable=wrong-import-position
from local_apiserver import LocalApiServer, missing_binaries  # noqa: E402  pylint: disable=wrong-import-position
from test_engine import FakeStrategy, FakeWaiter, instance, params  # noqa: E402  pylint: disable=wrong-import-position

if missing_binaries():
    pytest.skip("the lease access test needs real binaries (make binaries): missing "
                + ", ".join(missing_binaries()), allow_module_level=True)


def _data(path):
    return base64.b64encode(Path(path).read_bytes()).decode("ascii")


def identity_kubeconfig(api, user, organization=None, server=None):
    """A kubeconfig as kubeadm writes scheduler.conf: everything embedded, kubectl's layout."""
    certs = api.certs
    cert, key = certs.issue(user.replace(":", "-"), user, organization)
    admin = yaml.safe_load(api.kubeconfig.read_text())
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "%s@kubernetes" % user, "preferences": {},
        "clusters": [{"name": "kubernetes", "cluster": {
            "server": server or admin["clusters"][0]["cluster"]["server"],
            "certificate-authority-data": _data(certs.ca_file)}}],
        "contexts": [{"name": "%s@kubernetes" % user, "context": {"cluster": "kubernetes", "user": user}}],
        "users": [{"name": user, "user": {"client-certificate-data": _data(cert), "client-key-data": _data(key)}}]})


def can(api, user, verb, lease, namespace="kube-system"):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    review = client.AuthorizationV1Api(api.client).create_subject_access_review(client.V1SubjectAccessReview(
        spec=client.V1SubjectAccessReviewSpec(user=user, resource_attributes=client.V1ResourceAttributes(
            group="coordination.k8s.io", resource="leases", name=lease, namespace=namespace, verb=verb))))
    return review.status.allowed


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    with LocalApiServer(tmp_path_factory.mktemp("apiserver")) as server:
        # Some distributions' bootstrap Role system::leader-locking-kube-scheduler (OpenShift's) lets
        # system:kube-scheduler get and update every lease in kube-system; upstream's, which kubeadm clusters and
        # this test's API server run, covers only the ConfigMap kube-scheduler: the Role is set to it either way
        # (test_apiserver_dry_run.py does the same). The API server creates its bootstrap Roles after it answers:
        # on a busy machine the patch came first and found none.
        rbac = client.RbacAuthorizationV1Api(server.client)
        wait_for("the bootstrap Role system::leader-locking-kube-scheduler", lambda: rbac.read_namespaced_role(
            "system::leader-locking-kube-scheduler", "kube-system"), timeout=60)
        rbac.patch_namespaced_role(
            "system::leader-locking-kube-scheduler", "kube-system", {"rules": [
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["watch"]},
                {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["kube-scheduler"],
                 "verbs": ["get", "update"]}]})
        wait_for("upstream's bootstrap policy", lambda: not can(server, "system:kube-scheduler", "get", "bin-packing"),
                 timeout=30)
        yield server


def plan_with_lease(tmp_path, kubeconfig_text, lease, create=False, admin=None):
    """The engine's parameters for one instance whose kubeconfig this rollout writes (kubeconfig_content)."""
    kubeconfig = "%s/etc/scheduler.conf" % tmp_path
    one = instance(tmp_path, "extra", 10300)
    one["files"].insert(1, {"path": kubeconfig, "content": kubeconfig_text, "owner": "root", "group": "root",
                            "mode": "0600", "secret": True})
    one["lease_access"] = {"kubeconfig": kubeconfig, "namespace": lease[0], "name": lease[1]}
    return params(tmp_path, [one], lease_rbac={"create": create, "kubeconfig": admin})


def test_kubeadms_scheduler_identity_may_hold_the_default_lease(api, tmp_path):
    """No false alarm: the bootstrap policy lets system:kube-scheduler hold kube-system/kube-scheduler."""
    text = identity_kubeconfig(api, "system:kube-scheduler")
    result = Engine(plan_with_lease(tmp_path, text, ("kube-system", "kube-scheduler")), FakeStrategy(),
                    FakeWaiter()).run(PLAN)
    access = result["plan"]["instances"]["extra"]["lease_access"]
    assert access["status"] == "allowed", access["detail"]
    assert access["identity"] == "system:kube-scheduler"


def test_a_lease_of_its_own_is_refused_with_the_rbac_to_add_and_passes_once_it_exists(api, tmp_path):
    from kubernetes import utils  # pylint: disable=import-outside-toplevel
    text = identity_kubeconfig(api, "system:kube-scheduler")
    p = plan_with_lease(tmp_path, text, ("kube-system", "bin-packing"))
    with pytest.raises(PreflightFailed) as refused:
        Engine(p, FakeStrategy(), FakeWaiter()).run(PLAN)
    message = str(refused.value)
    print(message)
    assert message.startswith("nothing was changed: extra would never lead: system:kube-scheduler may not "
                              "get/update lease kube-system/bin-packing")
    assert "kube_scheduler_lease_rbac_create: true" in message
    objects = list(yaml.safe_load_all(message.split("create them:\n", 1)[1]))
    assert [o["kind"] for o in objects] == ["Role", "RoleBinding"]
    assert objects[1]["subjects"] == [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io",
                                       "name": "system:kube-scheduler"}]
    assert refused.value.plan["instances"]["extra"]["lease_access"]["missing"] == ["get", "update"]
    # The operator applies exactly what the message says; the same plan then passes.
    utils.create_from_yaml(api.client, yaml_objects=objects)
    result = Engine(p, FakeStrategy(), FakeWaiter()).run(PLAN)
    assert result["plan"]["instances"]["extra"]["lease_access"]["status"] == "allowed"


def test_a_service_account_gets_a_service_account_subject_and_misses_create_too(api, tmp_path):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    core = client.CoreV1Api(api.client)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="batch")))
    core.create_namespaced_service_account("batch", client.V1ServiceAccount(
        metadata=client.V1ObjectMeta(name="volcano")))
    token = core.create_namespaced_service_account_token("volcano", "batch", client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[]))).status.token
    config = yaml.safe_load(identity_kubeconfig(api, "unused"))
    config["users"][0]["user"] = {"token": token}
    p = plan_with_lease(tmp_path, yaml.safe_dump(config), ("batch", "volcano"))
    with pytest.raises(PreflightFailed) as refused:
        Engine(p, FakeStrategy(), FakeWaiter()).run(PLAN)
    access = refused.value.plan["instances"]["extra"]["lease_access"]
    assert access["identity"] == "system:serviceaccount:batch:volcano"
    assert access["missing"] == ["get", "update", "create"]
    role, binding = yaml.safe_load_all(access["rbac_yaml"])
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "volcano", "namespace": "batch"}]
    assert role["rules"][1] == {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]}


def test_the_apply_call_creates_the_rbac_when_asked_and_a_plan_never_does(api, tmp_path):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    text = identity_kubeconfig(api, "system:kube-scheduler")
    p = plan_with_lease(tmp_path, text, ("kube-system", "spread"), create=True, admin=str(api.kubeconfig))
    planned = Engine(dict(p), FakeStrategy(), FakeWaiter()).run(PLAN)
    assert planned["changed"] is True  # pending: the apply step has something to do
    assert planned["plan"]["instances"]["extra"]["lease_access"]["will_create"] is True
    rbac = client.RbacAuthorizationV1Api(api.client)
    assert not [r for r in rbac.list_namespaced_role("kube-system").items if r.metadata.name == "kubesched:lease:spread"]
    applied = Engine(p, FakeStrategy(), FakeWaiter()).run(APPLY)
    assert applied["lease_rbac_created"] == ["Role kube-system/kubesched:lease:spread",
                                             "RoleBinding kube-system/kubesched:lease:spread"]
    assert applied["plan"]["instances"]["extra"]["lease_access"]["status"] == "allowed"
    # Idempotent: the next plan finds nothing to create.
    again = Engine(p, FakeStrategy(), FakeWaiter()).run(PLAN)
    assert "will_create" not in again["plan"]["instances"]["extra"]["lease_access"]


def test_an_unreachable_api_server_is_a_warning_not_a_silent_pass(api, tmp_path):
    text = identity_kubeconfig(api, "system:kube-scheduler", server="https://127.0.0.1:1")
    result = Engine(plan_with_lease(tmp_path, text, ("kube-system", "bin-packing")), FakeStrategy(),
                    FakeWaiter()).run(PLAN)
    access = result["plan"]["instances"]["extra"]["lease_access"]
    assert access["status"] == "not checked"
    assert "unreachable from this master" in access["detail"]
    assert any("extra: lease kube-system/bin-packing: the lease access check did not run" in w
               for w in result["warnings"])


def test_the_plan_reads_who_holds_the_lease_and_whether_it_is_this_master(api, tmp_path):
    """The plan knows each lease's holder (kube-scheduler's holderIdentity is <hostname>_<uuid>) and
    whether it is this master, through the same connection as the access check; the playbooks order the holders
    last from it. A lease that cannot be read leaves the holder unknown with the reason, and fails nothing."""
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    coordination = client.CoordinationV1Api(api.client)
    text = identity_kubeconfig(api, "system:kube-scheduler")
    p = plan_with_lease(tmp_path, text, ("kube-system", "kube-scheduler"))

    def access():
        return Engine(dict(p), FakeStrategy(), FakeWaiter()).run(PLAN)["plan"]["instances"]["extra"]["lease_access"]

    first = access()
    assert (first["holder"], first["held_here"], first["holder_detail"]) == ("", False, "no lease yet")
    mine = "%s_4f1c2d7e-1b7a-4a57-9d43-2a1f0c8e5b11" % socket.gethostname()
    coordination.create_namespaced_lease("kube-system", client.V1Lease(
        metadata=client.V1ObjectMeta(name="kube-scheduler"),
        spec=client.V1LeaseSpec(holder_identity=mine, lease_duration_seconds=15)))
    try:
        here = access()
        assert (here["holder"], here["held_here"], here["status"]) == (mine, True, "allowed")
        coordination.patch_namespaced_lease("kube-scheduler", "kube-system", {"spec": {"holderIdentity": "master-2_9a0b"}})
        there = access()
    finally:  # the lease audit below plants its own
        coordination.delete_namespaced_lease("kube-scheduler", "kube-system")
    assert (there["holder"], there["held_here"], there["holder_detail"]) == ("master-2_9a0b", False, "held by master-2_9a0b")
    # A lease this identity may not get: its holder stays unknown, with the API server's answer.
    with pytest.raises(PreflightFailed) as refused:
        Engine(plan_with_lease(tmp_path, text, ("kube-system", "holder-forbidden")), FakeStrategy(), FakeWaiter()).run(PLAN)
    forbidden = refused.value.plan["instances"]["extra"]["lease_access"]
    assert forbidden["holder"] is None and forbidden["holder_detail"].startswith("the lease could not be read: HTTP 403")


def test_the_masters_reader_without_pyyaml_reads_kubeadms_and_kubectls_kubeconfigs(api):
    text = identity_kubeconfig(api, "system:kube-scheduler")  # lists unindented under their key, as kubectl writes
    indented = (  # and indented, quoted, with comments, as people write them
        "# written by hand\napiVersion: v1\nkind: Config\nclusters:\n  - name: 'kubernetes'\n    cluster:\n"
        "      server: \"https://10.0.0.1:6443\"\n      insecure-skip-tls-verify: true\ncontexts:\n"
        "  - name: x\n    context: {cluster: kubernetes, user: u}\ncurrent-context: x\nusers:\n  - name: u\n"
        "    user:\n      token: abc.def\npreferences: {}\n")
    assert _BlockReader(text).read() == yaml.safe_load(text)
    assert _BlockReader(api.kubeconfig.read_text()).read() == yaml.safe_load(api.kubeconfig.read_text())
    with pytest.raises(Exception, match="a YAML form this reader does not take"):
        _BlockReader(indented).read()  # a flow mapping: refused by name, never misread
    plain = indented.replace("context: {cluster: kubernetes, user: u}", "context:\n      cluster: kubernetes\n      user: u")
    assert _BlockReader(plain).read() == yaml.safe_load(plain)


# --- verify's lease audit ----------------------------------------------------------------------------------------

def lease(api, namespace, name, holder, renewed_ago, duration=15):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    renewed = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=renewed_ago)
    client.CoordinationV1Api(api.client).create_namespaced_lease(namespace, client.V1Lease(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1LeaseSpec(holder_identity=holder, lease_duration_seconds=duration, acquire_time=renewed,
                                renew_time=renewed)))


def inventory_of_two_masters(tmp_path, api):
    """m1 and m2 (both this machine, so kube-scheduler's holderIdentity starts with its host name) run instance
    batch behind lease kube-system/batch, with different config files (a rollout stopped half-way), and instance
    spread behind kube-system/spread."""
    instances = [
        {"name": "batch", "secure_port": 10301,
         "config": {"leaderElection": {"resourceName": "batch"}, "profiles": [{"schedulerName": "batch"}]}},
        {"name": "spread", "secure_port": 10302,
         "config": {"leaderElection": {"resourceName": "spread"}, "profiles": [{"schedulerName": "spread"}]}}]
    hosts = {}
    for host in ("m1", "m2"):
        config_dir = tmp_path / host
        config_dir.mkdir()
        for instance in instances:
            # batch differs between the masters, spread does not.
            (config_dir / (instance["name"] + ".yaml")).write_text(
                "# %s on %s\n" % (instance["name"], host if instance["name"] == "batch" else "every master"))
        hosts[host] = {"ansible_connection": "local", "kube_scheduler_config_dir": str(config_dir)}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump({"all": {"children": {"kube_control_plane": {"hosts": hosts}}, "vars": {
        "ansible_python_interpreter": sys.executable, "kube_scheduler_instances": instances,
        "kube_scheduler_verify_version": "1.35.4", "kube_scheduler_verify_health": False,
        "kube_scheduler_verify_k8s_kubeconfig": str(api.kubeconfig),
        "kube_scheduler_verify_lease_audit_fail": True}}}))
    return path


def test_verify_flags_a_foreign_contender_a_stale_holder_and_two_configs_behind_one_lease(
        api, tmp_path, ansible_playbook):
    here = socket.gethostname()
    # Durations long enough for a loaded machine's playbook run, but the one that is stale.
    lease(api, "kube-system", "batch", "batch-scheduler-7d4b9c-x2x9q_3f1c2a4e-0000-4000-8000-000000000001", 1, 3600)
    lease(api, "kube-system", "spread", "%s_0d7e1b52-0000-4000-8000-000000000002" % here, 600)
    lease(api, "kube-system", "kube-scheduler", "%s_9a9a9a9a-0000-4000-8000-000000000003" % here, 2, 3600)
    lease(api, "kube-system", "kube-controller-manager", "elsewhere_1", 2)  # not a scheduler's: not listed
    run = ansible_playbook(["-i", inventory_of_two_masters(tmp_path, api), "--check",
                            REPO / "playbooks" / "verify.yml"],
                           env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default"})
    out = run.stdout
    print(out[out.find("TASK [kubesched.schedulers.verify : Summary]"):])
    assert run.returncode == 2, out[-4000:]
    failure = out[out.rfind("Verification failed."):]
    assert "Verification failed." in out, out[-6000:] + run.stderr[-2000:]
    assert ("Lease kube-system/batch: foreign contender, two configs: held by "
            "batch-scheduler-7d4b9c-x2x9q_3f1c2a4e-0000-4000-8000-000000000001, which is not %s" % here) in failure
    assert "the masters behind it run different configs" in failure
    assert "Lease kube-system/spread: stale: renewed 6" in failure and "longer than its 15s lease duration" in failure
    assert "kube-system/kube-scheduler" not in failure  # listed, not flagged: not this inventory's
    summary = out[out.find("TASK [kubesched.schedulers.verify : Summary]"):]
    assert "kube-system/kube-scheduler" in summary and "(not ours)" in summary
    assert "kube-controller-manager" not in summary


def test_verify_passes_the_audit_when_the_inventory_holds_its_leases(api, tmp_path, ansible_playbook):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    here = socket.gethostname()
    coordination = client.CoordinationV1Api(api.client)
    for name in ("batch", "spread"):
        renewed = datetime.datetime.now(datetime.timezone.utc)
        coordination.patch_namespaced_lease(name, "kube-system", {"spec": {
            "holderIdentity": "%s_%s" % (here, name), "leaseDurationSeconds": 3600,
            "renewTime": renewed.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}})
    path = inventory_of_two_masters(tmp_path, api)
    (tmp_path / "m2" / "batch.yaml").write_text((tmp_path / "m1" / "batch.yaml").read_text())
    run = ansible_playbook(["-i", path, "--check", REPO / "playbooks" / "verify.yml"],
                           env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default"})
    assert run.returncode == 0, run.stdout[-4000:]


# --- the cluster-wide pre-upgrade scan ---------------------------------------------------------------------------

STORK_V1BETA3 = """apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  resourceName: stork
  resourceNamespace: storage
profiles:
- schedulerName: stork
"""
VOLUME_V1_EBS = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: volume-aware
  plugins:
    filter:
      enabled:
      - name: EBSLimits
"""
STATIC_POD_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
"""


def test_the_scan_finds_every_scheduler_config_in_configmaps_static_pods_and_the_inventory(
        api, tmp_path, ansible_playbook):
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    core = client.CoreV1Api(api.client)
    for namespace in ("storage", "volumes"):
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    core.create_namespaced_config_map("storage", client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="stork-config"),
        data={"config.yaml": STORK_V1BETA3, "policy.cfg": '{"kind": "Policy"}'}))
    core.create_namespaced_config_map("volumes", client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="volume-scheduler"), data={"scheduler-config.yaml": VOLUME_V1_EBS}))
    core.create_namespaced_config_map("default", client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="notes"), data={"README": "kind: KubeSchedulerConfiguration, see docs"}))
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (tmp_path / "kube-scheduler.yaml").write_text(STATIC_POD_CONFIG)
    (manifests / "kube-scheduler.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "kube-scheduler", "namespace": "kube-system"},
        "spec": {"containers": [{"name": "kube-scheduler", "image": "registry.k8s.io/kube-scheduler:v1.30.12",
                                 "command": ["kube-scheduler", "--config=%s" % (tmp_path / "kube-scheduler.yaml"),
                                             "--v=2"]}]}}))
    # kubeadm's own manifest runs from flags: the defaults of each minor and its flags are checked.
    (manifests / "kube-scheduler-kubeadm.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "kube-scheduler-kubeadm", "namespace": "kube-system"},
        "spec": {"containers": [{"name": "kube-scheduler", "image": "registry.k8s.io/kube-scheduler:v1.30.12",
                                 "command": ["kube-scheduler", "--kubeconfig=/etc/kubernetes/scheduler.conf",
                                             "--leader-elect=true"]}]}}))
    (manifests / "etcd.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "spec": {
        "containers": [{"name": "etcd", "command": ["etcd", "--config=/etc/etcd.yaml"]}]}}))
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"kube_control_plane": {"hosts": {"m1": {
        "ansible_connection": "local", "kube_scheduler_manifest_dir": str(manifests)}}}}, "vars": {
        "ansible_python_interpreter": sys.executable, "ansible_become": False, "kube_scheduler_version": "1.30.12",
        "kube_scheduler_instances": [{"name": "kube-scheduler", "default_scheduler": True}],
        "kube_scheduler_upgrade_kubeconfig": str(api.kubeconfig)}}}))
    run = ansible_playbook(["-i", inventory, "--check", REPO / "playbooks" / "upgrade_scan.yml",
                            "-e", json.dumps({"kube_scheduler_upgrade_to": ["1.31", "1.35"]})],
                           env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default"})
    out = run.stdout
    print(out[out.find("TASK [Report a table per object]"):])
    assert run.returncode == 2, out[-5000:] + run.stderr[-2000:]
    report = out[out.find("TASK [Report a table per object]"):out.find("TASK [Fail when a config")]
    tables = report.split('        "",\n')
    assert len(tables) == 5, report  # two ConfigMaps, two static pods, one instance; not the notes
    stork, volume = [next(t for t in tables if head in t) for head in (
        "configmap storage/stork-config key config.yaml (kubescheduler.config.k8s.io/v1beta3)",
        "configmap volumes/volume-scheduler key scheduler-config.yaml (kubescheduler.config.k8s.io/v1)")]
    assert stork.count("NO      apiVersion  no kind \\\"KubeSchedulerConfiguration\\\" is registered for version "
                       "\\\"kubescheduler.config.k8s.io/v1beta3\\\"") == 3  # now, 1.31 and 1.35
    assert "1.30 (now)  yes" in volume
    assert volume.count('NO      profiles[0].plugins.filter.enabled[0]  profiles[0].plugins.filter.enabled[0]: '
                        'Invalid value: \\"EBSLimits\\"') == 2
    pod = next(t for t in tables if "host m1 path %s (kubescheduler.config.k8s.io/v1)" % (tmp_path / "kube-scheduler.yaml") in t)
    assert "default plugin EBSLimits disappears" in pod  # the defaults that change on 1.31
    kubeadm = next(t for t in tables if "host m1 path %s (no --config: the defaults of each minor)"
                   % (manifests / "kube-scheduler-kubeadm.yaml") in t)
    assert "default plugin EBSLimits disappears" in kubeadm and " NO " not in kubeadm
    assert "inventory m1 instance kube-scheduler (kubescheduler.config.k8s.io/v1, the collection's default)" in report
    assert "notes" not in report and "policy.cfg" not in report
    failure = out[out.find("TASK [Fail when a config"):]
    assert ("configmap storage/stork-config key config.yaml; configmap volumes/volume-scheduler key "
            "scheduler-config.yaml would not start on a target minor") in failure


def test_the_scan_names_the_rbac_it_lacks(api, tmp_path, ansible_playbook):
    kubeconfig = tmp_path / "nobody.conf"
    kubeconfig.write_text(identity_kubeconfig(api, "nobody"))
    play = tmp_path / "scan.yml"
    play.write_text(yaml.safe_dump([{"name": "Scan", "hosts": "localhost", "gather_facts": False, "tasks": [{
        "name": "Scan the cluster", "kubesched.schedulers.scheduler_upgrade_check": {
            "kubeconfig": str(kubeconfig), "current_version": "1.30", "target_versions": ["1.35"]}}]}]))
    run = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                            "--check", play], env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default"})
    assert run.returncode == 2, run.stdout[-3000:]
    assert ("kubeconfig: listing the ConfigMaps of every namespace was refused (HTTP 403 Forbidden); the scan needs "
            "list on configmaps cluster-wide") in run.stdout
