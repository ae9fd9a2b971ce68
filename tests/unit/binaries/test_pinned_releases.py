"""The releases the tests run, pinned as Go modules of the project (tests/binaries): every release `make binaries`
wants is pinned for the components it wants, each pin is a module the go command accepts as it stands (go.sum
complete, the release's own toolchain), and a binary built from it is what it claims: `--version` prints the
release, `go version` names the pinned toolchain. Needs `go` (skipped, loudly, without it); the binaries checks
need `make binaries` (each skipped, naming the file, where it was not built)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "binaries"))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import build  # noqa: E402  pylint: disable=wrong-import-position
import k8s_binaries  # noqa: E402  pylint: disable=wrong-import-position
import releases  # noqa: E402  pylint: disable=wrong-import-position

PINNED = releases.pinned()
MODULES = [(project, version) for project, versions in PINNED.items() for version in versions]
NO_GO = "no `go` on the PATH: the pinned modules are not checked (make binaries cannot build either)"
needs_go = pytest.mark.skipif(shutil.which("go") is None, reason=NO_GO)


@pytest.mark.parametrize("purpose", ["test", "demo", "all"])
def test_every_wanted_release_is_pinned_for_its_components(purpose):
    for component, versions in k8s_binaries.wanted(purpose).items():
        for version in versions:
            module = releases.module_dir("kubernetes", version)
            assert version in PINNED["kubernetes"], "%s %s is wanted but not pinned (tests/binaries/pin.py)" % (
                component, version)
            assert component in releases.components(module), "%s pins %s, not %s" % (
                module, releases.components(module), component)


@needs_go
@pytest.mark.parametrize("project,version", MODULES, ids=["%s-%s" % m for m in MODULES])
def test_a_pin_is_complete_as_committed(project, version):
    """`go list -mod=readonly` of every pinned component with the pinned toolchain: a go.sum line missing, a
    replace that points nowhere or a toolchain the proxy does not serve fails here, not in a build minutes later."""
    module = releases.module_dir(project, version)
    packages = [releases.PROJECTS[project]["packages"][c] for c in releases.components(module)]
    answer = subprocess.run(["go", "list", "-mod=readonly", "-f", "{{.ImportPath}} {{.Module.Path}}@{{.Module.Version}}"]
                            + packages, cwd=module, env=releases.go_env(releases.toolchain(module)),
                            capture_output=True, text=True, timeout=600, check=False)
    assert answer.returncode == 0, answer.stderr[-2000:]
    main_module = releases.PROJECTS[project]["module"]
    assert {line.split()[1] for line in answer.stdout.splitlines()} == {"%s@v%s" % (main_module, version)}
    if project == "kubernetes":
        # Every staging module comes at the release's own v0.<minor>.<patch>.
        listed = subprocess.run(["go", "list", "-mod=readonly", "-m", "-json", "all"], cwd=module,
                                env=releases.go_env(releases.toolchain(module)), capture_output=True, text=True,
                                timeout=600, check=True).stdout
        staging = [m for m in json.loads("[" + re.sub(r"}\s*{", "},{", listed) + "]")
                   if m.get("Replace") and m["Path"].startswith("k8s.io/")]
        assert staging and {m["Replace"]["Version"] for m in staging} == {"v0." + version.split(".", 1)[1]}


def built_binary(component, version):
    """The binary make binaries built, or a skip naming the file where it was not built."""
    path = build.target(build.binaries_dir(), component, version)
    if not os.access(path, os.X_OK):
        pytest.skip("%s was not built (make binaries builds it)" % path)
    return path


def version_line(path):
    answer = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60, check=False)
    return answer.stdout.strip(), answer.stdout + answer.stderr


def assert_built_by_the_pinned_go(path, module):
    built_with = subprocess.run(["go", "version", path], capture_output=True, text=True, timeout=60, check=True)
    assert built_with.stdout.strip().endswith(": " + releases.toolchain(module))


@needs_go
@pytest.mark.parametrize("component,version", [(c, v) for c, vs in k8s_binaries.WANTED.items() for v in vs])
def test_a_built_binary_is_the_pinned_release(component, version):
    path = built_binary(component, version)
    said, output = version_line(path)
    assert said == "Kubernetes v%s" % version, output
    assert_built_by_the_pinned_go(path, releases.module_dir("kubernetes", version))


@needs_go
@pytest.mark.parametrize("component,version", [(c, v) for v, cs in k8s_binaries.SCHEDULER_PLUGINS_ALL.items() for c in cs])
def test_a_scheduler_plugins_binary_is_stamped_with_its_kubernetes(component, version):
    """A scheduler-plugins build says the Kubernetes release it is built on (releases.py: stamped with its own
    release, component-base refuses to start it), and was built by the Go its module pins."""
    path = built_binary(component, version)
    module = releases.module_dir("scheduler-plugins", version)
    if component == "scheduler-plugins-scheduler":  # the controller has no --version flag
        said, output = version_line(path)
        assert said == "Kubernetes v%s" % releases.kubernetes_release(module), output
    assert_built_by_the_pinned_go(path, module)


@needs_go
@pytest.mark.parametrize("version", sorted(k8s_binaries.CRI_TOOLS))
def test_a_crictl_binary_is_the_pinned_release(version):
    """crictl says its own release (cri-tools' Makefile stamps it) and was built by the Go its module pins."""
    path = built_binary("crictl", version)
    said, output = version_line(path)
    assert said == "crictl version v%s" % version, output
    assert_built_by_the_pinned_go(path, releases.module_dir("cri-tools", version))
