#!/bin/sh
# Brings up a real Kubernetes node inside a node host (localhost/kubesched-node:bookworm, systemd as PID 1): writes
# containerd's and the CNI bridge's config, the kubelet's unit, drop-in and config in one of three layouts, imports
# the local images into containerd, starts containerd and the kubelet, and waits until the kubelet answers /healthz.
# Optionally writes kubeadm's own kube-scheduler manifest (and kubeadm's scheduler.conf) as `kubeadm init` would.
# Interface and settings: tests/realnode/README.md; every setting is one ../shared/k8s/real-node.md proved here.
#
# Usage (inside the node, as root):
#   node-up.sh --pod-subnet CIDR [--name NODE] [--layout kubeadm|flag|custom_config] [--manifest-dir DIR]
#              [--kubeadm-scheduler VERSION] [--api-service ADDRESS:PORT] [--without-ctr]
# Inputs in the directory of this script (or $KUBESCHED_NODE_DIR):
#   kubelet         the kubelet binary (installed as /usr/bin/kubelet, where the packages put it)
#   kubelet.conf    the node's kubeconfig (system:node:<NODE>, group system:nodes)
#   ca.crt          the cluster CA (the kubelet's clientCAFile)
#   scheduler.conf  optional: kubeadm's kubeconfig of kube-scheduler
#   images/*.tar    optional: docker-archive images for containerd's k8s.io namespace (tests/realnode/images.sh)
#   kube-proxy, kube-proxy.conf  optional, with --api-service: the real kube-proxy (iptables mode) and its kubeconfig
#   crictl          optional: the CRI client kubeadm requires on every node (cri-tools), with /etc/crictl.yaml naming
#                   containerd's socket as kubeadm's docs write it
# --without-ctr: once the images are in, containerd's own client leaves the PATH, so the node answers only through
# CRI, as a CRI-O master does (the static_pod role's preflight then has the kubelet run it, read with crictl).
set -eu
in="${KUBESCHED_NODE_DIR:-$(cd "$(dirname "$0")" && pwd)}"
api_service=""; name="$(hostname)"; layout=kubeadm; manifest_dir=/etc/kubernetes/manifests; subnet=""; kubeadm_scheduler=""
without_ctr=""
while [ $# -gt 0 ]; do
  case "$1" in
    --name) name=$2; shift 2 ;;
    --layout) layout=$2; shift 2 ;;
    --manifest-dir) manifest_dir=$2; shift 2 ;;
    --pod-subnet) subnet=$2; shift 2 ;;
    --kubeadm-scheduler) kubeadm_scheduler=${2#v}; shift 2 ;;
    --api-service) api_service=$2; shift 2 ;;
    --without-ctr) without_ctr=1; shift ;;
    *) echo "node-up.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$subnet" ] || { echo "node-up.sh: --pod-subnet is required" >&2; exit 2; }
for f in kubelet kubelet.conf ca.crt; do
  [ -s "$in/$f" ] || { echo "node-up.sh: $in/$f is missing" >&2; exit 2; }
done
start=$(date +%s%N)
elapsed() { echo "node-up $name: $* after $(( ($(date +%s%N) - start) / 1000000 )) ms"; }
node_ip="$(ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1)"

# containerd: without CAP_SYS_RESOURCE in these hosts every sandbox fails unless oom_score_adj is clamped to
# containerd's own; cgroupfs (with --cgroupns=private the node's cgroups look like the root); the pause image is local.
install -d /etc/containerd /etc/cni/net.d /etc/kubernetes/pki /var/lib/kubelet "$manifest_dir"
cat > /etc/containerd/config.toml <<'EOF'
version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10.1"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "/etc/cni/net.d"
EOF
# One bridge per node with a pod subnet of its own: pods of different nodes never need to reach each other here.
cat > /etc/cni/net.d/10-kubesched.conflist <<EOF
{"cniVersion": "1.0.0", "name": "kubesched-pods", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$subnet"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
systemctl restart containerd
install -m 0755 "$in/kubelet" /usr/bin/kubelet
install -m 0600 "$in/kubelet.conf" /etc/kubernetes/kubelet.conf
install -m 0644 "$in/ca.crt" /etc/kubernetes/pki/ca.crt
[ ! -s "$in/scheduler.conf" ] || install -m 0600 "$in/scheduler.conf" /etc/kubernetes/scheduler.conf

# The kubelet config; staticPodPath as the layout says. failCgroupV1: these hosts mount cgroup v1 (hybrid).
kubelet_config() { # staticPodPath
  cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
staticPodPath: $1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: /etc/kubernetes/pki/ca.crt}
authorization: {mode: Webhook}
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
failSwapOn: false
resolvConf: /etc/resolv.conf
evictionHard: {memory.available: 50Mi, nodefs.available: 2%, imagefs.available: 2%}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
serializeImagePulls: false
EOF
}
# kubeadm's kubelet unit as the packages ship it, kubeadm's drop-in and flags file.
install -d /etc/systemd/system/kubelet.service.d
cat > /etc/systemd/system/kubelet.service <<'EOF'
[Unit]
Description=kubelet: The Kubernetes Node Agent
Wants=containerd.service
After=containerd.service
[Service]
ExecStart=/usr/bin/kubelet
Restart=always
RestartSec=2
[Install]
WantedBy=multi-user.target
EOF
cat > /etc/systemd/system/kubelet.service.d/10-kubeadm.conf <<'EOF'
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
EOF
# kubeadm writes the node IP here when it is configured; the node name is the host name unless --name differs.
override=""; [ "$name" = "$(hostname)" ] || override=" --hostname-override=$name"
echo "KUBELET_KUBEADM_ARGS=\"--node-ip=$node_ip$override\"" > /var/lib/kubelet/kubeadm-flags.env
case "$layout" in
  kubeadm)  # staticPodPath in kubeadm's config file
    kubelet_config "$manifest_dir" > /var/lib/kubelet/config.yaml
    : > /etc/default/kubelet ;;
  flag)     # --pod-manifest-path overrides kubeadm's staticPodPath
    kubelet_config /etc/kubernetes/manifests > /var/lib/kubelet/config.yaml
    echo "KUBELET_EXTRA_ARGS=\"--pod-manifest-path=$manifest_dir\"" > /etc/default/kubelet ;;
  custom_config)  # a second --config (the last one wins) names another file with its own staticPodPath
    kubelet_config /etc/kubernetes/manifests > /var/lib/kubelet/config.yaml
    install -d /etc/kubelet
    kubelet_config "$manifest_dir" > /etc/kubelet/custom.yaml
    echo "KUBELET_EXTRA_ARGS=--config=/etc/kubelet/custom.yaml" > /etc/default/kubelet ;;
  *) echo "node-up.sh: unknown layout $layout" >&2; exit 2 ;;
esac

if [ -n "$kubeadm_scheduler" ]; then
  "$(dirname "$0")/kubeadm-scheduler-manifest.sh" "$kubeadm_scheduler" > "$manifest_dir/kube-scheduler.yaml"
  chmod 0600 "$manifest_dir/kube-scheduler.yaml"
fi

i=0
until ctr version >/dev/null 2>&1; do i=$((i + 1)); [ $i -lt 100 ] || { echo "containerd did not start" >&2; exit 1; }; sleep 0.1; done
elapsed "containerd up"
for tar in "$in"/images/*.tar; do
  [ -e "$tar" ] || continue
  ctr -n k8s.io images import --no-unpack=false "$tar" >/dev/null
done
elapsed "images imported"
if [ -s "$in/crictl" ]; then
  install -m 0755 "$in/crictl" /usr/local/bin/crictl
  printf 'runtime-endpoint: unix:///run/containerd/containerd.sock\nimage-endpoint: unix:///run/containerd/containerd.sock\n' > /etc/crictl.yaml
fi
if [ -n "$without_ctr" ]; then
  install -d /usr/local/lib/kubesched-node
  mv "$(command -v ctr)" /usr/local/lib/kubesched-node/ctr
fi
systemctl daemon-reload
systemctl enable --now kubelet >/dev/null 2>&1
i=0
until [ "$(curl -fsS http://127.0.0.1:10248/healthz 2>/dev/null)" = ok ]; do
  i=$((i + 1))
  [ $i -lt 300 ] || { echo "node-up.sh: the kubelet did not answer /healthz within 60 s" >&2; journalctl -u kubelet --no-pager | tail -20 >&2; exit 1; }
  sleep 0.2
done
elapsed "kubelet healthy"

# Pods that talk to the API server in-cluster (the deployment role's schedulers) reach it through the `kubernetes`
# Service, 10.96.0.1:443, whose endpoint is ADDRESS:PORT: the real kube-proxy routes it when it is given (iptables
# mode; conntrack.maxPerCore 0 skips the sysctls a container cannot set), else the two DNAT rules kube-proxy would
# write for that one Service.
if [ -n "$api_service" ]; then
  if [ -s "$in/kube-proxy" ] && [ -s "$in/kube-proxy.conf" ]; then
    install -m 0755 "$in/kube-proxy" /usr/local/bin/kube-proxy
    install -m 0600 "$in/kube-proxy.conf" /etc/kubernetes/kube-proxy.conf
    cat > /etc/kubernetes/kube-proxy-config.yaml <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: /etc/kubernetes/kube-proxy.conf}
mode: iptables
clusterCIDR: 10.244.0.0/16
hostnameOverride: $name
conntrack: {maxPerCore: 0}
EOF
    cat > /etc/systemd/system/kube-proxy.service <<'EOF'
[Unit]
Description=kube-proxy
After=network-online.target
[Service]
ExecStart=/usr/local/bin/kube-proxy --config=/etc/kubernetes/kube-proxy-config.yaml
Restart=always
RestartSec=2
[Install]
WantedBy=multi-user.target
EOF
    systemctl daemon-reload
    systemctl enable --now kube-proxy >/dev/null 2>&1
    # Not waited for: its /healthz answers only once the Node exists and its rules are synced; the pods that need
    # the Service (and the tests that start them) wait for readiness anyway.
    elapsed "kube-proxy started"
  else
    for chain in PREROUTING OUTPUT; do
      iptables -t nat -C "$chain" -d 10.96.0.1/32 -p tcp --dport 443 -j DNAT --to-destination "$api_service" 2>/dev/null \
        || iptables -t nat -A "$chain" -d 10.96.0.1/32 -p tcp --dport 443 -j DNAT --to-destination "$api_service"
    done
    elapsed "kubernetes Service routed to $api_service (no kube-proxy given)"
  fi
fi
