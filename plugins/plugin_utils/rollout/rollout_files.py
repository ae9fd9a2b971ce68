# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every file a master should have, per resolved instance, for the scheduler_rollout module's host side (the engine).

The two kinds differ only in what they render (a unit, or a static pod manifest) and where it goes; the engine does
the rest the same way for both. Files are listed in write order: config and kubeconfig first, what makes the
scheduler (re)start last. Pure Python: no Ansible imports.
"""

from __future__ import annotations

import copy

from ansible_collections.kubesched.schedulers.plugins.module_utils._files import sha256
from ansible_collections.kubesched.schedulers.plugins.module_utils._offline_scheduler import PREFLIGHT_KUBECONFIG
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.named_files import named_files
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import CHECKSUM_ANNOTATION
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import health_paths
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import dump_yaml, parse_text
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.static_pod_manifest import (
    is_scheduler_pod, scheduler_container, static_pod_manifest, to_manifest_yaml)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.systemd_unit import systemd_unit, unit_name
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout import temporary_standby


class RolloutError(Exception):
    """A file on the host this rollout must not touch, worded for the operator."""


def _named_files(instance):
    config, _strict, error = parse_text(instance["config_rendered"])
    return [] if error or not isinstance(config, dict) else named_files(config)


def _file(path, content, owner="root", group="root", mode="0600", secret=False):
    return {"path": path, "content": content, "owner": owner, "group": group, "mode": mode, "secret": secret}


def _removes_kubeconfig(instance, instances):
    """Whether an absent instance's kubeconfig goes with it: only one the role wrote (kubeconfig_content) and no
    instance that stays uses (a kubeconfig given to several instances is removed with the last of them; one the
    role did not write, such as kubeadm's scheduler.conf, always stays)."""
    return instance["kubeconfig_content_given"] and not any(
        other["state"] == "present" and other["kubeconfig"] == instance["kubeconfig"] for other in instances)


def _gate(instance):
    return {"port": instance["secure_port"], "health_url": instance["health_url"]}


def _preflight(instance, flags, **where):
    """What the master's own kube-scheduler is run with offline (module_utils/_offline_scheduler.py): the new config
    with its kubeconfig replaced by the run's offline one (the real one may name a live API server), and the flags
    the instance will run with. ``where``: the static pod's command, image, mounts and host binary."""
    config, _strict, _error = parse_text(instance["config_rendered"])
    config = copy.deepcopy(config)
    config.setdefault("clientConnection", {})["kubeconfig"] = PREFLIGHT_KUBECONFIG
    return dict({"config": dump_yaml(config), "flags": list(flags), "secret": bool(instance["config_has_secrets"])},
                **where)


def _pod_preflight(instance, pod, host_binary, manifest_dir, version):
    """The manifest's own command, image and hostPath volumes (read-only where it mounts them), and the kubelet's
    directory (where a master without ctr or podman has its kubelet run the image as a static pod); with a host
    binary, the release whose minor it must be of."""
    container = scheduler_container(pod)
    host_paths = dict((volume["name"], volume["hostPath"]["path"]) for volume in pod["spec"].get("volumes") or []
                      if isinstance(volume, dict) and isinstance(volume.get("hostPath"), dict))
    mounts = [{"host": host_paths[mount["name"]], "container": mount["mountPath"]}
              for mount in container.get("volumeMounts") or [] if mount.get("name") in host_paths]
    where = {"command": container["command"][0], "image": container["image"], "mounts": mounts,
             "manifest_dir": manifest_dir}
    if host_binary:
        where.update(binary=host_binary, version=version)
    return _preflight(instance, container["command"][1:], **where)


def _offset(settings):
    return settings.get("standby_port_offset", temporary_standby.DEFAULT_PORT_OFFSET)


def _standby_instance(instance, instances, settings):
    """The instance as its temporary standby (plugin_utils/rollout/temporary_standby.py), checked against the master's
    other instances for a clash of names or ports."""
    try:
        return temporary_standby.standby_instance(instance, _offset(settings), [other for other in instances if other is not instance],
                                                  health_paths(settings["version"])["readiness"])
    except temporary_standby.StandbyError as exc:
        raise RolloutError(str(exc)) from None


# --- systemd: a unit per instance, the binary behind one stable link -------------------------------------------

def systemd_paths(instance, unit_dir):
    return {"unit": "%s/%s" % (unit_dir.rstrip("/"), unit_name(instance))}


def systemd_host(instances, settings):
    """The host side's arguments for a systemd master. ``settings``: unit_dir, config_dir, binary_link,
    binary_path, version, user, group."""
    group, user = settings["group"], settings["user"]
    entries = []
    for instance in instances:
        unit_path = systemd_paths(instance, settings["unit_dir"])["unit"]
        entry = {"name": instance["name"], "state": instance["state"], "unit": unit_name(instance)}
        if instance["state"] == "absent":
            # Removed in reverse order: what runs goes first, the certificate it served with last.
            entry["files"] = [{"path": path} for path in instance["serving_cert_files"]] + [{"path": instance["config_path"]}]
            if _removes_kubeconfig(instance, instances):
                entry["files"].append({"path": instance["kubeconfig"]})
            entry["files"].append({"path": unit_path})
            # A standby a killed run left for it goes with it (it would keep running, standing in for nothing).
            entry["standby_leftover"] = temporary_standby.leftover(instance, "systemd", _offset(settings))
            entries.append(entry)
            continue
        files = [_file(instance["config_path"], instance["config_rendered"], "root", group, "0640",
                       instance["config_has_secrets"])]
        if instance["kubeconfig_content_given"]:
            files.append(_file(instance["kubeconfig"], instance["kubeconfig_content"], user, group, "0600", True))
        files.append(_file(unit_path, systemd_unit(instance, settings["binary_link"], user, group), mode="0644"))
        entry.update(files=files, named_files=_named_files(instance), preflight=_preflight(instance, instance["flags"]),
                     **_gate(instance))
        entry["standby_leftover"] = temporary_standby.leftover(instance, "systemd", _offset(settings))
        if instance["name"] in settings.get("standbys", ()):
            standby = _standby_instance(instance, instances, settings)
            entry["standby"] = temporary_standby.systemd_standby(
                standby, systemd_unit(standby, settings["binary_path"], user, group), files[0])
        entries.append(entry)
    return {
        "kind": "systemd",
        "directories": [{"path": settings["config_dir"], "owner": "root", "group": group, "mode": "0750"}],
        "link": {"path": settings["binary_link"], "src": settings["binary_path"]},
        "binary": {"path": settings["binary_path"], "version": settings["version"]},
        "accounts": {"user": user, "group": group},
        "instances": entries,
    }


# --- static pods: a manifest per instance in the kubelet's directory ------------------------------------------

def static_pod_paths(instance, manifest_dir, state_dir):
    return {"manifest": "%s/%s.yaml" % (manifest_dir.rstrip("/"), instance["name"]),
            "adopted": "%s/adopted/%s.yaml" % (state_dir.rstrip("/"), instance["name"])}


def static_pod_reads(instances, state_dir):
    """What the controller must read from the host before it can render, besides each instance's current manifest
    (read by name in the kubelet's directory, found in the same call): the adopted manifests, and the kubeconfigs
    this role does not write (their checksum restarts the pod)."""
    paths = []
    for instance in instances:
        paths.append(static_pod_paths(instance, "", state_dir)["adopted"])
        if instance["state"] == "present" and not instance["kubeconfig_content_given"]:
            paths.append(instance["kubeconfig"])
    return sorted(set(paths))


def check_outside(manifest_dir, directories):
    """The kubelet runs every file of its directory: nothing this role stores may live there."""
    for directory in directories:
        if (directory.rstrip("/") + "/").startswith(manifest_dir.rstrip("/") + "/"):
            raise RolloutError("%s is inside the static pod directory %s; the kubelet would run what is stored there. "
                               "Choose a directory outside it." % (directory, manifest_dir))


def _pod(read, path):
    entry = read.get(path) or {}
    if not entry.get("exists") or entry.get("content") is None:
        return None, None
    pod, _strict, error = parse_text(entry["content"])
    return (pod if not error and isinstance(pod, dict) else {}), entry["content"]


def static_pod_host(instances, settings, read):
    """The host side's arguments for a static-pod master, and a drift report per present instance.
    ``settings``: manifest_dir, config_dir, state_dir, version, preflight_binary (a host binary of the image's build
    for the offline run; empty: the image's own). ``read``: the host side's answer for
    static_pod_reads()."""
    manifest_dir, state_dir = settings["manifest_dir"], settings["state_dir"]
    entries, drift = [], {}
    for instance in instances:
        where = static_pod_paths(instance, manifest_dir, state_dir)
        current, current_text = _pod(read, where["manifest"])
        ours = current is not None and CHECKSUM_ANNOTATION in ((current.get("metadata") or {}).get("annotations") or {})
        if current is not None and not ours and not is_scheduler_pod(current):
            raise RolloutError(
                "%s was not written by this role and does not run kube-scheduler; %s. Rename the instance %s or move "
                "that manifest out of the manifest directory." % (
                    where["manifest"], "it is left alone" if instance["state"] == "absent" else "it is not taken over",
                    instance["name"]))
        entry = {"name": instance["name"], "state": instance["state"]}
        if instance["state"] == "absent":
            # Removed in reverse order: the manifest first (the kubelet stops the pod), its certificate last.
            entry["files"] = [{"path": path} for path in instance["serving_cert_files"]] + [{"path": instance["config_path"]}]
            if _removes_kubeconfig(instance, instances):
                entry["files"].append({"path": instance["kubeconfig"]})
            entry["files"] += [{"path": where["adopted"]}, {"path": where["manifest"]}]
            entry["port"] = instance["secure_port"]  # the engine waits until the kubelet has stopped the pod
            entry["standby_leftover"] = temporary_standby.leftover(instance, "static_pod", _offset(settings),
                                                                   manifest_dir)
            entries.append(entry)
            continue
        # A manifest without our annotation was written by kubeadm (or someone else): it is adopted, and kept
        # outside the manifest directory so later runs build on it.
        base = current if current is not None and not ours else _pod(read, where["adopted"])[0]
        if instance["kubeconfig_content_given"]:
            kubeconfig_sum = sha256(instance["kubeconfig_content"])
        else:
            kubeconfig_sum = (read.get(instance["kubeconfig"]) or {}).get("sha256") or "absent"
        checksum = sha256("%s:%s" % (instance["config_checksum"], kubeconfig_sum))
        pod = static_pod_manifest(instance, settings["version"], checksum, base or None,
                                  instance["image"] if instance.get("image_given") else None)
        manifest = to_manifest_yaml(pod)
        files = [_file(instance["config_path"], instance["config_rendered"], secret=instance["config_has_secrets"])]
        if instance["kubeconfig_content_given"]:
            files.append(_file(instance["kubeconfig"], instance["kubeconfig_content"], secret=True))
        if current is not None and not ours:
            files.append(_file(where["adopted"], current_text))
        files.append(_file(where["manifest"], manifest))
        entry.update(files=files, named_files=_named_files(instance),
                     preflight=_pod_preflight(instance, pod, settings.get("preflight_binary"), manifest_dir,
                                              settings["version"]),
                     **_gate(instance))
        entry["standby_leftover"] = temporary_standby.leftover(instance, "static_pod", _offset(settings), manifest_dir)
        if instance["name"] in settings.get("standbys", ()):
            standby = _standby_instance(instance, instances, settings)
            entry["standby"] = temporary_standby.static_pod_standby(
                standby, static_pod_manifest(standby, settings["version"], checksum, base or None,
                                             instance["image"] if instance.get("image_given") else None),
                manifest_dir, files[0])
        entries.append(entry)
        drift[instance["name"]] = {
            "manifest": where["manifest"],
            "adopted": bool(base),
            "checksum": checksum,
            "reason": ("the manifest is missing" if current is None
                       else "the manifest was rewritten without the scheduler config (kubeadm upgrade?)" if not ours
                       else "the manifest differs from what this role writes" if manifest != current_text
                       else "the config or kubeconfig changed since the manifest was written"),
        }
    return {
        "kind": "static_pod",
        "directories": [{"path": settings["config_dir"], "owner": "root", "group": "root", "mode": "0700"},
                        {"path": "%s/adopted" % state_dir.rstrip("/"), "owner": "root", "group": "root", "mode": "0700"}],
        "instances": entries,
    }, drift
