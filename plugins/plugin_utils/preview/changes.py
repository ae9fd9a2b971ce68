# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a rollout's Check job previews: the scheduler names whose placement a change of configuration may move, per
cluster, each as a pair of configurations of that name's profile alone (the one running, the proposed one), and the
lines that report the previews.

A master's plan (the rollout engine's answer in check mode) carries a diff per file: the text running now (before)
and the text the change writes (after). The scheduler configurations among them are the files whose text is a
KubeSchedulerConfiguration; a name changes when its profile differs, or when a field of the configuration outside
the profiles that bears on placement differs (percentageOfNodesToScore, the backoffs, parallelism, extenders), not
for leader election, the client connection or the endpoints. A new name (nothing runs it now) and a removed one have
nothing to compare and are said so, not previewed.
"""

from __future__ import annotations

import json

import yaml

KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER = "default-scheduler"
# Fields of a configuration that do not bear on where a pod goes.
NOT_PLACEMENT = frozenset(("apiVersion", "kind", "profiles", "leaderElection", "clientConnection", "healthzBindAddress",
                           "metricsBindAddress", "enableProfiling", "enableContentionProfiling", "delayCacheUntilActive"))

ENABLED = "kube_scheduler_rollout_preview"
REQUIRED = "kube_scheduler_rollout_preview_required"
KUBECONFIG = "kube_scheduler_rollout_preview_kubeconfig"
CONTEXT = "kube_scheduler_rollout_preview_context"
BINARIES = "kube_scheduler_rollout_preview_binaries"
# The scheduler-plugins release whose scheduler the cluster runs (the binaries' kube_scheduler is then its build).
SCHEDULER_PLUGINS = "kube_scheduler_rollout_preview_scheduler_plugins_version"
VERSION = "kube_scheduler_version"


def configuration(text):
    """The KubeSchedulerConfiguration a file's text holds, or None (a unit, a manifest, a kubeconfig, no file)."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    return loaded if isinstance(loaded, dict) and loaded.get("kind") == KIND else None


def configurations(diff):
    """[(path, before, after)] of the scheduler configurations in a plan's diff (a list of before/after entries, or
    one), either side None when it is not (or no longer, or not yet) a configuration."""
    entries = diff if isinstance(diff, list) else [diff] if isinstance(diff, dict) else []
    out = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        before, after = configuration(entry.get("before")), configuration(entry.get("after"))
        if before is not None or after is not None:
            header = str(entry.get("after_header") or entry.get("before_header") or "")
            out.append((header.split(" (", 1)[0], before, after))
    return out


def _profiles(config):
    return dict(((profile or {}).get("schedulerName") or DEFAULT_SCHEDULER, profile or {})
                for profile in (config or {}).get("profiles") or [{}])


def _placement_fields(config):
    return dict((key, value) for key, value in (config or {}).items() if key not in NOT_PLACEMENT)


def _alone(config, profile):
    """The configuration with this one profile: the preview places only the pods of the names it serves."""
    return dict(config, profiles=[profile])


def changed_names(before, after):
    """[{name, current, proposed}] for each name ``after`` serves whose placement may change, and
    [{name, note}] for a name that is new or removed (nothing to compare)."""
    old, new = _profiles(before) if before is not None else {}, _profiles(after) if after is not None else {}
    shared_differs = before is not None and after is not None and _placement_fields(before) != _placement_fields(after)
    out = []
    for name, profile in new.items():
        if name not in old:
            out.append({"name": name, "note": "new (nothing runs it now): nothing to compare, not previewed"})
        elif profile != old[name] or shared_differs:
            out.append({"name": name, "current": _alone(before, old[name]), "proposed": _alone(after, profile)})
    out.extend({"name": name, "note": "removed: no pod is placed by it after the change, not previewed"}
               for name in old if name not in new)
    return out


def _settings(host_vars, where):
    """What the preview of a cluster needs on the controller, from its first master's variables, or the problem."""
    problems = []
    kubeconfig = host_vars.get(KUBECONFIG)
    if kubeconfig is None or kubeconfig == "" or kubeconfig == {}:
        problems.append("%s: Required value: the preview reads %s (list verbs only) through a kubeconfig on "
                        "the controller; set it (a path; for a fleet, in each cluster's group variables)" % (KUBECONFIG, where))
    binaries = host_vars.get(BINARIES)
    binaries_dir, paths = None, {}
    if isinstance(binaries, dict) and binaries:
        paths = dict((key, binaries.get(key)) for key in ("etcd", "kube_apiserver", "kube_scheduler") if binaries.get(key))
        unknown = sorted(set(binaries) - {"etcd", "kube_apiserver", "kube_scheduler"})
        if unknown:
            problems.append("%s: Unsupported value: %s: the keys are etcd, kube_apiserver and kube_scheduler"
                            % (BINARIES, ", ".join(str(key) for key in unknown)))
    elif isinstance(binaries, str) and binaries:
        binaries_dir = binaries
    else:
        problems.append("%s: Required value: the preview runs etcd, kube-apiserver and kube-scheduler of the minor of "
                        "%s on the controller; set it to a directory holding them (flat, or as the server release "
                        "tarball unpacks them) or to {etcd, kube_apiserver, kube_scheduler} paths" % (BINARIES, where))
    version = host_vars.get(VERSION)
    context = host_vars.get(CONTEXT) or None
    release = host_vars.get(SCHEDULER_PLUGINS)
    return {"kubeconfig": kubeconfig, "context": context, "binaries": paths, "binaries_dir": binaries_dir,
            "kubernetes_version": None if version is None else str(version),
            "scheduler_plugins_version": str(release) if release not in (None, "") else None,
            "problem": "; ".join(problems) or None}


def previews(masters, clusters):
    """``masters``: [(host, its variables)] of the planned masters in inventory order (each with its plan,
    kube_scheduler_plan); ``clusters``: {host: cluster}. Returns {previews, notes}: one preview per cluster and
    changed name (per distinct pair of configurations, when the cluster's masters disagree on it), naming its
    masters, with what placement_preview needs; notes for names with nothing to compare."""
    found, notes, first = {}, [], {}
    for host, host_vars in masters:
        cluster = clusters[host]
        first.setdefault(cluster, host_vars)
        for _path, before, after in configurations((host_vars.get("kube_scheduler_plan") or {}).get("diff")):
            for change in changed_names(before, after):
                if "note" in change:
                    line = "cluster %s: scheduler name %s is %s" % (cluster, change["name"], change["note"])
                    if line not in notes:
                        notes.append(line)
                    continue
                key = (cluster, change["name"], json.dumps([change["current"], change["proposed"]], sort_keys=True,
                                                           default=str))
                entry = found.setdefault(key, {"cluster": cluster, "scheduler_name": change["name"], "masters": [],
                                               "current": change["current"], "proposed": change["proposed"]})
                if host not in entry["masters"]:
                    entry["masters"].append(host)
    out = []
    for entry in found.values():
        entry.update(_settings(first[entry["cluster"]], "cluster " + entry["cluster"]))
        _no_extenders(entry)
        entry["label"] = "cluster %s, scheduler name %s (%s)" % (entry["cluster"], entry["scheduler_name"],
                                                                 ", ".join(entry["masters"]))
        out.append(entry)
    return {"previews": out, "notes": notes}


def _no_extenders(entry):
    """A configuration with extenders is not previewed (the preview refuses them) and never passed on: an extender's
    TLS keyData would travel with the task's item."""
    if any((entry.get(side) or {}).get("extenders") for side in ("current", "proposed")):
        entry.update(current=None, proposed=None, problem="%sa preview does not call extenders (services of the "
                     "real cluster); this scheduler name is not previewed" % (
                         entry["problem"] + "; " if entry.get("problem") else ""))


CONFIG_KEY = "config.yaml"


def deployment_previews(previous, objects, host_vars):
    """The deployment role's previews: the ConfigMap the cluster holds (``previous``, as read) against the one the
    role renders (in ``objects``); ``host_vars`` holds the preview's variables (the kubeconfig defaulting to the
    role's own, the scheduler-plugins release the role's) and kube_scheduler_version (the role's version). One
    cluster: the role's."""
    def config_of(found):
        maps = [item for item in found or [] if (item or {}).get("kind") == "ConfigMap"]
        return (configuration(((maps[0].get("data") or {}).get(CONFIG_KEY))) if maps else None,
                "%s/%s" % (maps[0]["metadata"].get("namespace"), maps[0]["metadata"]["name"]) if maps else "")

    (before, _name), (after, name) = config_of(previous), config_of(objects)
    out, notes = [], []
    for change in changed_names(before, after):
        if "note" in change:
            notes.append("scheduler name %s (ConfigMap %s) is %s" % (change["name"], name, change["note"]))
            continue
        entry = {"cluster": name, "scheduler_name": change["name"], "masters": [], "current": change["current"],
                 "proposed": change["proposed"],
                 "label": "scheduler name %s (ConfigMap %s)" % (change["name"], name)}
        entry.update(_settings(host_vars, "the cluster of ConfigMap " + name))
        _no_extenders(entry)
        out.append(entry)
    return {"previews": out, "notes": notes}


def report(planned, results):
    """The lines a Check job shows: each preview's table under its cluster and name, or a warning saying why it did
    not run; ``results`` are the preview task's results, one per preview that ran, in order (a problem skips it).
    Returns {lines, failed}: failed names each preview that did not give a table."""
    lines, failed = list(planned.get("notes") or []), []
    ran = iter(results or [])
    for entry in planned.get("previews") or []:
        result = {"failed": True, "msg": entry["problem"]} if entry.get("problem") else next(ran, None) or {
            "failed": True, "msg": "no result"}
        # The task's failed_when: false keeps a failed preview's msg but not its failed flag: a table is success.
        if not result.get("table"):
            reason = "%s: %s" % (entry["label"], result.get("msg") or "the preview did not run")
            failed.append(reason)
            lines.append("WARNING: the placement preview of %s did not run: %s" % (entry["label"], result.get("msg")))
            continue
        lines.append("%s:" % entry["label"])
        lines.extend("  %s" % line for line in result.get("table") or [])
    if not lines:
        lines.append("no scheduler name's configuration changes: nothing to preview")
    return {"lines": lines, "failed": failed}
