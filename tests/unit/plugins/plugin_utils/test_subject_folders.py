# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The library's layout, read from its files: subject folders under plugins/plugin_utils, imports only downward.

- no module at the top of plugins/plugin_utils: every one lives in a subject folder;
- each folder's __init__.py says, in its docstring, its purpose (the first line), its public modules ("Public:", one
  line each) and the folders it uses ("Uses:"), and says them truly: the public modules are exactly the folder's
  modules without a leading ``_``, the folders used are exactly the ones its modules import (``module_utils`` among
  them where a module imports the host's shared helpers, plugins/module_utils);
- a folder imports only from folders of lower layers (LAYERS), and no module imports itself back through others;
- a private module (``_``) is imported only from its own folder; a public one is imported from outside it (by
  another folder or by an action, filter or lookup plugin), else it should be private;
- host code (plugins/modules, plugins/module_utils) imports nothing of it: the library is controller code;
- every module of the library has its tests: a test file of its name in the mirror of its folder under
  tests/unit/plugins/plugin_utils, or a test (tests/unit, tests/differential) that imports it; the mirror's folders
  are the library's.

The checks are functions of a tree, so they are also run on small trees that break each rule.
"""

from __future__ import annotations

import ast
import os
import re
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
LIBRARY = REPO / "plugins" / "plugin_utils"
PACKAGE = "ansible_collections.kubesched.schedulers.plugins.plugin_utils"
# The folders from the bottom up. A folder imports only from folders of lower layers, never from one of its own.
LAYERS = (("core",), ("inputs",), ("config",), ("render",), ("instances", "upgrade", "preview"), ("cluster", "rollout"))
# The library's clients in the collection; the host side must not import it at all.
CLIENTS = ("action", "filter", "lookup")
HOST_CODE = ("modules", "module_utils")
TESTS = (REPO / "tests" / "unit", REPO / "tests" / "differential")
NOTHING = "nothing else of plugin_utils"
# What a folder's Uses: line calls the host's shared helpers (plugins/module_utils), which controller code may import.
HOST_HELPERS = "module_utils"


def _modules(root: Path) -> dict:
    """'folder.module' -> path, for every Python file in a folder of ``root`` (__init__ aside)."""
    found = {}
    for path in sorted(root.glob("*/*.py")):
        if path.name != "__init__.py":
            found["%s.%s" % (path.parent.name, path.stem)] = path
    return found


def _imports(path: Path, package: str = PACKAGE) -> list:
    """(line, 'folder.module' or the flat module name) of every import of the library in a file, wherever it is."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level:
            found.append((node.lineno, "<relative import>"))
        elif isinstance(node, ast.ImportFrom) and node.module and (node.module + ".").startswith(package + "."):
            parts = node.module[len(package):].strip(".").split(".")
            if len(parts) >= 2:
                found.append((node.lineno, ".".join(parts[:2])))
            else:
                found.extend((node.lineno, ".".join(filter(None, parts + [alias.name]))) for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(package + "."):
                    found.append((node.lineno, ".".join(alias.name[len(package) + 1:].split(".")[:2])))
    return found


def _host_helper_imports(path: Path, package: str = PACKAGE) -> list:
    """The line of every import of the host's shared helpers (the module_utils beside ``package``) in a file."""
    helpers = package.rsplit(".", 1)[0] + "." + HOST_HELPERS
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level
                 else [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
        found.extend(node.lineno for name in names if (name + ".").startswith(helpers + "."))
    return found


def _docstring(folder: Path):
    init = folder / "__init__.py"
    if not init.is_file():
        return None
    return ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or None


def _declared(docstring: str):
    """(purpose, public module names, folders used) as the docstring states them."""
    lines = docstring.splitlines()
    public, uses, reading = [], None, False
    for line in lines:
        if line.strip() == "Public:":
            reading = True
        elif reading and line.startswith("- "):
            public.append(line[2:].split(":", 1)[0].strip())
        else:
            reading = False
        if line.startswith("Uses:"):
            text = line[len("Uses:"):].strip().rstrip(".")
            uses = [] if text == NOTHING else [word.strip() for word in text.split(",")]
    return lines[0].strip(), public, uses


def _layer(layers) -> dict:
    return dict((folder, rank) for rank, folders in enumerate(layers) for folder in folders)


def _cycles(graph: dict) -> list:
    """Every module that imports itself back through others, as one path per cycle found."""
    found, state = [], {}

    def visit(node, path):
        state[node] = "open"
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                found.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[node] = "done"
    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def layout_problems(root: Path, layers=LAYERS, package: str = PACKAGE) -> list:
    """Everything in the tree under ``root`` that breaks the layout, one line each."""
    problems = []
    for entry in sorted(root.iterdir()):
        if entry.name == "__pycache__":
            continue
        if not entry.is_dir():
            problems.append("%s: a flat file at the top; it belongs in a subject folder" % entry.name)
        elif entry.name not in _layer(layers):
            problems.append("%s/: a folder no layer names (LAYERS in %s)" % (entry.name, Path(__file__).name))
    modules = _modules(root)
    rank = _layer(layers)
    graph = dict((name, set()) for name in modules)
    used = dict((folder, set()) for folder in rank)
    for name, path in modules.items():
        folder = name.split(".")[0]
        if _host_helper_imports(path, package):
            used.setdefault(folder, set()).add(HOST_HELPERS)
        for line, target in _imports(path, package):
            where = "%s/%s:%d" % (folder, path.name, line)
            if target not in modules:
                problems.append("%s: imports %s, which is not a module of a folder" % (where, target))
                continue
            graph[name].add(target)
            other = target.split(".")[0]
            if other == folder:
                continue
            used.setdefault(folder, set()).add(other)
            if folder in rank and other in rank and rank[other] >= rank[folder]:
                problems.append("%s: imports %s, a folder of the same or a higher layer (%s is below it)"
                                % (where, target, folder))
    problems.extend("an import cycle: %s" % cycle for cycle in _cycles(graph))
    for folder in sorted(rank):
        if not (root / folder).is_dir():
            continue
        docstring = _docstring(root / folder)
        if docstring is None:
            problems.append("%s/__init__.py: no docstring stating the folder's purpose" % folder)
            continue
        purpose, public, uses = _declared(docstring)
        if not purpose.endswith("."):
            problems.append("%s/__init__.py: the docstring's first line is not a one-line purpose" % folder)
        actual = sorted(name.split(".")[1] for name in modules if name.startswith(folder + ".")
                        and not name.split(".")[1].startswith("_"))
        if sorted(public) != actual:
            problems.append("%s/__init__.py: Public: lists %s, the folder's public modules are %s"
                            % (folder, ", ".join(sorted(public)) or "none", ", ".join(actual) or "none"))
        if uses is None or sorted(uses) != sorted(used[folder]):
            problems.append("%s/__init__.py: Uses: says %s, its modules import %s" % (
                folder, "nothing" if uses is None else ", ".join(sorted(uses)) or NOTHING,
                ", ".join(sorted(used[folder])) or NOTHING))
    return problems


def _python_files(*folders):
    for folder in folders:
        for directory, _dirs, names in os.walk(folder):
            for name in sorted(names):
                if name.endswith(".py"):
                    yield Path(directory) / name


def privacy_problems(root: Path = LIBRARY, plugins: Path = REPO / "plugins", package: str = PACKAGE) -> list:
    modules = _modules(root)
    importers = dict((name, set()) for name in modules)
    for path in _python_files(*[plugins / client for client in CLIENTS]):
        for _line, target in _imports(path, package):
            importers.setdefault(target, set()).add(path.relative_to(plugins).as_posix())
    for name, path in modules.items():
        for _line, target in _imports(path, package):
            if target.split(".")[0] != name.split(".")[0]:
                importers.setdefault(target, set()).add(name)
    problems = []
    for name in sorted(modules):
        private = name.split(".")[1].startswith("_")
        if private and importers[name]:
            problems.append("%s: private, but imported from outside its folder by %s"
                            % (name, ", ".join(sorted(importers[name]))))
        if not private and not importers[name]:
            problems.append("%s: public, but nothing outside its folder imports it (make it private: _%s)"
                            % (name, name.split(".")[1]))
    return problems


def test_the_library_is_in_subject_folders_and_imports_only_downward():
    assert layout_problems(LIBRARY) == []


def test_a_private_module_stays_in_its_folder_and_a_public_one_is_a_door():
    assert privacy_problems() == []


def test_host_code_imports_nothing_of_the_library():
    found = ["%s:%d imports %s" % (path.relative_to(REPO), line, target)
             for path in _python_files(*[REPO / "plugins" / folder for folder in HOST_CODE])
             for line, target in _imports(path)]
    assert found == []


def test_every_library_module_has_its_tests():
    """Its own test file in the mirror (config/_defaults.py: tests/.../config/test_defaults.py), or a test that
    imports it."""
    tested = set()
    for path in _python_files(*TESTS):
        tested.update(target for _line, target in _imports(path))
    mirror = REPO / "tests" / "unit" / "plugins" / "plugin_utils"
    untested = [name for name in sorted(_modules(LIBRARY)) if name not in tested
                and not (mirror / name.split(".")[0] / ("test_%s.py" % name.split(".")[1].lstrip("_"))).is_file()]
    assert untested == []


def test_the_tests_folders_mirror_the_library():
    mirror = REPO / "tests" / "unit" / "plugins" / "plugin_utils"
    folders = sorted(entry.name for entry in mirror.iterdir() if entry.is_dir() and entry.name != "__pycache__")
    assert set(folders) <= set(_layer(LAYERS))
    assert sorted(path.name for path in mirror.glob("test_*.py")) == [Path(__file__).name]


# --- the checks themselves, on small trees that break one rule each ---------------------------------------------

SMALL = "small.plugin_utils"


def _small_tree(root: Path, files: dict) -> Path:
    library = root / "plugin_utils"
    for name, text in files.items():
        path = library / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return library


def _init(purpose, public, uses):
    return '"""%s\n\nPublic:\n%s\n\nUses: %s.\n"""\n' % (purpose, "\n".join("- %s: what it is" % name for name in public),
                                                         uses)


GOOD = {
    "core/__init__.py": _init("The words.", ["versions"], NOTHING),
    "core/versions.py": "MINORS = ()\n",
    "config/__init__.py": _init("The configuration.", ["configuration"], "core"),
    "config/configuration.py": "from small.plugin_utils.core.versions import MINORS\n"
                               "from small.plugin_utils.config import _defaults\n",
    "config/_defaults.py": "from small.plugin_utils.core import versions\n",
}
SMALL_LAYERS = (("core",), ("config",))


def test_a_tree_in_its_layout_has_no_problem(tmp_path):
    assert layout_problems(_small_tree(tmp_path, GOOD), SMALL_LAYERS, SMALL) == []


@pytest.mark.parametrize("change, expected", [
    ({"core/versions.py": "from small.plugin_utils.config.configuration import process\n"},
     r"core/versions.py:1: imports config.configuration, a folder of the same or a higher layer"),
    ({"config/_defaults.py": "from small.plugin_utils.config import configuration\n"},
     r"an import cycle: config._defaults -> config.configuration -> config._defaults"),
    ({"durations.py": "VALUE = 1\n"}, r"durations.py: a flat file at the top"),
    ({"core/__init__.py": "# no docstring\n"}, r"core/__init__.py: no docstring stating the folder's purpose"),
    ({"core/__init__.py": '"""\n\nPublic:\n- versions: x\n\nUses: %s.\n"""\n' % NOTHING},
     r"core/__init__.py: the docstring's first line is not a one-line purpose"),
    ({"config/__init__.py": _init("The configuration.", ["configuration", "defaults"], "core")},
     r"config/__init__.py: Public: lists configuration, defaults, the folder's public modules are configuration"),
    ({"config/__init__.py": _init("The configuration.", ["configuration"], NOTHING)},
     r"config/__init__.py: Uses: says nothing else of plugin_utils, its modules import core"),
    ({"core/versions.py": "from ..config import configuration\n"}, r"core/versions.py:1: imports <relative import>"),
    ({"config/configuration.py": "from small.module_utils._files import sha256\n"},
     r"config/__init__.py: Uses: says core, its modules import core, module_utils$"),
    ({"config/__init__.py": _init("The configuration.", ["configuration"], "core, module_utils")},
     r"config/__init__.py: Uses: says core, module_utils, its modules import core$"),
    ({"render/__init__.py": _init("The renderers.", [], NOTHING)}, r"render/: a folder no layer names"),
])
def test_each_rule_finds_what_breaks_it(tmp_path, change, expected):
    problems = layout_problems(_small_tree(tmp_path, dict(GOOD, **change)), SMALL_LAYERS, SMALL)
    assert [problem for problem in problems if re.match(expected, problem)], problems


def test_privacy_finds_a_private_module_used_outside_and_a_public_one_nobody_uses(tmp_path):
    library = _small_tree(tmp_path, dict(GOOD, **{"config/hints.py": "HINTS = {}\n"}))
    plugins = tmp_path / "plugins"
    (plugins / "action").mkdir(parents=True)
    (plugins / "action" / "thing.py").write_text("from small.plugin_utils.config._defaults import DEFAULTS\n"
                                                 "from small.plugin_utils.config.configuration import process\n")
    assert privacy_problems(library, plugins, SMALL) == [
        "config._defaults: private, but imported from outside its folder by action/thing.py",
        "config.hints: public, but nothing outside its folder imports it (make it private: _hints)",
    ]
