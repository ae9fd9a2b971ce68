#!/usr/bin/env bash
# run-test.sh E2E_MINORS REAL_NODE_SCENARIOS OTHER_SCENARIOS OLDER_CORES OLDER_CORE_UNITS CORE_UNIT_TESTS
# SHIPPED_SANITY_TARGETS: what `make test` runs (CI: .ci/run), as seven chains side by side on the two cores
# (docs/support-matrix.md has the legs' times):
#   - the e2e of E2E_MINORS on its real-node cluster;
#   - the OTHER_SCENARIOS on plain systemd hosts, then the REAL_NODE_SCENARIOS (the Molecule chain, which ends first,
#     18 to 22 minutes in); once it ended, two chains:
#     - the scheduler-plugins e2e on its own real-node cluster (1.35), which mostly waits on its pods;
#     - the static checks: the docs site's unit test (tests/unit/ee/test_docs_site.py, which builds the site with
#       `make docs`' three commands: it is not run again), the newest core's sanity of everything, and lint;
#   - the rest of unit (with the differential tests), as two chains: the library's, hardening and playbook tests,
#     and the others;
#   - galaxy-importer on the built tarball, then each of the OLDER_CORES (ansible-core releases still supported, each
#     on its own venv): its sanity of what the collection ships (SHIPPED_SANITY_TARGETS) and, for the OLDER_CORE_UNITS
#     among them, its CORE_UNIT_TESTS.
# Everything except the older cores' legs runs on the newest ansible-core (the Makefile's CORE).
# The real-node clusters overlap, but no real-node cluster is removed while another one runs: removing one's hosts
# took the other's name=systemd cgroups away here (twice, every node at once). So each keeps its hosts (E2E_KEEP=1,
# MOLECULE_DESTROY=never), frozen once its suite ended, and all are removed here, one after the other, once every
# chain ended.
# The machine has no idle CPU while the chains run (controller-side Python is most of it). The e2e waits on its
# cluster between its steps and runs at the normal priority; the others run at nice 5 (lower), so the e2e gets a core
# whenever it needs one, and they keep both cores busy to the end rather than leave one idle beside a lone e2e. The
# three that only compute (the newest core's two unit chains, the older cores' legs) run at nice 10: as two chains the
# unit tests ended minutes before the e2e, which they had starved until then (docs/support-matrix.md has the runs).
# Their logs follow, then what ran on real parts and what was skipped (summary.sh); exits 1 when anything failed.
# From the Makefile, which passes MAKE, BUILD, K8S_ENV (the binaries `make binaries` found), SUITE_RESULTS and CORE
# (the newest ansible-core, which names its sanity and unit suites as the older cores' are named).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
e2e_minors=$1 real_node_scenarios=$2 other_scenarios=$3 older_cores=$4 older_core_units=$5 core_unit_tests=$6 shipped=$7
make=${MAKE:-make}
newest_core=${CORE:?the Makefile passes CORE}
rm -rf "$SUITE_RESULTS"

# The CPU time (user and system) the calling chain used, the last lines of its log (bash's times: the shell's own,
# then that of every process it waited for): what each chain adds to a saturated make test (the real-node hosts' own
# processes, under podman's conmon, are not counted).
cpu() {
  echo "chain CPU, user and system (the chain's shell, then every process it waited for):"
  times
}

# A real-node cluster whose suite ended waits for the removal at the end frozen (podman pause, the cgroup freezer):
# idle, the kubelets, containerd and control plane of a four-host cluster use 13 % of a core (measured), which the
# chains still running need. freeze FILTER pauses the running hosts podman ps --filter FILTER lists; thaw unpauses
# them all.
frozen=$BUILD/test-frozen-hosts
: > "$frozen"
freeze() {
  local ids
  mapfile -t ids < <(podman ps --quiet --filter status=running --filter "$1")
  [ "${#ids[@]}" -eq 0 ] && return
  if podman pause "${ids[@]}" > /dev/null; then printf '%s\n' "${ids[@]}" >> "$frozen"
  else echo "could not pause the hosts of $1: they keep running until the removal"; fi
}
thaw() {
  local ids
  mapfile -t ids < "$frozen"
  [ "${#ids[@]}" -eq 0 ] || podman unpause "${ids[@]}" > /dev/null
}

# A suite of the checks, recorded for the summary: check NAME [MAKE ARGUMENTS...] runs make NAME with them.
check() {
  # shellcheck source=/dev/null
  ( set -a && . "$K8S_ENV" && set +a && "$here/suite.sh" "$1${suffix:-}" -- "$make" --no-print-directory "$@" )
}

( E2E_KEEP=1 "$make" --no-print-directory e2e E2E_MINORS="$e2e_minors"; r=$?; cpu; exit $r ) > "$BUILD/test-e2e.log" 2>&1 &
e2e=$!

( renice -n 5 -p $BASHPID > /dev/null
  r=0
  "$make" --no-print-directory molecule SCENARIO="$other_scenarios" || r=1
  MOLECULE_DESTROY=never "$make" --no-print-directory molecule SCENARIO="$real_node_scenarios" || r=1
  for scenario in $real_node_scenarios; do freeze "name=^ks-${scenario//_/-}-"; done
  cpu
  exit $r ) > "$BUILD/test-hosts.log" 2>&1 &
hosts=$!

docs_site=tests/unit/ee/test_docs_site.py

# The newest core's unit tests as two chains of about the same length, the library's, hardening and playbook tests
# beside the rest (the role tests with their API servers, the differential tests): as one pytest they were the last
# chain to end, alone on one core for minutes while the other idled. In the order tests/unit lists them (playbooks'
# test modules collected after plugins' do not import). Every fourth recorded answer re-checked against its own
# binary (tests/differential/test_differential.py says why).
library_tests="tests/unit/hardening tests/unit/playbooks tests/unit/plugins"
( renice -n 10 -p $BASHPID > /dev/null
  suffix=-$newest_core-library check unit UNIT_TESTS="$library_tests"
  r=$?; cpu; exit $r ) > "$BUILD/test-library.log" 2>&1 &
library=$!
( renice -n 10 -p $BASHPID > /dev/null
  ignored=$(for path in $library_tests $docs_site; do printf -- ' --ignore=%s' "$path"; done)
  suffix=-$newest_core DIFF_RECHECK_EVERY=4 check unit UNIT_TESTS="tests/unit tests/differential$ignored"
  r=$?; cpu; exit $r ) > "$BUILD/test-checks.log" 2>&1 &
checks=$!

# A chain of its own rather than after unit: its legs are single processes, and after the other chains end a long
# tail would run on one core while the other idles.
( renice -n 10 -p $BASHPID > /dev/null
  r=0
  check galaxy-importer || r=1
  for core in $older_cores; do
    suffix=-$core check sanity CORE="$core" SANITY_TARGETS="$shipped" || r=1
    [[ " $older_core_units " == *" $core "* ]] || continue
    suffix=-$core check unit CORE="$core" UNIT_TESTS="$core_unit_tests" || r=1
  done
  cpu
  exit $r ) > "$BUILD/test-cores.log" 2>&1 &
cores=$!

# Once the Molecule chain ended, the scheduler-plugins e2e (a real-node cluster of its own, which mostly waits on its
# pods) and the static checks (single processes of two to four minutes each) start beside the chains still going:
# after the older cores' legs or unit, the two longest, they ran alone on one core while the other idled.
rc=0
wait "$hosts" || rc=1
( renice -n 5 -p $BASHPID > /dev/null
  E2E_KEEP=1 "$make" --no-print-directory e2e-scheduler-plugins; r=$?
  freeze label=kubesched.test=e2esp
  cpu
  exit $r ) > "$BUILD/test-plugins.log" 2>&1 &
plugins=$!
( renice -n 5 -p $BASHPID > /dev/null
  r=0
  suffix=-docs check unit UNIT_TESTS="$docs_site" || r=1
  suffix=-$newest_core check sanity || r=1
  check lint || r=1
  cpu
  exit $r ) > "$BUILD/test-static.log" 2>&1 &
static=$!

cat "$BUILD/test-hosts.log"
for chain in "checks:$checks" "library:$library" "cores:$cores" "static:$static" "plugins:$plugins" "e2e:$e2e"; do
  wait "${chain#*:}" || rc=1
  cat "$BUILD/test-${chain%%:*}.log"
done

thaw
# The real-node clusters, one after the other: the e2e's (tests/e2e/conftest.py names it e2e<minor>; the
# scheduler-plugins one e2esp), then the scenarios' hosts.
for cluster in $(for minor in $e2e_minors; do echo "e2e${minor#1.}"; done) e2esp; do
  python3 "$here/../e2e/realcluster.py" remove "$cluster"
done
for scenario in $real_node_scenarios; do
  molecule destroy --scenario-name "$scenario" > "$BUILD/molecule/$scenario-destroy.log" 2>&1 \
    || { echo "molecule destroy $scenario failed: $BUILD/molecule/$scenario-destroy.log"; rc=1; }
done
"$here/summary.sh" || rc=1
exit $rc
