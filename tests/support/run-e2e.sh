#!/usr/bin/env bash
# run-e2e.sh MINOR...: the end-to-end suite (tests/e2e) once per kube-scheduler minor, each against a control plane of
# its own minor or one newer (Kubernetes' skew policy: a scheduler is never newer than its API server and at most
# one minor older). Every minor runs even when one fails; a minor without its binaries is skipped, loudly.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rc=0
for minor in "$@"; do
  m=${minor#1.}
  scheduler=KUBE_SCHEDULER_BIN_1_$m
  apiserver=KUBE_APISERVER_BIN_1_$m newer=KUBE_APISERVER_BIN_1_$((m + 1))
  [ ! -x "${!apiserver:-}" ] && [ -x "${!newer:-}" ] && apiserver=$newer
  echo "===== e2e $minor: kube-scheduler ${!scheduler:-(none)}, kube-apiserver ${!apiserver:-(none)} ====="
  KUBE_SCHEDULER_BIN=${!scheduler:-} KUBE_APISERVER_BIN=${!apiserver:-} \
    "$here/suite.sh" "e2e-$minor" "$scheduler" "$apiserver|$newer" ETCD_BIN -- \
    pytest -p no:cacheprovider -v -rs "$here/../e2e" || rc=1
done
exit $rc
