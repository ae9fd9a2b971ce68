"""Find, or build, the real Kubernetes binaries the tests need, as a real project gets them, and name them for every
test target.

For each component and minor the tests use (``WANTED``; ``--for demo``: what ``make demo`` runs; ``--for all``: also
the kube-scheduler of every release pinned in tests/binaries/modules),
the first of these wins:

1. a ``KUBE_*_BIN_1_<minor>`` variable already set (``KUBE_SCHEDULER_BIN_1_35=/path``), or the unsuffixed one
   (``KUBE_SCHEDULER_BIN``) for the minor its ``--version`` says;
2. the binaries directory (``KUBE_BINARIES_DIR``, default ``~/.cache/kube-binaries``): files named
   ``COMPONENT-vMAJOR.MINOR.PATCH`` (``kube-scheduler-v1.35.8``), the newest patch of the minor, if not older than
   the pinned one (another checkout's older pin built that: the pinned one is fetched or built);
3. the official Kubernetes release download of the pinned version (``dl.k8s.io``), checked against its published
   sha256 and kept in the binaries directory. Where that site cannot be reached (these CI machines) the first
   attempt fails within seconds and no other is made (``KUBE_DOWNLOAD=0`` skips it);
4. where ``go`` is on the PATH: built from the upstream Go modules of that exact release, pinned in
   ``tests/binaries/modules/kubernetes-v<version>`` (go.mod + go.sum, the release's own Go toolchain), into the
   binaries directory: ``tests/binaries/build.py``, one ``go build`` per release for all its missing components.

Prints ``export`` lines on stdout (the Makefile writes them to ``.build/k8s.env``) and, on stderr, one line per
component saying where each minor came from and what is missing, and the builds' progress. A missing binary is not
an error here: each test that needs one skips with a line naming its variable, and ``make test`` ends with what ran
on real parts. Etcd is Debian's (``apt-get install etcd-server``): ``ETCD_BIN``.

Unsuffixed variables: ``KUBE_SCHEDULER_BIN`` is the 1.37 scheduler when there is one (what the demo and the
benchmarks run), every other ``KUBE_*_BIN`` the newest minor found.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "binaries"))
import build  # noqa: E402  pylint: disable=wrong-import-position
import releases  # noqa: E402  pylint: disable=wrong-import-position

# component -> pinned versions (one per minor): what `make test` and `make demo` run, what a download fetches and
# what a build builds (each one pinned in tests/binaries/modules). Only what a suite of make test needs to prove
# something nothing else proves: a release costs a go build of its own (kube-scheduler 1.36.3 alone 161 s on an idle
# machine here, cold; all five of 1.37.2 393 s). The scheduler of every other pinned minor is built by --all (make
# differential, make binaries-all): make test compares the library with their recorded answers, and a re-check of a
# recording against its binary proves nothing new until the binary changes.
# 1.37 is the newest minor: the e2e, the demo, the real-node scenario's control plane and kubelets; 1.36 the
# scheduler of the skew pair an operator runs mid-upgrade (a 1.36 scheduler on a 1.37 control plane: both Molecule
# scenarios); 1.35 the unit tests' scheduler and local API server, and the scheduler-plugins e2e's cluster.
WANTED = {
    "kube-scheduler": ("1.35.8", "1.36.5", "1.37.2"),
    "kube-apiserver": ("1.35.8", "1.37.2"),
    # 1.35: the scheduler-plugins e2e's cluster (scheduler-plugins 0.34.7 is built on 1.34: one minor older).
    "kube-controller-manager": ("1.35.8", "1.37.2"),
    "kubelet": ("1.35.8", "1.37.2"),
    "kube-proxy": ("1.35.8", "1.37.2"),
}


# kubernetes-sigs/scheduler-plugins releases (tests/binaries/modules/scheduler-plugins-v*), release -> components:
# found in the binaries directory or built from Go modules (a release's missing components in one go build), never
# downloaded (upstream publishes images only), exported as SCHEDULER_PLUGINS_SCHEDULER_BIN_0_34_7 and the like.
# make test runs 0.34.7's scheduler and controller (the scheduler-plugins e2e, tests/e2e_plugins, and the re-check of
# its recording); --all also 0.33.5's scheduler, whose recording CI compares the library with.
SCHEDULER_PLUGINS = {"0.34.7": ("scheduler-plugins-scheduler", "scheduler-plugins-controller")}
SCHEDULER_PLUGINS_ALL = dict(SCHEDULER_PLUGINS, **{"0.33.5": ("scheduler-plugins-scheduler",)})

# kubernetes-sigs/cri-tools: crictl for the real nodes (kubeadm requires it on every node; the static_pod scenario's
# master without ctr runs the preflight through it), exported as CRICTL_BIN_1_37_0.
CRI_TOOLS = {"1.37.0": ("crictl",)}

# The projects beside Kubernetes that each purpose needs, project -> release -> components: found in the binaries
# directory or built from their pinned Go modules, never downloaded.
OTHER_PROJECTS = {
    "demo": {},
    "test": {"scheduler-plugins": SCHEDULER_PLUGINS, "cri-tools": CRI_TOOLS},
    "all": {"scheduler-plugins": SCHEDULER_PLUGINS_ALL, "cri-tools": CRI_TOOLS},
}


# What `make demo` runs (tests/demo/run.sh): a part of WANTED, so a new machine builds no more than it needs.
# kube-controller-manager: its ServiceAccount token controller fills the metrics reader's token Secret.
DEMO = {"kube-scheduler": ("1.37.2",), "kube-apiserver": ("1.37.2",), "kube-controller-manager": ("1.37.2",)}


PREFERRED_MINOR = {"kube-scheduler": "37"}
RELEASE_URL = "https://dl.k8s.io/release/v{version}/bin/linux/{arch}/{component}"
DOWNLOAD_TIMEOUT = float(os.environ.get("KUBE_DOWNLOAD_TIMEOUT", "5"))
NAME_RE = re.compile(r"^(?P<component>[a-z-]+)-v1\.(?P<minor>\d+)\.(?P<patch>\d+)$")


def wanted(purpose: str) -> dict[str, tuple[str, ...]]:
    """What PURPOSE needs: demo, test (WANTED) or all (WANTED and the kube-scheduler of every pinned Kubernetes
    release, the newest patch pinned of each minor; no pre-release)."""
    if purpose != "all":
        return {"demo": DEMO, "test": WANTED}[purpose]
    by_minor = {version.split(".")[1]: version for version in releases.pinned().get("kubernetes", [])
                if "-" not in version}  # a pre-release is measured by make new-minor, not tested
    schedulers = set(WANTED["kube-scheduler"]) | set(by_minor.values())
    return dict(WANTED, **{"kube-scheduler": tuple(sorted(schedulers, key=releases.version_key))})


def variable(component: str) -> str:
    """kube-controller-manager -> KUBE_CONTROLLER_MANAGER_BIN."""
    return component.upper().replace("-", "_") + "_BIN"


binaries_dir = build.binaries_dir


def version_of(path: str) -> str | None:
    """'1.35.4' from `BINARY --version` ('Kubernetes v1.35.4'), None when it does not run."""
    try:
        answer = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"v(\d+\.\d+\.\d+)", answer.stdout + answer.stderr)
    return match.group(1) if match else None


def from_environment(component: str) -> dict[str, tuple[str, str]]:
    """minor -> (path, origin) for the variables already set."""
    found = {}
    name = variable(component)
    for key, path in os.environ.items():
        match = re.fullmatch(re.escape(name) + r"_1_(\d+)", key)
        if match and path:
            found[match.group(1)] = (path, "$" + key)
    plain = os.environ.get(name)
    if plain:
        version = version_of(plain)
        if version:
            found.setdefault(version.split(".")[1], (plain, "$" + name))
    return found


def from_directory(directory: str, component: str, pinned: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    """minor -> (path, origin): the newest patch of each minor in the binaries directory, but none older than the
    release PINNED for its minor: the directory is shared by every checkout, and an older patch there is what an older
    pin built; the pinned one is then fetched or built, not replaced by it."""
    oldest = {version.split(".")[1]: int(re.match(r"\d+", version.split(".")[2]).group()) for version in pinned}
    newest: dict[str, tuple[int, str]] = {}
    try:
        names = os.listdir(directory)
    except OSError:
        return {}
    for name in names:
        match = NAME_RE.match(name)
        path = os.path.join(directory, name)
        if not match or match.group("component") != component or not os.access(path, os.X_OK):
            continue
        patch = int(match.group("patch"))
        if patch >= max(newest.get(match.group("minor"), (-1, ""))[0], oldest.get(match.group("minor"), -1)):
            newest[match.group("minor")] = (patch, path)
    return {minor: (entry[1], directory) for minor, entry in newest.items()}


class Downloads:
    """The official release downloads, tried until the first failure (then the site counts as unreachable)."""

    def __init__(self, directory: str):
        self.directory = directory
        self.unreachable = os.environ.get("KUBE_DOWNLOAD", "1") == "0" and "KUBE_DOWNLOAD=0"
        self.arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())

    def fetch(self, component: str, version: str) -> str | None:
        if self.unreachable:
            return None
        url = RELEASE_URL.format(version=version, arch=self.arch, component=component)
        try:
            with urllib.request.urlopen(url + ".sha256", timeout=DOWNLOAD_TIMEOUT) as answer:
                expected = answer.read().decode().split()[0]
            os.makedirs(self.directory, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.directory, delete=False) as handle, \
                    urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT) as answer:
                digest = hashlib.sha256()
                for block in iter(lambda: answer.read(1 << 20), b""):
                    digest.update(block)
                    handle.write(block)
            if digest.hexdigest() != expected:
                os.unlink(handle.name)
                raise ValueError("sha256 %s, published %s" % (digest.hexdigest(), expected))
        except (OSError, ValueError) as error:  # URLError and timeouts are OSErrors
            self.unreachable = "%s: %s" % (url, getattr(error, "reason", error))
            return None
        path = os.path.join(self.directory, "%s-v%s" % (component, version))
        os.chmod(handle.name, 0o755)
        os.replace(handle.name, path)
        return path


class Builds:
    """Builds from the pinned upstream Go modules (tests/binaries), where `go` is on the PATH: each release's
    missing components in one `go build` (build.py; a lock per release, so two runs never build one binary)."""

    def __init__(self, directory: str):
        self.directory = directory
        self.go = shutil.which("go")
        self.pinned = releases.pinned().get("kubernetes", [])
        self.failed: list[str] = []

    def build(self, wanted_missing: dict[str, list[str]]) -> dict[tuple[str, str], str]:
        """(component, version) -> path for what it built of WANTED_MISSING (version -> components)."""
        built = {}
        if not self.go:
            return built
        for version, components in sorted(wanted_missing.items(), key=lambda item: releases.version_key(item[0])):
            if version not in self.pinned:
                self.failed.append("%s %s: not pinned (tests/binaries/pin.py kubernetes %s)"
                                   % (" ".join(components), version, version))
                continue
            try:
                paths = build.build("kubernetes", version, components, self.directory)
            except SystemExit as error:  # build.py says what failed; the tests that need it skip, loudly
                self.failed.append(str(error))
                continue
            built.update({(component, version): path for component, path in zip(components, paths)})
        return built


def other_projects(builds: Builds, purpose: str) -> tuple[list[str], list[str]]:
    """The export lines and report lines of the binaries of OTHER_PROJECTS[purpose]."""
    exports, found = [], {}
    wanted_releases = [(project, version, components) for project, by_release in OTHER_PROJECTS[purpose].items()
                       for version, components in sorted(by_release.items(), key=lambda item: releases.version_key(item[0]))]
    for project, version, components in wanted_releases:
        paths = {c: build.target(builds.directory, c, version) for c in components}
        origin = builds.directory
        missing = [c for c, path in paths.items() if not os.access(path, os.X_OK)]
        if missing and builds.go:
            try:
                build.build(project, version, missing, builds.directory)
                origin = "built from Go modules"
            except SystemExit as error:  # build.py says what failed; the suites that need it skip, loudly
                builds.failed.append(str(error))
        for component, path in paths.items():
            entry = found.setdefault(component, ([], []))
            if os.access(path, os.X_OK):
                exports.append("export %s_%s=%s" % (variable(component), version.replace(".", "_"), shlex.quote(path)))
                entry[0].append("%s (%s)" % (version, origin))
            else:
                entry[1].append(version)
    report = ["binaries: %-24s %s%s" % (component, ", ".join(ok) or "none", "; MISSING " + " ".join(missing) if missing else "")
              for component, (ok, missing) in found.items()]
    return exports, report


def resolve(downloads: Downloads, builds: Builds, purpose: str = "test") -> tuple[list[str], list[str]]:
    """The export lines and the report lines."""
    exports, report = [], []
    directory = binaries_dir()
    pins = wanted(purpose)
    found_by_component = {}
    to_build: dict[str, list[str]] = {}
    for component, versions in pins.items():
        found = from_directory(directory, component, versions)
        found.update(from_environment(component))
        for version in versions:
            minor = version.split(".")[1]
            if minor in found:
                continue
            path = downloads.fetch(component, version)
            if path:
                found[minor] = (path, "downloaded")
            else:
                to_build.setdefault(version, []).append(component)
        found_by_component[component] = found
    built = builds.build(to_build)
    for component, versions in pins.items():
        found = found_by_component[component]
        missing = []
        for version in versions:
            minor = version.split(".")[1]
            if minor in found:
                continue
            if (component, version) in built:
                found[minor] = (built[component, version], "built from Go modules")
            else:
                missing.append("1." + minor)
        name = variable(component)
        for minor in sorted(found, key=int):
            exports.append("export %s_1_%s=%s" % (name, minor, shlex.quote(found[minor][0])))
        if found:
            plain = PREFERRED_MINOR.get(component)
            plain = plain if plain in found else max(found, key=int)
            exports.append("export %s=%s" % (name, shlex.quote(found[plain][0])))
        origins = ", ".join("1.%s (%s)" % (minor, found[minor][1]) for minor in sorted(found, key=int))
        missing_text = "; MISSING " + " ".join(missing) if missing else ""
        report.append("binaries: %-24s %s%s" % (component, origins or "none", missing_text))
    other_exports, other_report = other_projects(builds, purpose)
    exports += other_exports
    report += other_report
    etcd = os.environ.get("ETCD_BIN") or shutil.which("etcd")
    if etcd:
        exports.append("export ETCD_BIN=%s" % shlex.quote(etcd))
    report.append("binaries: %-24s %s" % ("etcd", etcd or "none; MISSING (apt-get install etcd-server)"))
    if downloads.unreachable:
        report.append("binaries: official downloads not used (%s)" % downloads.unreachable)
    report += ["binaries: build failed: %s" % failure for failure in builds.failed]
    if any("MISSING" in line for line in report):
        no_go = "" if builds.go else ("no `go` (1.21 or newer: it fetches each release's Go toolchain) on the PATH to "
                                      "build them from Go modules; ")
        report.append("binaries: tests that need a missing binary are skipped; %sput binaries named like "
                      "kube-scheduler-v1.35.4 in %s or set KUBE_<COMPONENT>_BIN_1_<minor> (README.md: Real Kubernetes "
                      "binaries for the tests)" % (no_go, directory))
    return exports, report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--for", dest="purpose", choices=("demo", "test", "all"), default="test",
                        help="the binaries make demo needs, make test's (default), or also every pinned kube-scheduler")
    exports, report = resolve(Downloads(binaries_dir()), Builds(binaries_dir()), parser.parse_args().purpose)
    print("\n".join(exports))
    print("\n".join(report), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
