#!/usr/bin/env bash
# Installs what the test hosts need on this machine (Debian): podman with runc, mmdebstrap to build the host image,
# openssl, rsync and shellcheck (ansible-test sanity) for the test tooling, etcd (the test control plane's store),
# xz (to unpack the real Kubernetes binaries of ../shared/k8s) and catatonit (statically linked: the real nodes' pause
# image, tests/realnode/images.sh). Skips the install when everything is already there.
set -euo pipefail
need=()
for cmd in podman:podman runc:runc mmdebstrap:mmdebstrap openssl:openssl rsync:rsync shellcheck:shellcheck etcd:etcd-server xz:xz-utils catatonit:catatonit; do
  command -v "${cmd%%:*}" >/dev/null 2>&1 || need+=("${cmd##*:}")
done
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing ${need[*]}: install them as root (apt-get install ${need[*]})" >&2
  exit 1
fi
echo "installing ${need[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
