"""release.py VERSION [--root DIR]: what `make release VERSION=x.y.z` does to the checkout before the tarball is built
and checked (docs/versioning-policy.md says what each kind of version may change):

1. VERSION must be a semantic version (x.y.z, or x.y.z-pre.release) newer than galaxy.yml's and than every release
   changelogs/changelog.yaml already holds;
2. galaxy.yml's ``version:`` becomes VERSION (its comments and order kept);
3. ``antsibull-changelog release --version VERSION`` turns the fragments of changelogs/fragments into the release's
   entry in changelogs/changelog.yaml and writes CHANGELOG.rst (the fragments are removed, as configured).

It refuses, before anything is written, a fragment that names an internal work item (``issue 12``, a link to an
issue), which has no meaning to a user of the collection, and a ``version_added`` (of a plugin, an option, a role)
that is neither an earlier release nor VERSION: what a release adds says that release. Nothing is committed or
tagged: that is the releaser's.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
# semver.org's grammar, without build metadata (Galaxy refuses it in a collection version).
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
                    r"(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?$")
WORK_ITEM = re.compile(r"\bissues? ?#?\d+|/issues/\d+|\bitem \d+\b", re.I)


class ReleaseError(Exception):
    pass


def precedence(version):
    """A sort key in semver's precedence order: a pre-release sorts before its release."""
    match = SEMVER.match(version)
    if not match:
        raise ReleaseError("%r is not a semantic version (x.y.z or x.y.z-rc.1)" % version)
    major, minor, patch, pre = match.groups()
    if pre is None:
        return (int(major), int(minor), int(patch), 1, ())
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (int(major), int(minor), int(patch), 0, parts)


def fragment_problems(fragments_dir):
    """Fragments whose file name or text names an internal work item, as 'file: words'."""
    problems = []
    for path in sorted(Path(fragments_dir).glob("*.y*ml")):
        for where, text in (("its name", path.stem), ("its text", path.read_text())):
            found = WORK_ITEM.search(text)
            if found:
                problems.append("%s: %s says %r" % (path.name, where, found.group(0)))
    return problems


def version_added_problems(root, version, released):
    """``version_added`` values under plugins/ and roles/ that are neither a release nor ``version``."""
    problems = []
    for base in ("plugins", "roles"):
        for path in sorted((Path(root) / base).rglob("*")):
            if path.suffix not in (".py", ".yml", ".yaml") or not path.is_file():
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                found = re.search(r"\bversion_added: *[\"']?([0-9][^\"'\s]*)", line)
                if found and found.group(1) != version and found.group(1) not in released:
                    problems.append("%s:%d: version_added %s" % (path.relative_to(root), number, found.group(1)))
    return problems


def released_versions(root):
    return [str(v) for v in ((yaml.safe_load((Path(root) / "changelogs" / "changelog.yaml").read_text()) or {})
                             .get("releases") or {})]


def set_galaxy_version(galaxy_path, version):
    text = Path(galaxy_path).read_text()
    new, count = re.subn(r"^version: *\S+ *$", "version: %s" % version, text, count=1, flags=re.M)
    if count != 1:
        raise ReleaseError("%s has no 'version:' line" % galaxy_path)
    Path(galaxy_path).write_text(new)


def check_version(root, version):
    """VERSION is newer than every release and not older than galaxy.yml's (which may already be the next one)."""
    current = str(yaml.safe_load((root / "galaxy.yml").read_text())["version"])
    released = released_versions(root)
    if version in released:
        raise ReleaseError("%s is already released (changelogs/changelog.yaml)" % version)
    for other in released:
        if precedence(version) < precedence(other):
            raise ReleaseError("%s is older than the release %s (changelogs/changelog.yaml)" % (version, other))
    if precedence(version) < precedence(current):
        raise ReleaseError("%s is older than galaxy.yml's version %s" % (version, current))


def release(root, version, changelog="antsibull-changelog"):
    root = Path(root)
    precedence(version)
    check_version(root, version)
    problems = fragment_problems(root / "changelogs" / "fragments")
    if problems:
        raise ReleaseError("fragments name internal work items; say what changed for a user instead:\n  "
                           + "\n  ".join(problems))
    problems = version_added_problems(root, version, released_versions(root))
    if problems:
        raise ReleaseError("version_added must be an earlier release or %s (what this release adds):\n  %s"
                           % (version, "\n  ".join(problems)))
    set_galaxy_version(root / "galaxy.yml", version)
    subprocess.run([changelog, "release", "--version", version], cwd=root, check=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("version")
    parser.add_argument("--root", default=str(REPO))
    parser.add_argument("--changelog", default=str(Path(sys.executable).with_name("antsibull-changelog")))
    args = parser.parse_args(argv)
    try:
        release(args.root, args.version, args.changelog)
    except ReleaseError as error:
        print("release: %s" % error, file=sys.stderr)
        return 2
    print("release %s: galaxy.yml, changelogs/changelog.yaml and CHANGELOG.rst written; review, commit and tag it"
          % args.version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
