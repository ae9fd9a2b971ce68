"""newer_releases.py's walk (tests/binaries, `make newer-releases`): which names it asks the Go module proxy for after
each pinned release, and what it reports, against a stand-in proxy that serves a fixed set of versions. The real check
is the target itself, which asks proxy.golang.org (it serves versions it does not list, so nothing here can be read
from a listing); `served` is checked on one real answer where `go` is on the PATH."""
from __future__ import annotations

import os
import shutil
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "binaries"))
import newer_releases  # noqa: E402  pylint: disable=wrong-import-position

# What the proxy served on the day the walk was written, as far as these cases need it: a patch missing between two
# served ones (v1.35.7), the release of a pre-release only after its release candidates.
SERVED = {"k8s.io/kubernetes": {"1.35.5", "1.35.6", "1.35.8", "1.36.4", "1.36.5", "1.38.0-beta.1", "1.38.0-rc.0",
                                "1.38.0-rc.2", "1.38.0", "1.38.1"},
          "go.etcd.io/etcd/server/v3": {"3.7.4"}}


class Proxy:
    """Serves SERVED and records every name it was asked for."""

    def __init__(self):
        self.asked = []

    def __call__(self, module, version):
        self.asked.append((module, version))
        return version in SERVED.get(module, ())


def ask_kubernetes(proxy):
    return lambda version: proxy("k8s.io/kubernetes", version)


def test_a_missing_patch_between_two_served_ones_does_not_stop_the_walk():
    proxy = Proxy()
    assert newer_releases.newer("1.35.4", ask_kubernetes(proxy)) == ["1.35.5", "1.35.6", "1.35.8"]
    # Three misses in a row after the last one found end it: 1.35.9, 1.35.10, 1.35.11.
    assert [version for _module, version in proxy.asked] == ["1.35.%d" % n for n in range(5, 12)]


def test_with_one_miss_allowed_the_walk_stops_at_the_gap():
    assert newer_releases.newer("1.35.4", ask_kubernetes(Proxy()), misses=1) == ["1.35.5", "1.35.6"]


def test_nothing_newer_costs_the_misses_only():
    proxy = Proxy()
    assert newer_releases.newer("1.37.2", ask_kubernetes(proxy)) == []
    assert len(proxy.asked) == 3


def test_after_a_pre_release_come_the_later_pre_releases_then_the_release_and_its_patches():
    proxy = Proxy()
    assert newer_releases.newer("1.38.0-beta.0", ask_kubernetes(proxy)) == [
        "1.38.0-beta.1", "1.38.0-rc.0", "1.38.0-rc.2", "1.38.0", "1.38.1"]
    asked = [version for _module, version in proxy.asked]
    assert asked[:5] == ["1.38.0-beta.1", "1.38.0-beta.2", "1.38.0-beta.3", "1.38.0-beta.4", "1.38.0-rc.0"]
    assert "1.38.0-alpha.0" not in asked


def test_a_pre_release_whose_release_is_not_served_yet_asks_for_no_patch():
    proxy = Proxy()
    assert newer_releases.newer("1.39.0-rc.0", ask_kubernetes(proxy)) == []
    assert [version for _module, version in proxy.asked][-1] == "1.39.0"


def test_the_report_has_a_line_per_pinned_release_asked_of_its_own_module():
    proxy = Proxy()
    pins = {"kubernetes": ["1.36.3", "1.37.2"], "etcd": ["3.7.3"]}
    assert list(newer_releases.report(pins, proxy, 3)) == [
        "etcd v3.7.3: v3.7.4",
        "kubernetes v1.36.3: v1.36.4, v1.36.5",
        "kubernetes v1.37.2: nothing newer served"]
    assert {module for module, _version in proxy.asked} == {"k8s.io/kubernetes", "go.etcd.io/etcd/server/v3"}


@pytest.mark.parametrize("version", ["1.38", "v1.38.0", "1.38.0-preview.1"])
def test_a_pin_that_is_not_a_release_is_refused(version):
    with pytest.raises(ValueError):
        newer_releases.newer(version, ask_kubernetes(Proxy()))


@pytest.mark.skipif(shutil.which("go") is None, reason="no `go` on the PATH: the proxy's answers are not asked")
def test_the_proxy_serves_a_pinned_release_and_refuses_a_version_that_cannot_exist():
    assert newer_releases.served("k8s.io/kubernetes", "1.36.3") is True
    assert newer_releases.served("k8s.io/kubernetes", "1.36.9999") is False
