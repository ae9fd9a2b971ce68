"""The execution environment: the collection as ansible-galaxy builds it declares its Python and system needs
(meta/execution-environment.yml, requirements.txt, bindep.txt) and its collection dependencies; `ansible-builder
create` turns docs/ee/execution-environment.yml into a build context (no image is built: no registry here), and
ansible-builder's own introspection script, run on the installed collections as the image build runs it, finds them."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO / "tests" / "controlplane"))
from preview_binaries import real_binaries  # noqa: E402  pylint: disable=wrong-import-position


MAKEFILE = (REPO / "Makefile").read_text()
MAKEFILE_CORE_PYTHON = dict(re.findall(r"^CORE_PYTHON_VERSION_([0-9.]+) := ([0-9.]+)$", MAKEFILE, re.M))


def cores():
    return re.search(r"^CORES := (.+)$", MAKEFILE, re.M).group(1).split()


def core_pin(core):
    constraints = (REPO / "requirements" / ("constraints-%s.txt" % core)).read_text()
    return re.search(r"^ansible-core==\S+$", constraints, re.M).group(0)


def run(args, **kwargs):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, check=False, **kwargs)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    """The collection tarball that `ansible-galaxy collection build` makes from this checkout."""
    out = tmp_path_factory.mktemp("artifact")
    run([BIN / "ansible-galaxy", "collection", "build", "--output-path", out, REPO])
    tarballs = list(out.glob("kubesched-schedulers-*.tar.gz"))
    assert len(tarballs) == 1
    return tarballs[0]


@pytest.fixture(scope="module")
def context(artifact, tmp_path_factory):
    """The build context `ansible-builder create` writes for the shipped EE definition."""
    work = tmp_path_factory.mktemp("ee")
    shutil.copy(REPO / "docs" / "ee" / "execution-environment.yml", work / "execution-environment.yml")
    shutil.copy(artifact, work / "kubesched-schedulers.tar.gz")
    run([BIN / "ansible-builder", "create", "-f", work / "execution-environment.yml", "-c", work / "context",
         "--output-filename", "Containerfile"], cwd=work)
    return work / "context"


def test_the_artifact_carries_the_ee_metadata_and_its_dependencies(artifact):
    with tarfile.open(artifact) as tar:
        names = set(tar.getnames())
        manifest = json.load(tar.extractfile("MANIFEST.json"))
    assert {"meta/execution-environment.yml", "requirements.txt", "bindep.txt", "meta/runtime.yml"} <= names
    assert not [n for n in names if n.startswith((".build/", ".venv/", ".ansible/", ".hypothesis/", ".pytest_cache/"))]
    info = manifest["collection_info"]
    assert set(info["dependencies"]) == {"kubernetes.core"}
    for key in ("repository", "documentation", "issues", "homepage"):
        assert info[key].startswith("https://") and "example" not in info[key], (key, info[key])


def test_every_collection_the_roles_use_is_a_declared_dependency():
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    used = set()
    for base in ("roles", "playbooks"):
        for path in (REPO / base).rglob("*.yml"):
            for word in path.read_text().split():
                parts = word.rstrip(":").split(".")
                if len(parts) == 3 and word.endswith(":") and all(p.replace("_", "").isalnum() for p in parts):
                    used.add(".".join(parts[:2]))
    assert used - {"ansible.builtin", "kubesched.schedulers"} == set(galaxy["dependencies"])


def test_the_collection_ee_metadata_names_existing_files():
    meta = yaml.safe_load((REPO / "meta" / "execution-environment.yml").read_text())
    assert meta["version"] == 1
    assert meta["dependencies"] == {"python": "requirements.txt", "system": "bindep.txt"}
    assert "PyYAML" in (REPO / "requirements.txt").read_text()


def test_ansible_builder_create_writes_a_context_that_installs_the_collection(context):
    containerfile = (context / "Containerfile").read_text()
    assert "ansible-galaxy collection install" in containerfile
    assert "introspect" in containerfile
    # The EE is built on a supported core, the one of its test venv, on that venv's Python: the newest one whose
    # Python the base image packages (the definition says which and why).
    pins = {core: core_pin(core) for core in cores()}
    ee_cores = [core for core, pin in pins.items() if pin in containerfile]
    assert len(ee_cores) == 1, containerfile
    python = "python" + MAKEFILE_CORE_PYTHON[ee_cores[0]]
    assert 'ARG PYCMD="/usr/bin/%s"' % python in containerfile
    requirements = yaml.safe_load((context / "_build" / "requirements.yml").read_text())
    names = [c["name"] for c in requirements["collections"]]
    assert names == ["collections/kubesched-schedulers.tar.gz", "kubernetes.core"]
    assert (context / "_build" / "collections" / "kubesched-schedulers.tar.gz").is_file()
    assert (context / "_build" / "scripts" / "introspect.py").is_file()


def test_the_image_build_would_install_the_collections_python_and_system_needs(context, artifact, tmp_path):
    # What the build's introspection step sees once the galaxy stage installed the collections.
    root = tmp_path / "ansible_collections"
    target = root / "kubesched" / "schedulers"
    target.mkdir(parents=True)
    with tarfile.open(artifact) as tar:
        tar.extractall(target, filter="data")
    from ansible_collections.kubernetes import core  # pylint: disable=import-outside-toplevel
    shutil.copytree(Path(core.__path__[0]), root / "kubernetes" / "core")
    result = run([sys.executable, context / "_build" / "scripts" / "introspect.py", "introspect", tmp_path],
                 env=dict(os.environ, PYTHONPATH=""))
    data = yaml.safe_load(result.stdout)
    python = "\n".join(data["python"])
    # PyYAML is left out by ansible-builder: ansible-core, which every EE has, requires it.
    for line in ("cryptography>=41.0  # from collection kubesched.schedulers",
                 "kubernetes>=24.2.0  # from collection kubesched.schedulers", "jsonpatch  # from collection kubernetes.core"):
        assert line in data["python"], python
    assert any(line.startswith("ca-certificates") and "kubesched.schedulers" in line for line in data["system"])


# The preview variant: execution-environment.yml with the three binaries a placement preview runs.
PREVIEW_DEFINITION = REPO / "docs" / "ee" / "execution-environment-preview.yml"
PREVIEW_ADDITIONS = {"additional_build_steps"}


def test_the_preview_variant_is_the_execution_environment_with_its_binaries_added():
    base = yaml.safe_load((REPO / "docs" / "ee" / "execution-environment.yml").read_text())
    preview = yaml.safe_load(PREVIEW_DEFINITION.read_text())
    # The same image otherwise: a change to one definition that the other misses fails here.
    assert dict((k, v) for k, v in preview.items() if k not in PREVIEW_ADDITIONS | {"additional_build_files"}) == \
        dict((k, v) for k, v in base.items() if k != "additional_build_files")
    assert preview["additional_build_files"][:len(base["additional_build_files"])] == base["additional_build_files"]
    assert set(preview) - set(base) == PREVIEW_ADDITIONS


def _server_tarball(path, binaries):
    """A tarball laid out as upstream's kubernetes-server-linux-amd64.tar.gz (kubernetes/server/bin/<component>, with
    other members beside them that the image must not unpack)."""
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for component in ("kube-apiserver", "kube-scheduler"):
            tar.add(binaries[component], "kubernetes/server/bin/" + component)
        tar.add(REPO / "LICENSE", "kubernetes/LICENSES")


def _etcd_tarball(path, etcd, version):
    """A tarball laid out as an etcd release's etcd-vX.Y.Z-linux-amd64.tar.gz (its binaries in one folder)."""
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        tar.add(etcd, "etcd-v%s-linux-amd64/etcd" % version)
        tar.add(REPO / "LICENSE", "etcd-v%s-linux-amd64/README.md" % version)


def test_the_preview_image_holds_binaries_the_preview_finds_and_accepts(artifact, tmp_path):
    """ansible-builder create turns the variant into a build context; its final stage's COPY and RUN, run as the
    image build runs them (the RUN by sh, with the image's /opt and /tmp under this test's directory), put the real
    binaries where binaries_dir /opt/kubernetes-server finds them, and the preview's own check accepts them."""
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview import binaries  # pylint: disable=import-outside-toplevel
    minor, found = real_binaries()
    if minor is None:
        pytest.skip("no preview binaries: " + found)
    etcd_version = binaries.check(found, minor)["etcd"]
    work = tmp_path / "ee"
    work.mkdir()
    shutil.copy(PREVIEW_DEFINITION, work / "execution-environment.yml")
    shutil.copy(artifact, work / "kubesched-schedulers.tar.gz")
    _server_tarball(work / "kubernetes-server-linux-amd64.tar.gz", found)
    _etcd_tarball(work / "etcd-linux-amd64.tar.gz", found["etcd"], etcd_version)
    run([BIN / "ansible-builder", "create", "-f", work / "execution-environment.yml", "-c", work / "context",
         "--output-filename", "Containerfile"], cwd=work)
    context = work / "context"
    final = (context / "Containerfile").read_text().split("\nFROM ")[-1]
    copies = re.findall(r"^COPY (_build/preview/) (/tmp/\S+)$", final, re.M)
    runs = [line[len("RUN "):] for line in final.splitlines() if line.startswith("RUN ") and "kubernetes-server" in line]
    assert len(copies) == 1 and len(runs) == 1, final
    image = tmp_path / "image"
    (image / "tmp").mkdir(parents=True)
    source, target = copies[0]
    shutil.copytree(context / source, image / target.lstrip("/"))
    run(["sh", "-ec", re.sub(r"(?<![\w/.])/(opt|tmp)/", lambda m: "%s/%s/" % (image, m.group(1)), runs[0])])
    assert list((image / "tmp").iterdir()) == []
    paths = binaries.resolve({}, str(image / "opt" / "kubernetes-server"))
    assert paths == dict((component, str(image / "opt/kubernetes-server/kubernetes/server/bin" / component))
                         for component in binaries.COMPONENTS)
    assert binaries.check(paths, minor)["kube-scheduler"].startswith(minor + ".")
    # Only the three binaries, not the rest of the tarballs.
    assert sorted(p.name for p in (image / "opt" / "kubernetes-server").rglob("*") if p.is_file()) == \
        sorted(binaries.COMPONENTS)
