#!/usr/bin/env bash
# Prints shell lines that name the real Kubernetes binaries for the tests (KUBE_SCHEDULER_BIN, KUBE_SCHEDULER_BIN_1_<minor>,
# KUBE_APISERVER_BIN, ETCD_BIN), unpacking ../shared/k8s (argument 1) once. A variable already set in the environment
# wins, so a developer can point any test at another binary. Fails when no binaries can be had: the tests need them.
set -euo pipefail
shared="${1:?usage: k8s-binaries.sh SHARED_K8S_DIR}"
mkdir -p "$(dirname "$0")/../.build"
if [ -x "$shared/install" ]; then
  "$shared/install" "${KUBE_BINARIES_DIR:-$HOME/.cache/kube-binaries}"
elif [ -z "${KUBE_SCHEDULER_BIN:-}" ] || [ -z "${KUBE_APISERVER_BIN:-}" ]; then
  echo "k8s-binaries: $shared/install not found and KUBE_SCHEDULER_BIN/KUBE_APISERVER_BIN not set: the tests run real binaries" >&2
  exit 1
fi
# The test-only RBAC and CRDs that let schedulers newer than the 1.24 API server sync (see its README).
[ -f "$shared/apiserver-1.24-compat.yaml" ] && echo "export KUBE_APISERVER_COMPAT_MANIFEST='$(cd "$shared" && pwd)/apiserver-1.24-compat.yaml'"
# Values from the calling environment override what install found.
for name in KUBE_SCHEDULER_BIN KUBE_APISERVER_BIN ETCD_BIN KUBE_APISERVER_COMPAT_MANIFEST $(compgen -v | grep -E '^KUBE_SCHEDULER_BIN_1_[0-9]+$' || true); do
  [ -n "${!name:-}" ] && printf "export %s='%s'\n" "$name" "${!name}"
done
exit 0
