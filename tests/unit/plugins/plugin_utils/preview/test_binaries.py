"""The binaries a preview runs, found in a server release tarball's layout and refused by name when they are another
component or another minor, on the real binaries."""
from __future__ import annotations

import os

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview.binaries import (
    BinaryError, check, next_minor, resolve)


def test_a_directory_laid_out_as_the_server_tarball_gives_both_kubernetes_binaries(binaries, tmp_path):
    minor, paths = binaries
    folder = tmp_path / "kubernetes" / "server" / "bin"
    folder.mkdir(parents=True)
    for component in ("kube-apiserver", "kube-scheduler"):
        os.symlink(paths[component], folder / component)
    found = resolve({"etcd": paths["etcd"]}, str(tmp_path))
    assert found["kube-scheduler"] == str(folder / "kube-scheduler")
    versions = check(found, minor)
    assert versions["kube-scheduler"].startswith(minor + ".") and versions["etcd"].startswith("3.")


def test_a_path_given_wins_over_the_directory(binaries, tmp_path):
    _minor, paths = binaries
    assert resolve(dict(paths), str(tmp_path)) == dict((name, os.path.abspath(path)) for name, path in paths.items())


def test_a_missing_binary_names_the_layout_it_looked_for(tmp_path):
    with pytest.raises(BinaryError, match=r"^kube-apiserver: not found \(%s or %s/kubernetes/server/bin\)"
                       % (tmp_path, tmp_path)):
        resolve({"etcd": "/usr/bin/etcd"}, str(tmp_path))


def test_another_component_is_refused_by_name(binaries):
    minor, paths = binaries
    swapped = dict(paths, **{"kube-scheduler": paths["kube-apiserver"]})
    with pytest.raises(BinaryError, match="^kube-scheduler: %s is kube-apiserver, not kube-scheduler$"
                       % paths["kube-apiserver"]):
        check(swapped, minor)
    with pytest.raises(BinaryError, match="^etcd: .* is not etcd"):
        check(dict(paths, etcd=paths["kube-scheduler"]), minor)


def test_another_minor_is_refused_naming_both(binaries):
    minor, paths = binaries
    other = "1.30" if minor != "1.30" else "1.31"
    with pytest.raises(BinaryError, match=r"^kube-apiserver: .* is v%s\.\d+, the preview is for Kubernetes %s; "
                       r"give the kube-apiserver of %s or %s$" % (minor.replace(".", r"\."), other, other,
                                                                  next_minor(other).replace(".", r"\."))):
        check(paths, other)


def test_an_api_server_one_minor_newer_is_taken_and_a_scheduler_is_not(binaries):
    """As the version skew policy lets a cluster run it (scheduler-plugins 0.34.7's scheduler, of 1.34, on 1.35)."""
    minor, paths = binaries
    older = "1.%d" % (int(minor.split(".")[1]) - 1)
    with pytest.raises(BinaryError, match=r"^kube-scheduler: .* is v%s\.\d+, the preview is for Kubernetes %s; "
                       r"give the kube-scheduler of %s$" % (minor.replace(".", r"\."), older, older)):
        check(paths, older)


def test_a_file_that_is_not_executable_is_refused(binaries, tmp_path):
    minor, paths = binaries
    plain = tmp_path / "kube-scheduler"
    plain.write_text("#!/bin/sh\n")
    with pytest.raises(BinaryError, match="^kube-scheduler: %s is not an executable file$" % plain):
        check(dict(paths, **{"kube-scheduler": str(plain)}), minor)
