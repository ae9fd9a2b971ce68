"""The README's "What is inside" and CONTRIBUTING.md's layout are generated from the tree (docs/layout.py, `make
layout`): they list every module, filter, lookup, role and playbook, and every folder and file of plugins/ with the
first sentence of its docstring, and this test fails when either drifts from the tree."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "docs"))
import layout  # noqa: E402  pylint: disable=wrong-import-position


def test_the_readme_and_contributing_lists_are_the_trees():
    for path, markers, body in layout.targets():
        assert layout.between(path.read_text(encoding="utf-8"), markers) == body, (
            "%s drifted from the tree: run make layout" % path.name)


def test_the_readmes_list_names_every_plugin_role_and_playbook():
    # Counted from the tree here, not by the generator, so a generator that skips a kind fails too.
    table = layout.between((REPO / "README.md").read_text(encoding="utf-8"), layout.INSIDE)
    names = set(re.findall(r"^\| [^|]+ \| \[?`([^`]+)`", table, re.M))
    # A role's own filters share a row: `verify_*`: `report`, `results` names verify_report and verify_results.
    for prefix, members in re.findall(r"^\| filter \| `(\w+)_\*`: ([^|]+)\|", table, re.M):
        names.discard(prefix + "_*")
        names |= {prefix + "_" + member for member in re.findall(r"`(\w+)`", members)}
    expected = {path.stem for path in (REPO / "plugins" / "modules").glob("*.py")}
    expected |= {path.stem for path in (REPO / "plugins" / "lookup").glob("*.py")}
    expected |= {next(iter(yaml.safe_load(path.read_text()).values()))["name"]
                 for path in (REPO / "plugins" / "filter").glob("*.yml")}
    expected |= {path.name for path in (REPO / "roles").iterdir() if path.is_dir()}
    expected |= {path.stem for path in (REPO / "playbooks").glob("*.yml")}
    # role_inputs, serving_cert and scheduler_upgrade_check were once left out by hand.
    assert {"role_inputs", "serving_cert", "scheduler_upgrade_check", "kube_release"} <= expected
    assert names == expected
    playbooks_linked = set(re.findall(r"\]\(playbooks/([^)]+)\.yml\)", table))
    assert playbooks_linked == {path.stem for path in (REPO / "playbooks").glob("*.yml")}


def test_the_contributing_layout_names_every_file_of_plugins():
    text = layout.between((REPO / "CONTRIBUTING.md").read_text(encoding="utf-8"), layout.LAYOUT)
    for path in sorted((REPO / "plugins").rglob("*")):
        if "__pycache__" in path.parts or path.name == "__init__.py" or (
                path.parent.name == "filter" and path.suffix == ".yml"):
            continue
        assert "`%s%s`" % (path.name, "/" if path.is_dir() else "") in text, path


# --- the generator on a small tree of its own -------------------------------------------------------------------

MODULE = '''DOCUMENTATION = r"""
module: thing
short_description: Do the thing
"""
'''


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def tree(tmp_path):
    files = {
        "plugins/modules/thing.py": MODULE,
        "plugins/plugin_utils/alpha.py": '"""Alpha, the first library file.\n\nMore words."""\n',
        "plugins/filter/shape.py": '"""Shapes in templates (plugin_utils/alpha.py)."""\n',
        "plugins/filter/shape.yml": "DOCUMENTATION:\n  name: shape\n  short_description: A shape\n",
        "roles/runner/meta/main.yml": "galaxy_info:\n  description: Run the thing on every host.\n",
        "playbooks/runner.yml": "---\n# The runner role on every host. Run: ansible-playbook it.\n- hosts: all\n",
        "playbooks/check.yml": "---\n# Check the thing first.\n- hosts: localhost\n",
        "tests/README.md": "# Tests of the small tree\n",
        "README.md": "# r\n\n%s\n%s\n" % layout.INSIDE,
        "CONTRIBUTING.md": "# c\n\n%s\n%s\n" % layout.LAYOUT,
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    return tmp_path


def test_the_generator_lists_what_is_there_and_check_finds_drift(tree, capsys):
    assert layout.main([], tree) == 0
    assert layout.main(["--check"], tree) == 0
    readme = (tree / "README.md").read_text()
    assert "| module | `thing` | Do the thing |" in readme
    assert "| filter | `shape` | A shape |" in readme
    assert "| role, playbook | `runner`, [playbook](playbooks/runner.yml) | Run the thing on every host |" in readme
    assert "| playbook | [`check`](playbooks/check.yml) | Check the thing first |" in readme
    contributing = (tree / "CONTRIBUTING.md").read_text()
    assert "    - `alpha.py`: Alpha, the first library file." in contributing
    assert "    - `thing.py`: Do the thing" in contributing
    assert "- `tests/`: Tests of the small tree" in contributing
    # A new subject folder and file (not even committed yet) make both lists drift until regenerated.
    (tree / "plugins/plugin_utils/core").mkdir()
    (tree / "plugins/plugin_utils/core/__init__.py").write_text('"""The vocabulary at the bottom."""\n')
    (tree / "plugins/plugin_utils/core/_words.py").write_text('"""Words, private to core."""\n')
    capsys.readouterr()
    assert layout.main(["--check"], tree) == 1
    assert "CONTRIBUTING.md" in capsys.readouterr().out
    assert layout.main([], tree) == 0 and layout.main(["--check"], tree) == 0
    contributing = (tree / "CONTRIBUTING.md").read_text()
    assert "    - `core/`: The vocabulary at the bottom.\n      - `_words.py`: Words, private to core." in contributing


def test_a_file_or_folder_without_a_description_is_refused(tree):
    (tree / "plugins/plugin_utils/bare.py").write_text("VALUE = 1\n")
    with pytest.raises(layout.LayoutError, match="bare.py has no docstring"):
        layout.layout(tree)
    (tree / "plugins/plugin_utils/bare.py").write_text('"""Bare no more."""\n')
    (tree / "plugins/plugin_utils/nameless").mkdir()
    (tree / "plugins/plugin_utils/nameless/thing.py").write_text('"""A thing."""\n')
    with pytest.raises(layout.LayoutError, match="folder plugins/plugin_utils/nameless has no description"):
        layout.layout(tree)
    (tree / "plugins/plugin_utils/nameless/data.json").write_text("{}")
    (tree / "plugins/plugin_utils/nameless/__init__.py").write_text('"""Named now."""\n')
    with pytest.raises(layout.LayoutError, match="data.json is read by no Python file"):
        layout.layout(tree)
