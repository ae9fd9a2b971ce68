# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files a KubeSchedulerConfiguration names, which kube-scheduler opens at start-up, with their field paths.

Pure Python: no Ansible imports. The host checks them (plugins/module_utils/_named_files.py).
"""

from __future__ import annotations

_TLS_FILES = ("certFile", "keyFile", "caFile")


def named_files(config):
    """[{"field", "path"}] in field order; empty or absent fields name nothing, *Data fields are inline."""
    found = []
    connection = config.get("clientConnection")
    if isinstance(connection, dict) and isinstance(connection.get("kubeconfig"), str) and connection["kubeconfig"]:
        found.append({"field": "clientConnection.kubeconfig", "path": connection["kubeconfig"]})
    extenders = config.get("extenders")
    for index, extender in enumerate(extenders if isinstance(extenders, list) else []):
        tls = extender.get("tlsConfig") if isinstance(extender, dict) else None
        if not isinstance(tls, dict):
            continue
        for key in _TLS_FILES:
            if isinstance(tls.get(key), str) and tls[key]:
                found.append({"field": "extenders[%d].tlsConfig.%s" % (index, key), "path": tls[key]})
    return found
