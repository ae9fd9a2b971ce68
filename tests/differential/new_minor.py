# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""make new-minor VERSION=1.38.0-rc.0: a Kubernetes release measured the way every minor the library knows was.

1. pins the release as a Go module of the project (tests/binaries/pin.py), unless it is pinned already;
2. builds its kube-scheduler from the upstream Go modules (tests/binaries/build.py);
3. runs the whole differential corpus through that binary and through the library, as the release's own minor when
   the library knows it and otherwise as the newest minor it knows, and lists every disagreement by family: for a
   new minor, what the release changed that the library has to learn (its table of facts), for review;
4. records the binary's answers in recorded/<minor>.jsonl (--no-record leaves them), so the library's new table is
   checked against them by tests/differential once the minor is added to harness.BINARY_MINORS.

The list is also written to .build/new-minor-<version>.txt. Exit 0: a report, not a check (make differential
checks a minor the library knows).
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "binaries"))

import build  # noqa: E402  pylint: disable=wrong-import-position
import corpus  # noqa: E402  pylint: disable=wrong-import-position
import harness  # noqa: E402  pylint: disable=wrong-import-position
import releases  # noqa: E402  pylint: disable=wrong-import-position
import run as runner  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import versions  # noqa: E402


def scheduler_of(version: str, substitutes: list) -> str:
    """The release's kube-scheduler, pinned (with ``substitutes``: MODULE=VERSION, pin.py --substitute) and built
    when it is not yet."""
    if not os.path.isfile(os.path.join(releases.module_dir("kubernetes", version), "go.sum")):
        subprocess.run([sys.executable, os.path.join(os.path.dirname(build.__file__), "pin.py"), "kubernetes",
                        version, "kube-scheduler"] + ["--substitute=" + item for item in substitutes], check=True)
    return build.build("kubernetes", version, ["kube-scheduler"], build.binaries_dir())[0]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("version", help="an exact release or pre-release the Go module proxy serves: 1.38.0-rc.0")
    parser.add_argument("--families", default="", help="default: every family of the corpus")
    parser.add_argument("--no-record", action="store_true")
    parser.add_argument("--substitute", action="append", default=[], metavar="MODULE=VERSION",
                        help="pin with this version of a module the release needs where the Go module proxy refuses "
                             "that one (1.38.0-beta.0: sigs.k8s.io/structured-merge-diff/v7=v7.0.0)")
    args = parser.parse_args(argv)
    minor = ".".join(args.version.split(".")[:2])
    binary = scheduler_of(args.version, args.substitute)
    os.environ["KUBE_SCHEDULER_BIN_" + minor.replace(".", "_")] = binary
    # A minor the library does not know is compared with the newest one it models, a preview included: the nearest
    # table of facts.
    as_minor = minor if minor in versions.SUPPORTED_MINORS else versions.SUPPORTED_MINORS[-1]
    print("kube-scheduler v%s (%s, %s) against the library as %s%s" % (
        args.version, binary, harness.binary_go(binary), as_minor,
        "" if as_minor == minor else " (the newest minor it knows): each disagreement is something %s changed" % minor))
    started = time.monotonic()
    results = []
    for family, name, text in corpus.cases(args.families.split() or None):
        outcome = harness.run_binary(minor, text)
        results.append((minor, family, name, text,
                        harness.compare(as_minor, harness.run_library(as_minor, text), outcome), outcome.get("cached"),
                        outcome))
    bad = runner.disagreements(results)
    by_family = collections.Counter(r[1] for r in results if not r[4]["agree"])
    lines = ["%s: %d of %d cases disagree" % (family, by_family[family], sum(1 for r in results if r[1] == family))
             for family in sorted({r[1] for r in results})]
    lines += [""] + ["DISAGREE " + line for line in bad]
    lines.append("\n%d of %d cases disagree (%.0f s)" % (len(bad), len(results), time.monotonic() - started))
    report = os.path.join(harness.ROOT, ".build", "new-minor-%s.txt" % args.version)
    os.makedirs(os.path.dirname(report), exist_ok=True)
    with open(report, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print("report: %s" % report)
    if not args.no_record:
        for line in runner.record(results, [minor], args.families.split() or None):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
