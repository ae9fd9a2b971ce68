#!/usr/bin/env bash
# Builds the local test images without any registry: mmdebstrap makes a Debian bookworm minbase root file system,
# podman import turns it into an image with systemd as PID 1.
#   host  localhost/kubesched-test-host:bookworm  systemd and Python for Ansible (every scenario's test hosts)
#   node  localhost/kubesched-node:bookworm       the host image plus containerd, runc, the CNI plugins and iptables:
#         a kubeadm-like master whose kubelet (copied in at run time) runs real pods (tests/realnode/README.md)
# Usage: build-image.sh [host|node]... (default: both). Idempotent: rebuilds an image only when it is missing or this
# script changed (its sha256 is a label on the image). Needs CONTAINERS_CONF (the Makefile exports it); FORCE=1
# rebuilds anyway.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"
script_sum="$(sha256sum "$0" | cut -d' ' -f1)"
host_packages="systemd,systemd-sysv,dbus,python3,python3-yaml,openssl,sudo,iproute2,procps,curl,ca-certificates"
# containerd 1.6 with runc from Debian; the kubelet's CNI bridge needs the reference plugins and iptables (ipMasq).
node_packages="$host_packages,containerd,runc,containernetworking-plugins,iptables"

build() { # kind image packages seconds
  local kind=$1 image=$2 packages=$3 seconds=$4 built_sum work
  built_sum="$(podman image inspect --format '{{ index .Labels "kubesched.build-script-sha256" }}' "$image" 2>/dev/null || true)"
  if [ "${FORCE:-0}" != 1 ] && [ "$built_sum" = "$script_sum" ]; then
    echo "image $image is up to date"
    return 0
  fi
  work="$(mktemp -d)"
  # shellcheck disable=SC2064  # expand now: $work is local to this call
  trap "rm -rf '$work'" RETURN
  echo "building $image ($kind: mmdebstrap bookworm minbase, about $seconds s)"
  # Empty machine-id: systemd then generates a distinct one in each container at boot.
  # The hooks are single-quoted on purpose: mmdebstrap passes the root directory to them as $1.
  # shellcheck disable=SC2016
  mmdebstrap --quiet --variant=minbase --include="$packages" \
    --customize-hook='truncate -s 0 "$1/etc/machine-id"; rm -f "$1/var/lib/dbus/machine-id"' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    bookworm "$work/rootfs.tar"
  podman import --quiet \
    --change 'CMD ["/sbin/init"]' \
    --change 'STOPSIGNAL SIGRTMIN+3' \
    --change 'ENV container=podman' \
    --change "LABEL kubesched.build-script-sha256=$script_sum" \
    "$work/rootfs.tar" "$image" >/dev/null
  echo "built $image"
}

for kind in "${@:-host node}"; do
  for one in $kind; do
    case "$one" in
      host) build host "${TEST_HOST_IMAGE:-localhost/kubesched-test-host:bookworm}" "$host_packages" 30 ;;
      node) build node "${TEST_NODE_IMAGE:-localhost/kubesched-node:bookworm}" "$node_packages" 40 ;;
      *) echo "usage: $0 [host|node]..." >&2; exit 2 ;;
    esac
  done
done
