"""tests/support/k8s_binaries.py, as `make binaries` runs it: the binaries directory is shared by every checkout, so
a patch there older than the one pinned for its minor (what an older pin built) does not stand in for the pin."""
from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "support"))
import k8s_binaries  # noqa: E402  pylint: disable=wrong-import-position


def binaries(directory, *names):
    for name in names:
        path = directory / name
        path.write_text("#!/bin/sh\n", encoding="utf-8")
        path.chmod(0o755)


def test_the_newest_patch_of_a_minor_wins_where_none_is_pinned(tmp_path):
    binaries(tmp_path, "kube-scheduler-v1.34.4", "kube-scheduler-v1.34.12", "kube-apiserver-v1.34.20")
    assert k8s_binaries.from_directory(str(tmp_path), "kube-scheduler") == {
        "34": (str(tmp_path / "kube-scheduler-v1.34.12"), str(tmp_path))}


def test_a_patch_older_than_the_pin_is_not_taken_for_it(tmp_path):
    binaries(tmp_path, "kube-scheduler-v1.35.4", "kube-scheduler-v1.34.4")
    assert k8s_binaries.from_directory(str(tmp_path), "kube-scheduler", ("1.35.8", "1.37.2")) == {
        "34": (str(tmp_path / "kube-scheduler-v1.34.4"), str(tmp_path))}
    binaries(tmp_path, "kube-scheduler-v1.35.8", "kube-scheduler-v1.35.9")
    assert k8s_binaries.from_directory(str(tmp_path), "kube-scheduler", ("1.35.8",))["35"] == (
        str(tmp_path / "kube-scheduler-v1.35.9"), str(tmp_path))


def test_make_binaries_names_a_pinned_minor_missing_rather_than_an_older_patch(tmp_path, monkeypatch):
    """On a machine without go and without the official downloads (so nothing is built or fetched), a directory
    holding only the previous pins' binaries leaves the pinned minors missing: their tests skip, loudly."""
    for key in list(os.environ):
        if key.endswith("_BIN") or "_BIN_1_" in key or key.startswith("KUBE_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("KUBE_BINARIES_DIR", str(tmp_path))
    monkeypatch.setenv("KUBE_DOWNLOAD", "0")
    monkeypatch.setenv("PATH", str(tmp_path / "no-go-here"))
    older = {component: [v for v in versions if not v.startswith("1.37.")]
             for component, versions in k8s_binaries.WANTED.items()}
    for component, versions in older.items():
        for version in versions:
            major_minor, patch = version.rsplit(".", 1)
            assert int(patch) > 0
            binaries(tmp_path, "%s-v%s.%d" % (component, major_minor, int(patch) - 1))
    exports, report = k8s_binaries.resolve(k8s_binaries.Downloads(str(tmp_path)), k8s_binaries.Builds(str(tmp_path)))
    assert not [line for line in exports if "_BIN_1_35=" in line or "_BIN_1_36=" in line], exports
    scheduler = next(line for line in report if line.startswith("binaries: kube-scheduler "))
    assert scheduler.endswith("MISSING 1.35 1.36 1.37"), report
