# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A throwaway control plane for one preview: etcd and kube-apiserver as two processes on 127.0.0.1 only, on free
ports, with certificates of their own, in a private temp directory, and the kube-schedulers the preview starts in it.

Nothing outlives the preview: leaving the ``with`` block (normally, on an exception, on SIGINT or SIGTERM, which
become an exception here) stops every process by its own pid and removes the directory; a process whose parent dies
without that (SIGKILL) is killed by the kernel (PR_SET_PDEATHSIG), and the directory such a parent left is removed
by the next preview (its name carries the dead pid)."""

from __future__ import annotations

import ctypes
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

from ansible.module_utils.urls import open_url

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import dump_yaml
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._http import ApiError, LocalApi, local_configuration
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._pki import SCHEDULER_USER, write_pki, write_tokens

PREFIX = "kubesched-preview-"
# Admission plugins a snapshot must not meet: each would change or refuse an object the real cluster already
# admitted (TaintNodesByCondition adds node.kubernetes.io/not-ready:NoSchedule to every created Node, which only the
# node lifecycle controller takes off; ServiceAccount wants each namespace's default ServiceAccount; Priority
# recomputes spec.priority from a class that may have changed since; PodSecurity, LimitRanger, ResourceQuota and
# RuntimeClass would check again what was admitted once). The objects keep exactly what the cluster gave them.
# Then the ones with nothing to do here, which still cost every request their dispatch and metrics: webhooks and
# admission policies (the plane has no configuration of either), certificates, ingress classes and claim resizes
# (no such object is written). kube-apiserver 1.35 and 1.37 start with these names disabled (run here); each is a
# plugin kube-apiserver 1.30.14 registers (read in its source, k8s.io/kubernetes and k8s.io/apiserver v0.30.14; not
# run here on 1.30 to 1.34).
DISABLED_ADMISSION = ("TaintNodesByCondition", "ServiceAccount", "Priority", "PodSecurity", "LimitRanger",
                      "ResourceQuota", "RuntimeClass", "DefaultTolerationSeconds", "DefaultStorageClass",
                      "StorageObjectInUseProtection",
                      "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook", "ValidatingAdmissionPolicy",
                      "CertificateApproval", "CertificateSigning", "CertificateSubjectRestriction",
                      "ClusterTrustBundleAttest", "DefaultIngressClass", "PersistentVolumeClaimResize")
START_TIMEOUT = 120


class ControlPlaneError(Exception):
    """The throwaway control plane could not start, or a process of it died."""


class Interrupted(BaseException):
    """SIGTERM (or SIGHUP) arrived: unwinds like KeyboardInterrupt, so every ``finally`` cleans up."""


def _die_with_parent():
    # Runs in the child between fork and exec: the kernel kills it with SIGKILL when its parent dies.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_leftovers(parent: str | None = None) -> list:
    """The directories of earlier previews whose process is gone (killed with SIGKILL), removed; their paths."""
    removed = []
    for path in glob.glob(os.path.join(parent or tempfile.gettempdir(), PREFIX + "*")):
        match = re.match(re.escape(PREFIX) + r"(\d+)-", os.path.basename(path))
        if match and not _pid_alive(int(match.group(1))) and os.stat(path).st_uid == os.getuid():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


class ControlPlane:
    """``with ControlPlane(binaries) as plane:`` plane.kubeconfig, plane.client() (a kubernetes ApiClient),
    plane.start_scheduler(config) and plane.stop(process)."""

    def __init__(self, binaries: dict, parent: str | None = None, crds=(), scheduler_rules=()):
        self.binaries = binaries
        self.parent = parent
        # scheduler-plugins' CRDs (their objects) and the rules its scheduler needs beyond system:kube-scheduler.
        self.crds = list(crds)
        self.scheduler_rules = list(scheduler_rules)
        self.directory = None
        self.processes = []
        self.kubeconfig = None
        self.scheduler_kubeconfig = None
        self.url = None
        self.pki = None
        self.tokens = None
        self._signals = {}

    # --- lifetime -----------------------------------------------------------------------------------------------
    def __enter__(self) -> "ControlPlane":
        remove_leftovers(self.parent)
        self.directory = tempfile.mkdtemp(prefix="%s%d-" % (PREFIX, os.getpid()), dir=self.parent)
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGTERM, signal.SIGHUP):
                self._signals[number] = signal.signal(number, self._interrupted)
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    @staticmethod
    def _interrupted(number, _frame):
        raise Interrupted("interrupted by signal %d" % number)

    def __exit__(self, *_exc) -> None:
        try:
            # Nothing in it is worth a graceful shutdown: kube-apiserver's waits up to its timeout for its open
            # watches (20 s here, at every run's end).
            for process in reversed(self.processes):
                self.stop(process, timeout=0)
            self.processes = []
        finally:
            if self.directory:
                shutil.rmtree(self.directory, ignore_errors=True)
            for number, handler in self._signals.items():
                signal.signal(number, handler)
            self._signals = {}

    def _spawn(self, name: str, argv: list):
        log = open(os.path.join(self.directory, name + ".log"), "ab")  # pylint: disable=consider-using-with
        try:
            process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,  # pylint: disable=consider-using-with
                                       cwd=self.directory, preexec_fn=_die_with_parent, close_fds=True)
        finally:
            log.close()
        process.log_name = name
        self.processes.append(process)
        return process

    @staticmethod
    def stop(process, timeout: float = 20) -> None:
        """SIGTERM and up to ``timeout`` seconds to exit, then SIGKILL (at once with 0)."""
        if process.poll() is None:
            if timeout:
                process.terminate()
                try:
                    process.wait(timeout=timeout)
                    return
                except subprocess.TimeoutExpired:
                    pass
            process.kill()
            process.wait()

    def log_tail(self, name: str, lines: int = 5) -> str:
        try:
            with open(os.path.join(self.directory, name + ".log"), encoding="utf-8", errors="replace") as handle:
                return " | ".join(line.strip() for line in handle.readlines()[-lines:])
        except OSError:
            return ""

    def alive(self, process) -> None:
        if process.poll() is not None:
            raise ControlPlaneError("%s exited with %s: %s" % (process.log_name, process.returncode,
                                                               self.log_tail(process.log_name)))

    # --- start --------------------------------------------------------------------------------------------------
    def _start(self) -> None:
        self.pki = write_pki(self.directory)
        self.tokens = write_tokens(self.directory)
        for attempt in range(3):  # another program may take a free port between the probe and the bind
            try:
                self._start_etcd()
                self._start_apiserver()
                break
            except ControlPlaneError as exc:
                for process in reversed(self.processes):
                    self.stop(process)
                self.processes = []
                if "address already in use" not in str(exc) or attempt == 2:
                    raise
        self.kubeconfig = self._kubeconfig("kubeconfig", {"client-certificate": self.pki["client_cert"],
                                                          "client-key": self.pki["client_key"]})
        self.scheduler_kubeconfig = self._kubeconfig("scheduler.conf", {"token": self.tokens["scheduler"]})
        self._scheduler_role()
        self._install_crds()

    def _install_crds(self) -> None:
        """Each CRD, served before the snapshot is loaded (its group version lists the resource)."""
        if not self.crds:
            return
        api = self.client(pool=2)
        for crd in self.crds:
            api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        for crd in self.crds:
            group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
            versions = [version["name"] for version in crd["spec"]["versions"] if version.get("served", True)]

            def served(group=group, plural=plural, versions=versions):
                listed = api.request("GET", "/apis/%s/%s" % (group, versions[0])).get("resources") or ()
                return any(resource.get("name") == plural for resource in listed)
            self._wait("the CRD %s.%s" % (plural, group), self.processes[-1], served, log="kube-apiserver")

    def _kubeconfig(self, name: str, user: dict) -> str:
        path = os.path.join(self.directory, name)
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as handle:
            handle.write(dump_yaml({
                "apiVersion": "v1", "kind": "Config", "current-context": "preview",
                "clusters": [{"name": "preview", "cluster": {"server": self.url,
                                                             "certificate-authority": self.pki["ca"]}}],
                "users": [{"name": "preview", "user": user}],
                "contexts": [{"name": "preview", "context": {"cluster": "preview", "user": "preview"}}]}))
        return path

    def _scheduler_role(self) -> None:
        """kube-scheduler runs as SCHEDULER_USER with the API server's own bootstrap roles of a scheduler
        (system:kube-scheduler, system:volume-scheduler) and the scheduler_rules (scheduler-plugins' objects), less
        the Events: an event per pod bound would be a third of the writes a run costs and places nothing
        (kube-scheduler drops an event the API server refuses, unretried)."""
        api = self.client(pool=2)
        rules = []
        for role in ("system:kube-scheduler", "system:volume-scheduler"):
            for rule in api.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/" + role)["rules"]:
                resources = [name for name in rule.get("resources") or () if name != "events"]
                if resources or rule.get("nonResourceURLs"):
                    rules.append(dict(rule, resources=resources) if rule.get("resources") else rule)
        rules.extend(self.scheduler_rules)
        api.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
            "metadata": {"name": SCHEDULER_USER}, "rules": rules})
        api.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
            "metadata": {"name": SCHEDULER_USER},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": SCHEDULER_USER},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": SCHEDULER_USER}]})

    def _start_etcd(self) -> None:
        client, peer = _free_port(), _free_port()
        self.etcd_url = "http://127.0.0.1:%d" % client
        process = self._spawn("etcd", [
            self.binaries["etcd"], "--name=preview", "--data-dir=%s" % os.path.join(self.directory, "etcd"),
            "--listen-client-urls=" + self.etcd_url, "--advertise-client-urls=" + self.etcd_url,
            "--listen-peer-urls=http://127.0.0.1:%d" % peer,
            "--initial-advertise-peer-urls=http://127.0.0.1:%d" % peer,
            "--initial-cluster=preview=http://127.0.0.1:%d" % peer,
            "--listen-metrics-urls=", "--unsafe-no-fsync", "--quota-backend-bytes=8589934592"])
        self._wait("etcd", process, lambda: self._get(self.etcd_url + "/health", tls=False).get("health") == "true")

    def _start_apiserver(self) -> None:
        port = _free_port()
        self.url = "https://127.0.0.1:%d" % port
        process = self._spawn("kube-apiserver", [
            self.binaries["kube-apiserver"],
            "--advertise-address=127.0.0.1", "--bind-address=127.0.0.1", "--secure-port=%d" % port,
            "--etcd-servers=" + self.etcd_url,
            "--client-ca-file=" + self.pki["ca"], "--token-auth-file=" + self.tokens["file"],
            "--tls-cert-file=" + self.pki["serving_cert"], "--tls-private-key-file=" + self.pki["serving_key"],
            "--cert-dir=" + os.path.join(self.directory, "apiserver-certs"),
            "--authorization-mode=RBAC",
            "--disable-admission-plugins=" + ",".join(DISABLED_ADMISSION),
            "--service-cluster-ip-range=10.96.0.0/12",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file=" + self.pki["sa_pub"],
            "--service-account-signing-key-file=" + self.pki["sa_key"],
            # On loopback there is no endpoint to reconcile (v1.37 refuses 127.0.0.1 with a reconciler).
            "--endpoint-reconciler-type=none",
            # One client loads and one scheduler binds as fast as they can: no fairness queueing to wait in.
            "--enable-priority-and-fairness=false", "--max-requests-inflight=2000",
            "--max-mutating-requests-inflight=1000", "--profiling=false",
            "--event-ttl=10m"])
        self._wait("kube-apiserver", process, lambda: self._get(self.url + "/readyz", raw=True) == "ok")

    def _get(self, url: str, tls: bool = True, raw: bool = False):
        # TLS: our own CA is the only one trusted (open_url verifies against ca_path alone), the preview's client
        # certificate. Loopback: never through a proxy, never with a .netrc's credentials.
        credentials = {}
        if tls:
            credentials = dict(ca_path=self.pki["ca"], client_cert=self.pki["client_cert"],
                               client_key=self.pki["client_key"])
        with open_url(url, timeout=5, use_proxy=False, use_netrc=False, **credentials) as answer:
            text = answer.read().decode()
        return text.strip() if raw else json.loads(text)

    def _wait(self, name: str, process, ready, log: str | None = None) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            self.alive(process)
            try:
                if ready():
                    return
            except (OSError, ValueError, ApiError):
                pass
            time.sleep(0.3)
        raise ControlPlaneError("%s did not become ready within %d s: %s"
                                % (name, START_TIMEOUT, self.log_tail(log or name)))

    # --- clients and schedulers ---------------------------------------------------------------------------------
    def client(self, pool: int = 32) -> LocalApi:
        return LocalApi(local_configuration(self.url, self.pki["ca"], self.tokens["preview"]), pool)

    def start_scheduler(self, name: str, config: dict, feature_gates: str | None = None):
        """The real kube-scheduler with ``config`` (a KubeSchedulerConfiguration mapping), talking to this API
        server as a scheduler (_scheduler_role), without leader election and without a client rate limit of its own (placement
        does not depend on it; throughput does), serving nothing."""
        config = dict(config)
        config["clientConnection"] = dict(config.get("clientConnection") or {}, kubeconfig=self.scheduler_kubeconfig,
                                          qps=5000, burst=5000)
        config["leaderElection"] = dict(config.get("leaderElection") or {}, leaderElect=False)
        path = os.path.join(self.directory, name + ".yaml")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(dump_yaml(config))
        # --v=1: kube-scheduler's log is read for its last lines when it fails, never for a placement (the watch
        # reads those), and --v=2 writes a line for every pod bound.
        argv = [self.binaries["kube-scheduler"], "--config=" + path, "--secure-port=0", "--v=1"]
        if feature_gates:
            argv.append("--feature-gates=" + feature_gates)
        return self._spawn(name, argv)
