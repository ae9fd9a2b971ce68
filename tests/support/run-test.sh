#!/usr/bin/env bash
# run-test.sh E2E_MINORS REAL_NODE_SCENARIOS OTHER_SCENARIOS: what `make test` runs (CI: .ci/run), as three chains
# side by side on the two cores, balanced by their measured times (about 33, 24 and 20 minutes here):
#   - the suites on real nodes: the e2e of E2E_MINORS, then the REAL_NODE_SCENARIOS. They never overlap each other:
#     removing one real-node cluster's hosts while another ran took the other's name=systemd cgroups away here
#     (twice, every node at once);
#   - the OTHER_SCENARIOS on plain systemd hosts (no kubelet: they ran beside real-node clusters without harm), then
#     sanity and lint, which use the cores while the hosts mostly wait;
#   - unit (with the differential tests). `make docs` is not run again: the unit test
#     tests/unit/ee/test_docs_site.py builds the site with the same three commands.
# The real-node chain is the longest and mostly waits on its clusters' processes: the other two run at nice 10, so
# on two loaded cores the clusters get the CPU first (the others have minutes to spare).
# Their logs follow, then what ran on real parts and what was skipped (summary.sh); exits 1 when anything failed.
# From the Makefile, which passes MAKE, BUILD, K8S_ENV (the binaries `make binaries` found) and SUITE_RESULTS.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
e2e_minors=$1 real_node_scenarios=$2 other_scenarios=$3
make=${MAKE:-make}
rm -rf "$SUITE_RESULTS"

( r=0
  "$make" --no-print-directory e2e E2E_MINORS="$e2e_minors" || r=1
  "$make" --no-print-directory molecule SCENARIO="$real_node_scenarios" || r=1
  exit $r ) > "$BUILD/test-real-nodes.log" 2>&1 &
nodes=$!

# A suite of the checks, recorded for the summary.
check() {
  # shellcheck source=/dev/null
  ( set -a && . "$K8S_ENV" && set +a && "$here/suite.sh" "$1" -- "$make" --no-print-directory "$1" )
}

( renice -n 10 -p $BASHPID > /dev/null
  r=0
  "$make" --no-print-directory molecule SCENARIO="$other_scenarios" || r=1
  check sanity || r=1
  check lint || r=1
  exit $r ) > "$BUILD/test-hosts.log" 2>&1 &
hosts=$!

( renice -n 10 -p $BASHPID > /dev/null
  check unit ) > "$BUILD/test-checks.log" 2>&1 &
checks=$!

rc=0
for chain in "checks:$checks" "hosts:$hosts" "real-nodes:$nodes"; do
  wait "${chain#*:}" || rc=1
  cat "$BUILD/test-${chain%%:*}.log"
done
"$here/summary.sh" || rc=1
exit $rc
