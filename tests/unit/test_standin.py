# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kube-scheduler stand-in (tests/standin/kube-scheduler-standin) against kube-scheduler's real behaviour.

Every test runs the real binary instead when KUBE_SCHEDULER_BIN names one, so the expectations are checked against
kube-scheduler itself; they come from upstream sources: cmd/kube-scheduler/app/server.go and options/,
k8s.io/component-base/cli/run.go, kubeadm's manifest flags. Assertions only the stand-in can meet are marked
`standin_only` with the reason.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cryptography import x509

from ansible_collections.kubesched.schedulers.plugins.module_utils.kube_scheduler_flags import flags_for
from ansible_collections.kubesched.schedulers.plugins.module_utils.versions import NEWEST_MINOR

STANDIN = Path(__file__).resolve().parents[1] / "standin" / "kube-scheduler-standin"
REAL_BIN = os.environ.get("KUBE_SCHEDULER_BIN", "")
STANDIN_VERSION = NEWEST_MINOR + ".0"
STARTUP_TIMEOUT = 8


def standin_only(reason):
    return pytest.mark.skipif(bool(REAL_BIN), reason="stand-in only: " + reason)


class Program:
    """How to run the program under test: the real kube-scheduler or the stand-in pretending to be `version`."""

    def __init__(self, version=None):
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")}
        if REAL_BIN:
            self.argv = [REAL_BIN]
        else:
            self.argv = [sys.executable, str(STANDIN)]
            self.env["KUBE_SCHEDULER_STANDIN_VERSION"] = version or STANDIN_VERSION
            self.env["PYTHONFAULTHANDLER"] = "1"
        out = self.run("--version").stdout
        self.version = re.search(r"v(\d+\.\d+\.\d+)", out).group(1)
        self.minor = int(self.version.split(".")[1])

    def run(self, *args, cwd=None, timeout=STARTUP_TIMEOUT):
        return subprocess.run(self.argv + list(args), env=self.env, cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, check=False)

    def start(self, *args, cwd=None):
        return subprocess.Popen(self.argv + list(args), env=self.env, cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def scheduler():
    return Program()


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def kubeconfig(tmp_path):
    """A kubeconfig for an API server that is not there: the scheduler must start and serve health anyway."""
    path = tmp_path / "scheduler.conf"
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        "clusters:\n- name: none\n  cluster:\n    server: https://127.0.0.1:%d\n    insecure-skip-tls-verify: true\n"
        "contexts:\n- name: none\n  context: {cluster: none, user: none}\n"
        "current-context: none\n"
        "users:\n- name: none\n  user: {token: not-a-real-token}\n" % free_port())
    return path


def write_config(tmp_path, kubeconfig, extra=""):
    path = tmp_path / "config.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                    "clientConnection:\n  kubeconfig: %s\n%s" % (kubeconfig, extra))
    return path


@pytest.fixture
def config(tmp_path, kubeconfig):
    return write_config(tmp_path, kubeconfig)


def https_get(port, path):
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=context)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def served_certificate(port):
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with context.wrap_socket(raw) as tls:
            return x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))


class Running:
    """A started scheduler serving on a free loopback port; always stopped (and reaped) at the end."""

    def __init__(self, program, *args, cwd=None):
        self.port = free_port()
        self.proc = program.start("--bind-address=127.0.0.1", "--secure-port=%d" % self.port, *args, cwd=cwd)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                pytest.fail("exited with %s before serving:\n%s" % (self.proc.returncode, self.proc.stderr.read()))
            try:
                if https_get(self.port, "/healthz") == (200, "ok"):
                    return
            except (OSError, http.client.HTTPException):
                pass
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail("/healthz did not answer ok within %d s" % STARTUP_TIMEOUT)
            time.sleep(0.1)

    def stop(self):
        """SIGTERM, then the exit code; a program that does not exit fails the test with its stack dump."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=STARTUP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)  # Go and Python (PYTHONFAULTHANDLER) print every stack
            self.proc.wait()
            pytest.fail("still running %d s after SIGTERM:\n%s" % (STARTUP_TIMEOUT, self.proc.stderr.read()))
        self.stderr = self.proc.stderr.read()
        return self.proc.returncode


@pytest.fixture
def running(scheduler, config):
    server = Running(scheduler, "--config=%s" % config)
    yield server
    server.stop()


# ---- flags ----

def test_version_prints_kubernetes_and_the_version(scheduler):
    result = scheduler.run("--version")
    assert result.returncode == 0
    assert re.fullmatch(r"Kubernetes v\d+\.\d+\.\d+\n", result.stdout)


@standin_only("the real binary's version is compiled in")
def test_standin_pretends_the_version_it_is_given(tmp_path):
    assert Program("1.31.5").run("--version").stdout == "Kubernetes v1.31.5\n"
    # ...or the version file next to it, which is how a test host pins it without environment variables
    copy = tmp_path / "kube-scheduler"
    shutil.copy(STANDIN, copy)
    (tmp_path / "kube-scheduler-standin.version").write_text("v1.32.1\n")
    env = dict(os.environ)
    env.pop("KUBE_SCHEDULER_STANDIN_VERSION", None)
    out = subprocess.run([sys.executable, str(copy), "--version"], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out == "Kubernetes v1.32.1\n"


def test_every_flag_of_its_version_is_known(scheduler, tmp_path):
    # Each flag with a placeholder value: a wrong value may be refused, but never as an unknown flag; the missing
    # --config then stops the program before it serves anything. help and version only print and exit.
    flags = ["--%s=true" % name if kind == "bool" else "--%s=x" % name
             for name, kind in sorted(flags_for(scheduler.version).items()) if name not in ("help", "version")]
    missing = "--config=%s" % (tmp_path / "missing.yaml")
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda flag: scheduler.run(flag, missing, cwd=tmp_path), flags))
    for flag, result in zip(flags, results):
        assert result.returncode == 1, (flag, result.stderr)
        assert "unknown flag" not in result.stderr, flag


def test_kubeadm_flags_are_accepted(scheduler, kubeconfig, tmp_path):
    # the flags of kubeadm's static pod manifest (cmd/kubeadm/app/phases/controlplane/manifests.go)
    result = scheduler.run("--authentication-kubeconfig=%s" % kubeconfig, "--authorization-kubeconfig=%s" % kubeconfig,
                           "--bind-address=127.0.0.1", "--kubeconfig=%s" % kubeconfig, "--leader-elect=true",
                           "-v", "2", "--config", str(tmp_path / "missing.yaml"))
    assert result.returncode == 1
    assert "no such file or directory" in result.stderr
    assert "unknown flag" not in result.stderr


@pytest.mark.parametrize("flag", ["--x", "--address=0.0.0.0", "--port=10251", "--scheduler-name=second",
                                  "--policy-config-file=/etc/policy.json"])
def test_unknown_and_removed_flags_exit_1(scheduler, flag):
    result = scheduler.run(flag)
    assert result.returncode == 1
    name = flag.split("=")[0]
    # component-base cli.Run prints flag errors without klog decoration
    assert "Error: unknown flag: %s\n" % name in result.stderr


def test_flag_value_errors_exit_1(scheduler):
    result = scheduler.run("--secure-port=abc")
    assert result.returncode == 1
    assert 'Error: invalid argument "abc" for "--secure-port" flag' in result.stderr


@pytest.mark.parametrize("version", ["1.30.0", "1.31.0"])
def test_emulated_version_exists_from_1_31(version, tmp_path):
    # --emulated-version came with compatibility versions (ComponentGlobalsRegistry.AddFlags) in 1.31
    if REAL_BIN and not Program().version.startswith(version.rsplit(".", 1)[0] + "."):
        pytest.skip("the real binary is another version")
    result = Program(version).run("--emulated-version=x", "--config=%s" % (tmp_path / "missing.yaml"))
    assert result.returncode == 1
    assert ("Error: unknown flag: --emulated-version" in result.stderr) == version.startswith("1.30.")


# ---- loading --config and the kubeconfig ----

CONFIG_FAILURES = {
    "missing file": (None, "no such file or directory"),
    "unparsable": ("apiVersion: [kubescheduler\n  kind: : :\n", "yaml"),
    "removed apiVersion": ("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
                           'no kind "KubeSchedulerConfiguration" is registered for version '
                           '"kubescheduler.config.k8s.io/v1beta3"'),
    "wrong kind": ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeProxyConfiguration\n",
                   'no kind "KubeProxyConfiguration" is registered for version "kubescheduler.config.k8s.io/v1"'),
    # clientcmd: no explicit path and no in-cluster environment -> ErrEmptyConfig
    "empty kubeconfig": ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                         "clientConnection:\n  kubeconfig: ''\n", "no configuration has been provided"),
    "missing kubeconfig": ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                           "clientConnection:\n  kubeconfig: /nonexistent/scheduler.conf\n",
                           "no such file or directory"),
}


@pytest.mark.parametrize("case", sorted(CONFIG_FAILURES))
def test_config_that_does_not_load_exits_1(scheduler, tmp_path, case):
    content, expected = CONFIG_FAILURES[case]
    path = tmp_path / "config.yaml"
    if content is not None:
        path.write_text(content)
    result = scheduler.run("--config=%s" % path, "--secure-port=%d" % free_port(), "--bind-address=127.0.0.1")
    assert result.returncode == 1
    # errors after flag parsing go through klog: E.... run.go:..] "command failed" err="..."
    assert re.search(r'^E\d{4} .*\] "command failed" err=', result.stderr, re.M), result.stderr
    assert expected in result.stderr.replace('\\"', '"')  # klog quotes the err value


def test_kubeconfig_without_a_cluster_exits_1(scheduler, tmp_path):
    kubeconfig = tmp_path / "scheduler.conf"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\ncurrent-context: gone\n")
    result = scheduler.run("--config=%s" % write_config(tmp_path, kubeconfig), "--secure-port=%d" % free_port())
    assert result.returncode == 1
    assert "invalid configuration" in result.stderr


# ---- serving ----

def test_health_endpoints_answer_ok_over_https(scheduler, running):
    assert https_get(running.port, "/healthz") == (200, "ok")
    if scheduler.minor >= 31:
        assert https_get(running.port, "/livez") == (200, "ok")
    else:
        # before 1.31 /livez is not installed; the path is always allowed, so the mux answers 404
        assert https_get(running.port, "/livez")[0] == 404


@standin_only("the real /readyz waits for its informers to sync, which needs a reachable API server")
def test_readyz_answers_ok(scheduler, running):
    assert https_get(running.port, "/readyz") == (200, "ok")


@standin_only("the real one asks the API server (SubjectAccessReview) for other paths; with none reachable "
              "the answer depends on its delegated authorization, not only on the missing credentials")
@pytest.mark.parametrize("path", ["/metrics", "/configz"])
def test_metrics_and_configz_refuse_anonymous_clients(running, path):
    status, body = https_get(running.port, path)
    assert status == 403
    assert 'User \\"system:anonymous\\" cannot get path \\"%s\\"' % path in body


@standin_only("pretends 1.30, which a real binary of another version cannot")
def test_standin_1_30_has_no_livez(config):
    server = Running(Program("1.30.4"), "--config=%s" % config)
    try:
        assert https_get(server.port, "/livez")[0] == 404
        assert https_get(server.port, "/readyz")[0] == 404
        assert https_get(server.port, "/healthz") == (200, "ok")
    finally:
        server.stop()


def test_self_signed_certificate_names_localhost_and_loopback(running):
    # options.Config: MaybeDefaultWithSelfSignedCerts("localhost", nil, [127.0.0.1])
    names = served_certificate(running.port).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in names.get_values_for_type(x509.DNSName)
    assert "127.0.0.1" in [str(ip) for ip in names.get_values_for_type(x509.IPAddress)]


def test_given_certificate_is_served(scheduler, config, tmp_path):
    cert, key = tmp_path / "given.crt", tmp_path / "given.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=given-by-test"],
                   check=True, capture_output=True)
    server = Running(scheduler, "--config=%s" % config, "--tls-cert-file=%s" % cert, "--tls-private-key-file=%s" % key)
    try:
        assert served_certificate(server.port) == x509.load_pem_x509_certificate(cert.read_bytes())
    finally:
        server.stop()


def test_cert_dir_keeps_the_generated_pair(scheduler, config, tmp_path):
    # the pair is named after ServerCert.PairName = "kube-scheduler" (options.go)
    cert_dir = tmp_path / "certs"
    server = Running(scheduler, "--config=%s" % config, "--cert-dir=%s" % cert_dir)
    try:
        served = served_certificate(server.port)
        assert served == x509.load_pem_x509_certificate((cert_dir / "kube-scheduler.crt").read_bytes())
        assert (cert_dir / "kube-scheduler.key").is_file()
    finally:
        server.stop()


def test_port_in_use_exits_1(scheduler, config):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        result = scheduler.run("--config=%s" % config, "--bind-address=127.0.0.1",
                               "--secure-port=%d" % busy.getsockname()[1])
    assert result.returncode == 1
    assert "address already in use" in result.stderr


# ---- stopping ----

def test_sigterm_exits_0_with_leader_election(running):
    # server.go: the leader elector's OnStoppedLeading sees the cancelled context: "Requested to terminate", exit 0
    assert running.stop() == 0


def test_sigterm_exits_1_without_leader_election(scheduler, tmp_path, kubeconfig):
    # server.go: without leader election Run returns "finished without leader elect" and cli.Run exits 1
    config = write_config(tmp_path, kubeconfig, "leaderElection:\n  leaderElect: false\n")
    server = Running(scheduler, "--config=%s" % config)
    assert server.stop() == 1
    assert "finished without leader elect" in server.stderr


# ---- the single-file copy that test hosts install ----

@standin_only("bundling is how the stand-in travels to test hosts")
def test_bundled_copy_runs_without_the_collection(tmp_path, kubeconfig):
    bundled = tmp_path / "bin" / "kube-scheduler"
    env = dict(os.environ, KUBE_SCHEDULER_STANDIN_BUNDLE="1.31.2", KUBE_SCHEDULER_STANDIN_BUNDLE_TO=str(bundled))
    made = subprocess.run([sys.executable, str(STANDIN)], env=env, capture_output=True, text=True, check=True)
    assert made.stdout == "%s\n" % bundled
    assert os.access(bundled, os.X_OK)
    bare = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KUBE_SCHEDULER_STANDIN_VERSION")}

    def run(*args, **extra):
        return subprocess.run([sys.executable, str(bundled)] + list(args), env=dict(bare, **extra),
                              capture_output=True, text=True, check=False, timeout=STARTUP_TIMEOUT)

    assert run("--version").stdout == "Kubernetes v1.31.2\n"
    assert run("--x").returncode == 1
    missing = "--config=%s" % (tmp_path / "missing.yaml")
    assert "unknown flag" not in run("--emulated-version=1.31", missing).stderr
    pinned_130 = run("--emulated-version=1.31", missing, KUBE_SCHEDULER_STANDIN_VERSION="1.30.1")
    assert "Error: unknown flag: --emulated-version" in pinned_130.stderr
