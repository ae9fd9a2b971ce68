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


MAKEFILE = (REPO / "Makefile").read_text()
MAKEFILE_CORE_PYTHON = dict(re.findall(r"^CORE_PYTHON_VERSION_([0-9.]+) := ([0-9.]+)$", MAKEFILE, re.M))


def newest_core():
    return re.search(r"^CORES := (.+)$", MAKEFILE, re.M).group(1).split()[-1]


def newest_core_pin():
    constraints = (REPO / "requirements" / ("constraints-%s.txt" % newest_core())).read_text()
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
    # The EE is built on the newest core the collection is tested with, on the Python its venv has.
    assert newest_core_pin() in containerfile
    python = "python" + MAKEFILE_CORE_PYTHON[newest_core()]
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
