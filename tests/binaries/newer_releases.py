"""Which releases newer than the pinned ones the Go module proxy serves: ``newer_releases.py [--misses N]``
(``make newer-releases``).

The proxy serves patch releases it does not list (``go list -m -versions k8s.io/kubernetes`` stopped at v1.36.3 while
it served v1.36.5), so each candidate is asked for by name: after every pinned release of every project
(``releases.pinned()``), its next patches, one after the other, until ``--misses`` names in a row are not served (a
patch may be missing between two served ones: v1.35.7 between v1.35.6 and v1.35.8). After a pinned pre-release
(v1.38.0-beta.0): the next pre-releases of its kind, then of the later kinds (-rc.0 after -beta.N), then the release
itself and its patches. Prints one line per pinned release and exits 0 whatever it finds (it repins nothing:
``pin.py`` does); 2 when the proxy cannot be asked (an answer other than "not served").
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import releases  # noqa: E402  pylint: disable=wrong-import-position

# How the proxy says a version does not exist: proxy.golang.org answers 403 ("This module version is not available")
# for a tag it has not fetched, 404 or 410 for one that is not there; go says "unknown revision" or "invalid version".
_NOT_SERVED = re.compile(r"403 Forbidden|404 Not Found|410 Gone|not available|unknown revision|invalid version|"
                         r"no matching versions")
_PRE_KINDS = ("alpha", "beta", "rc")
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-(alpha|beta|rc)\.(\d+))?$")


class ProxyUnreachable(RuntimeError):
    """The proxy gave an answer other than a version or "not served"."""


def served(module: str, version: str) -> bool:
    """Whether the Go module proxy serves ``module`` at ``version`` (``go list -m -json module@vVERSION``)."""
    answer = subprocess.run(["go", "list", "-m", "-json", "%s@v%s" % (module, version)], capture_output=True,
                            text=True, check=False, env=releases.go_env(), cwd=os.sep)
    if answer.returncode == 0:
        return True
    if _NOT_SERVED.search(answer.stderr):
        return False
    raise ProxyUnreachable("go list -m %s@v%s: %s" % (module, version, answer.stderr.strip()))


def _found(name, first: int, ask, misses: int) -> list[str]:
    """Every ``name(n)`` from ``first`` on that ``ask`` finds, until ``misses`` names in a row are not found."""
    found, number, missed = [], first, 0
    while missed < misses:
        candidate = name(number)
        if ask(candidate):
            found.append(candidate)
            missed = 0
        else:
            missed += 1
        number += 1
    return found


def newer(version: str, ask, misses: int = 3) -> list[str]:
    """The versions after ``version`` that ``ask(version) -> bool`` finds, oldest first (see the module's text)."""
    match = _VERSION.match(version)
    if not match:
        raise ValueError("%r is not a release like 1.36.3 or 1.38.0-beta.0" % (version,))
    release = "%s.%s.%s" % match.group(1, 2, 3)
    minor, patch = "%s.%s" % match.group(1, 2), int(match.group(3))

    def patch_named(number):
        return "%s.%d" % (minor, number)

    if match.group(4) is None:
        return _found(patch_named, patch + 1, ask, misses)
    found, first = [], int(match.group(5)) + 1
    for kind in _PRE_KINDS[_PRE_KINDS.index(match.group(4)):]:
        found += _found(lambda n, k=kind: "%s-%s.%d" % (release, k, n), first, ask, misses)
        first = 0
    if ask(release):
        found += [release] + _found(patch_named, patch + 1, ask, misses)
    return found


def report(pins: dict, ask_module, misses: int):
    """One line per pinned release, as it is asked: what is newer, or that nothing is. ``pins``: project -> pinned
    versions; ``ask_module(module, version) -> bool``."""
    for project in sorted(pins):
        module = releases.PROJECTS[project]["module"]
        for version in pins[project]:
            found = newer(version, lambda candidate, m=module: ask_module(m, candidate), misses)
            yield "%s v%s: %s" % (project, version, ", ".join("v" + v for v in found) if found
                                  else "nothing newer served")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--misses", type=int, default=3,
                        help="stop after this many names in a row the proxy does not serve (default 3)")
    parser.add_argument("projects", nargs="*", help="default: every pinned project (%s)" % ", ".join(
        sorted(releases.PROJECTS)))
    args = parser.parse_args()
    pins = {project: versions for project, versions in releases.pinned().items()
            if not args.projects or project in args.projects}
    try:
        for line in report(pins, served, args.misses):
            print(line, flush=True)
    except ProxyUnreachable as exc:
        print("newer-releases: %s" % exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
