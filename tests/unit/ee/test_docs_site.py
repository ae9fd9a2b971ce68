"""The docs site builds clean, as `make docs` builds it: antsibull-docs lints the collection's docs (plugins, filters,
roles' argument specs, docs/docsite) with no error, writes the RST, and Sphinx builds it with warnings as errors.
Every module, filter and role has its page, and the guides are there, and the README with every Markdown page it
links (docs/site/conf.py PAGES: what the README's sections moved to), so each is one click from the README.

The lint does not depend on the name of antsibull-docs' temporary copy of the collection. Its
linter copies the collection to a fresh `antsibull-docs-XXXXXXXX` directory. With the Makefile's PYTHONPATH (the
checkout importable as kubesched.schedulers) the linter took the plugins' paths relative to the checkout, so the
copy's directory name reached the edit link of every page, and a name ending in `_` (one run in 37: tempfile draws
from 36 letters and digits and `_`) made it an RST reference: `Unknown target name: "antsibull-docs-..."`. Here
every temporary directory name ends in `_`, so the condition that was random is always met: the Makefile's own lint
command (from `make -n docs`), run with the Makefile's PYTHONPATH, must stay silent."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
# antsibull-docs with tempfile.mkdtemp (behind ansible_mkdtemp and TemporaryDirectory) forced to names ending in "_".
FORCED = """#!%s
import sys, tempfile
real = tempfile.mkdtemp
def mkdtemp(suffix=None, prefix=None, dir=None):
    return real(suffix=(suffix or "") + "_", prefix=prefix, dir=dir)
tempfile.mkdtemp = mkdtemp
from antsibull_docs.cli.antsibull_docs import main
sys.exit(main())
"""


def site_pages():
    """docs/site/conf.py's PAGES: page name -> Markdown file of the repository."""
    spec = importlib.util.spec_from_file_location("docs_site_conf", REPO / "docs" / "site" / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf.PAGES


def test_every_markdown_page_the_readme_links_is_on_the_site():
    pages = site_pages()
    readme = (REPO / "README.md").read_text()
    linked = {target for target in re.findall(r"\]\((?!https?://|#)([^)#\s]+\.md)", readme)
              if not target.startswith("roles/")}
    assert linked, "the README links no Markdown page"
    assert linked <= set(pages.values())
    # The pages the README's sections moved to.
    assert {"docs/installation.md", "docs/versions.md", "docs/input-model.md", "docs/lease-rbac.md",
            "benchmarks/README.md", "CONTRIBUTING.md", "tests/README.md"} <= set(pages.values())
    assert all((REPO / path).is_file() for path in pages.values())


def run(args, env):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, check=False,
                            cwd=REPO, env=env)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-6000:]
    return result


def lint_command():
    """The Makefile's own lint line, as `make docs` runs it."""
    dry = subprocess.run(["make", "-s", "-n", "docs"], cwd=REPO, capture_output=True, text=True, timeout=120,
                         check=False)
    lines = dry.stdout.replace("\\\n", " ").splitlines()
    found = [line for line in lines if "antsibull-docs lint-collection-docs" in line]
    if not found:
        pytest.fail("make -n docs has no antsibull-docs lint-collection-docs line:\n" + dry.stdout + dry.stderr)
    return found[0]


def test_the_docs_site_builds_without_a_warning(tmp_path, collections_path):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path,
               PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    forced = tmp_path / "bin" / "antsibull-docs"
    forced.parent.mkdir()
    forced.write_text(FORCED % sys.executable)
    forced.chmod(0o755)
    # The lint with the Makefile's PYTHONPATH and every temporary copy's name ending in "_" (the docstring says why).
    lint_env = dict(env, PYTHONPATH=collections_path, PATH=str(forced.parent) + os.pathsep + env["PATH"])
    lint = run(["bash", "-c", lint_command()], lint_env)
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
    # Every guide docs/docsite/extra-docs.yml lists, and the README with its pages (docs/site's index).
    extra = yaml.safe_load((REPO / "docs" / "docsite" / "extra-docs.yml").read_text())
    guides = {name + ".html" for section in extra["sections"] for name in section["toctree"]}
    guides |= {name + ".html" for name in site_pages()}
    # The globs found what they look for (an empty set would make the subset check below pass on nothing).
    # Four roles, and the one they share (roles/_rollout), documented as internal like prometheus-community's _common.
    assert len(filters) >= 5 and len(roles) == 5 and len(guides) >= 17 and "readme.html" in guides
    assert modules | filters | roles | guides <= pages
    deployment = (tmp_path / "html" / "deployment_role.html").read_text()
    assert "DaemonSet" in deployment
