#!/usr/bin/env bash
# run-e2e.sh MINOR...: the end-to-end suite (tests/e2e) once per kube-scheduler minor, each on a real cluster whose
# control plane and kubelets are of the scheduler's own minor or one newer (Kubernetes' skew policy: a scheduler is
# never newer than its API server and at most one minor older): TEST_CONTROL_PLANE_MINOR tells the shared playbooks.
# Every minor runs even when one fails; a minor without its binaries is skipped, loudly.
# E2E_TESTS: what pytest runs, its arguments split on spaces (default: the whole tests/e2e directory), e.g.
# E2E_TESTS=tests/e2e/test_cluster_view.py or E2E_TESTS="-rfEsP tests/e2e/test_cluster_view.py" (prints each test's
# output; an -r of its own replaces the one below, so it keeps fEs).
# E2E_SUITE: the name its result is recorded under, with the minor (default e2e: e2e-1.37).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
read -r -a tests <<< "${E2E_TESTS:-$here/../e2e}"
rc=0
for minor in "$@"; do
  m=${minor#1.}
  own=KUBE_APISERVER_BIN_1_$m newer=KUBE_APISERVER_BIN_1_$((m + 1)) cp=$m
  [ ! -x "${!own:-}" ] && [ -x "${!newer:-}" ] && cp=$((m + 1))
  scheduler=KUBE_SCHEDULER_BIN_1_$m
  echo "===== e2e $minor: kube-scheduler ${!scheduler:-(none)}, control plane and kubelets 1.$cp ====="
  KUBE_SCHEDULER_BIN=${!scheduler:-} TEST_CONTROL_PLANE_MINOR=1.$cp \
    "$here/suite.sh" "${E2E_SUITE:-e2e}-$minor" "$scheduler" "KUBE_APISERVER_BIN_1_$cp" "KUBE_CONTROLLER_MANAGER_BIN_1_$cp" \
    "KUBELET_BIN_1_$cp" ETCD_BIN -- pytest -p no:cacheprovider -v -rfEs --durations=20 "${tests[@]}" || rc=1
done
exit $rc
