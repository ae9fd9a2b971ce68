# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host engine's package, read from its files, as test_subject_folders.py reads the controller's library:
plugins/module_utils/rollout/__init__.py says its purpose on its first line and names every module of the package
("Public:"), and no other; the flat helpers of module_utils, which other modules share, import nothing of it; only
the module and the action plugin of its name, scheduler_rollout, use it from outside."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[5]
PLUGINS = REPO / "plugins"
PACKAGE = PLUGINS / "module_utils" / "rollout"
DOTTED = "ansible_collections.kubesched.schedulers.plugins.module_utils.rollout"
USERS = {"modules/scheduler_rollout.py", "action/scheduler_rollout.py"}


def imports_package(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and (node.module + ".").startswith(DOTTED + "."):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == DOTTED.rsplit(".", 1)[0] and any(
                alias.name == "rollout" for alias in node.names):
            return True
        if isinstance(node, ast.Import) and any((alias.name + ".").startswith(DOTTED + ".") for alias in node.names):
            return True
    return False


def test_the_packages_init_names_its_purpose_and_exactly_its_modules():
    docstring = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8")))
    lines = docstring.splitlines()
    assert lines[0].endswith(".")
    public = [line[2:].split(":", 1)[0] for line in lines[lines.index("Public:") + 1:] if line.startswith("- ")]
    assert sorted(public) == sorted(path.stem for path in PACKAGE.glob("*.py") if path.name != "__init__.py")


def test_every_module_of_the_package_says_its_purpose_in_one_line():
    for path in sorted(PACKAGE.glob("*.py")):
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert docstring and docstring.splitlines()[0].rstrip().endswith((".", "?")), path.name


def test_the_shared_helpers_stay_below_the_engine_and_only_scheduler_rollout_uses_it():
    users = set()
    for path in sorted(PLUGINS.rglob("*.py")):
        if PACKAGE in path.parents:
            continue
        if imports_package(path):
            users.add(path.relative_to(PLUGINS).as_posix())
    assert users == USERS
