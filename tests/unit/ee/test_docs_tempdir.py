"""Issue 22 item 8: `make docs` does not depend on the name of antsibull-docs' temporary copy of the collection.

Its linter copies the collection to a fresh `antsibull-docs-XXXXXXXX` directory. With the Makefile's PYTHONPATH (the
checkout importable as kubesched.schedulers) the linter took the plugins' paths relative to the checkout, so the
copy's directory name reached the edit link of every page, and a name ending in `_` (one run in 37: tempfile draws
from 36 letters and digits and `_`) made it an RST reference: `Unknown target name: "antsibull-docs-..."`.

Here every temporary directory name ends in `_`, so the condition that was random is always met: the Makefile's own
lint command (from `make -n docs`), run with the Makefile's PYTHONPATH, must stay silent."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
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


def lint_command():
    dry = subprocess.run(["make", "-s", "-n", "docs"], cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    lines = dry.stdout.replace("\\\n", " ").splitlines()
    found = [line for line in lines if "antsibull-docs lint-collection-docs" in line]
    if not found:
        pytest.fail("make -n docs has no antsibull-docs lint-collection-docs line:\n" + dry.stdout + dry.stderr)
    return found[0]


def test_the_docs_lint_passes_when_the_temporary_copy_ends_in_an_underscore(tmp_path, collections_path):
    fake = tmp_path / "bin" / "antsibull-docs"
    fake.parent.mkdir()
    fake.write_text(FORCED % sys.executable)
    fake.chmod(0o755)
    # As the Makefile exports them: PATH with the venv, the collections path and PYTHONPATH of the checkout.
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path, PYTHONPATH=collections_path,
               PATH=os.pathsep.join([str(fake.parent), str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    run = subprocess.run(["bash", "-c", lint_command()], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=600, check=False)
    assert run.returncode == 0 and run.stdout.strip() == "", run.stdout[-4000:] + run.stderr[-4000:]
