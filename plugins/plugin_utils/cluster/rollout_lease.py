# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One rollout at a time in a cluster: a coordination.k8s.io/v1 Lease the rollout playbooks hold while they change
its masters.

The master's own lock (module_utils/rollout/lock.py) keeps two runs off one master; two runs of one cluster on two
of its masters (two AWX templates, a job sliced by hosts, two operators) would still change the cluster at once, each
deciding its order, its lease holders last and its temporary standbys without the other. So the run holds a Lease in
the cluster: ``kube-system/kubesched-rollout``, one name per cluster (the Lease lives in the cluster it guards: any
two inventories of one cluster meet on it, whatever they call it). ``holderIdentity`` is the run's id
(plugin_utils/rollout/run_identity.py), an annotation describes the run (start, controller, playbook, AWX job) for
whoever reads it; ``renewTime`` and ``leaseDurationSeconds`` say until when it holds. The run takes it before its
first change, renews it every wave and releases it (deletes it) when it ends; a run that died leaves it to expire.
Another run that finds it held and not expired fails naming the holder; one that finds it expired takes it over
(``leaseTransitions`` + 1) with a warning. Every write is conditional (create, or replace and delete at the
resourceVersion read), so two runs that race never both hold it. Check mode reads only.
"""

from __future__ import annotations

import datetime
import json

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import ROLLOUT_RUN_ANNOTATION

NAMESPACE = "kube-system"
NAME = "kubesched-rollout"
RUN_ANNOTATION = ROLLOUT_RUN_ANNOTATION
# The playbook variables (named in messages).
KUBECONFIG_VARIABLE = "kube_scheduler_rollout_lock_kubeconfig"
TIMEOUT_VARIABLE = "kube_scheduler_rollout_lock_timeout"
# A write that lost a race is tried again from a fresh read, at most this often.
_ATTEMPTS = 5


class LeaseRefused(Exception):
    """Another run holds the cluster's Lease, or the Lease could not be read or written (the message says which)."""


def _utc(moment):
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def describe(run):
    """The run as the operator knows it, from the Lease's holder and annotation."""
    run = run if isinstance(run, dict) else {}
    parts = ["run %s" % (run.get("id") or "(unknown)")]
    for key, label in (("started", "started %s"), ("controller", "on controller %s"), ("playbook", "playbook %s")):
        if run.get(key):
            parts.append(label % run[key])
    if run.get("job"):
        parts.append(str(run["job"]))
    return ", ".join(parts)


def holder_of(lease):
    """(run, renewed, duration) of a Lease as a plain mapping; run is {} when nobody holds it."""
    spec = lease.get("spec") or {}
    identity = spec.get("holderIdentity") or ""
    if not identity:
        return {}, None, None
    try:
        run = json.loads(((lease.get("metadata") or {}).get("annotations") or {}).get(RUN_ANNOTATION) or "{}")
    except ValueError:
        run = {}
    run = dict(run if isinstance(run, dict) else {}, id=identity)
    renewed = spec.get("renewTime") or spec.get("acquireTime")
    if isinstance(renewed, str):
        renewed = datetime.datetime.fromisoformat(renewed.replace("Z", "+00:00"))
    return run, renewed, spec.get("leaseDurationSeconds")


def judge(lease, run, now, where, dead=None):
    """What this run may do with the Lease as read (None: it does not exist): "create", "renew" (its own),
    "take" (nobody's, expired, or a holder ``dead(holder)`` knows dead: with a warning) or LeaseRefused naming the
    holder. Returns (verb, warning)."""
    if lease is None:
        return "create", None
    holder, renewed, duration = holder_of(lease)
    if not holder:
        return "take", None
    if holder["id"] == run["id"]:
        return "renew", None
    if renewed is None or duration is None:
        return "take", "the rollout Lease %s named %s without a renewal time; taken over" % (where, describe(holder))
    age = int((now - renewed).total_seconds())
    shown = "%s, which last renewed it at %s (%d s ago)" % (describe(holder), _utc(renewed), max(age, 0))
    if dead is not None and dead(holder):
        return "take", ("the rollout Lease %s (%s) belongs to a run whose ansible-playbook process on this controller "
                        "is gone (pid %s): %s takes it over" % (where, shown, holder.get("pid"), describe(run)))
    if age > duration:
        return "take", ("the rollout Lease %s (%s) expired %d s ago (its leaseDurationSeconds is %d): its run is taken "
                        "for one that died, and %s takes it over" % (where, shown, age - duration, duration,
                                                                     describe(run)))
    raise LeaseRefused(
        "another rollout holds this cluster: %s (Lease %s); nothing was changed. Two runs changing one cluster's "
        "masters at once would each order them, move their leases and start temporary standbys without the other. "
        "Wait until that run ends (it releases the Lease), or until the Lease expires at %s if that run died (%s "
        "sets its duration); if that run is known to be gone, delete the Lease (kubectl -n %s delete lease %s)" % (
            shown, where, _utc(renewed + datetime.timedelta(seconds=duration)), TIMEOUT_VARIABLE, NAMESPACE, NAME))


class ClusterLock(object):
    """The cluster's rollout Lease through ``api`` (a kubernetes ApiClient), for ``run`` (a mapping with ``id``)."""

    def __init__(self, api, run, duration, now=None, dead=None):
        from kubernetes import client  # pylint: disable=import-outside-toplevel
        self.client = client
        self.api = client.CoordinationV1Api(api)
        self.run = run
        self.duration = int(duration)
        self.now = now or (lambda: datetime.datetime.now(datetime.timezone.utc))
        self.where = "%s/%s" % (NAMESPACE, NAME)
        self.dead = dead  # whether a holder is known dead (a run of this controller whose process is gone)

    def _read(self):
        from kubernetes.client.exceptions import ApiException  # pylint: disable=import-outside-toplevel
        try:
            found = self.api.read_namespaced_lease(NAME, NAMESPACE, _request_timeout=30)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return self.api.api_client.sanitize_for_serialization(found)

    def _body(self, lease, verb):
        now = self.now().astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # a MicroTime
        spec = dict((lease or {}).get("spec") or {})
        if verb != "renew":
            spec["acquireTime"] = now
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + (1 if lease is not None else 0)
        spec.update(holderIdentity=self.run["id"], leaseDurationSeconds=self.duration, renewTime=now)
        metadata = {"name": NAME, "namespace": NAMESPACE,
                    "annotations": {RUN_ANNOTATION: json.dumps(self.run, sort_keys=True)}}
        if lease is not None:
            metadata["resourceVersion"] = lease["metadata"]["resourceVersion"]
            metadata["annotations"] = dict((lease["metadata"].get("annotations") or {}), **metadata["annotations"])
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata, "spec": spec}

    def hold(self, check_mode=False):
        """Take or renew the Lease for this run; returns {verb, warning}. Check mode reads and judges only."""
        from kubernetes.client.exceptions import ApiException  # pylint: disable=import-outside-toplevel
        for _attempt in range(_ATTEMPTS):
            try:
                lease = self._read()
                verb, warning = judge(lease, self.run, self.now(), self.where, self.dead)
                if check_mode:
                    return {"verb": verb, "warning": warning, "changed": False}
                body = self._body(lease, verb)
                if lease is None:
                    self.api.create_namespaced_lease(NAMESPACE, body, _request_timeout=30)
                else:
                    self.api.replace_namespaced_lease(NAME, NAMESPACE, body, _request_timeout=30)
                return {"verb": verb, "warning": warning, "changed": verb != "renew"}
            except ApiException as exc:
                if exc.status == 409:
                    continue  # another writer came first (a race of two runs, or two masters of this one): read again
                raise LeaseRefused(_api_problem("hold", self.where, exc)) from None
            except LeaseRefused:
                raise
            except Exception as exc:  # the API server unreachable: the client raises urllib3's and ssl's errors
                raise LeaseRefused(_unreachable("taken", self.where, exc)) from None
        raise LeaseRefused("the rollout Lease %s kept changing under this run (%d attempts)" % (self.where, _ATTEMPTS))

    def release(self):
        """The Lease goes when this run holds it (deleted at the resourceVersion read); another run's stays."""
        from kubernetes.client.exceptions import ApiException  # pylint: disable=import-outside-toplevel
        for _attempt in range(_ATTEMPTS):
            try:
                lease = self._read()
                if lease is None or holder_of(lease)[0].get("id") != self.run["id"]:
                    return False
                self.api.delete_namespaced_lease(NAME, NAMESPACE, _request_timeout=30, body=self.client.V1DeleteOptions(
                    preconditions=self.client.V1Preconditions(resource_version=lease["metadata"]["resourceVersion"])))
                return True
            except ApiException as exc:
                if exc.status in (404, 409):
                    continue
                raise LeaseRefused(_api_problem("release", self.where, exc)) from None
            except Exception as exc:  # pylint: disable=broad-exception-caught
                raise LeaseRefused(_unreachable("released", self.where, exc)) from None
        return False


def _unreachable(done, where, exc):
    return "the rollout Lease %s could not be %s: the API server did not answer: %s" % (
        where, done, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


def _api_problem(verb, where, exc):
    if exc.status in (401, 403):
        return ("the rollout Lease %s could not be %s: the kubeconfig's user may not (HTTP %s); it needs get, create, "
                "update and delete on leases in %s (docs/hostile-inputs.md, Concurrency)"
                % (where, "taken" if verb == "hold" else "released", exc.status, NAMESPACE))
    return "the rollout Lease %s could not be %s: HTTP %s %s" % (
        where, "taken" if verb == "hold" else "released", exc.status, exc.reason)
