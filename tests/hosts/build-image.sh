#!/usr/bin/env bash
# Builds the local test-host image (Debian bookworm, systemd as PID 1, Python for Ansible) without any registry:
# mmdebstrap makes a minbase root file system, podman import turns it into an image.
# Idempotent: rebuilds only when the image is missing or this script changed (its sha256 is a label on the image).
# Needs CONTAINERS_CONF (the Makefile exports it); FORCE=1 rebuilds anyway.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"
image="${TEST_HOST_IMAGE:-localhost/kubesched-test-host:bookworm}"
packages="systemd,systemd-sysv,dbus,python3,python3-yaml,openssl,sudo,iproute2,procps,curl,ca-certificates"
script_sum="$(sha256sum "$0" | cut -d' ' -f1)"

built_sum="$(podman image inspect --format '{{ index .Labels "kubesched.build-script-sha256" }}' "$image" 2>/dev/null || true)"
if [ "${FORCE:-0}" != 1 ] && [ "$built_sum" = "$script_sum" ]; then
  echo "image $image is up to date"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "building $image (mmdebstrap bookworm minbase, about 30 s)"
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
