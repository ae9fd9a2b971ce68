"""The docs site builds clean, as `make docs` builds it: antsibull-docs lints the collection's docs (plugins, filters,
roles' argument specs, docs/docsite) with no error, writes the RST, and Sphinx builds it with warnings as errors.
Every module, filter and role has its page, and the guides are there."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent


def run(args, env):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, check=False,
                            cwd=REPO, env=env)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-6000:]
    return result


def test_the_docs_site_builds_without_a_warning(tmp_path, collections_path):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path,
               PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    # Without PYTHONPATH, as `make docs` lints (see test_docs_tempdir.py): the checkout importable beside the linter's
    # temporary copy put the copy's random directory name into the pages.
    lint = run([BIN / "antsibull-docs", "lint-collection-docs", "--plugin-docs", "--validate-collection-refs",
                "dependent", "--disallow-unknown-collection-refs", "."],
               dict((name, value) for name, value in env.items() if name != "PYTHONPATH"))
    assert lint.stdout.strip() == ""
    rst = tmp_path / "rst"
    rst.mkdir(mode=0o700)
    run([BIN / "antsibull-docs", "--config-file", "docs/site/antsibull-docs.cfg", "collection", "--use-current",
         "--squash-hierarchy", "--fail-on-error", "--cleanup", "everything", "--dest-dir", rst,
         "kubesched.schedulers"], env)
    run([BIN / "sphinx-build", "-W", "--keep-going", "-n", "-q", "-b", "html", "-c", "docs/site", rst,
         tmp_path / "html"], env)
    pages = {p.name for p in (tmp_path / "html").rglob("*.html")}
    modules = {p.stem + "_module.html" for p in (REPO / "plugins" / "modules").glob("*.py")}
    filters = {p.stem + "_filter.html" for p in (REPO / "plugins" / "filter").glob("*.yml")}
    roles = {p.name + "_role.html" for p in (REPO / "roles").iterdir() if (p / "meta" / "argument_specs.yml").is_file()}
    # Every guide docs/docsite/extra-docs.yml lists, and the README (docs/site's index).
    extra = yaml.safe_load((REPO / "docs" / "docsite" / "extra-docs.yml").read_text())
    guides = {name + ".html" for section in extra["sections"] for name in section["toctree"]} | {"readme.html"}
    # The globs found what they look for (an empty set would make the subset check below pass on nothing).
    assert len(filters) >= 5 and len(roles) == 4 and len(guides) >= 7
    assert modules | filters | roles | guides <= pages
    deployment = (tmp_path / "html" / "deployment_role.html").read_text()
    assert "DaemonSet" in deployment
