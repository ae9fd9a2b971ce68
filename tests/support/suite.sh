#!/usr/bin/env bash
# suite.sh NAME [NEEDS...] -- COMMAND...: run one suite of real parts and record its result for the summary.
# NEEDS are variables naming binaries (KUBELET_BIN_1_35, ETCD_BIN...), as `make binaries` writes them to .build/k8s.env;
# A|B is met by either.
# When one is unset or not executable the suite does not run: one loud line names it, and the suite counts as skipped
# (a fresh machine without binaries still passes `make test`; tests/README.md says how to provide them).
# Results go to $SUITE_RESULTS (default .build/results), one file per suite: "passed|failed|skipped NAME detail",
# then, for a failed suite, the lines of its output that say what failed (pytest's FAILED and ERROR lines, Ansible's
# fatal ones, Molecule's CRITICAL ones, ansible-test's ERROR ones), since CI shows only the end of a long output.
# Exit status: the command's, 0 when skipped.
set -uo pipefail
name=$1; shift
needs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do needs+=("$1"); shift; done
shift
results=${SUITE_RESULTS:-$(cd "$(dirname "$0")/../.." && pwd)/.build/results}
mkdir -p "$results"
record() { echo "$1 $name $2" > "$results/$name"; }
missing=()
for need in "${needs[@]}"; do
  met=""
  for var in ${need//|/ }; do [ -x "${!var:-}" ] && met=$var; done
  [ -n "$met" ] || missing+=("${need//|/ or }")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "SKIPPED $name: no binary for ${missing[*]} (put it in \${KUBE_BINARIES_DIR:-~/.cache/kube-binaries} or set the variable: README.md, Real Kubernetes binaries for the tests)"
  record skipped "(no ${missing[*]})"
  exit 0
fi
versions=""
for need in "${needs[@]}"; do
  for var in ${need//|/ }; do
    [ "$var" != ETCD_BIN ] && [ -x "${!var:-}" ] && versions+=" ${var%_BIN*}=$("${!var}" --version 2>&1 | sed -n 's/^Kubernetes //p; s/^crictl version //p' | head -1)"
  done
done
start=$(date +%s)
output=$(mktemp)
"$@" 2>&1 | tee "$output"; rc=${PIPESTATUS[0]}
seconds=$(( $(date +%s) - start ))
if [ "$rc" -eq 0 ]; then
  record passed "in $seconds s on${versions:- no binaries}"
else
  record failed "(exit $rc) in $seconds s on${versions}"
  grep -E '^(FAILED|ERROR)[: ]|fatal: \[|CRITICAL ' "$output" | head -20 | cut -c1-400 | sed 's/^/    /' >> "$results/$name"
fi
rm -f "$output"
exit "$rc"
