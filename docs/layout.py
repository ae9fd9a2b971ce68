# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The two lists of the repository that are read from its tree, never written by hand.

README.md's "What is inside": one row per module, filter, lookup, role and playbook (a role and the playbook of its
name share one; a role's own filters, named after it, one), each with its own short description (a plugin's DOCUMENTATION, a role's meta/main.yml, a
playbook's leading comment). CONTRIBUTING.md's
"Layout": every folder and file of plugins/, every role and playbook and every top-level folder, each with the first
sentence of its docstring (a folder: its __init__.py, else its README.md). Each list sits between two HTML comments
in its file; `make layout` (python3 docs/layout.py) rewrites them, `--check` only says which one drifted, and
tests/unit/ee/test_layout.py fails when either differs from the tree.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]

# What a folder is for when it has neither an __init__.py docstring nor a README.md of its own: Ansible's plugin
# types, and the repository's top-level folders.
CONVENTIONS = {
    "plugins": "The collection's plugins, one folder per Ansible plugin type.",
    "plugins/action": "Action plugins: what runs on the controller for a module of the same name, before any host "
                      "is contacted.",
    "plugins/doc_fragments": "Option and attribute documentation shared by several plugins.",
    "plugins/filter": "Filter plugins for the roles' templates and tasks; each filter is documented in the YAML file "
                      "of its name.",
    "plugins/lookup": "Lookup plugins.",
    "plugins/modules": "Modules, each with its DOCUMENTATION; the ones with an action plugin of the same name do "
                       "their work on the controller.",
    "plugins/module_utils": "Host-side code the modules import; private to the collection (the flat helpers' `_` "
                            "prefix, and the rollout engine's package).",
    "plugins/plugin_utils": "The controller-only library the action and filter plugins import; private to the "
                            "collection.",
    "roles": "The roles: one per way of running a scheduler, and the verify role that proves it works.",
    "playbooks": "Playbooks to run as they are (`ansible-playbook kubesched.schedulers.<name>`).",
    "playbooks/templates": "Templates of the playbooks' reports.",
    ".ci": "The CI entry point: it runs `make test`.",
    "changelogs": "antsibull-changelog's configuration, the changelog and the fragments of unreleased changes.",
    "docs": "The docs site's sources and configuration, the pages the README links, the upstream facts.",
    "extensions": "Molecule scenarios on podman hosts booting systemd (extensions/molecule).",
    "meta": "The collection's runtime metadata and an example execution environment definition.",
    "requirements": "The Python packages of the test venv, pinned.",
}
INSIDE = ("<!-- inside: generated from the tree by docs/layout.py (make layout); do not edit -->",
          "<!-- end of inside -->")
LAYOUT = ("<!-- layout: generated from the tree by docs/layout.py (make layout); do not edit -->",
          "<!-- end of layout -->")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


class LayoutError(Exception):
    """Something in the tree has no description to list."""


def files(repo: Path) -> list[str]:
    """Every file of the checkout that git tracks or would track (new files included, ignored ones not)."""
    names = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=repo,
                           capture_output=True, text=True, check=True).stdout.splitlines()
    return sorted(name for name in set(names) if (repo / name).is_file())


def first_sentence(text: str) -> str:
    """The first sentence of the first paragraph, on one line."""
    paragraph = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    line = " ".join(paragraph.split())
    return _SENTENCE_END.split(line, maxsplit=1)[0]


def docstring(path: Path) -> str | None:
    text = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return first_sentence(text) if text and text.strip() else None


def readme_line(path: Path) -> str | None:
    """A README's first heading, without its #."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return None


def plugin_documentation(path: Path) -> dict:
    """The DOCUMENTATION of a plugin: a YAML file, or the DOCUMENTATION string of a Python file."""
    if path.suffix in (".yml", ".yaml"):
        return next(iter(yaml.safe_load(path.read_text(encoding="utf-8")).values()))
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DOCUMENTATION" for t in node.targets):
            return yaml.safe_load(ast.literal_eval(node.value))
    raise LayoutError("%s has no DOCUMENTATION" % path)


def documented(path: Path) -> str | None:
    """A plugin without a docstring is described by its DOCUMENTATION's short_description."""
    try:
        return first_sentence(plugin_documentation(path)["short_description"])
    except (LayoutError, KeyError, TypeError):
        return None


def role_description(repo: Path, role: str) -> str:
    meta = repo / "roles" / role / "meta" / "main.yml"
    if meta.is_file():
        description = ((yaml.safe_load(meta.read_text(encoding="utf-8")) or {}).get("galaxy_info") or {}).get(
            "description")
        if description:
            return first_sentence(description)
    specs = repo / "roles" / role / "meta" / "argument_specs.yml"
    if specs.is_file():
        main = (yaml.safe_load(specs.read_text(encoding="utf-8")).get("argument_specs") or {}).get("main") or {}
        if main.get("short_description"):
            return first_sentence(main["short_description"])
    readme = repo / "roles" / role / "README.md"
    if readme.is_file() and readme_line(readme):
        return readme_line(readme)
    raise LayoutError("role %s has no description: give its meta/main.yml a galaxy_info.description" % role)


def playbook_description(path: Path) -> str:
    """The playbook's leading comment, up to its first sentence."""
    comment = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() == "---" and not comment:
            continue
        if not line.startswith("#"):
            break
        comment.append(line.lstrip("#").strip())
    if not comment:
        raise LayoutError("%s has no leading comment to describe it" % path)
    return first_sentence("\n".join(comment))


def folder_description(repo: Path, folder: str) -> str:
    init, readme = repo / folder / "__init__.py", repo / folder / "README.md"
    if init.is_file() and docstring(init):
        return docstring(init)
    if readme.is_file() and readme_line(readme):
        return readme_line(readme)
    if folder in CONVENTIONS:
        return CONVENTIONS[folder]
    raise LayoutError("folder %s has no description: give it an __init__.py docstring or a README.md" % folder)


def data_description(repo: Path, name: str, tracked: list[str]) -> str:
    """A data file is described by the Python files of its folder that read it."""
    path = Path(name)
    readers = sorted(other for other in tracked if other.endswith(".py") and other.startswith(str(path.parent) + "/")
                     and path.name in (repo / other).read_text(encoding="utf-8"))
    if not readers:
        raise LayoutError("%s is read by no Python file of its folder: say what it is, or remove it" % name)
    return "Data read by %s." % ", ".join("`%s`" % Path(reader).name for reader in readers)


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def plugin_rows(repo: Path, tracked: list[str]) -> list[tuple[str, str, str]]:
    """(kind, name, description) for every user-facing plugin: modules, filters, lookups and any other type."""
    rows = []
    modules = {Path(n).stem for n in tracked if n.startswith("plugins/modules/") and n.endswith(".py")}
    for name in tracked:
        parts = name.split("/")
        if len(parts) != 3 or parts[0] != "plugins" or parts[2].startswith("__init__"):
            continue
        kind, stem, suffix = parts[1], Path(parts[2]).stem, Path(parts[2]).suffix
        if kind in ("module_utils", "plugin_utils", "doc_fragments"):
            continue
        if kind == "filter":
            if suffix != ".yml":
                continue  # a filter file holds several filters; each has a YAML documentation of its name
        elif suffix != ".py" or (kind == "action" and stem in modules):
            continue  # an action plugin with a module of its name is listed as that module
        documentation = plugin_documentation(repo / name)
        label = {"modules": "module", "filter": "filter", "lookup": "lookup"}.get(kind, kind)
        rows.append((label, documentation.get("name", stem), first_sentence(documentation["short_description"])))
    order = {"module": 0, "filter": 1, "lookup": 2}
    return sorted(rows, key=lambda row: (order.get(row[0], 3), row[0], row[1]))


def roles(tracked: list[str]) -> list[str]:
    return sorted({name.split("/")[1] for name in tracked if name.startswith("roles/") and name.count("/") >= 2})


def playbooks(tracked: list[str]) -> list[str]:
    return [name for name in tracked if re.fullmatch(r"playbooks/[^/]+\.ya?ml", name)]


def inside(repo: Path = REPO) -> str:
    """README.md's table of what is inside."""
    tracked = files(repo)
    rows = []
    # A role's own filters (named <role>_..., the internal _rollout role's rollout_...) are its steps in tested Python:
    # one row per role, each filter named.
    prefixes = dict((role.lstrip("_"), role) for role in roles(tracked))
    own = {}
    for kind, name, description in plugin_rows(repo, tracked):
        role = name.split("_")[0]
        if kind == "filter" and role in prefixes:
            if role not in own:
                own[role] = []
                rows.append((kind, role, None))
            own[role].append(name)
        else:
            rows.append((kind, "`%s`" % name, description))
    rows = [(kind, "`%s_*`: %s" % (name, ", ".join("`%s`" % f[len(name) + 1:] for f in own[name])),
             ("The %s engine's steps, in tested Python" if prefixes[name].startswith("_") else
              "The %s role's steps, in tested Python") % name) if description is None else (kind, name, description)
            for kind, name, description in rows]
    books = {Path(name).stem: name for name in playbooks(tracked)}
    for role in roles(tracked):
        label = "role (internal)" if role.startswith("_") else "role"
        link = "[`%s`](roles/%s/README.md)" % (role, role) if (repo / "roles" / role / "README.md").is_file() \
            else "`%s`" % role
        if role in books:
            # A role and the playbook that runs it share a name and a line.
            label, link = "role, playbook", "%s, [playbook](%s)" % (link, books.pop(role))
        rows.append((label, link, role_description(repo, role)))
    for stem, name in books.items():
        rows.append(("playbook", "[`%s`](%s)" % (stem, name), playbook_description(repo / name)))
    lines = ["| kind | name | what it does |", "| --- | --- | --- |"]
    for kind, name, description in rows:
        lines.append("| %s | %s | %s |" % (kind, name, cell(description.rstrip("."))))
    return "\n".join(lines)


def _tree(repo: Path, folder: str, tracked: list[str], depth: int) -> list[str]:
    lines = []
    prefix = folder + "/"
    below = [name[len(prefix):] for name in tracked if name.startswith(prefix)]
    subfolders = sorted({rest.split("/")[0] for rest in below if "/" in rest} - {"__pycache__"})
    own = sorted(rest for rest in below if "/" not in rest and rest != "__init__.py" and rest != "README.md")
    indent = "  " * depth
    for name in own:
        path = folder + "/" + name
        if folder == "plugins/filter" and name.endswith(".yml"):
            continue  # the filters' documentation, listed in the README
        if name.endswith(".py"):
            description = docstring(repo / path) or documented(repo / path)
            if not description:
                raise LayoutError("%s has no docstring: give it one whose first sentence says what it is" % path)
        else:
            description = data_description(repo, path, tracked)
        lines.append("%s- `%s`: %s" % (indent, name, description))
    for sub in subfolders:
        path = folder + "/" + sub
        lines.append("%s- `%s/`: %s" % (indent, sub, folder_description(repo, path)))
        lines.extend(_tree(repo, path, tracked, depth + 1))
    return lines


def layout(repo: Path = REPO) -> str:
    """CONTRIBUTING.md's layout: plugins/ file by file, the roles, the playbooks, the other top-level folders."""
    tracked = files(repo)
    lines = ["- `plugins/`: %s" % folder_description(repo, "plugins")]
    lines.extend(_tree(repo, "plugins", tracked, 1))
    lines.append("- `roles/`: %s" % folder_description(repo, "roles"))
    for role in roles(tracked):
        lines.append("  - `%s/`: %s" % (role, role_description(repo, role)))
    lines.append("- `playbooks/`: %s" % folder_description(repo, "playbooks"))
    for name in playbooks(tracked):
        lines.append("  - `%s`: %s" % (Path(name).name, playbook_description(repo / name)))
    for sub in sorted({name.split("/")[1] for name in tracked if name.startswith("playbooks/") and name.count("/") >= 2}):
        lines.append("  - `%s/`: %s" % (sub, folder_description(repo, "playbooks/" + sub)))
    for top in sorted({name.split("/")[0] for name in tracked if "/" in name} - {"plugins", "roles", "playbooks"}):
        lines.append("- `%s/`: %s" % (top, folder_description(repo, top)))
    return "\n".join(lines)


def between(text: str, markers: tuple[str, str]) -> str:
    """What a file holds between a pair of markers."""
    start, end = markers
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise LayoutError("expected exactly one %r followed by one %r" % markers)
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def replaced(text: str, markers: tuple[str, str], body: str) -> str:
    between(text, markers)
    start, end = markers
    head, rest = text.split(start, 1)
    return head + start + "\n" + body + "\n" + end + rest.split(end, 1)[1]


def targets(repo: Path = REPO) -> list[tuple[Path, tuple[str, str], str]]:
    return [(repo / "README.md", INSIDE, inside(repo)), (repo / "CONTRIBUTING.md", LAYOUT, layout(repo))]


def main(argv: list[str], repo: Path = REPO) -> int:
    """Rewrite the lists that drifted from the tree; with --check, only name them and exit 1."""
    check = "--check" in argv
    drifted = []
    for path, markers, body in targets(repo):
        text = path.read_text(encoding="utf-8")
        if between(text, markers) == body:
            continue
        drifted.append(path.name)
        if not check:
            path.write_text(replaced(text, markers, body), encoding="utf-8")
    if drifted:
        print("%s: %s" % ("drifted from the tree (make layout rewrites them)" if check else "rewritten",
                          ", ".join(drifted)))
    return 1 if check and drifted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
