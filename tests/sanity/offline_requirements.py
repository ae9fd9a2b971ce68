"""Offline stand-ins for the requirements ansible-test pins to a URL: ``offline_requirements.py SANITY_VENV``.

ansible-test installs each sanity test's linters from its own ``_data/requirements/sanity.<test>.txt``. ansible-core
2.22 pins one of them to a source archive on a host outside the package registries this project can reach
(``dill @ https://github.com/uqfoundation/dill/archive/<commit>.zip``, "needed until dill released with 3.15
support"), so its pylint test, and every sanity test after it, could not run here. This rewrites every such line of
the sanity venv's ansible-test into the release that SUBSTITUTES names, which the package index serves; a URL
requirement without one fails, naming it. Idempotent. Why the release gives pylint the same answers:
docs/support-matrix.md ("A new ansible-core").
"""
from __future__ import annotations

import glob
import os
import re
import sys

# name -> the release installed in place of a URL pin of it. dill: pylint pickles its linter with dill to hand it to
# its worker processes (ansible-test runs it with --jobs 0); 0.4.1's code differs from the pinned commit's only for
# Python 3.15 and in dill.session, which pylint does not use.
SUBSTITUTES = {"dill": "0.4.1"}
_URL_PIN = re.compile(r"^(?P<name>[A-Za-z0-9._-]+)\s*@\s*\S+://\S+\s*$")


def rewrite(text: str, path: str) -> str:
    """``text`` of a requirements file with each URL pin replaced by its substitute's ``name==version``."""
    lines = []
    for line in text.splitlines(True):
        found = _URL_PIN.match(line)
        if found:
            name = found.group("name")
            if name.lower() not in SUBSTITUTES:
                raise SystemExit("%s pins %s to a URL no package index serves, and tests/sanity/offline_requirements.py "
                                 "names no release in its place: %s" % (path, name, line.strip()))
            line = "%s==%s  # in place of %s" % (name, SUBSTITUTES[name.lower()], line.split("@", 1)[1].strip())
            line += "\n"
        lines.append(line)
    return "".join(lines)


def main(venv: str) -> int:
    pattern = os.path.join(venv, "lib", "python3*", "site-packages", "ansible_test", "_data", "requirements", "*.txt")
    paths = sorted(glob.glob(pattern))
    if not paths:
        raise SystemExit("no ansible-test requirements under %s" % venv)
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        rewritten = rewrite(text, path)
        if rewritten != text:
            with open(path + ".tmp", "w", encoding="utf-8") as handle:
                handle.write(rewritten)
            os.replace(path + ".tmp", path)
            print("offline_requirements: %s: %s" % (os.path.basename(path), ", ".join(
                line.split("#")[0].strip() for line in rewritten.splitlines() if "# in place of " in line)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
