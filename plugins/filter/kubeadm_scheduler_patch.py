# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The part of kubeadm's ClusterConfiguration that makes `kubeadm upgrade` keep a scheduler instance's config.

kubeadm regenerates /etc/kubernetes/manifests/kube-scheduler.yaml on every upgrade from the ClusterConfiguration in
the kube-system/kubeadm-config ConfigMap: its own flags (--authentication-kubeconfig, --authorization-kubeconfig,
--bind-address=127.0.0.1, --kubeconfig, --leader-elect=true) overridden by scheduler.extraArgs, its own volumes
(the kubeconfig) plus scheduler.extraVolumes. So the instance's flags go to extraArgs and its config file (and a
kubeconfig other than kubeadm's) to extraVolumes. kubeadm's --leader-elect=true would override the config file's
leaderElection.leaderElect (kube-scheduler applies leader-election flags over --config), so it is set to the
config's value; --kubeconfig is ignored next to --config and is set to the instance's for clarity.

kubeadm.k8s.io/v1beta4 (kubeadm 1.31 and later) takes extraArgs as a list of {name, value}; v1beta3 (kubeadm 1.30)
as a map. Pure Python apart from the filter class at the end.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import (
    UnsupportedVersion, normalise, since)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs import kinds
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.static_pod_manifest import CONFIG_VOLUME

KUBEADM_SCHEDULER_NAME = "kube-scheduler"
KUBEADM_KUBECONFIG = "/etc/kubernetes/scheduler.conf"
KUBECONFIG_VOLUME = "kubesched-kubeconfig"
_REQUIRED = ("name", "flags", "config_path", "kubeconfig")


class KubeadmPatchError(ValueError):
    """The instance cannot be expressed in kubeadm's ClusterConfiguration."""


def _api_version(kubernetes_version):
    # The collection's one version rule (plugin_utils/core/versions.py): v1.35.4 and 1.35.4 alike, a YAML float named.
    try:
        version = normalise(kubernetes_version)
    except UnsupportedVersion as exc:
        raise KubeadmPatchError(str(exc)) from None
    return "kubeadm.k8s.io/v1beta4" if since("kubeadm_config_v1beta4", version) else "kubeadm.k8s.io/v1beta3"


_KINDS = {"name": "a string", "flags": "a list of --name=value strings", "config_path": "a path",
          "kubeconfig": "a path"}


def _kind(value):
    # isinstance, not type(): Ansible hands filters its own subclasses of dict, list and str.
    for kind, words in ((bool, "a boolean"), (Mapping, "a dict"), (str, "a string"), ((list, tuple), "a list"),
                        ((int, float), "a number"), (type(None), "null")):
        if isinstance(value, kind):
            return words
    return type(value).__name__


def _split(flag):
    if not isinstance(flag, str) or not flag.startswith("--") or "=" not in flag:
        raise KubeadmPatchError("flags: expected --name=value, got %r" % (flag,))
    name, value = flag[2:].split("=", 1)
    return name, value


def kubeadm_scheduler_patch(instance, kubernetes_version):
    """The ClusterConfiguration fragment ({apiVersion, kind, scheduler: {extraArgs, extraVolumes}}) for ``instance``.

    ``instance`` is a resolved, present instance of scheduler_instances (plugin_utils/instances/model.py): ``flags`` is
    its full command line (--config among it), ``config_path`` and ``kubeconfig`` the host files the pod reads.
    Only kubeadm's own scheduler (the instance named kube-scheduler) can be carried by kubeadm.
    """
    if not isinstance(instance, dict):
        raise KubeadmPatchError("expected a resolved scheduler instance (a dict), got %s" % type(instance).__name__)
    missing = [field for field in _REQUIRED if field not in instance]
    if missing:
        raise KubeadmPatchError("not a resolved scheduler instance: no %s (use the instances that "
                                "kubesched.schedulers.scheduler_instances returns)" % ", ".join(missing))
    wrong = [field for field, kind in (("name", str), ("flags", list), ("config_path", str), ("kubeconfig", str))
             if not isinstance(instance[field], kind)]
    if wrong:
        raise KubeadmPatchError("not a resolved scheduler instance: %s (use the instances that "
                                "kubesched.schedulers.scheduler_instances returns)" % ", ".join(
                                    "%s is %s, not %s" % (field, _kind(instance[field]), _KINDS[field]) for field in wrong))
    for field in ("config_path", "kubeconfig"):  # both become hostPaths: the input model's path rule
        try:
            kinds.path(instance[field], field)
        except kinds.InputError as exc:
            raise KubeadmPatchError("instance %s: %s" % (instance.get("name"), exc)) from None
    if instance.get("state", "present") != "present" or not instance["flags"]:
        raise KubeadmPatchError("instance %s is absent: kubeadm's ClusterConfiguration can only carry a running "
                                "scheduler" % instance["name"])
    if instance["name"] != KUBEADM_SCHEDULER_NAME:
        raise KubeadmPatchError(
            "instance %s: kubeadm manages only its own scheduler, the instance named %s (its manifest "
            "kube-scheduler.yaml); the static_pod role's other manifests are not touched by kubeadm upgrade"
            % (instance["name"], KUBEADM_SCHEDULER_NAME))
    api_version = _api_version(kubernetes_version)
    args = dict(_split(flag) for flag in instance["flags"])
    if args.get("config") != instance["config_path"]:
        raise KubeadmPatchError("instance %s: its flags do not carry --config=%s"
                                % (instance["name"], instance["config_path"]))
    args["kubeconfig"] = instance["kubeconfig"]
    args["leader-elect"] = "true" if instance.get("leader_elect", True) else "false"
    volumes = [{"name": CONFIG_VOLUME, "hostPath": instance["config_path"], "mountPath": instance["config_path"],
                "readOnly": True, "pathType": "File"}]
    if instance["kubeconfig"] != KUBEADM_KUBECONFIG:
        volumes.append({"name": KUBECONFIG_VOLUME, "hostPath": instance["kubeconfig"],
                        "mountPath": instance["kubeconfig"], "readOnly": True, "pathType": "FileOrCreate"})
    if api_version.endswith("v1beta4"):
        extra_args = [{"name": name, "value": args[name]} for name in sorted(args)]
    else:
        extra_args = {name: args[name] for name in sorted(args)}
    return {"apiVersion": api_version, "kind": "ClusterConfiguration",
            "scheduler": {"extraArgs": extra_args, "extraVolumes": volumes}}


def _filter(instance, kubernetes_version):
    # Imported here so the pure function above stays importable without Ansible.
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    try:
        return kubeadm_scheduler_patch(instance, kubernetes_version)
    except KubeadmPatchError as exc:
        raise AnsibleFilterError("kubeadm_scheduler_patch: %s" % exc) from exc


class FilterModule(object):  # pylint: disable=too-few-public-methods
    """kubeadm ClusterConfiguration for a kube-scheduler instance."""

    def filters(self):
        return {"kubeadm_scheduler_patch": _filter}
