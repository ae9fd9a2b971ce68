# TEMPORARY: stands in for plugins/module_utils/configuration.py until engineer "decode+validation" lands it.
# conftest.py uses it only while that file is missing. It implements a sliver of the library contract with the
# upstream messages of the few rules the module tests rely on; delete it once the real library is committed.
from __future__ import annotations

import hashlib
from types import SimpleNamespace

from ansible_collections.kubesched.schedulers.plugins.module_utils.versions import minor_of

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"


def _error(field, kind, value, detail):
    return {"field": field, "type": kind, "message": "%s: %s: %s: %s" % (field, kind, value, detail)}


def process(content=None, config=None, kubernetes_version=None, extra_plugins=None):
    import yaml

    if (content is None) == (config is None):
        raise ValueError("exactly one of content or config is required")
    version = minor_of(kubernetes_version)
    data = yaml.safe_load(content) if content is not None else dict(config)
    data.setdefault("apiVersion", API_VERSION)
    data.setdefault("kind", KIND)
    errors = []
    if data["apiVersion"] != API_VERSION:
        errors.append({"field": "", "type": "", "message": 'no kind "%s" is registered for version "%s"'
                       % (KIND, data["apiVersion"])})
    pct = data.get("percentageOfNodesToScore")
    if pct is not None and not 0 <= pct <= 100:
        errors.append(_error("percentageOfNodesToScore", "Invalid value", pct, "not in valid range [0-100]"))
    seen = set()
    for index, profile in enumerate(data.get("profiles") or []):
        name = profile.get("schedulerName", "default-scheduler")
        if name in seen:
            errors.append(_error("profiles[%d].schedulerName" % index, "Duplicate value", '"%s"' % name, "")
                          | {"message": 'profiles[%d].schedulerName: Duplicate value: "%s"' % (index, name)})
        seen.add(name)
    if errors:
        return SimpleNamespace(errors=errors, warnings=[], effective=None, rendered=None, checksum=None,
                               profiles=[], version=version, ok=False)
    rendered = yaml.safe_dump(data, sort_keys=True, default_flow_style=False)
    effective = dict(data, parallelism=16)
    profiles = [p.get("schedulerName", "default-scheduler") for p in data.get("profiles") or [{}]]
    return SimpleNamespace(errors=[], warnings=[], effective=effective, rendered=rendered,
                           checksum=hashlib.sha256(rendered.encode()).hexdigest(), profiles=profiles,
                           version=version, ok=True)
