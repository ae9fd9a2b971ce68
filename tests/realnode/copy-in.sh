#!/bin/sh
# Puts a node's inputs into a node host (tests/realnode/README.md, step 2) with `podman cp`, from the controller:
# node-up.sh and kubeadm-scheduler-manifest.sh from this folder, then each NAME=PATH as /opt/kubesched-node/NAME
# (kubelet=/path/to/kubelet-v1.35.6, kubelet.conf=..., ca.crt=..., scheduler.conf=...) and each *.tar as
# /opt/kubesched-node/images/<its name>. `podman cp` keeps the mode and needs no checksum on either side: about a second
# for the 170 MB of a node, where Ansible's copy module took half a minute on a busy machine.
# Usage: copy-in.sh NODE [NAME=PATH | IMAGE.tar]...   (CONTAINERS_CONF as for every podman call)
set -eu
node=${1:?usage: copy-in.sh NODE [NAME=PATH | IMAGE.tar]...}
shift
here=$(cd "$(dirname "$0")" && pwd)
dir=/opt/kubesched-node
podman exec "$node" mkdir -p "$dir/images"
podman cp "$here/node-up.sh" "$node:$dir/node-up.sh"
podman cp "$here/kubeadm-scheduler-manifest.sh" "$node:$dir/kubeadm-scheduler-manifest.sh"
for input in "$@"; do
  case "$input" in
    *=*) podman cp "${input#*=}" "$node:$dir/${input%%=*}" ;;
    *.tar) podman cp "$input" "$node:$dir/images/$(basename "$input")" ;;
    *) echo "copy-in.sh: $input is neither NAME=PATH nor an image .tar" >&2; exit 2 ;;
  esac
done
