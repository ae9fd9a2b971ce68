# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The command-line flags each kube-scheduler version accepts, and what happens to them with --config.

Sources: cmd/kube-scheduler/app/options/options.go (initFlags: misc, secure serving, authentication,
authorization, deprecated, leader election, feature gate, metrics, logs flag sets) and deprecated.go, plus
the kube-scheduler command-line reference of each release. Pure Python: no Ansible imports.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import minor_number

BOOL = "bool"
VALUE = "value"

# Flags of 1.30, by upstream flag set.
_BASE = {
    # misc
    "config": VALUE, "master": VALUE, "write-config-to": VALUE,
    # secure serving (k8s.io/apiserver SecureServingOptions)
    "bind-address": VALUE, "cert-dir": VALUE, "http2-max-streams-per-connection": VALUE,
    "permit-address-sharing": BOOL, "permit-port-sharing": BOOL, "secure-port": VALUE,
    "tls-cert-file": VALUE, "tls-cipher-suites": VALUE, "tls-min-version": VALUE,
    "tls-private-key-file": VALUE, "tls-sni-cert-key": VALUE,
    # authentication (DelegatingAuthenticationOptions)
    "authentication-kubeconfig": VALUE, "authentication-skip-lookup": BOOL,
    "authentication-token-webhook-cache-ttl": VALUE, "authentication-tolerate-lookup-failure": BOOL,
    "client-ca-file": VALUE, "requestheader-allowed-names": VALUE, "requestheader-client-ca-file": VALUE,
    "requestheader-extra-headers-prefix": VALUE, "requestheader-group-headers": VALUE,
    "requestheader-username-headers": VALUE,
    # authorization (DelegatingAuthorizationOptions)
    "authorization-always-allow-paths": VALUE, "authorization-kubeconfig": VALUE,
    "authorization-webhook-cache-authorized-ttl": VALUE, "authorization-webhook-cache-unauthorized-ttl": VALUE,
    # deprecated (DeprecatedOptions)
    "contention-profiling": BOOL, "kube-api-burst": VALUE, "kube-api-content-type": VALUE,
    "kube-api-qps": VALUE, "kubeconfig": VALUE, "pod-max-in-unschedulable-pods-duration": VALUE,
    "profiling": BOOL,
    # leader election (component-base BindLeaderElectionFlags)
    "leader-elect": BOOL, "leader-elect-lease-duration": VALUE, "leader-elect-renew-deadline": VALUE,
    "leader-elect-resource-lock": VALUE, "leader-elect-resource-name": VALUE,
    "leader-elect-resource-namespace": VALUE, "leader-elect-retry-period": VALUE,
    # feature gate
    "feature-gates": VALUE,
    # metrics
    "allow-metric-labels": VALUE, "allow-metric-labels-manifest": VALUE, "disabled-metrics": VALUE,
    "show-hidden-metrics-for-version": VALUE,
    # logs (component-base logs/api/v1)
    "log-flush-frequency": VALUE, "log-json-info-buffer-size": VALUE, "log-json-split-stream": BOOL,
    "log-text-info-buffer-size": VALUE, "log-text-split-stream": BOOL, "logging-format": VALUE,
    "v": VALUE, "vmodule": VALUE,
    # global
    "help": BOOL, "version": VALUE,
}

# Flags added by later minors: minor -> flags.
_ADDED = {
    # compatibility versions (ComponentGlobalsRegistry.AddFlags); SecureServingOptions' --disable-http2-serving
    # (k8s.io/apiserver v0.31; not in v1.30.14's --help, in v1.34.4's and v1.35.4's).
    31: {"emulated-version": VALUE, "disable-http2-serving": BOOL},
    32: {"requestheader-uid-headers": VALUE},
    # component-base compatibility registry (v0.35 registry.go AddFlags; in v1.35.4's --help).
    35: {"min-compatibility-version": VALUE},
    # SecureServingOptions (k8s.io/apiserver v0.36 serving.go; in v1.37.2's --help, not in v1.35.4's).
    36: {"tls-curve-preferences": VALUE},
}

# Flags kube-scheduler no longer has, with what to use instead (operators still copy them from old guides).
REMOVED = {
    "address": "removed in 1.24; use --bind-address",
    "port": "removed in 1.24; the insecure port is gone, use --secure-port",
    "scheduler-name": "removed in 1.23; set profiles[].schedulerName in the config",
    "policy-config-file": "removed in 1.23; scheduling policies were replaced by profiles in the config",
    "policy-configmap": "removed in 1.23; scheduling policies were replaced by profiles in the config",
    "policy-configmap-namespace": "removed in 1.23; scheduling policies were replaced by profiles in the config",
    "use-legacy-policy-config": "removed in 1.23; scheduling policies were replaced by profiles in the config",
    "algorithm-provider": "removed in 1.23; use profiles in the config",
    "hard-pod-affinity-symmetric-weight": "removed in 1.23; set InterPodAffinityArgs in pluginConfig",
    "lock-object-name": "removed; set leaderElection.resourceName in the config",
    "lock-object-namespace": "removed; set leaderElection.resourceNamespace in the config",
    "logtostderr": "removed in 1.26 with the other klog flags",
    "alsologtostderr": "removed in 1.26 with the other klog flags",
    "log-dir": "removed in 1.26 with the other klog flags",
    "log-file": "removed in 1.26 with the other klog flags",
    "log-file-max-size": "removed in 1.26 with the other klog flags",
    "skip-headers": "removed in 1.26 with the other klog flags",
    "skip-log-headers": "removed in 1.26 with the other klog flags",
    "stderrthreshold": "removed in 1.26 with the other klog flags",
    "one-output": "removed in 1.26 with the other klog flags",
    "add-dir-header": "removed in 1.26 with the other klog flags",
    "experimental-logging-sanitization": "removed in 1.26",
}

# Deprecated flags that kube-scheduler ignores when --config is given (options.go ApplyTo honours only the
# leader-election flags then), mapped to the config field that takes their place.
# The one table of the flags the instance model sets itself, and from which field: a second value would contradict it.
MANAGED_FLAGS = {
    "config": "config_path",
    "bind-address": "bind_address",
    "secure-port": "secure_port",
    "authentication-kubeconfig": "kubeconfig",
    "authorization-kubeconfig": "kubeconfig",
}
# Set from serving_cert when the instance has a certificate signed by the cluster CA (serving.py); else the
# operator's to give.
SERVING_FLAGS = ("tls-cert-file", "tls-private-key-file")
# Flags that make kube-scheduler do something other than schedule.
EXITING_FLAGS = {
    "write-config-to": "nothing: it makes kube-scheduler write its config and exit",
    "help": "nothing: it makes kube-scheduler print its help and exit",
    "version": "nothing: it makes kube-scheduler print its version and exit",
}
# --leader-elect* flags override the config file's leaderElection, which the lease checks read.
LEADER_ELECTION_PREFIX = "leader-elect"


def dropped_from_adopted_command(name):
    """Whether an adopted (kubeadm) command loses this flag: the model sets it, it overrides the config's
    leaderElection, or kube-scheduler ignores it next to --config (kubeadm writes --kubeconfig)."""
    return name in MANAGED_FLAGS or name.startswith(LEADER_ELECTION_PREFIX) or name == "kubeconfig"


IGNORED_WITH_CONFIG = {
    "kubeconfig": "clientConnection.kubeconfig",
    "kube-api-qps": "clientConnection.qps",
    "kube-api-burst": "clientConnection.burst",
    "kube-api-content-type": "clientConnection.contentType",
    "profiling": "enableProfiling",
    "contention-profiling": "enableContentionProfiling",
}


def flags_for(version: str | None) -> dict:
    """Every flag (name without dashes) the kube-scheduler of that version accepts -> BOOL or VALUE."""
    minor = minor_number(version)
    flags = dict(_BASE)
    for added_in, added in sorted(_ADDED.items()):
        if minor >= added_in:
            flags.update(added)
    return flags
