# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What playbooks/metrics_access.yml applies and writes, and the deployment role's PodMonitor
(plugin_utils/cluster/metrics_access.py)."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster import metrics_access


def metrics_access_plan(hosts, reader_namespace, service_account, targets_namespace, monitors=False, ca_file="",
                        token_file="", role_name=metrics_access.READER_ROLE, create_namespace=False):
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    if not isinstance(hosts, dict) or not all(isinstance(value, list) for value in hosts.values()):
        raise AnsibleFilterError("metrics_access_plan: the input must map each master to its resolved instances")
    try:
        return metrics_access.plan(hosts, reader_namespace, service_account, targets_namespace, bool(monitors),
                                   ca_file, token_file, role_name, bool(create_namespace))
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("metrics_access_plan: not resolved instances (%s)" % exc) from None


def metrics_access_pod_monitor(selector, workload_name, pod_namespace, reader, port_name="https"):
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    if not isinstance(selector, dict) or not isinstance(reader, str) or reader.count("/") != 1:
        raise AnsibleFilterError("metrics_access_pod_monitor: needs the pods' matchLabels (a dict) and the reader as "
                                 "namespace/name, got %s and %r" % (type(selector).__name__, reader))
    namespace, service_account = reader.split("/")
    return metrics_access.pod_monitor(workload_name, pod_namespace, selector, namespace,
                                      metrics_access.token_secret_name(service_account), port_name)


class FilterModule(object):  # pylint: disable=too-few-public-methods
    """Scraping the schedulers' /metrics."""

    def filters(self):
        return {"metrics_access_plan": metrics_access_plan, "metrics_access_pod_monitor": metrics_access_pod_monitor}
