#!/usr/bin/env bash
# make demo: three local masters (podman containers booting systemd), playbooks/systemd.yml with two schedulers on
# each (tests/demo/group_vars), then what runs where. The hosts stay up; tests/demo/clean.sh removes them.
# Binary: KUBE_SCHEDULER_BIN when set, else the official release when dl.k8s.io answers, else the test stand-in.
# Run through `make demo` (it builds the venv and the host image and exports the variables set below).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
demo="$repo/tests/demo"
state="$repo/.build/demo"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$repo/tests/hosts/containers.conf}"
export ANSIBLE_COLLECTIONS_PATH="${ANSIBLE_COLLECTIONS_PATH:-$repo/.build/collections}"
export PYTHONPATH="${PYTHONPATH:-$repo/.build/collections}"
export PATH="$repo/.venv/bin:$PATH"
export ANSIBLE_HOST_KEY_CHECKING=False ANSIBLE_RETRY_FILES_ENABLED=False ANSIBLE_LOCAL_TEMP="$state/ansible-tmp"
image="localhost/kubesched-test-host:bookworm"
network="ks-demo"
hosts=(ks-demo-m1 ks-demo-m2 ks-demo-m3)
version="${KUBE_SCHEDULER_VERSION:-1.34.2}"
mkdir -p "$state"

# --- the binary, said in one line ---
binary_vars=()
if [ -n "${KUBE_SCHEDULER_BIN:-}" ]; then
  version="$("$KUBE_SCHEDULER_BIN" --version | sed -n 's/^Kubernetes v//p')"
  binary_vars=(-e "kube_scheduler_binary_local_path=$KUBE_SCHEDULER_BIN"
               -e "kube_scheduler_binary_checksum=sha256:$(sha256sum "$KUBE_SCHEDULER_BIN" | cut -d' ' -f1)")
  echo "kube-scheduler binary: $KUBE_SCHEDULER_BIN (KUBE_SCHEDULER_BIN), version $version"
else
  arch="$(uname -m)"; arch="${arch/x86_64/amd64}"; arch="${arch/aarch64/arm64}"
  url="https://dl.k8s.io/release/v$version/bin/linux/$arch/kube-scheduler"
  if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)' "$url.sha256" 2>/dev/null; then
    echo "kube-scheduler binary: official release v$version from $url (dl.k8s.io answered), checked against its .sha256"
  else
    standin="$(KUBE_SCHEDULER_STANDIN_BUNDLE="$version" KUBE_SCHEDULER_STANDIN_BUNDLE_TO="$state/kube-scheduler-standin-$version" \
      python3 "$repo/tests/standin/kube-scheduler-standin")"
    binary_vars=(-e "kube_scheduler_binary_local_path=$standin"
                 -e "kube_scheduler_binary_checksum=sha256:$(sha256sum "$standin" | cut -d' ' -f1)")
    echo "kube-scheduler binary: TEST STAND-IN pretending v$version (dl.k8s.io did not answer within 5 s; set KUBE_SCHEDULER_BIN to use a real one)"
  fi
fi

# --- three masters; existing ones are reused ---
podman network exists "$network" || podman network create "$network" >/dev/null
for host in "${hosts[@]}"; do
  if ! podman container exists "$host"; then
    podman run --detach --name "$host" --hostname "$host" --network "$network" --systemd=always \
      --label kubesched.demo=true "$image" >/dev/null
  elif [ "$(podman container inspect --format '{{.State.Running}}' "$host")" != true ]; then
    podman start "$host" >/dev/null
  fi
done
echo "masters: ${hosts[*]} (podman, network $network)"

# --- converge with the collection's playbook, as an operator would ---
ansible-playbook -i "$demo/inventory.yml" "$repo/extensions/molecule/resources/prepare.yml" >"$state/prepare.log" \
  || { cat "$state/prepare.log"; exit 1; }
echo "running playbooks/systemd.yml (one master at a time; full log: $state/converge.log)"
start=$(date +%s)
set +e
ansible-playbook -i "$demo/inventory.yml" "$repo/playbooks/systemd.yml" -e "kube_scheduler_version=$version" \
  "${binary_vars[@]}" 2>&1 | tee "$state/converge.log" | grep --line-buffered -E '^(fatal|PLAY RECAP|ks-demo-m[0-9] +:)'
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || { echo "playbooks/systemd.yml failed (exit $rc); full log: $state/converge.log"; exit 1; }
echo "playbooks/systemd.yml converged 3 masters in $(( $(date +%s) - start )) s (log: $state/converge.log)"

# --- what runs where ---
rm -rf "$state/report" && mkdir -p "$state/report"
ansible-playbook -i "$demo/inventory.yml" "$demo/report.yml" -e "kube_scheduler_version=$version" \
  -e "demo_report_dir=$state/report" >"$state/report.log" || { cat "$state/report.log"; exit 1; }
echo
for host in "${hosts[@]}"; do cat "$state/report/$host.txt"; done
cat <<EOF

The masters keep running. Look around:  podman exec -it ks-demo-m1 bash   (systemctl status kube-scheduler)
Run again (idempotent):                  make demo
Remove them:                             make demo-clean   (or tests/demo/clean.sh)
EOF
