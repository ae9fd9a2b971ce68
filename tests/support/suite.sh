#!/usr/bin/env bash
# suite.sh NAME [NEEDS...] -- COMMAND...: run one suite of real parts and record its result for the summary.
# NEEDS are variables naming binaries (KUBELET_BIN_1_35, ETCD_BIN...), as `make binaries` writes them to .build/k8s.env.
# When one is unset or not executable the suite does not run: one loud line names it, and the suite counts as skipped
# (a fresh machine without binaries still passes `make test`; tests/README.md says how to provide them).
# Results go to $SUITE_RESULTS (default .build/results), one file per suite: "passed|failed|skipped NAME detail".
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
for var in "${needs[@]}"; do
  path=${!var:-}
  { [ -n "$path" ] && [ -x "$path" ]; } || missing+=("$var")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "SKIPPED $name: no binary for ${missing[*]} (make binaries: put it in \${KUBE_BINARIES_DIR:-~/.cache/kube-binaries} or set the variable)"
  record skipped "(no ${missing[*]})"
  exit 0
fi
versions=""
for var in "${needs[@]}"; do
  [ "$var" = ETCD_BIN ] && continue
  versions+=" $("${!var}" --version 2>&1 | sed -n 's/^Kubernetes //p;s/^Kubelet //p' | head -1)"
done
start=$(date +%s)
"$@"; rc=$?
seconds=$(( $(date +%s) - start ))
if [ $rc -eq 0 ]; then record passed "in $seconds s on${versions:- no binaries}"; else record failed "(exit $rc) in $seconds s on${versions}"; fi
exit $rc
