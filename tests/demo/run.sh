#!/usr/bin/env bash
# make demo: three local masters and a control-plane host (podman containers booting systemd), the real etcd and
# kube-apiserver on that host, playbooks/systemd.yml with two schedulers on each master (tests/demo/group_vars),
# then what runs where: each master's instances and health, who holds each lease, and which scheduler bound a
# test pod for each schedulerName (playbooks/verify.yml), with the attempts of each profile: the demo grants itself
# the metrics reader first (playbooks/metrics_access.yml), as an operator would. The hosts stay up;
# tests/demo/clean.sh removes them.
# Binaries: real ones only, named by KUBE_SCHEDULER_BIN, KUBE_APISERVER_BIN, KUBE_CONTROLLER_MANAGER_BIN (its token
# controller fills the reader's token) and ETCD_BIN (`make demo` has `make binaries` find them: the README's "Real
# Kubernetes binaries for the tests").
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
hosts=(ks-demo-m1 ks-demo-m2 ks-demo-m3 ks-demo-api)
mkdir -p "$state"

# --- the binaries, said in one line each ---
for name in KUBE_SCHEDULER_BIN KUBE_APISERVER_BIN KUBE_CONTROLLER_MANAGER_BIN ETCD_BIN; do
  if [ ! -x "${!name:-}" ]; then
    echo "make demo needs real binaries: $name is not set (make binaries finds them: see the README)" >&2
    exit 1
  fi
done
version="$("$KUBE_SCHEDULER_BIN" --version | sed -n 's/^Kubernetes v//p')"
minor="${version%.*}"
# The shared prepare step (extensions/molecule/resources) reads the same variables a Molecule scenario has.
export "KUBE_SCHEDULER_BIN_${minor/./_}=$KUBE_SCHEDULER_BIN" MOLECULE_KUBE_MINOR="$minor" MOLECULE_SCENARIO_NAME=demo \
  MOLECULE_PROJECT_DIRECTORY="$repo" MOLECULE_EPHEMERAL_DIRECTORY="$state"
echo "kube-scheduler: $KUBE_SCHEDULER_BIN (v$version); kube-apiserver: $KUBE_APISERVER_BIN ($("$KUBE_APISERVER_BIN" --version)); etcd: $ETCD_BIN"

# --- three masters and the control-plane host; existing ones are reused ---
# podman warns on stderr when the machine has no syslog; everything else it says is kept.
podman() { command podman "$@" 2> >(grep -v 'failed to connect to syslog' >&2); }
podman network exists "$network" || podman network create "$network" >/dev/null
for host in "${hosts[@]}"; do
  if ! podman container exists "$host"; then
    podman run --detach --name "$host" --hostname "$host" --network "$network" --systemd=always \
      --label kubesched.demo=true "$image" >/dev/null
  elif [ "$(podman container inspect --format '{{.State.Running}}' "$host")" != true ]; then
    podman start "$host" >/dev/null
  fi
done
echo "hosts: ${hosts[*]} (podman, network $network)"
ansible-playbook -i "$demo/inventory.yml" "$repo/extensions/molecule/resources/prepare.yml" >"$state/prepare.log" \
  || { cat "$state/prepare.log"; exit 1; }
echo "control plane: etcd + kube-apiserver on ks-demo-api, $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["server"])' "$state/control-plane/facts.json")"

# --- converge with the collection's playbook, as an operator would ---
echo "running playbooks/systemd.yml (plans every master at once, applies one master at a time; full log: $state/converge.log)"
start=$(date +%s)
set +e
ansible-playbook -i "$demo/inventory.yml" "$repo/playbooks/systemd.yml" 2>&1 | tee "$state/converge.log" \
  | grep --line-buffered -E '^(fatal|PLAY RECAP|ks-demo-m[0-9] +:)'
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || { echo "playbooks/systemd.yml failed (exit $rc); full log: $state/converge.log"; exit 1; }
echo "playbooks/systemd.yml converged 3 masters in $(( $(date +%s) - start )) s (log: $state/converge.log)"

# --- what runs where, and proof that each scheduler schedules ---
rm -rf "$state/report" && mkdir -p "$state/report"
ansible-playbook -i "$demo/inventory.yml" "$demo/report.yml" -e "demo_report_dir=$state/report" >"$state/report.log" \
  || { cat "$state/report.log"; exit 1; }
echo
for host in "${hosts[@]:0:3}"; do cat "$state/report/$host.txt"; done
echo
# --- the metrics reader: what lets verify read each scheduler's /metrics (the attempts per profile) ---
echo "granting the metrics reader monitoring/prometheus (playbooks/metrics_access.yml; log: $state/metrics-access.log)"
admin="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["admin_kubeconfig"])' "$state/control-plane/facts.json")"
K8S_AUTH_KUBECONFIG="$admin" ansible-playbook -i "$demo/inventory.yml" "$repo/playbooks/metrics_access.yml" \
  -e "kube_scheduler_metrics_scrape_config_path=$state/scrape-configs.yml" >"$state/metrics-access.log" \
  || { cat "$state/metrics-access.log"; echo "playbooks/metrics_access.yml failed"; exit 1; }
# kube-controller-manager's token controller fills the reader's token Secret within a second or so.
python3 "$demo/wait_token.py" "$admin" monitoring prometheus

# The verify role's summary table, read from the json callback's result of its Summary task.
ANSIBLE_STDOUT_CALLBACK=json ansible-playbook -i "$demo/inventory.yml" "$repo/playbooks/verify.yml" >"$state/verify.json" \
  2>"$state/verify.err" || { tail -n 40 "$state/verify.json" "$state/verify.err"; echo "playbooks/verify.yml failed: $state/verify.json"; exit 1; }
python3 - "$state/verify.json" <<'PY'
import json, sys
for play in json.load(open(sys.argv[1]))["plays"]:
    for task in play["tasks"]:
        if task["task"]["name"].endswith(" : Summary"):
            summary = next(iter(task["hosts"].values()))["msg"]
            print("\n".join(summary))
            if not any(line.startswith("Attempts per profile while verify ran") for line in summary):
                sys.exit("verify showed no attempts per profile (see above): the metrics reader did not work")
PY
cat <<EOT

The hosts keep running. Look around:  podman exec -it ks-demo-m1 bash   (systemctl status kube-scheduler)
Run again (idempotent):                make demo
Remove them:                           make demo-clean   (or tests/demo/clean.sh)
EOT
