# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make before break: a temporary standby for an instance whose lease has no standby elsewhere.

Replacing the only process that elects on a lease leaves the lease unheld until the new process has started and
taken it: about 14 s for a static pod (the kubelet stops the old pod, then starts the new one). So, before such an
instance is replaced, a second kube-scheduler with the NEW config and flags (the ones the plan's preflight checked)
starts beside it on a spare port, as a standby of the same lease: a static pod of its own, or a runtime unit
(/run/systemd/system, gone at the next boot) for systemd. When the old process stops it releases the lease (client-go
releases on a clean stop) and the standby takes it at its next retry; once the replaced instance answers health and
stands by, the temporary one stops, releases the lease, and the instance takes it back at its own next retry.
So the lease is unheld for about one retry period of the standby plus one of the instance.

The standby retries every STANDBY_RETRY_PERIOD (kube-scheduler honours --leader-elect-retry-period beside --config;
measured on v1.37.2 with --write-config-to), or the config's own retryPeriod when that is shorter: never longer than
the config's, so client-go's rule renewDeadline > 1.2 * retryPeriod, which the config already meets, still holds.

Which instances get one is decided for the whole cluster at once (``needed``, from every master's plan): the
instance's master holds the lease, the change restarts the instance, and no other master of the cluster has an
instance on that lease. The rendering (``static_pod_standby``, ``systemd_standby``) is the controller's; the host
engine starts, gates and removes the standby (module_utils/rollout/engine.py, strategies.py). Pure Python.
"""

from __future__ import annotations

import copy

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import (
    CHECKSUM_ANNOTATION, STANDBY_FOR_LABEL, STANDBY_NAME_PREFIX)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.durations import parse_duration
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import parse_text
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.static_pod_manifest import to_manifest_yaml
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.systemd_unit import unit_name

# How far above the instance's port its temporary standby listens (the role variable, and its default).
PORT_OFFSET_VARIABLE = "kube_scheduler_standby_port_offset"
DEFAULT_PORT_OFFSET = 1000
# Whether a master's change uses temporary standbys (a master variable), and its default per kind, as measured with
# `make bench-lease-gaps` on one master (kube-scheduler v1.37.2): a static pod is replaced in about 15 s
# (the kubelet's back-off between stopping the edited pod and starting the new one), 0.35 and 3.31 s unheld with a standby;
# a systemd restart leaves the lease unheld only while the new process starts and syncs its informers (0.43 s on the
# test cluster), less than the standby's hand-back, which waits for the instance's next retry (up to 2.2 retry
# periods: 4.40 s measured). So systemd uses one where the operator asks (a cluster whose informers take longer to
# sync than a retry period).
ENABLED_VARIABLE = "kube_scheduler_make_before_break"
ENABLED_BY_KIND = {"static_pod": True, "systemd": False}
STANDBY_RETRY_PERIOD = "250ms"
# Where a systemd master's temporary standby unit goes: systemd's runtime directory, emptied at boot.
RUNTIME_UNIT_DIR = "/run/systemd/system"
# client-go's default retry period (leaderelection), which kube-scheduler's config defaults to.
_DEFAULT_RETRY_PERIOD = "2s"


class StandbyError(ValueError):
    """A temporary standby cannot be made as asked (a port or a name another instance uses)."""


def standby_name(instance_name):
    return STANDBY_NAME_PREFIX + instance_name


def mark(instance_name):
    """The line by which the engine knows a file for one of the collection's temporary standbys, never by its name
    alone: the standby pod's label as its manifest carries it, and a comment in the first line of its config copy
    and of its unit."""
    return "%s: %s" % (STANDBY_FOR_LABEL, instance_name)


def _marked(content, instance_name):
    return "# %s\n%s" % (mark(instance_name), content)


def _retry_flags(config_rendered):
    """--leader-elect-retry-period for the standby, or nothing when the config already retries as often."""
    config, _strict, error = parse_text(config_rendered or "")
    election = (config or {}).get("leaderElection") if not error and isinstance(config, dict) else None
    current = parse_duration(str((election or {}).get("retryPeriod") or _DEFAULT_RETRY_PERIOD))
    wanted = parse_duration(STANDBY_RETRY_PERIOD)
    return ["--leader-elect-retry-period=%s" % STANDBY_RETRY_PERIOD] if wanted < current else []


def _config_path(instance, name):
    """The standby's copy of the new config, beside the instance's (the directory its process may read)."""
    return "%s/%s.yaml" % (instance["config_path"].rsplit("/", 1)[0], name)


def _runs_from(name, kind, manifest_dir):
    """What makes the standby ``name`` run: its manifest in the kubelet's directory, or its runtime unit."""
    if kind == "static_pod":
        return "%s/%s.yaml" % (manifest_dir.rstrip("/"), name)
    return "%s/%s" % (RUNTIME_UNIT_DIR, unit_name({"name": name}))


def standby_instance(instance, offset, others, readiness_path):
    """The resolved ``instance`` as its temporary standby: its own name, port (the instance's plus ``offset``),
    config path (a copy of the new config beside the instance's) and a shorter leader-election retry period; its
    gate is ``readiness_path`` (versions.health_paths), which answers once its informers synced, so it is in the
    election before the instance stops. ``others``: the master's instances (a standby must not take their names or
    ports)."""
    name = standby_name(instance["name"])
    port = instance["secure_port"] + offset
    if not 0 < port < 65536:
        raise StandbyError("%s: Invalid value: %d: the temporary standby of %s would listen on port %d; choose an offset "
                           "that keeps it between 1 and 65535" % (PORT_OFFSET_VARIABLE, offset, instance["name"], port))
    for other in others:
        if other["name"] == name or (other.get("state") == "present" and other.get("secure_port") == port):
            raise StandbyError("%s: Invalid value: %d: the temporary standby of %s (%s, port %d) would clash with "
                               "instance %s (port %s); choose another offset, or set %s: false"
                               % (PORT_OFFSET_VARIABLE, offset, instance["name"], name, port, other["name"],
                                  other.get("secure_port"), ENABLED_VARIABLE))
    config_path = _config_path(instance, name)
    flags = []
    for flag in instance["flags"]:
        if flag.startswith("--config="):
            flag = "--config=%s" % config_path
        elif flag.startswith("--secure-port="):
            flag = "--secure-port=%d" % port
        flags.append(flag)
    origin = instance["health_url"][:-len(instance["health_path"])]
    health_url = "%s:%d%s" % (origin.rsplit(":", 1)[0], port, readiness_path)
    return dict(instance, name=name, standby_for=instance["name"], secure_port=port, config_path=config_path,
                health_url=health_url, flags=flags + _retry_flags(instance["config_rendered"]))


def _spec(standby, config_file, runs_from, content, unit=None):
    """The engine's spec: the instance's new config file (``config_file``, its spec) copied to the standby's path,
    then what makes it run (``runs_from``, with ``content``)."""
    spec = {"name": standby["name"], "standby_for": standby["standby_for"], "port": standby["secure_port"],
            "health_url": standby["health_url"],
            "files": [dict(config_file, path=standby["config_path"],
                           content=_marked(config_file["content"], standby["standby_for"])),
                      {"path": runs_from, "content": content, "owner": "root", "group": "root",
                       "mode": "0644" if unit else "0600"}]}
    if unit:
        spec["unit"] = unit
    return spec


def static_pod_standby(standby, pod, manifest_dir, config_file):
    """The engine's spec for a static pod standby: the config copy and its manifest, made from the instance's new
    ``pod`` rendered for ``standby`` (standby_instance): a pod name of its own, no checksum annotation, and a label
    naming the instance it stands in for (not kubeadm's component label: nothing may take it for the scheduler)."""
    pod = copy.deepcopy(pod)
    metadata = pod["metadata"]
    metadata["name"] = standby["name"]
    metadata["labels"] = {STANDBY_FOR_LABEL: standby["standby_for"],
                          "tier": "control-plane"}
    annotations = dict(metadata.get("annotations") or {})
    annotations.pop(CHECKSUM_ANNOTATION, None)
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    return _spec(standby, config_file, _runs_from(standby["name"], "static_pod", manifest_dir), to_manifest_yaml(pod))


def systemd_standby(standby, unit_text, config_file):
    """The engine's spec for a systemd standby: the config copy and a runtime unit of its own."""
    return _spec(standby, config_file, _runs_from(standby["name"], "systemd", None),
                 _marked(unit_text, standby["standby_for"]), unit_name(standby))


def leftover(instance, kind, offset, manifest_dir=None):
    """What the engine looks for on every run, so that a standby a killed run left behind is removed: the files,
    unit and port the standby of the resolved ``instance`` would have, and the mark its files carry (a file there
    without it is not the collection's, and is left alone)."""
    name = standby_name(instance["name"])
    found = {"paths": [_runs_from(name, kind, manifest_dir), _config_path(instance, name)],
             "port": instance["secure_port"] + offset, "mark": mark(instance["name"])}
    if kind == "systemd":
        found["unit"] = unit_name({"name": name})
    return found


def needed(masters):
    """Per master (``masters``: rollout_order.master_view of one cluster's masters, each lease reading naming its
    ``instance``), the instances that need a temporary standby, and a line each for the plan."""
    electing = {}
    for master in masters:
        for lease in master["leases"]:
            electing.setdefault(lease, set()).add(master["host"])
    out, lines = {}, []
    for master in masters:
        if not master["pending"] or not master.get("make_before_break", True):
            continue
        for lease, reading in sorted(master["leases"].items()):
            if reading["moves"] and reading["held_here"] and electing[lease] == {master["host"]}:
                out.setdefault(master["host"], []).append(reading["instance"])
                lines.append("%s: %s holds lease %s and no other master stands by for it: a temporary standby with the "
                             "new config takes the lease while %s is replaced (make before break), then hands it back"
                             % (master["host"], reading["instance"], lease, reading["instance"]))
    return out, lines
