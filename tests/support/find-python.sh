#!/usr/bin/env bash
# find-python.sh X.Y: print the path of a Python X.Y interpreter that runs, for the Makefile's venvs (one per
# ansible-core: docs/support-matrix.md). A `pythonX.Y` on the PATH counts only if it runs: pyenv puts a shim for every
# version it holds on the PATH, and a shim of a version that is not enabled fails ("pyenv: python3.13: command not
# found"). Then pyenv's own copies, then the system's. Exit 1, naming what was tried, when none runs.
set -euo pipefail
version=${1:?usage: find-python.sh X.Y}
candidates=("$(command -v "python$version" || true)")
root=${PYENV_ROOT:-$HOME/.pyenv}
while read -r dir; do
  candidates+=("$dir/bin/python$version")
done < <(find "$root/versions" -mindepth 1 -maxdepth 1 -name "$version.*" 2>/dev/null | sort -V -r)
candidates+=("/usr/bin/python$version" "/usr/local/bin/python$version")
for python in "${candidates[@]}"; do
  if [ -n "$python" ] && [ -x "$python" ] && out=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) \
      && [ "$out" = "$version" ]; then
    # The interpreter itself, not a shim that may stop working when pyenv's settings change.
    "$python" -c 'import sys; print(sys.executable)'
    exit 0
  fi
done
echo "find-python.sh: no Python $version runs here (tried: ${candidates[*]}); install it (pyenv install $version)" >&2
exit 1
