"""The README is a front door for users (what is inside, requirements, installation, then the five-minute path; the
contributor's matters in CONTRIBUTING.md and tests/README.md), and what it and docs/installation.md document works:
the tarball `ansible-galaxy collection build` makes, installed into a fresh venv with ansible-core from PyPI
(`--no-deps`, offline) and with the `ansible` package that bundles kubernetes.core (no Galaxy needed), answers
`ansible-doc`. The five-minute example resolves with the instance model, and the README's error example is what
the library prints, run through ansible-playbook.

The fresh venv needs PyPI (pip's configured index); without it that test is skipped, loudly."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import ansible.release
import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve

REPO = Path(__file__).resolve().parents[3]
README = (REPO / "README.md").read_text()
INSTALLATION = (REPO / "docs" / "installation.md").read_text()
CONTRIBUTING = (REPO / "CONTRIBUTING.md").read_text()
TESTS = (REPO / "tests" / "README.md").read_text()
VENV_BIN = Path(sys.executable).parent
# Pages the README's sections moved to; each must say what it took over (below) and is on the docs site
# (test_docs_site.py).
MOVED = [REPO / "docs" / name for name in ("installation.md", "versions.md", "input-model.md", "lease-rbac.md")] + [
    REPO / "CONTRIBUTING.md", REPO / "benchmarks" / "README.md", REPO / "tests" / "README.md"]


def headings(text=README):
    return re.findall(r"^## (.+)$", text, re.M)


def test_the_readme_starts_with_installation_then_the_five_minute_path_then_contributors():
    order = headings()
    assert order[:4] == ["What is inside", "Requirements", "Installation", "Five minutes to a verified scheduler"]
    assert order.index("`make demo` and `make test`") > order.index("Guides") and order[-1] == "License"
    assert headings(CONTRIBUTING).index("Quick start") < headings(CONTRIBUTING).index("Development")
    assert headings(CONTRIBUTING)[-1] == "Layout"
    for words in ("ansible-galaxy collection build", "pip install ansible-core kubernetes", "make demo", "make test",
                  "](docs/installation.md)", "](tests/README.md#real-kubernetes-binaries-for-the-tests)"):
        assert words in README
    # The offline ways moved to the installation page; the binaries to tests/README.md.
    for words in ("ansible-galaxy collection build", "requirements.yml", "--no-deps", "pip install kubernetes",
                  "pip install ansible kubernetes"):
        assert words in INSTALLATION
    assert "## Real Kubernetes binaries for the tests" in TESTS
    for words in ("make demo", "make test"):
        assert words in CONTRIBUTING


def test_the_readme_is_a_front_door():
    lines = README.splitlines()
    assert len(lines) <= 200
    # Measurements, dates and commits live in benchmarks/README.md, the lab notebook.
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b|\bload average\b|\bissue \d+", README)
    # Every Markdown page it links exists.
    for target in re.findall(r"\]\((?!https?://|#)([^)#\s]+)", README):
        assert (REPO / target).exists(), target


def test_the_five_minute_instances_resolve():
    block = re.search(r"```yaml\n(\s*# group_vars/kube_control_plane.yml\n.*?)```", README, re.S).group(1)
    variables = yaml.safe_load("\n".join(line[3:] for line in block.splitlines()))
    _instances, errors, warnings = resolve(
        variables["kube_scheduler_instances"], variables["kube_scheduler_version"],
        "/etc/kubernetes/schedulers")
    assert (errors, warnings) == ([], [])


def readme_error_example():
    """The task and the output lines of the README's "When a config is wrong"."""
    section = README.split("### When a config is wrong", 1)[1].split("\n## ", 1)[0]
    tasks = yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])
    shown = section.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    return section, tasks, shown


def run_tasks(tmp_path, ansible_playbook, tasks, name):
    play = tmp_path / (name + ".yml")
    play.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}], sort_keys=False))
    return ansible_playbook(["-i", "localhost,", "-c", "local", play], cwd=tmp_path)


def test_the_readmes_error_example_is_what_the_library_prints(tmp_path, ansible_playbook):
    """The README shows the real output of its own task: kube-scheduler 1.37's line (the duplicate's value is a
    field.Path, which Go prints as {}), the library's hint, nothing written; and what it says of 1.30 to 1.33 (a
    pointer upstream, the path here) is what the library prints for 1.30."""
    section, tasks, shown = readme_error_example()
    (task,) = tasks
    module = task["kubesched.schedulers.scheduler_config"]
    assert module["kubernetes_version"] == "1.37" and "dest" not in module
    result = run_tasks(tmp_path, ansible_playbook, tasks, "newest")
    assert result.returncode == 2, result.stdout + result.stderr
    printed = (result.stdout + result.stderr).splitlines()
    assert shown and all(line in printed for line in shown), "\n".join(printed)
    assert "Duplicate value: {}" in shown[1]
    module["kubernetes_version"] = "1.30"
    older = run_tasks(tmp_path, ansible_playbook, tasks, "older")
    assert older.returncode == 2, older.stdout + older.stderr
    said = re.search(r"`(Duplicate value: profiles\[\d\]\.schedulerName)`", section).group(1)
    assert "profiles[2].schedulerName: " + said in older.stdout
    assert 'field.Path{name:"schedulerName", index:"", parent:(*field.Path)(0xc' in section


def sh(args, env=None, cwd=None, timeout=600):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, check=False,
                          env=env, cwd=cwd)


@pytest.fixture(scope="module")
def tarball(tmp_path_factory):
    out = tmp_path_factory.mktemp("build")
    built = sh([VENV_BIN / "ansible-galaxy", "collection", "build", REPO, "--output-path", out])
    assert built.returncode == 0, built.stdout + built.stderr
    (path,) = out.glob("kubesched-schedulers-*.tar.gz")
    return path


def isolated(tmp_path, **extra):
    """No collection of this machine leaks in: a HOME and a collections path of the test's own."""
    env = dict(os.environ, HOME=str(tmp_path / "home"), ANSIBLE_COLLECTIONS_PATH=str(tmp_path / "collections"),
               **extra)
    for name in ("PYTHONPATH", "ANSIBLE_CONFIG", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


def test_offline_with_ansible_core_from_pypi_and_no_deps(tmp_path, tarball):
    # The core of the venv running the tests, on its Python: each core of the matrix (make matrix) proves its own.
    constraint = "ansible-core==" + ansible.release.__version__
    made = sh([sys.executable, "-m", "venv", tmp_path / "venv"])
    assert made.returncode == 0, made.stderr
    env = isolated(tmp_path)
    pip = sh([tmp_path / "venv" / "bin" / "pip", "install", "--quiet", "--disable-pip-version-check", constraint], env=env)
    if pip.returncode != 0:
        pytest.skip("PyPI is not reachable: no fresh ansible-core to install the tarball into (%s)" % pip.stderr[-300:])
    galaxy = tmp_path / "venv" / "bin" / "ansible-galaxy"
    installed = sh([galaxy, "collection", "install", "--no-deps", tarball], env=env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert (tmp_path / "collections" / "ansible_collections" / "kubesched" / "schedulers" / "MANIFEST.json").is_file()
    doc = sh([tmp_path / "venv" / "bin" / "ansible-doc", "kubesched.schedulers.scheduler_config"], env=env)
    assert doc.returncode == 0 and "kubesched.schedulers.scheduler_config" in doc.stdout, doc.stderr
    # Modules run: the config library answers through ansible-playbook of the fresh venv.
    (tmp_path / "play.yml").write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n    - kubesched.schedulers.scheduler_config:\n"
        "        kubernetes_version: \"1.35.4\"\n        config: {profiles: [{schedulerName: batch}]}\n")
    played = sh([tmp_path / "venv" / "bin" / "ansible-playbook", "-i", "localhost,", "-c", "local",
                 "-e", "ansible_python_interpreter=" + str(tmp_path / "venv" / "bin" / "python"), tmp_path / "play.yml"],
                env=env)
    assert played.returncode == 0, played.stdout + played.stderr


def test_offline_with_the_ansible_package_that_bundles_kubernetes_core(tmp_path, tarball):
    # The project's venv holds the `ansible` package of its core from PyPI (requirements/constraints-<core>.txt:
    # ansible 14 with kubernetes.core 6.6.0 on the newest core): kubernetes.core is found installed, so nothing is
    # fetched even without --no-deps.
    env = isolated(tmp_path)
    installed = sh([VENV_BIN / "ansible-galaxy", "collection", "install", tarball], env=env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "kubernetes.core" in installed.stdout and "already installed" in installed.stdout
    doc = sh([VENV_BIN / "ansible-doc", "-t", "role", "kubesched.schedulers.deployment"], env=env)
    assert doc.returncode == 0 and "kube_scheduler_deployment_version" in doc.stdout, doc.stderr


def test_no_page_tells_to_install_from_galaxy_by_name():
    # The collection is on no Galaxy: `ansible-galaxy collection install kubesched.schedulers` fails for everyone.
    for path in [REPO / "README.md", REPO / "docs" / "site" / "antsibull-docs.cfg"] + MOVED + sorted(
            (REPO / "docs" / "docsite" / "rst").glob("*.rst")) + sorted((REPO / "roles").glob("*/README.md")):
        text = path.read_text()
        assert "collection install kubesched.schedulers" not in text, path
        assert "install {namespace}.{name}" not in text, path


def test_every_page_names_the_tarball_of_galaxy_ymls_version():
    # `ansible-galaxy collection build` names the tarball after galaxy.yml's version: a page that names another
    # version's tells the reader to install a file the build did not make.
    version = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    pages = [REPO / "README.md"] + MOVED + sorted((REPO / "docs" / "docsite" / "rst").glob("*.rst")) + sorted(
        (REPO / "roles").glob("*/README.md"))
    named = {}
    for path in pages:
        for found in re.findall(r"kubesched-schedulers-([0-9][^\s`'\"]*?)\.tar\.gz", path.read_text()):
            named.setdefault(found, []).append(path.relative_to(REPO).as_posix())
    assert named and set(named) == {version}, named
