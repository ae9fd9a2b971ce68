"""Releases as the ecosystem makes them (docs/versioning-policy.md): `make release VERSION=x.y.z` refuses what is not
a newer semantic version, a fragment that names an internal work item and a version_added that no release has, and
on a copy of this checkout turns the fragments into CHANGELOG.rst and changelogs/changelog.yaml with galaxy.yml's
version set. The built tarball passes galaxy-importer in make test (tests/support/galaxy_import.py, whose judging of
the import log is checked here), and the older cores' sanity in make test covers every file it ships."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "support"))
import galaxy_import  # noqa: E402  pylint: disable=wrong-import-position,import-error
import release  # noqa: E402  pylint: disable=wrong-import-position,import-error

ANTSIBULL_CHANGELOG = Path(sys.executable).with_name("antsibull-changelog")


def test_no_fragment_names_an_internal_work_item():
    assert release.fragment_problems(REPO / "changelogs" / "fragments") == []


def test_a_fragment_naming_a_work_item_is_found(tmp_path):
    (tmp_path / "issue12-thing.yml").write_text("minor_changes:\n  - a thing\n")
    (tmp_path / "fine.yml").write_text("bugfixes:\n  - fixed (https://github.com/kubesched/schedulers/issues/7).\n")
    (tmp_path / "plain.yml").write_text("bugfixes:\n  - verify role - the table is as wide as its longest value.\n")
    problems = release.fragment_problems(tmp_path)
    assert len(problems) == 2 and problems[0].startswith("fine.yml: its text") and "issue12" in problems[1]


@pytest.mark.parametrize("older, newer", [("0.1.0", "1.0.0"), ("1.0.0-rc.1", "1.0.0"), ("1.0.0-rc.2", "1.0.0-rc.10"),
                                          ("1.0.0-alpha", "1.0.0-alpha.1"), ("1.9.0", "1.10.0"), ("1.0.9", "1.1.0")])
def test_semantic_version_precedence(older, newer):
    assert release.precedence(older) < release.precedence(newer)


@pytest.mark.parametrize("version", ["1.0", "v1.0.0", "1.0.0+build.1", "01.0.0", "1.0.0.0", ""])
def test_what_is_not_a_semantic_version_is_refused(version):
    with pytest.raises(release.ReleaseError, match="not a semantic version"):
        release.precedence(version)


def test_version_added_must_be_a_release_or_the_one_being_made():
    version, released = next_release(REPO)
    # Every version_added of this checkout is a release or the one the next release makes.
    assert release.version_added_problems(REPO, version, sorted(released)) == []
    # Without the releases before it, what they added is named.
    problems = release.version_added_problems(REPO, version, [])
    assert problems and {p.rsplit(" ", 1)[1] for p in problems} <= set(released), problems
    # Made as another version, what only the next release adds is named.
    assert all(p.endswith("version_added " + version)
               for p in release.version_added_problems(REPO, "9.9.9", sorted(released)))


@pytest.fixture
def checkout(tmp_path):
    """A copy of this checkout where antsibull-changelog finds it: ansible_collections/kubesched/schedulers."""
    root = tmp_path / "ansible_collections" / "kubesched" / "schedulers"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                             "galaxy.yml", "CHANGELOG.rst", "changelogs", "plugins", "roles", "meta", "playbooks"],
                            cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (REPO / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, root / name)
    return root


def next_release(root):
    """The version the next release of ROOT makes: galaxy.yml's until it is released, then the next minor."""
    version = yaml.safe_load((root / "galaxy.yml").read_text())["version"]
    released = set((yaml.safe_load((root / "changelogs" / "changelog.yaml").read_text()) or {}).get("releases") or {})
    if version not in released:
        return version, released
    major, minor, _patch = version.split("-")[0].split(".")
    return "%s.%d.0" % (major, int(minor) + 1), released


def test_the_release_writes_the_changelog_and_the_version(checkout):
    # One fragment of each kind the release notes must show, beside whatever fragments the checkout has.
    (checkout / "changelogs" / "fragments").mkdir(parents=True, exist_ok=True)
    (checkout / "changelogs" / "fragments" / "release-test.yml").write_text(
        "minor_changes:\n  - verify role - a change for this test.\nbugfixes:\n  - verify role - a fix for this test.\n")
    fragments = sorted(p.name for p in (checkout / "changelogs" / "fragments").glob("*.yml"))
    version, released = next_release(checkout)
    release.release(checkout, version, str(ANTSIBULL_CHANGELOG))
    assert yaml.safe_load((checkout / "galaxy.yml").read_text())["version"] == version
    # galaxy.yml's comments are kept: only its version line changed.
    assert (checkout / "galaxy.yml").read_text().count("\n#") == (REPO / "galaxy.yml").read_text().count("\n#")
    changes = yaml.safe_load((checkout / "changelogs" / "changelog.yaml").read_text())
    assert set(changes["releases"]) == released | {version}
    assert sorted(changes["releases"][version]["fragments"]) == fragments
    assert not list((checkout / "changelogs" / "fragments").glob("*.yml"))
    text = (checkout / "CHANGELOG.rst").read_text()
    assert "v" + version in text and "Minor Changes" in text and "Bugfixes" in text
    if not released:
        # Every plugin and role says version_added 1.0.0, so the first release lists them as new.
        assert "Release Summary" in text and "New Modules" in text and "New Roles" in text
        assert "kubesched.schedulers.scheduler_config" in text
    assert release.WORK_ITEM.search(text) is None
    # The same version again, or an older one, is refused.
    for again, words in ((version, "already released"), ("0.9.0", "older than the release")):
        with pytest.raises(release.ReleaseError, match=words):
            release.release(checkout, again, str(ANTSIBULL_CHANGELOG))


def test_the_release_refuses_before_writing_anything(checkout):
    (checkout / "changelogs" / "fragments").mkdir(parents=True, exist_ok=True)
    (checkout / "changelogs" / "fragments" / "internal.yml").write_text("trivial:\n  - done for issue 44.\n")
    before = (checkout / "galaxy.yml").read_text(), (checkout / "changelogs" / "changelog.yaml").read_text()
    rst = (checkout / "CHANGELOG.rst").read_text() if (checkout / "CHANGELOG.rst").exists() else None
    with pytest.raises(release.ReleaseError, match="internal.yml: its text says 'issue 44'"):
        release.release(checkout, next_release(checkout)[0], str(ANTSIBULL_CHANGELOG))
    assert ((checkout / "galaxy.yml").read_text(), (checkout / "changelogs" / "changelog.yaml").read_text()) == before
    assert ((checkout / "CHANGELOG.rst").read_text() if (checkout / "CHANGELOG.rst").exists() else None) == rst


def test_the_import_log_is_judged_strictly_but_for_a_dependency_galaxy_does_not_install():
    log = [
        "Importing with galaxy-importer 0.4.44",
        "WARNING: playbooks/metrics_access.yml:41:7: syntax-check[unknown-module]: couldn't resolve module/action "
        "'kubernetes.core.k8s_info'. This often indicates a misspelling, missing collection, or incorrect module path.",
        "WARNING: playbooks/x.yml:3:7: syntax-check[unknown-module]: couldn't resolve module/action "
        "'community.general.ini_file'. This often indicates a misspelling, missing collection, or incorrect module path.",
        "WARNING: roles/systemd/tasks/main.yml:1: name[casing]: All names should start with an uppercase letter.",
        "ERROR: Timeout on call to ansible-lint",
        "Importer processing completed successfully",
    ]
    found = galaxy_import.findings(log, {"kubernetes.core"})
    assert found == log[2:5]


def test_the_import_result_must_show_documented_content():
    name = "kubesched-schedulers-1.0.0.tar.gz"
    # The shape galaxy-importer 0.4.44 writes to importer_result.json.
    good = {"metadata": {"namespace": "kubesched", "name": "schedulers", "version": "1.0.0"},
            "requires_ansible": ">=2.19.0", "contents": [{"content_type": "module", "name": "x", "description": "X"}],
            "docs_blob": {"contents": [{"content_type": "module", "content_name": "x", "doc_strings": {"doc": {}}},
                                       {"content_type": "action", "content_name": "x", "doc_strings": None}]}}
    assert galaxy_import.result_problems(good, name) == []
    bad = dict(good, requires_ansible=None, docs_blob={"contents": [
        {"content_type": "module", "content_name": "x", "doc_strings": None}]})
    assert galaxy_import.result_problems(bad, name) == [
        "no requires_ansible (meta/runtime.yml)", "module x has no documentation Galaxy can show"]
    assert galaxy_import.result_problems(dict(good, contents=[]), "kubesched-schedulers-0.9.0.tar.gz") == [
        "the importer read kubesched.schedulers 1.0.0 from kubesched-schedulers-0.9.0.tar.gz", "no content found"]


def test_the_older_cores_sanity_covers_every_file_the_tarball_ships(tmp_path):
    """make test runs the older cores' sanity on the Makefile's SHIPPED_SANITY_TARGETS: what `ansible-galaxy collection
    build` puts in the tarball (galaxy.yml's build_ignore decides), each top-level directory and file of it, and no
    more (a path the tarball leaves out, tests/ say, would double the older cores' sanity time)."""
    makefile = (REPO / "Makefile").read_text().replace("\\\n", " ")
    targets = re.search(r"^SHIPPED_SANITY_TARGETS := (.+)$", makefile, re.M).group(1).split()
    built = subprocess.run([Path(sys.executable).with_name("ansible-galaxy"), "collection", "build", "--output-path",
                            tmp_path, REPO], capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stdout + built.stderr
    (tarball,) = tmp_path.glob("kubesched-schedulers-*.tar.gz")
    with tarfile.open(tarball) as archive:
        shipped = {member.name.split("/")[0] + ("/" if "/" in member.name or member.isdir() else "")
                   for member in archive.getmembers() if member.name not in ("MANIFEST.json", "FILES.json")}
    assert sorted(targets) == sorted(shipped)
