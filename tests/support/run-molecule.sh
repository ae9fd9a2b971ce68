#!/usr/bin/env bash
# run-molecule.sh SCENARIO...: every Molecule scenario, MOLECULE_JOBS (default 2) at a time, each even when another
# fails; then their logs in order. A scenario runs the real binaries its file `needs-binaries` names (one variable a
# line, as `make binaries` writes them) and is skipped, loudly, when one is missing. MOLECULE_DESTROY=never keeps
# the hosts at the end (make test removes real-node clusters only once no other one runs: run-test.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
logs=$repo/.build/molecule
mkdir -p "$logs"
for scenario in "$@"; do
  while [ "$(jobs -r | wc -l)" -ge "${MOLECULE_JOBS:-2}" ]; do sleep 1; done
  mapfile -t needs < <(grep -v '^#' "$repo/extensions/molecule/$scenario/needs-binaries" 2>/dev/null | grep .)
  rm -f "$logs/$scenario.log" "$logs/$scenario.rc"
  echo "molecule: $scenario started (log $logs/$scenario.log)"
  ( "$here/suite.sh" "molecule-$scenario" "${needs[@]}" -- molecule test --scenario-name "$scenario" \
      --destroy "${MOLECULE_DESTROY:-always}" \
      > "$logs/$scenario.log" 2>&1; echo $? > "$logs/$scenario.rc" ) &
done
wait
rc=0
for scenario in "$@"; do
  echo "===== molecule $scenario ====="
  cat "$logs/$scenario.log"
  [ "$(cat "$logs/$scenario.rc")" -eq 0 ] || rc=1
  echo "===== molecule $scenario: $(cut -d' ' -f1,3- "$repo/.build/results/molecule-$scenario") ====="
done
exit $rc
