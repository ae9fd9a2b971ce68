# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""May an instance hold its lease? Asked as the instance itself, from its master, before anything is changed.

kube-scheduler's leader election gets its lease, creates it when it is missing and updates it to renew; without
those rights it starts, answers health, and never leads (kubernetes #39032, kubespray #11134: the bootstrap
``system:kube-scheduler`` ClusterRole grants get/update on the lease named ``kube-scheduler`` only). The check is a
SelfSubjectAccessReview per verb through the instance's kubeconfig (read-only: nothing is stored), and a
SelfSubjectReview for who that identity is, so that the Role and RoleBinding to add can name it. Creating them is
the operator's opt-in and happens in the apply call only, with an administrator's kubeconfig on the master.
Host code: stdlib only.
"""

from __future__ import annotations

import json
import os
import re
import socket
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.kube_api import (
    ApiError, Connection, KubeconfigError, Unreachable)

GROUP = "coordination.k8s.io"
# Verbs asked about the lease by name, and the one asked without a name (RBAC cannot name what does not exist yet).
NAMED_VERBS = ("get", "update")
UNNAMED_VERBS = ("create",)

# The answer per instance: ALLOWED, MISSING (verbs it may not use), or NOT_CHECKED (why: unreachable, unreadable).
ALLOWED, MISSING, NOT_CHECKED = "allowed", "missing", "not checked"


def role_name(lease_name):
    return "kubesched:lease:%s" % lease_name


def subject(username):
    """The RBAC subject of an authenticated user name (a ServiceAccount's token names it as such)."""
    parts = (username or "").split(":")
    if len(parts) == 4 and parts[:2] == ["system", "serviceaccount"]:
        return {"kind": "ServiceAccount", "name": parts[3], "namespace": parts[2]}
    return {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": username}


def rbac_objects(namespace, lease_name, username):
    """The Role and RoleBinding that let ``username`` hold ``namespace/lease_name`` (what kube-scheduler's leader
    election does: get and update the lease by name, create it once)."""
    name = role_name(lease_name)
    labels = {"app.kubernetes.io/managed-by": "kubesched.schedulers"}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "rules": [{"apiGroups": [GROUP], "resources": ["leases"], "resourceNames": [lease_name],
                       "verbs": list(NAMED_VERBS)},
                      {"apiGroups": [GROUP], "resources": ["leases"], "verbs": list(UNNAMED_VERBS)}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": name, "namespace": namespace, "labels": labels},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
               "subjects": [subject(username)]}
    return [role, binding]


def rbac_yaml(objects):
    """The objects as the YAML an operator pastes into kubectl apply -f - (JSON is YAML; one document each)."""
    return "\n".join("---\n" + _yaml_lines(obj, 0) for obj in objects)


def _yaml_lines(value, indent):
    pad = " " * indent
    lines = []
    for key, item in value.items():
        if isinstance(item, dict):
            lines.append("%s%s:\n%s" % (pad, key, _yaml_lines(item, indent + 2)))
        elif isinstance(item, list) and item and isinstance(item[0], dict):
            lines.append("%s%s:" % (pad, key))
            for entry in item:
                text = _yaml_lines(entry, indent + 2)
                lines.append(pad + "- " + text[indent + 2:].rstrip("\n"))
        else:
            lines.append("%s%s: %s" % (pad, key, _scalar(item)))
    return "\n".join(line.rstrip("\n") for line in lines) + "\n"


_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./:-]*")
_SPECIAL = ("true", "false", "null", "yes", "no", "on", "off", "y", "n")


def _scalar(value):
    """A name as plain YAML where YAML reads it back as the same text, else JSON (which YAML reads too)."""
    if isinstance(value, list):
        return "[%s]" % ", ".join(_scalar(item) for item in value)
    if isinstance(value, str) and _PLAIN.fullmatch(value) and value.lower() not in _SPECIAL:
        return value
    return json.dumps(value)


def _kubeconfig_text(spec, files):
    """What the instance will run with: the kubeconfig this rollout writes, else the one on the master."""
    for written in files or []:
        if written.get("path") == spec["kubeconfig"] and written.get("content") is not None:
            return written["content"]
    with open(spec["kubeconfig"]) as handle:
        return handle.read()


def check(spec, files=None):
    """{status, identity, missing, lease, detail, rbac (objects), rbac_yaml} for one instance. ``spec``:
    kubeconfig, namespace, name."""
    lease = "%s/%s" % (spec["namespace"], spec["name"])
    out = {"lease": lease, "kubeconfig": spec["kubeconfig"], "identity": None, "missing": [],
           "holder": None, "held_here": False, "holder_detail": "not read"}
    try:
        text = _kubeconfig_text(spec, files)
        api = Connection.from_kubeconfig(text, os.path.dirname(spec["kubeconfig"]))
    except (OSError, UnicodeDecodeError) as exc:
        return dict(out, status=NOT_CHECKED, detail="kubeconfig %s cannot be read: %s" % (spec["kubeconfig"], exc))
    except KubeconfigError as exc:
        return dict(out, status=NOT_CHECKED, detail="kubeconfig %s: %s" % (spec["kubeconfig"], exc))
    with api:
        try:
            # The reviews and the lease's holder are independent requests, each on a connection of its own: asked
            # side by side, the plan waits for the slowest answer rather than their sum.
            verbs = NAMED_VERBS + UNNAMED_VERBS
            with ThreadPoolExecutor(max_workers=2 + len(verbs)) as pool:
                who = pool.submit(_who, api)
                holder = pool.submit(_holder, api, spec["namespace"], spec["name"])
                allowed = [(verb, pool.submit(_allowed, api, verb, spec["namespace"],
                                              spec["name"] if verb in NAMED_VERBS else None)) for verb in verbs]
            out["identity"] = who.result()
            out["missing"] = [verb for verb, future in allowed if not future.result()]
            out.update(holder.result())
        except Unreachable as exc:
            return dict(out, status=NOT_CHECKED, detail="the API server is unreachable from this master (%s)" % exc)
        except ApiError as exc:
            return dict(out, status=NOT_CHECKED, detail="the API server refused the review: %s" % exc)
    if not out["missing"]:
        return dict(out, status=ALLOWED, detail="%s may get, update and create lease %s" % (out["identity"], lease))
    objects = rbac_objects(spec["namespace"], spec["name"], out["identity"])
    return dict(out, status=MISSING, rbac=objects, rbac_yaml=rbac_yaml(objects),
                detail="%s may not %s lease %s" % (out["identity"], "/".join(out["missing"]), lease))


def _who(api):
    answer = api.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                         {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    return ((answer.get("status") or {}).get("userInfo") or {}).get("username") or "(unknown identity)"


def _holder(api, namespace, name):
    """Who holds the lease now, and whether it is this master: kube-scheduler's identity is ``<hostname>_<uuid>``
    (os.Hostname, the kernel's node name, as socket.gethostname() reads it). The plan changes the masters that hold no
    lease first and the holders last, so each lease moves once (plugin_utils/rollout/rollout_order.py). Best effort: a
    lease that cannot be read leaves its holder unknown (null, with the reason), never fails the plan."""
    try:
        lease = api.request("GET", "/apis/%s/v1/namespaces/%s/leases/%s" % (GROUP, namespace, name))
    except ApiError as exc:
        if exc.status == 404:
            return {"holder": "", "held_here": False, "holder_detail": "no lease yet"}
        return {"holder": None, "held_here": False, "holder_detail": "the lease could not be read: %s" % exc}
    holder = (lease.get("spec") or {}).get("holderIdentity") or ""
    return {"holder": holder, "held_here": bool(holder) and holder.rsplit("_", 1)[0] == socket.gethostname(),
            "holder_detail": "held by %s" % holder if holder else "unheld (released)"}


def _allowed(api, verb, namespace, name):
    attributes = {"group": GROUP, "resource": "leases", "verb": verb, "namespace": namespace}
    if name:
        attributes["name"] = name
    answer = api.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                         {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                          "spec": {"resourceAttributes": attributes}})
    return bool((answer.get("status") or {}).get("allowed"))


def create(objects, admin_kubeconfig):
    """Create (or replace) the Role and RoleBinding with an administrator's kubeconfig on the master; returns the
    names done. Raises KubeconfigError, Unreachable or ApiError."""
    with open(admin_kubeconfig) as handle:
        text = handle.read()
    done = []
    with Connection.from_kubeconfig(text, os.path.dirname(admin_kubeconfig)) as api:
        for obj in objects:
            plural = {"Role": "roles", "RoleBinding": "rolebindings"}[obj["kind"]]
            base = "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/%s" % (obj["metadata"]["namespace"], plural)
            try:
                api.request("POST", base, obj)
            except ApiError as exc:
                if exc.status != 409:
                    raise
                api.request("PUT", "%s/%s" % (base, obj["metadata"]["name"]), obj)
            done.append("%s %s/%s" % (obj["kind"], obj["metadata"]["namespace"], obj["metadata"]["name"]))
    return done
