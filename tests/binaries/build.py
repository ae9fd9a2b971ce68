"""Build pinned upstream components from their Go modules into the binaries directory.

``build.py kubernetes 1.35.8 kube-scheduler kube-apiserver`` builds, in one ``go build``, each named component of
the pinned module ``modules/kubernetes-v1.35.8`` (every component it pins when none is named) with the Go toolchain its
``go.mod`` names, as upstream builds a release: ``CGO_ENABLED=0``, ``-trimpath``, ``-ldflags -s -w``, the release
tags, and the version stamped through ``-X`` (``kube-scheduler --version`` prints ``Kubernetes v1.35.8``). Each
binary lands as ``<dir>/<component>-v<version>`` (``tests/support/k8s_binaries.py`` finds it there), renamed into
place once built; a lock per release makes a second build of the same release wait for the first, then find its
binaries. Progress goes to stderr: what it builds, and how long it took. Nothing is written inside the repository.
"""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import releases  # noqa: E402  pylint: disable=wrong-import-position


def binaries_dir() -> str:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.environ.get("KUBE_BINARIES_DIR") or os.path.join(cache, "kube-binaries")


def target(directory: str, component: str, version: str) -> str:
    return os.path.join(directory, "%s-v%s" % (component, version))


def release_time(module: str, version: str, env: dict) -> str:
    """The release's commit time as the proxy records it: the build date stamped into the binary (reproducible)."""
    answer = subprocess.run(["go", "mod", "download", "-json", "%s@v%s" % (module, version)], capture_output=True,
                            text=True, check=False, env=env)
    try:
        return json.loads(answer.stdout).get("Time") or "1970-01-01T00:00:00Z"
    except ValueError:
        return "1970-01-01T00:00:00Z"


def ldflags(project: str, version: str, env: dict) -> str:
    spec = releases.PROJECTS[project]
    flags = ["-s", "-w"]
    if spec["stamp_packages"]:
        # Kubernetes and scheduler-plugins builds are stamped with the Kubernetes release they are built on
        # (releases.py says why for scheduler-plugins), cri-tools with its own.
        if spec["stamped_with"] == "kubernetes":
            version = releases.kubernetes_release(releases.module_dir(project, version))
        major, minor = version.split(".")[:2]
        values = {"gitVersion": "v" + version, "gitMajor": major, "gitMinor": minor, "gitTreeState": "clean",
                  "Version": "v" + version}
        if "buildDate" in spec["stamp_keys"]:
            values["buildDate"] = release_time("k8s.io/kubernetes", version, env)
        flags += ["-X '%s.%s=%s'" % (package, key, values[key])
                  for package in spec["stamp_packages"] for key in spec["stamp_keys"]]
    return " ".join(flags)


def build(project: str, version: str, components: list[str], directory: str) -> list[str]:
    """Build what is missing of COMPONENTS; the paths of all of them."""
    module = releases.module_dir(project, version)
    if not os.path.isfile(os.path.join(module, "go.sum")):
        raise SystemExit("%s %s is not pinned: no %s/go.sum (tests/binaries/pin.py %s %s pins it)"
                         % (project, version, module, project, version))
    known = releases.components(module)
    unknown = [c for c in components if c not in known]
    if unknown:
        raise SystemExit("%s v%s does not pin %s; it pins %s (tests/binaries/pin.py pins a release's components)"
                         % (project, version, ", ".join(unknown), ", ".join(known)))
    os.makedirs(directory, exist_ok=True)
    paths = [target(directory, c, version) for c in components]
    with open(os.path.join(directory, ".build-%s-v%s.lock" % (project, version)), "w", encoding="utf-8") as lock:
        if any(not os.path.exists(p) for p in paths):
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                print("build: %s v%s is being built by another run; waiting for it" % (project, version),
                      file=sys.stderr, flush=True)
                fcntl.flock(lock, fcntl.LOCK_EX)
        missing = [c for c, p in zip(components, paths) if not os.path.exists(p)]
        if missing:
            go_build(project, version, missing, module, directory)
    return paths


def go_build(project: str, version: str, components: list[str], module: str, directory: str) -> None:
    toolchain = releases.toolchain(module)
    env = releases.go_env(toolchain)
    started = time.monotonic()
    print("build: %s v%s: %s with %s (CGO_ENABLED=0 -trimpath; cold, this takes minutes per component)"
          % (project, version, " ".join(components), toolchain), file=sys.stderr, flush=True)
    packages = releases.PROJECTS[project]["packages"]
    with tempfile.TemporaryDirectory(dir=directory, prefix=".build-") as out:
        command = ["go", "build", "-trimpath", "-tags", releases.PROJECTS[project]["tags"],
                   "-ldflags", ldflags(project, version, env), "-o", out + "/"]
        # stdout too goes to stderr: k8s_binaries.py's stdout is the export lines.
        answer = subprocess.run(command + [packages[c] for c in components], cwd=module, env=env, check=False,
                                stdout=sys.stderr)
        if answer.returncode:
            raise SystemExit("build: go build of %s v%s failed (exit %d): %s"
                             % (project, version, answer.returncode, " ".join(command)))
        for component in components:
            built = os.path.join(out, os.path.basename(packages[component]))
            if project == "etcd":
                built = os.path.join(out, "v3")  # the etcd server module's main package is its root, named v3
            os.chmod(built, 0o755)
            os.replace(built, target(directory, component, version))
    seconds = time.monotonic() - started
    print("build: %s v%s: %s built in %.0f s into %s" % (project, version, " ".join(components), seconds, directory),
          file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("project", choices=sorted(releases.PROJECTS))
    parser.add_argument("version")
    parser.add_argument("components", nargs="*", help="default: every component of the project")
    parser.add_argument("--dir", default=binaries_dir(), help="default: $KUBE_BINARIES_DIR or ~/.cache/kube-binaries")
    args = parser.parse_args()
    components = args.components or releases.components(releases.module_dir(args.project, args.version))
    for path in build(args.project, args.version, components, args.dir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
