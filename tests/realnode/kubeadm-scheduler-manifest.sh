#!/bin/sh
# Prints the kube-scheduler static pod manifest `kubeadm init` of VERSION's minor writes (kubeadm's own defaults:
# /etc/kubernetes/scheduler.conf, bind address 127.0.0.1, port 10259). What changes with the minor
# (cmd/kubeadm/app/phases/controlplane/manifests.go, util/staticpod/utils.go):
#   before 1.32  liveness and startup probes on /healthz, no readiness probe
#   1.32, 1.33   /livez for liveness and startup, a readiness probe on /readyz
#   from 1.34    the same, on a named container port: ports [{name: probe-port, containerPort: 10259}],
#                every probe on port: probe-port
# Usage: kubeadm-scheduler-manifest.sh VERSION (1.34.7 or v1.34.7).
set -eu
version=${1#v}
minor=$(echo "$version" | cut -d. -f2)
if [ "$minor" -ge 32 ]; then live=/livez; else live=/healthz; fi
if [ "$minor" -ge 34 ]; then port=probe-port; else port=10259; fi
probe() { # path
  printf '        host: 127.0.0.1\n        path: %s\n        port: %s\n        scheme: HTTPS\n' "$1" "$port"
}
cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: null
  labels:
    component: kube-scheduler
    tier: control-plane
  name: kube-scheduler
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-scheduler
    - --authentication-kubeconfig=/etc/kubernetes/scheduler.conf
    - --authorization-kubeconfig=/etc/kubernetes/scheduler.conf
    - --bind-address=127.0.0.1
    - --kubeconfig=/etc/kubernetes/scheduler.conf
    - --leader-elect=true
    image: registry.k8s.io/kube-scheduler:v$version
    imagePullPolicy: IfNotPresent
    livenessProbe:
      failureThreshold: 8
      httpGet:
$(probe $live)
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    name: kube-scheduler
EOF
if [ "$minor" -ge 34 ]; then
  printf '    ports:\n    - containerPort: 10259\n      name: probe-port\n      protocol: TCP\n'
fi
if [ "$minor" -ge 32 ]; then
  printf '    readinessProbe:\n      failureThreshold: 3\n      httpGet:\n%s\n      periodSeconds: 1\n      timeoutSeconds: 15\n' \
    "$(probe /readyz)"
fi
cat <<EOF
    resources:
      requests:
        cpu: 100m
    startupProbe:
      failureThreshold: 24
      httpGet:
$(probe $live)
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    volumeMounts:
    - mountPath: /etc/kubernetes/scheduler.conf
      name: kubeconfig
      readOnly: true
  hostNetwork: true
  priority: 2000001000
  priorityClassName: system-node-critical
  securityContext:
    seccompProfile:
      type: RuntimeDefault
  volumes:
  - hostPath:
      path: /etc/kubernetes/scheduler.conf
      type: FileOrCreate
    name: kubeconfig
status: {}
EOF
