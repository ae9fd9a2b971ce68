# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every variable of every role, with the kind (inputs/kinds.py) its value must have, and the checks between variables.

The role_inputs action runs check_role() first in each role, on the controller, before any host is touched;
tests/unit/hardening/test_role_variables.py checks that this table and the roles' meta/argument_specs.yml name the
same variables. kube_scheduler_instances is checked here for its shape only: model.py resolves it (names,
ports, paths, configs, flags) with the same kinds. Pure Python: no Ansible imports.
"""

from __future__ import annotations

import os

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import scheduler_plugins
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.extra_plugins import check_extra_plugins
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.hints import with_hints
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.schema import API_VERSION, KIND
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.redaction import redact_message, secret_values
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs import kinds
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.container_resources import container_resources
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import INSTANCE_LIST


def _scheduler_plugins_release(value, name):
    """kube_scheduler_version's rule (one optional v): "vv0.34.7" would otherwise name an image that does not exist."""
    try:
        return scheduler_plugins.normalise(value, name)
    except scheduler_plugins.SchedulerPluginsError as exc:
        raise kinds.InputError(str(exc)) from None


# One name and one default per concept for the two host roles (tiers as in prometheus-community's _common role:
# these public kube_scheduler_* names, then each role's own, then its internal __kube_scheduler_<role>_* in vars/).
_HOST_COMMON = {
    "kube_scheduler_version": kinds.version,
    "kube_scheduler_instances": INSTANCE_LIST,
    "kube_scheduler_config_dir": kinds.path,
    "kube_scheduler_state_dir": kinds.path,
    "kube_scheduler_health_timeout": kinds.integer(1, 3600, "a number of seconds"),
    "kube_scheduler_health_settle": kinds.integer(0, 600, "a number of seconds"),
    "kube_scheduler_profiling": kinds.boolean,
    "kube_scheduler_lease_check": kinds.boolean,
    "kube_scheduler_lease_rbac_create": kinds.boolean,
    "kube_scheduler_lease_rbac_kubeconfig": kinds.path,
    "kube_scheduler_rollout_hold": kinds.boolean,
    # One rollout at a time (module_utils/rollout/lock.py): seconds before a lock nobody renews is taken over.
    "kube_scheduler_rollout_lock_timeout": kinds.integer(60, 86400, "a number of seconds"),
    # Make before break (temporary_standby.py): the playbooks read the first per master, and set the last.
    "kube_scheduler_make_before_break": kinds.boolean,
    "kube_scheduler_standby_port_offset": kinds.integer(1, 65534, "a number of ports"),
    "kube_scheduler_rollout_standbys": kinds.list_of_at_most(100, "a master runs at most 100 instances"),
    # Serving on the node's address with a certificate of the cluster CA (serving.py; model.py checks the
    # address itself). The CA's content is never shown: its kind names only the type.
    "kube_scheduler_node_address": kinds.optional(kinds.text, empty=""),
    "kube_scheduler_serving_cert_dir": kinds.path,
    "kube_scheduler_serving_cert_extra_sans": kinds.list_of_at_most(100, "extra SANs"),
    "kube_scheduler_serving_ca_cert": kinds.path,
    "kube_scheduler_serving_ca_key": kinds.path,
    "kube_scheduler_serving_ca_cert_content": kinds.optional(kinds.pem, empty=""),
    "kube_scheduler_serving_ca_key_content": kinds.optional(kinds.pem, empty=""),
}

ROLE_VARIABLES = {
    "systemd": dict(_HOST_COMMON, **{
        "kube_scheduler_binary_url": kinds.url,
        "kube_scheduler_binary_checksum": kinds.checksum,
        "kube_scheduler_binary_local_path": kinds.optional_path,
        "kube_scheduler_binary_install_dir": kinds.path,
        "kube_scheduler_binary_link": kinds.path,
        "kube_scheduler_unit_dir": kinds.path,
        "kube_scheduler_system_user": kinds.account,
        "kube_scheduler_system_group": kinds.account,
    }),
    "static_pod": dict(_HOST_COMMON, **{
        "kube_scheduler_manifest_dir": kinds.optional_path,
        "kube_scheduler_static_pod_state_dir": kinds.path,
        "kube_scheduler_static_pod_health_timeout": kinds.integer(1, 3600, "a number of seconds"),
        "kube_scheduler_static_pod_health_settle": kinds.integer(0, 600, "a number of seconds"),
        "kube_scheduler_static_pod_api_kubeconfig": kinds.optional_path,
        "kube_scheduler_static_pod_node_name": kinds.optional(kinds.dns_subdomain),
        "kube_scheduler_static_pod_drift_fail": kinds.boolean,
        "kube_scheduler_static_pod_preflight_binary": kinds.optional_path,
    }),
    "deployment": {
        "kube_scheduler_deployment_state": kinds.one_of("present", "absent"),
        "kube_scheduler_deployment_name": kinds.object_label,
        "kube_scheduler_deployment_namespace": kinds.dns_label,
        "kube_scheduler_deployment_version": kinds.version,
        "kube_scheduler_deployment_image": kinds.image,
        # A scheduler-plugins release ("0.34.7"; which ones the collection knows, scheduler_config says).
        "kube_scheduler_deployment_scheduler_plugins_version": kinds.optional(_scheduler_plugins_release, empty=""),
        "kube_scheduler_deployment_scheduler_plugins_controller": kinds.auto_or_boolean,
        "kube_scheduler_deployment_scheduler_plugins_controller_image": kinds.image,
        "kube_scheduler_deployment_image_pull_policy": kinds.one_of("Always", "IfNotPresent", "Never"),
        "kube_scheduler_deployment_kind": kinds.one_of("Deployment", "DaemonSet"),
        "kube_scheduler_deployment_replicas": kinds.integer(1, 100, "a number of replicas"),
        "kube_scheduler_deployment_config": kinds.any_dict,
        "kube_scheduler_deployment_profiling": kinds.boolean,
        "kube_scheduler_deployment_extra_plugins": kinds.any_list,
        "kube_scheduler_deployment_strict": kinds.boolean,
        "kube_scheduler_deployment_lease_name": kinds.dns_subdomain,
        "kube_scheduler_deployment_secure_port": kinds.port,
        "kube_scheduler_deployment_resources": container_resources,
        "kube_scheduler_deployment_priority_class_name": kinds.optional(kinds.dns_subdomain),
        "kube_scheduler_deployment_priority_classes": kinds.priority_classes,
        "kube_scheduler_deployment_run_as_user": kinds.run_as_user,
        "kube_scheduler_deployment_node_selector": kinds.labels,
        "kube_scheduler_deployment_tolerations": kinds.tolerations,
        "kube_scheduler_deployment_spread_when_unsatisfiable": kinds.one_of("ScheduleAnyway", "DoNotSchedule"),
        "kube_scheduler_deployment_pdb_max_unavailable": kinds.int_or_percent,
        "kube_scheduler_deployment_wait": kinds.boolean,
        "kube_scheduler_deployment_wait_timeout": kinds.integer(1, 86400, "a number of seconds"),
        "kube_scheduler_deployment_settle": kinds.integer(0, 3600, "a number of seconds"),
        "kube_scheduler_deployment_k8s_kubeconfig": kinds.optional(kinds.path_or_dict),
        "kube_scheduler_deployment_k8s_context": kinds.optional(kinds.text),
        # A Check job's placement preview (plugin_utils/preview/changes.py), by the rollout playbooks' names.
        "kube_scheduler_rollout_preview": kinds.boolean,
        "kube_scheduler_rollout_preview_required": kinds.boolean,
        "kube_scheduler_rollout_preview_kubeconfig": kinds.optional(kinds.path_or_dict),
        "kube_scheduler_rollout_preview_context": kinds.optional(kinds.text),
        "kube_scheduler_rollout_preview_binaries": kinds.optional(kinds.path_or_dict),
        # A PodMonitor for prometheus-operator, beside the reader's token Secret (metrics_access.py).
        "kube_scheduler_deployment_pod_monitor": kinds.auto_or_boolean,
        "kube_scheduler_deployment_metrics_reader": kinds.service_account_reference,
    },
    "verify": {
        "kube_scheduler_verify_schedulers": kinds.verify_targets,
        "kube_scheduler_verify_instances": INSTANCE_LIST,
        "kube_scheduler_verify_version": kinds.optional_version,
        "kube_scheduler_verify_discover_deployments": kinds.boolean,
        "kube_scheduler_verify_namespace": kinds.dns_label,
        "kube_scheduler_verify_image": kinds.image,
        "kube_scheduler_verify_tolerate_control_plane": kinds.boolean,
        "kube_scheduler_verify_tolerations": kinds.tolerations,
        "kube_scheduler_verify_node_selector": kinds.labels,
        "kube_scheduler_verify_timeout": kinds.integer(1, 86400, "a number of seconds"),
        "kube_scheduler_verify_health": kinds.boolean,
        "kube_scheduler_verify_api_host": kinds.text,
        "kube_scheduler_verify_k8s_kubeconfig": kinds.optional(kinds.path_or_dict),
        "kube_scheduler_verify_k8s_context": kinds.optional(kinds.text),
        "kube_scheduler_verify_lease_audit": kinds.boolean,
        "kube_scheduler_verify_lease_audit_fail": kinds.boolean,
        "kube_scheduler_verify_metrics": kinds.boolean,
        "kube_scheduler_verify_metrics_token": kinds.optional(kinds.bearer_token, empty=""),
        "kube_scheduler_verify_metrics_reader": kinds.service_account_reference,
        "kube_scheduler_verify_metrics_ca": kinds.path,
        "kube_scheduler_verify_metrics_gate": kinds.boolean,
    },
}

# Old names, still read (and checked) while they are set, with a deprecation warning naming the new one.
DEPRECATED = {
    "kube_scheduler_static_pod_state_dir": "kube_scheduler_state_dir",
    "kube_scheduler_static_pod_health_timeout": "kube_scheduler_health_timeout",
    "kube_scheduler_static_pod_health_settle": "kube_scheduler_health_settle",
}
REMOVED_IN = "2.0.0"

# Variables of this collection that are not role arguments: the playbooks' group name and upgrade targets, and
# what the roles register. They are known names, so they are never reported as typos.
OTHER_VARIABLES = (
    "kube_scheduler_control_plane_group", "kube_scheduler_upgrade_to", "kube_scheduler_upgrade_convert",
    "kube_scheduler_upgrade_kubeconfig", "kube_scheduler_upgrade_context", "kube_scheduler_upgrade_scan_fail",
    "kube_scheduler_rollout_verify", "kube_scheduler_plan", "kube_scheduler_applied",
    "kube_scheduler_static_pod_drift", "kube_scheduler_systemd_pending", "kube_scheduler_static_pod_pending",
    "kube_scheduler_serving_certs",
    # The rollout playbooks' apply order and waves (plugin_utils/rollout/rollout_order.py): a master's cluster, the cluster
    # that goes first, and the order the plan computes.
    "kube_scheduler_cluster", "kube_scheduler_cluster_groups", "kube_scheduler_canary_cluster", "kube_scheduler_rollout",
    # The cluster's rollout Lease (plugin_utils/cluster/rollout_lease.py): the kubeconfig on the controller, its context.
    "kube_scheduler_rollout_lock_kubeconfig", "kube_scheduler_rollout_lock_context",
    # A Check job's placement preview (plugin_utils/preview/changes.py): whether, whether a preview that cannot run
    # fails the job, and what it needs on the controller per cluster.
    "kube_scheduler_rollout_preview", "kube_scheduler_rollout_preview_required", "kube_scheduler_rollout_preview_kubeconfig",
    "kube_scheduler_rollout_preview_context", "kube_scheduler_rollout_preview_binaries",
    "kube_scheduler_rollout_preview_scheduler_plugins_version",
    # playbooks/preview.yml's: the placement preview's options, each as kube_scheduler_preview_<option>.
    "kube_scheduler_preview", "kube_scheduler_preview_kubeconfig", "kube_scheduler_preview_context",
    "kube_scheduler_preview_current", "kube_scheduler_preview_current_src", "kube_scheduler_preview_proposed",
    "kube_scheduler_preview_proposed_src", "kube_scheduler_preview_names", "kube_scheduler_preview_feature_gates",
    "kube_scheduler_preview_binaries", "kube_scheduler_preview_binaries_dir", "kube_scheduler_preview_runs",
    "kube_scheduler_preview_picture", "kube_scheduler_preview_scheduler_plugins_version",
    # playbooks/metrics_access.yml's: the reader (namespace/name), where the targets go, the outside Prometheus'
    # files, and what it registers.
    "kube_scheduler_metrics_reader", "kube_scheduler_metrics_targets_namespace", "kube_scheduler_metrics_ca_file",
    "kube_scheduler_metrics_token_file", "kube_scheduler_metrics_scrape_config_path", "kube_scheduler_metrics",
    "kube_scheduler_metrics_resolved", "kube_scheduler_metrics_crd", "kube_scheduler_metrics_namespace",
)


def known_variables():
    names = set(OTHER_VARIABLES)
    for variables in ROLE_VARIABLES.values():
        names.update(variables)
    return names


def _cross_checks(role, values):
    """What no single variable can say: directories that must not coincide or nest, a link outside them."""
    if role == "systemd":
        directories = {name: values.get(name) for name in (
            "kube_scheduler_config_dir", "kube_scheduler_unit_dir", "kube_scheduler_state_dir",
            "kube_scheduler_binary_install_dir")}
        problems = kinds.separate_directories(directories)
        link = values.get("kube_scheduler_binary_link")
        for name, directory in sorted(directories.items()):
            if link and directory and kinds.inside(link, directory):
                problems.append("kube_scheduler_binary_link: Invalid value: %s: it is inside %s (%s); the link must "
                                "live outside the directories this role manages" % (kinds.shown(link), name, directory))
        if values.get("kube_scheduler_binary_local_path") and not values.get("kube_scheduler_binary_checksum"):
            problems.append("kube_scheduler_binary_local_path: Required value: kube_scheduler_binary_checksum for %s: a "
                            "binary without a checksum is never installed" % kinds.shown(values["kube_scheduler_binary_local_path"]))
        return problems
    if role == "static_pod":
        # The role keeps its state below kube_scheduler_state_dir, or in the old variable's directory while it is set.
        state = "kube_scheduler_static_pod_state_dir" if values.get("kube_scheduler_static_pod_state_dir") \
            else "kube_scheduler_state_dir"
        return kinds.separate_directories({name: values.get(name) for name in (
            "kube_scheduler_config_dir", "kube_scheduler_manifest_dir", state)})
    if role == "deployment":
        if (values.get("kube_scheduler_deployment_namespace"), values.get("kube_scheduler_deployment_lease_name")) \
                == ("kube-system", "kube-scheduler"):
            return ["kube_scheduler_deployment_lease_name: Invalid value: 'kube-scheduler': kube-system/kube-scheduler "
                    "is the default scheduler's lease (both would compete and only one would ever schedule): give "
                    "this scheduler a lease of its own"]
        settle, timeout = (values.get("kube_scheduler_deployment_settle"),
                           values.get("kube_scheduler_deployment_wait_timeout"))
        if settle is not None and timeout is not None and settle >= timeout:
            # The settle is the workload's minReadySeconds, which the API server wants below progressDeadlineSeconds.
            return ["kube_scheduler_deployment_settle: Invalid value: %d: must be less than "
                    "kube_scheduler_deployment_wait_timeout (%d): a pod must have time to become ready before it has "
                    "to stay ready for the settle" % (settle, timeout)]
        return (_deployment_profiles(values.get("kube_scheduler_deployment_config"))
                or _deployment_config(values))
    if role == "verify" and values.get("kube_scheduler_verify_instances") and not values.get("kube_scheduler_verify_version"):
        return ["kube_scheduler_verify_version: Required value: the instances' Kubernetes release selects their health "
                "path; set it, or kube_scheduler_version, to the release the cluster runs, such as \"1.35.4\""]
    return []


def _deployment_profiles(config):
    problems = []
    profiles = (config or {}).get("profiles") if isinstance(config, dict) else None
    for index, profile in enumerate(profiles if isinstance(profiles, list) else []):
        name = profile.get("schedulerName") if isinstance(profile, dict) else None
        if isinstance(name, str) and name:  # a missing name is kube-scheduler's own error, in its words
            try:
                kinds.scheduler_name(name, "kube_scheduler_deployment_config.profiles[%d].schedulerName" % index)
            except kinds.InputError as exc:
                problems.append(str(exc))
    return problems


def _deployment_config(values):
    """kube_scheduler_deployment_config through the config library, so kube-scheduler's errors (and their hints) name
    the user's variable; the role validates the full config (its lease and client connection added) again later."""
    config = values.get("kube_scheduler_deployment_config")
    version = values.get("kube_scheduler_deployment_version")
    extra = values.get("kube_scheduler_deployment_extra_plugins") or []
    if not isinstance(config, dict) or not version:
        return []
    problems = check_extra_plugins(extra, "kube_scheduler_deployment_extra_plugins")
    if problems:
        return problems
    config = dict(config)
    config.setdefault("apiVersion", API_VERSION)
    config.setdefault("kind", KIND)
    try:
        result = process(config=config, kubernetes_version=version, extra_plugins=extra,
                         strict=values.get("kube_scheduler_deployment_strict", True),
                         scheduler_plugins_version=values.get("kube_scheduler_deployment_scheduler_plugins_version")
                         or None)
    except ValueError as exc:
        name = "kube_scheduler_deployment_%s" % ("scheduler_plugins_version" if "scheduler_plugins_version:" in str(exc)
                                                 else "config")
        return ["%s: %s" % (name, str(exc).replace("scheduler_plugins_version: ", "").replace(
            "set kubernetes_version", "set kube_scheduler_deployment_version"))]
    secrets = secret_values(config)
    name = "kube_scheduler_deployment_config"
    size = len((result.rendered or "").encode("utf-8"))
    if not result.errors and size > CONFIGMAP_MAX_BYTES:
        return ["%s: Too long: the rendered configuration is %d bytes, but the API server accepts at most %d bytes of "
                "data in a ConfigMap; move large values (an extender's certificate data) into files the pod mounts"
                % (name, size, CONFIGMAP_MAX_BYTES)]
    return with_hints(result.errors, config, result.version, name, known_plugins=result.plugin_names, render=lambda error: redact_message(
        "%s.%s" % (name, error["message"]) if error.get("field") and error["message"].startswith(error["field"] + ":")
        else "%s%s: %s" % (name, "." + error["field"] if error.get("field") else "", error["message"]), secrets))


# The API server's limit on a ConfigMap's data (core validation: MaxSize of a ConfigMap), where the deployment role
# puts the rendered configuration.
CONFIGMAP_MAX_BYTES = 1024 * 1024


# The paths a role compares again by what they are on the host (symbolic links resolved), per role.
REAL_PATHS = {
    "systemd": ("kube_scheduler_config_dir", "kube_scheduler_unit_dir", "kube_scheduler_state_dir",
                "kube_scheduler_binary_install_dir", "kube_scheduler_binary_link"),
}


# The binary link is resolved by its directory: the link itself points into the install directory.
_RESOLVED_BY_DIRECTORY = ("kube_scheduler_binary_link",)


def paths_to_resolve(written):
    """What the host resolves for check_real_paths (``written``: name -> the path as given): name -> path."""
    return dict((name, os.path.dirname(path) if name in _RESOLVED_BY_DIRECTORY else path) for name, path in written.items())


def real_paths(written, resolved):
    """name -> the path as the host resolves it, from the real paths of paths_to_resolve (``resolved``: path -> real
    path): a link's name is kept below its resolved directory."""
    real = {}
    for name, path in paths_to_resolve(written).items():
        real[name] = resolved[path]
        if name in _RESOLVED_BY_DIRECTORY:
            real[name] = "%s/%s" % (resolved[path].rstrip("/"), os.path.basename(written[name]))
    return real


def check_real_paths(role, written, real):
    """The role's directory checks again, on the paths as the host resolves them (``real``: name -> canonical path,
    from realpath on the host; ``written``: name -> the path as given). Two names for one directory pass every string
    comparison: a config dir that is a symbolic link to the unit dir would put configs among the units."""
    missing = sorted(set(REAL_PATHS.get(role, ())) - set(real))
    if missing:
        return ["real_paths: Required value: %s" % ", ".join(missing)]
    problems = _cross_checks(role, {name: real[name] for name in REAL_PATHS[role]})
    links = "; ".join("%s %r is %r" % (name, written.get(name), real[name])
                      for name in REAL_PATHS[role] if real[name] != written.get(name))
    return ["%s (compared by real path on the host: %s). Nothing was changed." % (problem, links) for problem in problems]


def deprecations(role, values):
    """One message per deprecated variable of the role that is set, naming the variable that replaces it."""
    messages = []
    for old, new in sorted(DEPRECATED.items()):
        if old in ROLE_VARIABLES[role] and old in values:
            messages.append("%s is deprecated and will be removed in %s: use %s, one name for the systemd and "
                            "static_pod roles%s; while %s is set, it wins" % (
                                old, REMOVED_IN, new, " (the directory above each role's own: <dir>/static-pod, "
                                "<dir>/systemd)" if new == "kube_scheduler_state_dir" else "", old))
    return messages


# The kinds whose values the roles read as converted here (role_inputs returns them), never through | bool again.
BOOLEAN_KINDS = (kinds.boolean, kinds.auto_or_boolean)


def booleans(role, normalised):
    """The role's boolean variables (and auto-or-boolean ones) as converted by their kind: what the role renders and
    decides with. Only these: the other values may be secrets, and a task's result can be shown."""
    return dict((name, value) for name, value in normalised.items()
                if ROLE_VARIABLES[role].get(name) in BOOLEAN_KINDS)


def check_role(role, values, present):
    """Check the role's variables: ``values`` maps each set variable to its templated value, ``present`` is every
    variable name the host has (for typos). Returns (normalised values, problems)."""
    role_kinds = ROLE_VARIABLES[role]
    normalised, problems = kinds.check_all(values, role_kinds)
    problems.extend(kinds.unknown_variables(present, known_variables()))
    if not problems:
        problems.extend(_cross_checks(role, normalised))
    return normalised, problems
