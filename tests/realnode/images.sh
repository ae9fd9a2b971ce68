#!/usr/bin/env bash
# Container images for real nodes without a registry, each saved once as a docker-archive tar in CACHE_DIR (one tar
# per binary: its name carries the binary's sha256) for `ctr -n k8s.io images import` in the node (node-up.sh):
#   pause-<sha>.tar                  registry.k8s.io/pause:3.10 (the verify role's test pods), :3.10.1 (the sandbox
#                                    image containerd is given) from Debian's statically linked catatonit (-P = pause)
#   kube-scheduler-v<version>-<sha>.tar  registry.k8s.io/kube-scheduler:v<version> FROM scratch with the real binary
#                                    (the tag kubeadm's manifest and the static_pod role's default image name)
#   <name>-<sha>.tar                 IMAGE FROM scratch with BINARY as /bin/<name> (an argument IMAGE=BINARY; <name>
#                                    is the image's last path element), non-root as upstream's distroless images:
#                                    registry.k8s.io/scheduler-plugins/kube-scheduler:v0.34.7=/path/to/its/scheduler
# Usage: images.sh CACHE_DIR [KUBE_SCHEDULER_BINARY | IMAGE=BINARY...]; prints the tar paths, one a line. Needs podman
# (CONTAINERS_CONF) and catatonit (tests/hosts/install-host-deps.sh). Safe to run twice at once.
set -euo pipefail
cache="${1:?usage: images.sh CACHE_DIR [KUBE_SCHEDULER_BINARY...]}"
shift
here="$(cd "$(dirname "$0")" && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/../hosts/containers.conf}"
mkdir -p "$cache"

save() { # tar binary name-in-image containerfile tag...
  local tar=$1 binary=$2 name=$3 containerfile=$4 work
  shift 4
  if [ -s "$tar" ]; then echo "$tar"; return 0; fi
  work="$(mktemp -d)"
  cp -L "$binary" "$work/$name"
  printf '%b' "$containerfile" > "$work/Containerfile"
  podman build --quiet --no-cache --file "$work/Containerfile" "${@/#/--tag=}" "$work" >/dev/null
  podman save --quiet --multi-image-archive --format docker-archive --output "$work/images.tar" "$@"
  podman rmi --force "$@" >/dev/null 2>&1 || true   # the tar is the cache; keep the host's store clean
  mv -f "$work/images.tar" "$tar"
  rm -rf "$work"
  echo "$tar"
}

catatonit="$(command -v catatonit || true)"
[ -n "$catatonit" ] || { echo "images.sh: catatonit is missing (apt-get install catatonit)" >&2; exit 1; }
save "$cache/pause-$(sha256sum "$catatonit" | cut -c1-12).tar" "$catatonit" pause \
  'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause", "-P"]\n' \
  registry.k8s.io/pause:3.10 registry.k8s.io/pause:3.10.1

for binary in "$@"; do
  if [[ $binary == *=* ]]; then
    image=${binary%%=*} binary=${binary#*=}
    name=${image%:*} name=${name##*/}
    save "$cache/$name-$(sha256sum "$binary" | cut -c1-12).tar" "$binary" "$name" \
      "FROM scratch\nCOPY $name /bin/$name\nENV PATH=/bin\nUSER 65532:65532\nENTRYPOINT [\"/bin/$name\"]\n" "$image"
    continue
  fi
  version="$("$binary" --version | grep -o 'v[0-9][0-9.]*' | head -1)"
  save "$cache/kube-scheduler-$version-$(sha256sum "$binary" | cut -c1-12).tar" "$binary" kube-scheduler \
    'FROM scratch\nCOPY kube-scheduler /usr/local/bin/kube-scheduler\nENV PATH=/usr/local/bin\nENTRYPOINT ["/usr/local/bin/kube-scheduler"]\n' \
    "registry.k8s.io/kube-scheduler:$version"
done
