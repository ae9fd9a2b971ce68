#!/usr/bin/env bash
# venv.sh DIR PYTHON PIP_ARGUMENTS...: the venv DIR on Python PYTHON, a version X.Y (find-python.sh) or an
# interpreter's path, with `pip install PIP_ARGUMENTS` in it, made unless DIR/.installed says it was and its Python
# still runs.
# The Makefile names DIR after the Python version and the pins it installs, under ~/.cache: a venv holds
# nothing of the checkout and cannot be moved, so a fresh clone (CI's) finds it made instead of spending minutes of
# CPU on pip, and a change of pins makes a new one. Under a lock (DIR.lock): the chains of make test, or two
# checkouts, may ask for the same venv at once.
set -euo pipefail
dir=${1:?usage: venv.sh DIR PYTHON PIP_ARGUMENTS...}
wanted=${2:?usage: venv.sh DIR PYTHON PIP_ARGUMENTS...}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$(dirname "$dir")"
exec 9> "$dir.lock"
flock 9
if [ -f "$dir/.installed" ] && "$dir/bin/python" -c '' 2> /dev/null; then
  exit 0
fi
case $wanted in
  /*) python=$wanted ;;
  *) python=$("$here/find-python.sh" "$wanted") ;;
esac
# --clear: what a run stopped half-way left is replaced, not mixed in.
"$python" -m venv --clear "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check "$@"
touch "$dir/.installed"
