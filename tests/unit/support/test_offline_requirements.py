"""tests/sanity/offline_requirements.py, which the Makefile's sanity target runs on ansible-test's venv: a linter
requirement ansible-test pins to a URL outside the package registries is installed as the release SUBSTITUTES names
(2.22's pylint test pins dill to a GitHub archive), and one without a substitute stops the run, naming it."""
from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
from pathlib import Path

import ansible_test

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "tests" / "sanity" / "offline_requirements.py"
# ansible-core 2.22.0rc1's ansible_test/_data/requirements/sanity.pylint.txt, as it ships.
DILL_PIN = ("dill @ https://github.com/uqfoundation/dill/archive/2308ffb0d0c605b9c050fa4c9fd5793d65c67022.zip"
            "#sha256=090190c7a7f6d6c3bd22f0be94e571e2c70c679d66ccf5be08baa51303607331")
PYLINT_2_22 = """# edit "sanity.pylint.in" and generate with: hacking/update-sanity-requirements.py --test pylint
astroid==4.0.4
%s
isort==9.0.1
pylint==4.0.8
""" % DILL_PIN


def venv_with(tmp_path, name, text):
    requirements = tmp_path / "lib" / "python3.13" / "site-packages" / "ansible_test" / "_data" / "requirements"
    requirements.mkdir(parents=True)
    (requirements / name).write_text(text)
    return requirements / name


def run(venv):
    return subprocess.run([sys.executable, str(SCRIPT), str(venv)], capture_output=True, text=True, check=False)


def test_the_url_pin_becomes_the_release_the_index_serves_and_nothing_else_changes(tmp_path):
    path = venv_with(tmp_path, "sanity.pylint.txt", PYLINT_2_22)
    first = run(tmp_path)
    assert first.returncode == 0, first.stderr
    assert "sanity.pylint.txt: dill==0.4.1" in first.stdout
    lines = path.read_text().splitlines()
    assert lines[2].startswith("dill==0.4.1  # in place of https://github.com/uqfoundation/dill/archive/2308ffb")
    assert [line for index, line in enumerate(lines) if index != 2] == [
        line for index, line in enumerate(PYLINT_2_22.splitlines()) if index != 2]
    again = run(tmp_path)
    assert again.returncode == 0 and again.stdout == "" and path.read_text().splitlines() == lines


def test_a_url_pin_without_a_substitute_stops_the_run(tmp_path):
    path = venv_with(tmp_path, "sanity.pep8.txt", "pycodestyle @ https://example.invalid/pycodestyle.zip\n")
    answer = run(tmp_path)
    assert answer.returncode != 0 and "pins pycodestyle to a URL" in answer.stderr
    assert path.read_text() == "pycodestyle @ https://example.invalid/pycodestyle.zip\n"


def test_every_url_pin_of_the_running_ansible_test_has_a_substitute():
    sys.path.insert(0, str(SCRIPT.parent))
    import offline_requirements  # pylint: disable=import-outside-toplevel,import-error

    requirements = os.path.join(os.path.dirname(ansible_test.__file__), "_data", "requirements", "*.txt")
    for path in glob.glob(requirements):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        rewritten = offline_requirements.rewrite(text, path)
        assert not re.search(r"^\S+\s*@\s*\S+://", rewritten, re.M), path
