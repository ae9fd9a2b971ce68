#!/usr/bin/env bash
# new-core.sh VERSION PYTHON NEWEST_CONSTRAINTS CORE_UNIT_TESTS: what `make new-core VERSION=2.22.0` runs on the day
# a new ansible-core is released (or a pre-release, 2.22.0rc1): the collection against it before it is supported.
#   - a venv with the newest supported core's pins (NEWEST_CONSTRAINTS) and VERSION put over its ansible-core
#     (--no-deps: on release day no `ansible` package bundles the new core yet; its collections are the newest's);
#   - that core's own sanity (its ansible-test, its new rules) on PYTHON, through the Makefile's sanity target, and
#     the unit tests that exercise ansible-core (CORE_UNIT_TESTS) on the venv;
#   - .build/new-core-VERSION/report.txt: every sanity error and failed test, and what pip says does not fit.
# Exit 1 when anything broke. Supporting the core afterwards: requirements/constraints-<core>.txt and CORES in the
# Makefile (docs/support-matrix.md, "A new ansible-core").
set -uo pipefail
version=$1 python_version=$2 newest_constraints=$3 core_unit_tests=$4
make=${MAKE:-make}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
[[ $version =~ ^2\.[0-9]+\.[0-9]+((a|b|rc)[0-9]+)?$ ]] || { echo "new-core: $version is not an ansible-core version (2.22.0, 2.22.0rc1)" >&2; exit 2; }
core=$(echo "$version" | cut -d. -f1-2)
dir=$repo/.build/new-core-$version
venv=$dir/venv
constraints=$dir/constraints.txt
mkdir -p "$dir"
sed "s/^ansible-core==.*/ansible-core==$version/" "$newest_constraints" > "$constraints"

python=$("$here/find-python.sh" "$python_version") || exit 2
if [ ! -f "$venv/.installed" ]; then
  echo "new-core: a venv with ansible-core $version on Python $python_version ($venv)"
  "$python" -m venv --clear "$venv" || exit 2
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$repo/requirements/test.txt" -c "$newest_constraints" || exit 2
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps "ansible-core==$version" || {
    echo "new-core: PyPI does not serve ansible-core $version for Python $python_version" >&2; exit 2; }
  touch "$venv/.installed"
fi
"$venv/bin/pip" check > "$dir/pip-check.txt" 2>&1

# A sanity venv and tree of its own (SANITY): a pre-release or patch of a supported minor must not reuse that
# minor's sanity venv, which holds the supported release's ansible-test.
common=(CORE="$core" CORE_PYTHON_VERSION="$python_version" CONSTRAINTS="$constraints" VENV="$venv" SANITY="$dir/sanity"
  SANITY_VENV="$dir/sanity/venv")
"$make" -C "$repo" --no-print-directory sanity "${common[@]}" > "$dir/sanity.log" 2>&1; sanity=$?
# The unit tests as `make unit` runs them, without its `binaries` step (which may start a build): the binaries
# .build/k8s.env names, where an earlier make binaries found them; tests needing a missing one skip, saying so.
"$make" -C "$repo" --no-print-directory collection > /dev/null
(
  # shellcheck source=/dev/null
  [ -f "$repo/.build/k8s.env" ] && set -a && . "$repo/.build/k8s.env" && set +a
  cd "$repo" && export ANSIBLE_COLLECTIONS_PATH=$repo/.build/collections PYTHONPATH=$repo/.build/collections \
    PATH=$venv/bin:$PATH ANSIBLE_NOCOLOR=1 PY_COLORS=0 NO_COLOR=1
  # shellcheck disable=SC2086 # a list of test paths
  "$venv/bin/pytest" -p no:cacheprovider --durations=15 $core_unit_tests
) > "$dir/unit.log" 2>&1; unit=$?

{
  echo "ansible-core $version ($("$venv/bin/ansible" --version | sed -n 1p)) on $("$venv/bin/python" --version)"
  echo "sanity: $([ $sanity -eq 0 ] && echo passed || echo "FAILED (exit $sanity)"): $dir/sanity.log"
  grep -E '^(ERROR|FATAL): ' "$dir/sanity.log" | sed 's/^/  /'
  echo "unit tests that exercise ansible-core: $([ $unit -eq 0 ] && echo passed || echo "FAILED (exit $unit)"): $dir/unit.log"
  grep -E '^(FAILED|ERROR) ' "$dir/unit.log" | sed 's/^/  /'
  tail -1 "$dir/unit.log" | sed 's/^/  /'
  echo "pip check (the newest core's pins with ansible-core $version over them):"
  sed 's/^/  /' "$dir/pip-check.txt"
} > "$dir/report.txt"
cat "$dir/report.txt"
[ $sanity -eq 0 ] && [ $unit -eq 0 ]
