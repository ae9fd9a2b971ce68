"""Every repository path a docstring or a comment names exists: a reader who follows "plugin_utils/rollout/another_master_failed.py"
or "roles/_rollout/tasks/resolve.yml" from a comment finds that file. The comments and docstrings of plugins/, roles/,
playbooks/ and tests/ are read (Python's comments and its module, class and function docstrings; YAML's comments),
every word that looks like a path of this repository (a file with one of its extensions, or a folder under one of its
top-level folders) is looked up from the repository's root, from plugins/, plugins/plugin_utils/ and
plugins/module_utils/ (where the library's own comments start their paths), from roles/ and every role (a
role's vars/main.yml) and from each folder the file is in; a word found in none of them is stale."""
from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SCANNED = ("plugins", "roles", "playbooks", "tests")
TOP = ("plugins", "roles", "playbooks", "tests", "docs", "extensions", "changelogs", "meta", "benchmarks",
       "requirements", "plugin_utils", "module_utils")
EXTENSIONS = ("py", "yml", "yaml", "md", "rst", "json", "j2", "cfg", "sh", "ini", "txt", "toml", "svg")
# A path word: folders and a file with an extension, or a folder under a top-level folder of this repository.
WORD = re.compile(r"(?<![\w./:-])((?:[\w.-]+/)+[\w.-]+\.(?:%s)|(?:%s)/(?:[\w.-]+/)*[\w.-]+/?)(?![\w/-])"
                  % ("|".join(EXTENSIONS), "|".join(TOP)))
# A role's own file ("the role's vars/main.yml") is looked up in every role.
ROOTS = (REPO, REPO / "plugins", REPO / "plugins" / "plugin_utils", REPO / "plugins" / "module_utils", REPO / "roles") \
    + tuple(sorted(path for path in (REPO / "roles").iterdir() if path.is_dir()))
# Words that are not this repository's paths: another project's files (upstream Kubernetes, kubernetes.core,
# ansible-core), and paths a test or a role creates at run time.
NOT_OURS = re.compile(
    r"^(?:pkg|cmd|staging|hack|manifests|content|concepts|reference|tasks/extend-kubernetes|templates/rbac\.yaml|"  # upstream
    r"k8s\.io|sigs\.k8s\.io|plugins/module_utils/k8s|ansible/|lib/ansible|ansible_test|galaxy_importer|"  # other projects
    r"module_utils/(?:basic|common|urls|k8s)|"
    r"shared/|group_vars/|host_vars/|DIR/|RESOURCES/|\./|\.\./|\.build/|\.venv/)")  # outside the repository, or made at run time


def _python_texts(path: Path):
    text = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    tree = ast.parse(text, str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                yield body[0].lineno, body[0].value.value


def _yaml_texts(path: Path):
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith("#"):
            yield number, stripped
        elif " #" in line and not re.search(r"""["'][^"']* #""", line):
            yield number, line.split(" #", 1)[1]


def texts(path: Path):
    """(line, text) of every comment and docstring of a file."""
    if path.suffix == ".py":
        return _python_texts(path)
    if path.suffix in (".yml", ".yaml"):
        return _yaml_texts(path)
    return iter(())


def stale_paths(files, roots=ROOTS, repo=REPO, exists=Path.exists):
    """'file:line: word' for every path word of ``files`` that names nothing (``exists`` says what is there)."""
    found = []
    for path in files:
        folders = tuple(folder for folder in path.parents if folder == repo or repo in folder.parents)
        for line, text in texts(path):
            for match in WORD.finditer(text):
                candidate = match.group(1).rstrip("/").rstrip(".")
                # A pattern or a prefix (tests/binaries/modules/kubernetes-v<version>, requirements/constraints-*).
                if NOT_OURS.match(candidate) or "..." in candidate or text[match.end():match.end() + 1] in ("*", "<", "-"):
                    continue
                if any(exists(root / candidate) for root in tuple(roots) + folders):
                    continue
                found.append("%s:%d: %s" % (path.relative_to(repo), line + text.count("\n", 0, match.start()),
                                            candidate))
    return found


def _files():
    for folder in SCANNED:
        for path in sorted((REPO / folder).rglob("*")):
            if path.suffix in (".py", ".yml", ".yaml") and path.is_file() and "__pycache__" not in path.parts \
                    and not any(part.startswith(".") for part in path.relative_to(REPO).parts):
                yield path


def in_a_clone(repo=REPO):
    """Whether a path is in a fresh clone of ``repo`` (CI's): a file git tracks (or would add) or one of their folders.
    The working tree may hold more: a folder emptied of its tracked files (changelogs/fragments after a release), files
    git ignores."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=repo,
                            capture_output=True, check=True).stdout.decode().split("\0")
    paths = set()
    for name in filter(None, listed):
        paths.add(repo / name)
        paths.update((repo / name).parents)
    return paths.__contains__


def test_every_path_a_comment_or_docstring_names_exists():
    assert stale_paths(list(_files()), exists=in_a_clone()) == []


@pytest.mark.parametrize("text, expected", [
    ('"""See plugins/plugin_utils/nowhere.py."""\n', ["mod.py:1: plugins/plugin_utils/nowhere.py"]),
    ("x = 1  # the engine (rollout/gone.py) does it\n", ["mod.py:1: rollout/gone.py"]),
    ("# roles/_rollout/tasks/resolve.yml and core/versions.py are there\n", []),
    ("# upstream pkg/scheduler/apis/config/v1/defaults.go, https://example.com/a/b.py\n", []),
    ('x = "plugins/nowhere.py"  # a string, not a comment\n', []),
])
def test_a_stale_path_in_a_comment_or_docstring_is_found(tmp_path, text, expected):
    repo = tmp_path / "repo"
    (repo / "roles" / "_rollout" / "tasks").mkdir(parents=True)
    (repo / "roles" / "_rollout" / "tasks" / "resolve.yml").write_text("---\n")
    (repo / "plugins" / "plugin_utils" / "core").mkdir(parents=True)
    (repo / "plugins" / "plugin_utils" / "core" / "versions.py").write_text("")
    (repo / "mod.py").write_text(text)
    roots = (repo, repo / "plugins", repo / "plugins" / "plugin_utils")
    assert stale_paths([repo / "mod.py"], roots, repo) == expected


def test_a_stale_path_in_a_yaml_comment_is_found(tmp_path):
    (tmp_path / "tasks.yml").write_text("---\n# Shared step: roles/_rollout/tasks/commit.yml\n- name: x  # see a/b.yml\n"
                                        "  msg: \"not # a/c.yml\"\n")
    assert stale_paths([tmp_path / "tasks.yml"], (tmp_path,), tmp_path) == [
        "tasks.yml:2: roles/_rollout/tasks/commit.yml", "tasks.yml:3: a/b.yml"]
