#!/usr/bin/env bash
# hosts-lock.sh COMMAND...: runs COMMAND holding this machine's lock on the test hosts. The e2e clusters, the Molecule
# scenarios' hosts, the demo's and the benchmarks' have fixed names (e2e37, ks-systemd-m1, ...), and each run removes
# hosts of its names left by an earlier one before it makes its own: a second `make test` (or e2e, molecule, demo,
# bench-rollout) started beside a first removed the first's clusters under it, failing both. So every target that
# makes hosts runs under one lock file (KUBESCHED_HOSTS_LOCK, default ~/.cache/kubesched/hosts.lock) and a second
# one waits, saying for whom. The targets `make test` starts inside its own run pass through (they inherit the hold).
set -uo pipefail
[ -n "${KUBESCHED_HOSTS_LOCK_HELD:-}" ] && exec "$@"
lock=${KUBESCHED_HOSTS_LOCK:-${XDG_CACHE_HOME:-$HOME/.cache}/kubesched/hosts.lock}
mkdir -p "$(dirname "$lock")"
exec 9<>"$lock"
if ! flock --nonblock 9; then
  echo "hosts-lock: another run holds the test hosts ($(cat "$lock.holder" 2>/dev/null || echo unknown));" \
    "waiting for it to end (its hosts would be removed under it otherwise)" >&2
  flock 9
fi
echo "pid $$ in $PWD since $(date -u '+%F %T') UTC: $*" > "$lock.holder"
# The command does not inherit the lock's descriptor: a process that outlives it (podman's conmon of a kept host)
# would hold the lock for every later run.
KUBESCHED_HOSTS_LOCK_HELD=1 "$@" 9>&-
rc=$?
: > "$lock.holder"
exit $rc
