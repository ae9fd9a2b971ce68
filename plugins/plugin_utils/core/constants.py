# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The facts of this collection that more than one place needs, each defined once (kubeadm's
cmd/kubeadm/app/constants as the model): the annotation and label keys it writes on Kubernetes objects, kubeadm's
probe timings, the temp-file mark of its one writer, its default directories.

The Python code imports them; the roles' templates and tasks get them through the lookup
``kubesched.schedulers.constants`` (plugins/lookup/constants.py), and
tests/unit/plugins/plugin_utils/core/test_constants.py checks that the rendered objects, the roles' defaults and the docs say the same.
Pure Python: no Ansible imports.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.module_utils._files import TEMP_MARK
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import NEWEST_MINOR

# --- keys on Kubernetes objects -----------------------------------------------------------------------------------
# One domain for every annotation and label this collection writes: the one its documentation has named since the
# first release of the static_pod role (its manifests' checksum annotation).
DOMAIN = "kubesched.schedulers"
# The domain the deployment and verify roles wrote before: still read where objects already deployed carry it
# (the deployment role's ConfigMaps, which the verify role reads to find the in-cluster schedulers), never written.
LEGACY_DOMAIN = "schedulers.kubesched.io"

# A static pod manifest's: sha256 over the rendered config and the kubeconfig, so a change of either restarts it.
CHECKSUM_ANNOTATION = DOMAIN + "/checksum"
# The deployment role's ConfigMap and pod template: sha256 of the rendered config, so a config change rolls the pods.
CONFIG_CHECKSUM_ANNOTATION = DOMAIN + "/config-checksum"
# The deployment role's ConfigMap, read by the verify role: the profiles' scheduler names (comma-separated), the
# lease (namespace/name, empty without leader election), the workload's name and kind/name.
SCHEDULER_NAMES_ANNOTATION = DOMAIN + "/scheduler-names"
LEASE_ANNOTATION = DOMAIN + "/lease"
DEPLOYMENT_ANNOTATION = DOMAIN + "/deployment"
WORKLOAD_ANNOTATION = DOMAIN + "/workload"
# The verify role's test pods: the run they belong to (a label, to find and delete them) and the scheduler name.
VERIFY_RUN_LABEL = DOMAIN + "/verify-run"
VERIFY_SCHEDULER_NAME_ANNOTATION = DOMAIN + "/scheduler-name"
# On the pod of a temporary standby (make before break: temporary_standby.py): the instance it stands in for.
STANDBY_FOR_LABEL = DOMAIN + "/standby-for"
# The deployment role's rollback point (a Secret holding the objects a rollout replaces, until it is confirmed
# ready): the workload it belongs to.
ROLLBACK_POINT_LABEL = DOMAIN + "/rollback-point"
# On the cluster's rollout Lease (cluster/rollout_lease.py): the run that holds it (its start, controller, playbook).
ROLLOUT_RUN_ANNOTATION = DOMAIN + "/rollout-run"
# The names of temporary standbys: reserved, so that no instance is taken for one (or one for an instance).
STANDBY_NAME_PREFIX = "kubesched-standby-"
# The preflight's own static pod, where the kubelet runs it (module_utils/rollout/strategies.py): kubesched-preflight-<instance>-
# <pid>, beside the instances' manifests: an instance of such a name would be a second static pod of that name.
PREFLIGHT_NAME_PREFIX = "kubesched-preflight-"
# What the master's other components are called as systemd units (<name>.service) and kubeadm static pods
# (<name>.yaml): an instance's name names its unit, its manifest and its config, so an instance of one of these names
# would replace that component's unit (a unit the roles did not write is not told apart from theirs), or stop and
# remove it with state: absent.
OTHER_COMPONENTS = ("kubelet", "kube-apiserver", "kube-controller-manager", "cloud-controller-manager", "kube-proxy",
                    "etcd", "containerd", "crio", "docker", "cri-docker")

# What the templates read: the role-facing names of the keys above.
ANNOTATIONS = {
    "checksum": CHECKSUM_ANNOTATION,
    "config_checksum": CONFIG_CHECKSUM_ANNOTATION,
    "scheduler_names": SCHEDULER_NAMES_ANNOTATION,
    "lease": LEASE_ANNOTATION,
    "deployment": DEPLOYMENT_ANNOTATION,
    "workload": WORKLOAD_ANNOTATION,
    "verify_run": VERIFY_RUN_LABEL,
    "verify_scheduler_name": VERIFY_SCHEDULER_NAME_ANNOTATION,
    "rollback_point": ROLLBACK_POINT_LABEL,
    "rollout_run": ROLLOUT_RUN_ANNOTATION,
}
LEGACY_ANNOTATIONS = dict((name, key.replace(DOMAIN + "/", LEGACY_DOMAIN + "/", 1)) for name, key in ANNOTATIONS.items())

# --- kubeadm's probes of its kube-scheduler static pod ---------------------------------------------------------------
# cmd/kubeadm/app/util/staticpod/utils.go LivenessProbe/ReadinessProbe/StartupProbe: the static_pod role writes them
# as kubeadm of each minor does (static_pod_manifest.py) and the deployment role's pods use the same timings. The
# readiness probe's initialDelaySeconds is 0, which Go's omitempty leaves out of the manifest.
PROBE_TIMINGS = {
    "livenessProbe": {"initialDelaySeconds": 10, "timeoutSeconds": 15, "failureThreshold": 8, "periodSeconds": 10},
    "readinessProbe": {"timeoutSeconds": 15, "failureThreshold": 3, "periodSeconds": 1},
    "startupProbe": {"initialDelaySeconds": 10, "timeoutSeconds": 15, "failureThreshold": 24, "periodSeconds": 10},
}

# --- files --------------------------------------------------------------------------------------------------------
# Every temp file of the one writer is ".<name>" + TEMP_MARK + "<random>" beside the file it replaces (defined in
# module_utils/_files.py, which the hosts run).
TEMP_FILE_MARK = TEMP_MARK
# The default directories: the configs and kubeconfigs of the host roles' instances (also where the verify role
# resolves them), their engine's state (backups during a change, adopted kubeadm manifests) below one directory per
# kind, and where the deployment role's pods mount their config.
CONFIG_DIR = "/etc/kubernetes/schedulers"
STATE_DIR = "/var/lib/kubesched"
STATE_SUBDIRS = {"systemd": "systemd", "static_pod": "static-pod"}
POD_CONFIG_DIR = "/etc/kubernetes/kube-scheduler"

# --- metrics --------------------------------------------------------------------------------------------------------
# The token Secret of the metrics reader's ServiceAccount is "<ServiceAccount>" + this: playbooks/metrics_access.yml
# creates it, the verify role reads its token to scrape the schedulers.
METRICS_TOKEN_SECRET_SUFFIX = "-metrics-token"

# What the lookup kubesched.schedulers.constants answers, by name.
FOR_ROLES = {
    "annotations": ANNOTATIONS,
    "legacy_annotations": LEGACY_ANNOTATIONS,
    "probe_timings": PROBE_TIMINGS,
    "temp_file_mark": TEMP_FILE_MARK,
    "metrics_token_secret_suffix": METRICS_TOKEN_SECRET_SUFFIX,
    "config_dir": CONFIG_DIR,
    "state_dir": STATE_DIR,
    "state_subdirs": STATE_SUBDIRS,
    "pod_config_dir": POD_CONFIG_DIR,
    # What a role without a version takes the newest minor to be: the newest released one, never a preview.
    "newest_minor": NEWEST_MINOR,
}
