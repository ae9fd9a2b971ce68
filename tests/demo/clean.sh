#!/usr/bin/env bash
# make demo-clean: removes the demo masters, its control-plane host, their network and the demo's files under .build/demo.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$repo/tests/hosts/containers.conf}"
for host in ks-demo-m1 ks-demo-m2 ks-demo-m3 ks-demo-api; do
  if podman container exists "$host"; then podman rm --force --time 5 "$host" >/dev/null && echo "removed $host"; fi
done
if podman network exists ks-demo; then podman network rm ks-demo >/dev/null && echo "removed network ks-demo"; fi
rm -rf "$repo/.build/demo"
