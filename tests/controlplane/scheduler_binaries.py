"""Prints, as JSON, every real kube-scheduler named by KUBE_SCHEDULER_BIN_1_<minor> (see `make binaries`):
minor -> {path, version (from its own --version), sha256}. Scenarios read this instead of asking the binaries
again on every variable lookup."""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys


def facts(path: str) -> dict:
    version = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"path": path, "version": re.search(r"v(\d+\.\d+\.\d+)", version).group(1), "sha256": digest.hexdigest()}


def main() -> int:
    found = {}
    for name, path in sorted(os.environ.items()):
        match = re.fullmatch(r"KUBE_SCHEDULER_BIN_1_(\d+)", name)
        if match and path:
            found["1.%s" % match.group(1)] = facts(path)
    if not found:
        print("no KUBE_SCHEDULER_BIN_1_<minor> in the environment: run through make (make binaries)", file=sys.stderr)
        return 1
    print(json.dumps(found, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
