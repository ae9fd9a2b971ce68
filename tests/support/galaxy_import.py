"""galaxy_import.py TARBALL: galaxy-importer on the tarball `ansible-galaxy collection build` made, as Galaxy runs it on
an upload (metadata and MANIFEST, every plugin's documentation through ansible-doc, the changelog, ansible-lint's
production profile), judged more strictly than Galaxy does: Galaxy accepts an upload whose import log has lint
warnings and shows them on the collection's page; here any ERROR or WARNING line fails, except one kind that
Galaxy's import cannot avoid: ansible-lint there runs without the collection's dependencies installed, so a module
of a declared dependency (galaxy.yml ``dependencies``, such as kubernetes.core.k8s_info) is "couldn't resolve".

Run with the importer venv's Python (make galaxy-importer): ansible-doc and ansible-lint are taken from its bin
directory. Prints the import log, then one line per finding and a verdict; exit 1 on a finding."""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

UNRESOLVED = re.compile(r"syntax-check\[unknown-module\]: couldn't resolve module/action '([\w.]+)'")


def dependencies(tarball):
    with tarfile.open(tarball) as tar:
        manifest = json.load(tar.extractfile("MANIFEST.json"))
    return set(manifest["collection_info"]["dependencies"])


def findings(log_lines, declared):
    """The log's ERROR and WARNING lines that are not an unresolved module of a declared dependency."""
    found = []
    for line in log_lines:
        level = line.split(":", 1)[0]
        if level not in ("ERROR", "WARNING"):
            continue
        unresolved = UNRESOLVED.search(line)
        if unresolved and ".".join(unresolved.group(1).split(".")[:2]) in declared:
            continue
        found.append(line)
    return found


def result_problems(result, tarball):
    """What the importer's result says that Galaxy would show wrong: no content, an undocumented module."""
    problems = []
    name = Path(tarball).name
    metadata = result.get("metadata") or {}
    read = (metadata.get("namespace"), metadata.get("name"), metadata.get("version"))
    if "%s-%s-%s.tar.gz" % read != name:
        problems.append("the importer read %s.%s %s from %s" % (read + (name,)))
    if not result.get("requires_ansible"):
        problems.append("no requires_ansible (meta/runtime.yml)")
    if not result.get("contents"):
        problems.append("no content found")
    for content in (result.get("docs_blob") or {}).get("contents") or []:
        # Modules only: a filter file holding several filters (metrics_access.py) is listed by its file name, whose
        # filters are documented under their own names.
        if content.get("content_type") == "module" and not content.get("doc_strings"):
            problems.append("%s %s has no documentation Galaxy can show" % (content.get("content_type"),
                                                                            content.get("content_name")))
    return problems


TIMEOUT = "ERROR: Timeout on call to ansible-lint"


def lint_without_time_limit(tarball, work, env):
    """galaxy-importer's own ansible-lint command (galaxy_importer/loaders/collection.py, 0.4.44) on the tarball,
    without the importer's 180 s limit, its findings as the importer logs them (``WARNING: <finding>``). Galaxy's
    servers are not a machine whose two cores run make test: a timeout here says nothing about the collection."""
    root = Path(work) / "lint" / "ansible_collections" / "kubesched" / "schedulers"
    root.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        tar.extractall(root, filter="data")
    lint = subprocess.run(
        ["ansible-lint", "--profile", "production", "--exclude", "tests/integration/", "--exclude", "tests/unit/",
         "--format=pep8", "--nocolor", "-x",
         "yaml,var-naming,avoid-dot-notation,import-task-no-when,single-entry-point,use-loop", "--offline"],
        cwd=root, env=dict(env, ANSIBLE_COLLECTIONS_PATH=str(Path(work) / "lint"), ANSIBLE_LOCAL_TEMP=work,
                           XDG_CACHE_HOME=work), capture_output=True, text=True, check=False)
    return ["WARNING: %s" % line.strip() for line in lint.stdout.splitlines() if line.strip()]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("tarball")
    args = parser.parse_args(argv)
    tarball = os.path.abspath(args.tarball)
    bindir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    for name in ("ANSIBLE_COLLECTIONS_PATH", "PYTHONPATH", "ANSIBLE_CONFIG"):
        env.pop(name, None)
    with tempfile.TemporaryDirectory(prefix="galaxy-import-") as work:
        env["GALAXY_IMPORTER_TMP_ROOT_DIR"] = work
        # A HOME of its own: a run without it left the collection it imported under ~/.ansible/collections, where
        # every later ansible-lint on this machine found that copy before the checkout.
        env["HOME"] = work
        run = subprocess.run([sys.executable, "-m", "galaxy_importer.main", tarball], cwd=work, env=env,
                             capture_output=True, text=True, check=False)
        log = run.stdout + run.stderr
        result_path = Path(work) / "importer_result.json"
        result = json.loads(result_path.read_text()) if result_path.is_file() else {}
        lines = log.splitlines()
        if TIMEOUT in lines:
            lines.remove(TIMEOUT)
            again = lint_without_time_limit(tarball, work, env)
            lines += again
            log += "(the importer's ansible-lint ran past its 180 s here; the same command again, without a limit:)\n"
            log += "".join(line + "\n" for line in again)
    print(log, end="")
    problems = findings(lines, dependencies(tarball)) + result_problems(result, tarball)
    if run.returncode != 0:
        problems.insert(0, "galaxy-importer exited %d" % run.returncode)
    for problem in problems:
        print("galaxy-importer finding: %s" % problem)
    print("galaxy-importer: %s %s" % (Path(tarball).name, "refused or warned" if problems else
                                      "accepted, no warning"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
