# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""make differential: the corpus through the library and the real kube-scheduler of every minor.

Prints, per minor, a table per family (verdict, field, effective config and plugins view agreement over the
cases of that family), every disagreement, and the throughput; then (re)writes the recorded answers of every minor
it ran (recorded/<minor>.jsonl, see recording.py) and says how many answers changed. Exit status 1 when anything
disagrees. A minor whose binary is missing is left out with a line naming its variable.

  .venv/bin/python tests/differential/run.py [--minors "1.30 1.35"] [--families "syntax fit_args"] [--jobs 2]
      [--no-cache] [--no-record] [-v]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus  # noqa: E402  pylint: disable=wrong-import-position
import corpus_scheduler_plugins  # noqa: E402  pylint: disable=wrong-import-position
import harness  # noqa: E402  pylint: disable=wrong-import-position
import recording  # noqa: E402  pylint: disable=wrong-import-position


def cases_of(target, families=None) -> list:
    """The corpus of a target: a Kubernetes minor's families, or a scheduler-plugins release's own family."""
    if target.startswith(harness.SCHEDULER_PLUGINS):
        release = target[len(harness.SCHEDULER_PLUGINS):]
        return list(corpus_scheduler_plugins.cases(release)) if families is None or "scheduler_plugins" in families else []
    return list(corpus.cases(families))


def run(minors, families=None, jobs=2, use_cache=True):
    """[(minor, family, name, text, comparison)] for every case and target (a minor or a scheduler-plugins
    release, harness.py); binaries run at most ``jobs`` at once."""
    corpora = dict((minor, cases_of(minor, families)) for minor in minors)
    work = [(minor, case) for minor in minors for case in corpora[minor]]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        binaries = list(pool.map(lambda item: harness.run_binary(item[0], item[1][2], use_cache), work))
    results = []
    for (minor, (family, name, text)), binary in zip(work, binaries):
        lib = harness.run_library(minor, text)
        results.append((minor, family, name, text, harness.compare(minor, lib, binary), binary.get("cached"),
                        binary))
    return results


def record(results, minors, families) -> list:
    """Write recorded/<minor>.jsonl for every minor run: the answers of the families run replace the recorded ones
    of those families; the other families' answers stay when they came from the same binary (by sha256) and are
    dropped otherwise. Returns one summary line per minor."""
    lines = []
    for minor in minors:
        info = recording.binary_info(minor)
        old = recording.load(minor)
        answers = {}
        kept = set()
        if old is not None and old.info["sha256"] == info["sha256"]:
            answers = {k: v for k, v in old.answers.items() if families is not None and k[0] not in families}
            kept = {k[0] for k in answers}
        for r in results:
            if r[0] == minor:
                answers[recording.case_key(r[1], r[2], r[3])] = recording.answer_of(r[6])
        base = harness.run_binary(minor, harness.materialise(recording.BASE_TEXT))
        if not base["ok"]:
            raise RuntimeError("kube-scheduler %s refuses the minimal config: %s" % (minor, base["error"]))
        path = recording.write(minor, info, recording.portable(base["effective"]), answers)
        # Compare with what the file now holds (what CI reads), not with what was meant to be written.
        new = recording.load(minor)
        counts = recording.changes(old, new.answers)
        lines.append("recorded %s: %d answers of %s%s -> %s (%d bytes): %d changed, %d new, %d removed%s" % (
            minor, len(new.answers), new.describe(), "" if kept == set() else " (kept: %s)" % " ".join(sorted(kept)),
            os.path.relpath(path, harness.ROOT), os.path.getsize(path), counts["changed"], counts["new"],
            counts["removed"], "" if old is None or old.info["sha256"] == info["sha256"]
            else " (was %s)" % old.describe()))
    return lines


def table(results, minors) -> str:
    families = [f for f in corpus.FAMILIES + ("scheduler_plugins",) if any(r[1] == f for r in results)]
    lines = []
    for minor in minors:
        rows = [r for r in results if r[0] == minor]
        lines.append("")
        lines.append("kube-scheduler %s (%s)" % (minor, os.path.basename(harness.binary_path(minor) or "?")))
        lines.append("%-16s %7s %9s %9s %9s %9s %9s %7s"
                     % ("family", "configs", "verdict", "field", "effective", "plugins", "agree", "exact"))
        for family in families + ["total"]:
            sel = [r for r in rows if family in ("total", r[1])]
            if not sel:
                continue

            def count(key, subset=sel):
                return sum(1 for r in subset if r[4][key])
            refused = [r for r in sel if r[4]["exact"] is not None]
            lines.append("%-16s %7d %9s %9s %9s %9s %9s %7s" % (
                family, len(sel), "%d/%d" % (count("verdict"), len(sel)), "%d/%d" % (count("field"), len(sel)),
                "%d/%d" % (count("effective"), len(sel)), "%d/%d" % (count("plugins"), len(sel)),
                "%d/%d" % (count("agree"), len(sel)),
                "%d/%d" % (sum(1 for r in refused if r[4]["exact"]), len(refused))))
    return "\n".join(lines)


def disagreements(results) -> list:
    return ["%s %s %r: %s" % (r[0], r[1], r[2], " | ".join(r[4]["problems"])) for r in results if not r[4]["agree"]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--minors", default=os.environ.get("DIFF_MINORS", " ".join(harness.BINARY_MINORS)))
    parser.add_argument("--families", default="")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--no-record", action="store_true", help="do not (re)write recorded/<minor>.jsonl")
    parser.add_argument("--show", default="", help="print both outcomes of the cases whose name contains this")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the text of each disagreeing config")
    args = parser.parse_args(argv)
    harness.load_k8s_env()
    minors = []
    for minor in args.minors.split():
        if harness.binary_path(minor):
            minors.append(minor)
        else:
            print("kube-scheduler %s: no binary (%s is not set; `make binaries` names what ~/.cache/kube-binaries "
                  "holds): not run, its recording is left as it is" % (minor, harness.binary_variable(minor)))
    if not minors:
        return 1
    families = args.families.split() or None
    start = time.monotonic()
    if args.show:
        for family, name, text, minor in [case + (minor,) for minor in minors for case in cases_of(minor, families)]:
            if args.show not in name:
                continue
            print("==== %s %r\n%s" % (family, name, text))
            if True:  # pylint: disable=using-constant-test
                binary = harness.run_binary(minor, text)
                lib = harness.run_library(minor, text)
                print("  %s binary: %s" % (minor, "accepts" if binary["ok"] else binary["error"][:600]))
                print("  %s library: %s" % (minor, "accepts" if lib["ok"] else lib["crash"] or lib["errors"][:2]))
                print("  %s compare: %s" % (minor, harness.compare(minor, lib, binary)["problems"]))
        return 0
    results = run(minors, families, args.jobs, not args.no_cache)
    elapsed = time.monotonic() - start
    print(table(results, minors))
    bad = disagreements(results)
    print("")
    for line in bad:
        print("DISAGREE " + line)
    if args.verbose:
        for r in results:
            if not r[4]["agree"]:
                print("---- %s %s %r\n%s" % (r[0], r[1], r[2], r[3]))
    fresh = sum(1 for r in results if not r[5])
    print("\n%d configs x %d minors = %d comparisons in %.1f s: %.0f comparisons/s (%d binary runs, %d cached)"
          % (len(results) // max(1, len(minors)), len(minors), len(results), elapsed, len(results) / elapsed,
             fresh, len(results) - fresh))
    runtime = sum(1 for r in results if r[4].get("runtime"))
    panics = sum(1 for r in results if r[4].get("panic"))
    print("agreement: %d/%d (%d where only the run-time leader-election rule refuses, which the offline binary run "
          "does not reach; %d where the binary panics and the library refuses)"
          % (len(results) - len(bad), len(results), runtime, panics))
    if not args.no_record:
        print("")
        for line in record(results, minors, families):
            print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
