#!/usr/bin/env bash
# Installs what the test hosts need on this machine (Debian): podman with runc, mmdebstrap to build the host image,
# openssl, rsync and shellcheck (ansible-test sanity) for the test tooling, etcd (the test control plane's store),
# xz (to unpack the real Kubernetes binaries of ../shared/k8s) and catatonit (statically linked: the real nodes' pause
# image, tests/realnode/images.sh). Skips the install when everything is already there.
set -euo pipefail
# Real nodes (tests/realnode): every kubelet (cAdvisor, certificate watchers) and every systemd in a test host takes
# inotify instances of the one root user; with Debian's default of 128 a third node's kubelet exits with "inotify_init:
# too many open files" and restarts until some are freed (its Node registered 100 s late). Raise the limits, never lower.
raise_sysctl() { # name minimum
  local now
  now=$(sysctl -n "$1" 2>/dev/null || echo 0)
  if [ "$now" -lt "$2" ]; then
    if [ "$(id -u)" -eq 0 ]; then sysctl -qw "$1=$2"; else echo "set $1 to at least $2 (sysctl -w, as root)" >&2; fi
  fi
}
raise_sysctl fs.inotify.max_user_instances 8192
raise_sysctl fs.inotify.max_user_watches 1048576
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
