"""kubesched.schedulers.placement_preview through real ansible-playbook, on real parts: a local etcd and
kube-apiserver play the cluster (Node objects kept Ready, pods bound by the real kube-scheduler), and the preview's
prediction for MostAllocated is compared with what the same kube-scheduler binds in that cluster once the cluster
runs MostAllocated (fidelity). Then what the preview refuses before anything starts: a config the minor refuses,
extenders, a binary of another component or minor, a kubeconfig that may not list what the snapshot reads."""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO / "tests" / "controlplane"))
from local_apiserver import LocalApiServer, missing_binaries  # noqa: E402  pylint: disable=wrong-import-position
from preview_binaries import real_binaries, scheduler_plugins_scheduler, serve_scheduler_plugins_objects  # noqa: E402  pylint: disable=wrong-import-position

MINOR, BINARIES = real_binaries(("1.35",))
if MINOR is None or missing_binaries():
    pytest.skip("no real binaries: %s" % (BINARIES if MINOR is None else ", ".join(missing_binaries())),
                allow_module_level=True)

NODES = 6
CPU_REQUEST_MILLI = 500
PODS = ["web-%02d" % index for index in range(20)]
TOO_BIG = "too-big"


def strategy(kind):
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": kind}}}]}]}


def pod(name, cpu):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]}}


class Cluster:
    """The "real cluster": Node objects (no kubelet) kept Ready with no taint, the real kube-scheduler in it."""

    def __init__(self, api: LocalApiServer, directory: Path):
        from kubernetes import client  # pylint: disable=import-outside-toplevel
        self.api, self.directory = api, directory
        self.core = client.CoreV1Api(api.client)
        self.scheduler = None

    def add_nodes(self):
        self.api.ready_nodes(dict(("node-%d" % index, {"topology.kubernetes.io/zone": "zone-%s" % "ab"[index % 2]})
                                  for index in range(NODES)), {"cpu": "4", "memory": "8Gi", "pods": "110"})

    def start_scheduler(self, kind):
        config = dict(strategy(kind), clientConnection={"kubeconfig": str(self.api.kubeconfig)},
                      leaderElection={"leaderElect": False})
        path = self.directory / ("scheduler-%s.yaml" % kind)
        path.write_text(yaml.safe_dump(config))
        log = (self.directory / ("scheduler-%s.log" % kind)).open("wb")
        self.scheduler = subprocess.Popen([BINARIES["kube-scheduler"], "--config=%s" % path, "--secure-port=0"],  # pylint: disable=consider-using-with
                                          stdout=log, stderr=subprocess.STDOUT)

    def stop_scheduler(self):
        self.scheduler.terminate()
        self.scheduler.wait(timeout=30)

    def create_pods(self):
        for name in PODS:
            self.core.create_namespaced_pod("apps", pod(name, "%dm" % CPU_REQUEST_MILLI))
        self.core.create_namespaced_pod("apps", pod(TOO_BIG, "5"))

    def delete_pods(self):
        self.core.delete_collection_namespaced_pod("apps", grace_period_seconds=0)
        deadline = time.monotonic() + 60
        while self.core.list_namespaced_pod("apps").items and time.monotonic() < deadline:
            time.sleep(0.3)

    def placed(self):
        """(pod -> node of the bound pods, pod -> kube-scheduler's message of the unschedulable), once decided."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            bound, refused = {}, {}
            for item in self.core.list_namespaced_pod("apps").items:
                if item.spec.node_name:
                    bound[item.metadata.name] = item.spec.node_name
                for condition in item.status.conditions or ():
                    if condition.type == "PodScheduled" and condition.status == "False":
                        refused[item.metadata.name] = condition.message
            if len(bound) + len(refused) == len(PODS) + 1:
                return bound, refused
            time.sleep(0.5)
        raise AssertionError("the cluster's kube-scheduler did not decide every pod")


def aggregates(bound):
    """Nodes used and the sorted per-node requested CPU of the cluster's own placement, counted here."""
    per_node = {}
    for name, node in bound.items():
        per_node[node] = per_node.get(node, 0) + (5000 if name == TOO_BIG else CPU_REQUEST_MILLI)
    return len(per_node), sorted(per_node.values())


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cluster")
    with LocalApiServer(directory) as api:
        real = Cluster(api, directory)
        real.add_nodes()
        api.namespaces("apps")
        real.start_scheduler("LeastAllocated")
        real.create_pods()
        least = real.placed()
        yield real, least
        if real.scheduler and real.scheduler.poll() is None:
            real.stop_scheduler()


def run_preview(ansible_playbook, tmp_path, tasks, env=None):
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play))
    temp = tmp_path / "temp"
    temp.mkdir()
    proc = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                             "play.yml"], cwd=tmp_path, timeout=900,
                            env=dict(ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", TMPDIR=str(temp),
                                     ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible-tmp"), **(env or {})))
    assert "{\n" in proc.stdout, proc.stdout + proc.stderr
    report = json.loads(proc.stdout[proc.stdout.find("{\n"):])
    results = dict((task["task"]["name"], task["hosts"]["localhost"]) for task in report["plays"][0]["tasks"])
    # Nothing of the throwaway control plane is left, whatever the task's outcome.
    assert [path.name for path in temp.iterdir()] == []
    return results


def _binaries():
    return {"etcd": BINARIES["etcd"], "kube_apiserver": BINARIES["kube-apiserver"],
            "kube_scheduler": BINARIES["kube-scheduler"]}


def test_the_preview_of_most_allocated_is_what_the_cluster_does_with_it(cluster, ansible_playbook, tmp_path):
    real, (least_bound, least_refused) = cluster
    results = run_preview(ansible_playbook, tmp_path, [{
        "name": "preview", "kubesched.schedulers.placement_preview": {
            "kubeconfig": str(real.api.kubeconfig), "kubernetes_version": MINOR,
            "current": strategy("LeastAllocated"), "proposed": strategy("MostAllocated"),
            "names": ["LeastAllocated", "MostAllocated"], "binaries": _binaries(), "runs": 1,
            "picture": str(tmp_path / "preview.html")}}])
    preview = results["preview"]
    assert not preview.get("failed"), preview.get("msg")
    assert preview["changed"] is False
    # The cluster, now run with the proposed configuration: the same pods, created again in the same order.
    real.stop_scheduler()
    real.delete_pods()
    real.start_scheduler("MostAllocated")
    real.create_pods()
    most_bound, most_refused = real.placed()
    for label, bound, refused in (("LeastAllocated", least_bound, least_refused),
                                  ("MostAllocated", most_bound, most_refused)):
        nodes_used, per_node = aggregates(bound)
        predicted = preview["configs"][label]
        for run in predicted["runs"]:
            assert run["nodes_used"] == nodes_used, label
            assert run["unschedulable"] == len(refused) == 1, label
        assert sorted(value["cpu_millicores"] for value in predicted["per_node"].values() if value["cpu_millicores"]) \
            == per_node, label
        assert predicted["unschedulable_pods"] == dict(("apps/" + name, message) for name, message in refused.items())
    # MostAllocated packs what LeastAllocated spreads: the numbers this test is about.
    assert aggregates(most_bound)[0] < aggregates(least_bound)[0]
    assert preview["snapshot"]["nodes"] == NODES and preview["snapshot"]["pods"] == len(PODS) + 1
    # The first column is the cluster as the snapshot found it: LeastAllocated's own binding.
    assert preview["configs"]["cluster now"]["runs"][0]["nodes_used"] == aggregates(least_bound)[0]
    lines = preview["table"]
    assert lines[0].split() == ["cluster", "now", "LeastAllocated", "MostAllocated"]
    assert [line.split()[2:] for line in lines if line.startswith("nodes used")] == [
        [str(aggregates(least_bound)[0])] * 2 + [str(aggregates(most_bound)[0])]]
    page = Path(preview["picture"]).read_text()
    svg = ET.fromstring(page[page.index("<svg"):page.index("</svg>") + 6])
    assert len([rect for rect in svg.iter("{http://www.w3.org/2000/svg}rect") if len(rect)]) == NODES * 2 * 2


def test_what_it_refuses_before_anything_starts(cluster, ansible_playbook, tmp_path):
    real, _placed = cluster
    viewer_cert, viewer_key = real.api.certs.issue("viewer", "jane")
    kubeconfig = yaml.safe_load(real.api.kubeconfig.read_text())
    kubeconfig["users"][0]["user"] = {"client-certificate": str(viewer_cert), "client-key": str(viewer_key)}
    (tmp_path / "jane.conf").write_text(yaml.safe_dump(kubeconfig))
    base = {"kubeconfig": str(real.api.kubeconfig), "kubernetes_version": MINOR, "current": strategy("LeastAllocated"),
            "proposed": strategy("MostAllocated"), "binaries": _binaries(), "runs": 1}
    with_extender = dict(strategy("MostAllocated"), extenders=[{"urlPrefix": "http://127.0.0.1:1", "filterVerb": "f"}])
    tasks = [
        ("refused config", dict(base, proposed=strategy("Most"))),
        ("extenders", dict(base, proposed=with_extender)),
        ("wrong component", dict(base, binaries=dict(_binaries(), kube_apiserver=BINARIES["kube-scheduler"]))),
        ("wrong minor", dict(base, kubernetes_version="1.37")),
        ("no permission", dict(base, kubeconfig=str(tmp_path / "jane.conf"))),
        ("scheduler-plugins of another minor", dict(base, scheduler_plugins_version="0.34.7")),
        ("other projects' objects", dict(base, kubernetes_version="1.34", scheduler_plugins_version="0.34.7",
                                         proposed={"profiles": [{"schedulerName": "topology", "plugins": {
                                             "multiPoint": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}}}]})),
    ]
    results = run_preview(ansible_playbook, tmp_path, [
        {"name": name, "kubesched.schedulers.placement_preview": args, "ignore_errors": True} for name, args in tasks])
    assert all(result.get("failed") for result in results.values()), results
    msg = dict((name, result["msg"]) for name, result in results.items())
    assert msg["refused config"].startswith("proposed: kube-scheduler %s would refuse it, nothing was started:" % MINOR)
    assert 'Unsupported value: "Most"' in msg["refused config"]
    assert "a preview does not call extenders" in msg["extenders"]
    assert msg["wrong component"] == "binaries: kube-apiserver: %s is kube-scheduler, not kube-apiserver" % (
        BINARIES["kube-scheduler"])
    assert msg["wrong minor"].startswith("binaries: kube-apiserver: %s is v%s" % (BINARIES["kube-apiserver"], MINOR))
    assert "the preview is for Kubernetes 1.37" in msg["wrong minor"]
    refusal = msg["no permission"]
    assert ("may not list nodes, namespaces, priorityclasses.scheduling.k8s.io, pods, persistentvolumeclaims, "
            "persistentvolumes, storageclasses.storage.k8s.io, csinodes.storage.k8s.io, csidrivers.storage.k8s.io, "
            "csistoragecapacities.storage.k8s.io, poddisruptionbudgets.policy, deviceclasses.resource.k8s.io, "
            "resourceslices.resource.k8s.io, resourceclaims.resource.k8s.io cluster-wide") in refusal
    role = yaml.safe_load(refusal.split("ClusterRoleBinding to the identity):\n", 1)[1])
    assert role["kind"] == "ClusterRole" and all(rule["verbs"] == ["list"] for rule in role["rules"])
    assert msg["scheduler-plugins of another minor"].startswith(
        "scheduler_plugins_version: scheduler-plugins 0.34.7 is built on Kubernetes 1.34.7, not %s" % MINOR)
    assert msg["other projects' objects"] == (
        "scheduler_plugins_version: the profiles enable NodeResourceTopologyMatch, which reads "
        "noderesourcetopologies.topology.node.k8s.io of other projects; the preview carries scheduler-plugins' own "
        "objects only (PodGroups, ElasticQuotas)")


def test_without_urllib3_and_cryptography_it_names_them_before_anything_starts(ansible_playbook, tmp_path):
    """The controller's Python as one without the two packages (each import of them fails, as ansible-test's import
    sanity runs plugins): the task fails naming both and how to install them, not with a traceback."""
    absent = tmp_path / "absent"
    for package in ("urllib3", "cryptography"):
        (absent / package).mkdir(parents=True)
        (absent / package / "__init__.py").write_text('raise ImportError("No module named %s")\n' % package)
    results = run_preview(ansible_playbook, tmp_path, [{
        "name": "preview", "ignore_errors": True, "kubesched.schedulers.placement_preview": {
            "kubernetes_version": MINOR, "current": strategy("LeastAllocated"),
            "proposed": strategy("MostAllocated"), "binaries": _binaries(), "runs": 1}}],
        env=dict(PYTHONPATH=os.pathsep.join([str(absent), os.environ.get("PYTHONPATH", "")])))
    assert results["preview"]["failed"] is True
    assert results["preview"]["msg"] == ("the preview needs the Python packages urllib3 and cryptography on the "
                                         "controller (pip install urllib3 cryptography)")


GANG = "gang"
PLUGINS_RELEASE = "0.34.7"
PLUGINS_GROUP = "scheduling.x-k8s.io"
COSCHEDULING = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [{
    "schedulerName": GANG,
    "plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}},
    # A gang that cannot be placed gives its reserved pods back after 5 s (the default is 60).
    "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 5}}]}]}


def _gang_pod(name, group):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {PLUGINS_GROUP + "/pod-group": group}},
            "spec": {"schedulerName": GANG, "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                                            "resources": {"requests": {"cpu": "1"}}}]}}


def _real_scheduler(scheduler, config, api, directory, core, bound_count, refused_count):
    """Runs ``scheduler`` with ``config`` on the local API server until ``bound_count`` pods of namespace apps are
    bound and ``refused_count`` reported unschedulable: ({pod: node}, [refused pod])."""
    config = dict(config, clientConnection={"kubeconfig": str(api.kubeconfig)}, leaderElection={"leaderElect": False})
    (directory / "real.yaml").write_text(yaml.safe_dump(config))
    with (directory / "real.log").open("wb") as log:
        process = subprocess.Popen([scheduler, "--config=%s" % (directory / "real.yaml"), "--secure-port=0"],  # pylint: disable=consider-using-with
                                   stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            pods = core.list_namespaced_pod("apps").items
            bound = dict((pod.metadata.name, pod.spec.node_name) for pod in pods if pod.spec.node_name)
            refused = [pod.metadata.name for pod in pods if any(
                condition.type == "PodScheduled" and condition.status == "False"
                for condition in pod.status.conditions or ())]
            if len(bound) == bound_count and len(refused) == refused_count:
                return bound, refused
            assert time.monotonic() < deadline, (bound, refused)
            time.sleep(0.5)
    finally:
        process.terminate()
        process.wait(timeout=30)


def _plugins_scheduler():
    """scheduler-plugins' scheduler of PLUGINS_RELEASE, or the test is skipped naming what builds it."""
    scheduler = scheduler_plugins_scheduler(PLUGINS_RELEASE)
    if not scheduler:
        pytest.skip("no scheduler-plugins %s scheduler (make binaries)" % PLUGINS_RELEASE)
    return scheduler


@contextlib.contextmanager
def _plugins_cluster(tmp_path, kind, cpu):
    """A local API server serving scheduler-plugins' CRDs, two Ready nodes of ``cpu`` CPUs and namespace apps:
    (api, its directory, a CoreV1Api, the client of scheduler-plugins' ``kind`` objects)."""
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    directory = tmp_path / "cluster"
    directory.mkdir()
    with LocalApiServer(directory) as api:
        objects = serve_scheduler_plugins_objects(api, REPO)[kind]
        api.ready_nodes({"node-0": {}, "node-1": {}}, {"cpu": cpu, "memory": "8Gi", "pods": "110"})
        api.namespaces("apps")
        yield api, directory, client.CoreV1Api(api.client), objects


def _plugins_preview(ansible_playbook, tmp_path, api, scheduler, config):
    """The preview of ``config`` against itself on that scheduler, one run, from the cluster ``api`` serves."""
    results = run_preview(ansible_playbook, tmp_path, [{
        "name": "preview", "kubesched.schedulers.placement_preview": {
            "kubeconfig": str(api.kubeconfig), "kubernetes_version": "1.34",
            "scheduler_plugins_version": PLUGINS_RELEASE, "current": config, "proposed": config,
            "binaries": dict(_binaries(), kube_scheduler=scheduler), "runs": 1}}])
    preview = results["preview"]
    assert not preview.get("failed"), preview.get("msg")
    return preview


@pytest.mark.slow_preview
def test_scheduler_plugins_coscheduling_places_pod_groups_as_the_cluster_does(ansible_playbook, tmp_path):
    """scheduler-plugins 0.34.7's kube-scheduler (Kubernetes 1.34.7) with Coscheduling, on a 1.35 API server as the
    e2e runs it: two nodes of 2 CPUs, PodGroup `pair` (minMember 2) and then `trio` (minMember 3) of 1-CPU pods. The
    pair is bound whole; of the trio two would fit, so none is bound. The preview reads the PodGroups (the profile
    enables Coscheduling), installs scheduler-plugins' CRDs in its control plane and runs the same binary."""
    scheduler = _plugins_scheduler()
    with _plugins_cluster(tmp_path, "PodGroup", "2") as (api, directory, core, groups):
        for group, size in (("pair", 2), ("trio", 3)):
            groups.create(namespace="apps", body={"apiVersion": PLUGINS_GROUP + "/v1alpha1", "kind": "PodGroup",
                                                  "metadata": {"name": group}, "spec": {"minMember": size}})
            for index in range(size):
                core.create_namespaced_pod("apps", _gang_pod("%s-%d" % (group, index), group))
            time.sleep(1.1)  # the groups of two creation seconds: Coscheduling's queue takes the older first

        preview = _plugins_preview(ansible_playbook, tmp_path, api, scheduler, COSCHEDULING)
        assert preview["snapshot"]["pod_groups"] == 2 and preview["binaries"]["kube-scheduler"] == "1.34.7"

        bound, refused = _real_scheduler(scheduler, COSCHEDULING, api, directory, core, 2, 3)
    assert sorted(bound) == ["pair-0", "pair-1"] and sorted(refused) == ["trio-0", "trio-1", "trio-2"]
    for label in ("current", "proposed"):
        predicted = preview["configs"][label]
        assert predicted["runs"][0]["nodes_used"] == len(set(bound.values())), predicted
        assert sorted(predicted["unschedulable_pods"]) == ["apps/trio-0", "apps/trio-1", "apps/trio-2"], predicted


QUOTA = "quota"
CAPACITY = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [{
    "schedulerName": QUOTA, "plugins": {"multiPoint": {"enabled": [{"name": "CapacityScheduling"}]}}}]}


@pytest.mark.slow_preview
def test_scheduler_plugins_capacity_scheduling_keeps_a_namespace_within_its_elastic_quota_as_the_cluster_does(
        ansible_playbook, tmp_path):
    """scheduler-plugins 0.34.7's kube-scheduler with CapacityScheduling: namespace apps has an ElasticQuota of min
    1 CPU and max 2, the cluster's only quota, and three 1-CPU pods created a second apart on nodes with room for
    all. Only the first is bound: a namespace may go past its min only into what the other quotas' mins leave
    unused (none here), so the second and third are refused for the quota, in the cluster and in the preview alike
    (which reads the ElasticQuotas, the profile enabling CapacityScheduling)."""
    scheduler = _plugins_scheduler()
    with _plugins_cluster(tmp_path, "ElasticQuota", "4") as (api, directory, core, quotas):
        quotas.create(namespace="apps", body={"apiVersion": PLUGINS_GROUP + "/v1alpha1", "kind": "ElasticQuota",
                                              "metadata": {"name": "apps"},
                                              "spec": {"min": {"cpu": "1"}, "max": {"cpu": "2"}}})
        for index in range(3):
            core.create_namespaced_pod("apps", {"metadata": {"name": "job-%d" % index}, "spec": {
                "schedulerName": QUOTA, "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                                        "resources": {"requests": {"cpu": "1"}}}]}})
            time.sleep(1.1)  # three creation seconds: the queue takes them in this order, here and in the preview

        preview = _plugins_preview(ansible_playbook, tmp_path, api, scheduler, CAPACITY)
        assert preview["snapshot"]["elastic_quotas"] == 1

        bound, refused = _real_scheduler(scheduler, CAPACITY, api, directory, core, 1, 2)
    assert list(bound) == ["job-0"] and sorted(refused) == ["job-1", "job-2"]
    for label in ("current", "proposed"):
        predicted = preview["configs"][label]
        assert predicted["runs"][0]["nodes_used"] == 1, predicted
        assert sorted(predicted["unschedulable_pods"]) == ["apps/job-1", "apps/job-2"], predicted
        assert all("ElasticQuota" in reason for reason in predicted["unschedulable_pods"].values()), predicted
