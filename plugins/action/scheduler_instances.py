# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resolve and check scheduler instances on the controller; no managed host is contacted (the master's addresses and
names, for bind_address node and serving certificates, come from its gathered facts or node_address)."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import UnsupportedVersion, minor_of, normalise, unquoted_number
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import plain
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_limits import check_structure
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.action_errors import ControllerOnly
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.serving import CERT_DIR
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.rollout_order import CLUSTER, CLUSTER_GROUPS, OrderError, cluster_of

ARGUMENT_SPEC = {
    "instances": {"type": "list", "elements": "raw", "required": True},
    "kubernetes_version": {"type": "str", "required": True},
    "config_dir": {"type": "path", "required": True},
    "peers_var": {"type": "str"},
    "node_address": {"type": "str"},
    "serving_cert_dir": {"type": "path", "default": CERT_DIR},
    "serving_cert_extra_sans": {"type": "list", "elements": "str", "default": []},
    "profiling": {"type": "bool"},
}


class ActionModule(ControllerOnly, ActionBase):

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        number = unquoted_number(self._task.args.get("kubernetes_version"))
        if number:
            return dict(result, failed=True, msg=number)
        too_costly = check_structure(self._task.args.get("instances"), "instances")
        if too_costly:  # before argument validation, which copies the arguments
            return dict(result, failed=True, msg=too_costly)
        validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        del validation
        try:
            version = normalise(args["kubernetes_version"])
        except UnsupportedVersion as exc:
            return dict(result, failed=True, msg=str(exc))
        minor = minor_of(version)
        # A minor alone is enough to validate, not to name a binary or an image.
        release = version if version != minor else None
        peers = self._peer_instances(task_vars or {}, args["peers_var"], args["instances"])
        instances, errors, warnings = resolve(
            plain(args["instances"]), args["kubernetes_version"], args["config_dir"], peers,
            node=_node(task_vars or {}, args), cert_dir=args["serving_cert_dir"], profiling=args["profiling"])
        if warnings:
            result["warnings"] = warnings
        if errors:
            return dict(result, failed=True, errors=errors,
                        msg="scheduler instances are not valid, nothing was changed:\n" + "\n".join(errors))
        if any(instance["config_has_secrets"] or instance["kubeconfig_content"] is not None for instance in instances):
            # config_rendered carries extender key material, kubeconfig_content credentials, which the roles must
            # write: hide the result from every output, as no_log would (registered variables keep it).
            result["_ansible_no_log"] = True
        return dict(result, changed=False, instances=instances, minor=minor, full_version=release)

    def _peer_instances(self, task_vars, peers_var, own_instances):
        """The same variable on every other host of the play in this master's cluster; a host without it uses
        this host's value, which is what the role default gives it too. Masters of other clusters
        (kube_scheduler_cluster: a fleet in one inventory) share no lease or schedulerName with it: their API
        server is another one."""
        if not peers_var:
            return {}
        me = task_vars.get("inventory_hostname")
        hostvars = task_vars.get("hostvars", {})
        cluster = _cluster(me, task_vars)
        peers = {}
        for host in task_vars.get("ansible_play_hosts_all", []):
            if host == me:
                continue
            host_vars = hostvars.get(host, {})
            if _cluster(host, host_vars) != cluster:
                continue
            value = host_vars[peers_var] if peers_var in host_vars else own_instances
            value = self._templar.template(value)
            too_costly = check_structure(value, "%s on host %s" % (peers_var, host))
            if too_costly:
                raise AnsibleActionFail(too_costly)
            peers[host] = plain(value)
        return peers


def _cluster(host, host_vars):
    """The master's cluster (kube_scheduler_cluster_groups, kube_scheduler_cluster: plugin_utils/rollout/rollout_order.py),
    None for the masters group as one cluster; two ways of naming it that disagree fail before any host changes."""
    try:
        return cluster_of(host, host_vars.get("group_names"), host_vars.get(CLUSTER), host_vars.get(CLUSTER_GROUPS), None)
    except OrderError as exc:
        raise AnsibleActionFail(str(exc)) from None


def _node(task_vars, args):
    """This master's address (node_address, else its default IPv4 then IPv6 address) and, for the SANs of serving
    certificates, every address and name it is known by: the gathered facts (the roles gather the network facts only
    when an instance needs them), the inventory name and the extra SANs."""
    facts = task_vars.get("ansible_facts") or {}
    defaults = [(facts.get(key) or {}).get("address") for key in ("default_ipv4", "default_ipv6")]
    address = args.get("node_address") or next((value for value in defaults if value), None)
    names = [facts.get("hostname"), facts.get("fqdn"), facts.get("nodename"), task_vars.get("inventory_hostname")]
    extra = list(args.get("serving_cert_extra_sans") or [])
    return {"address": address, "addresses": [address] + defaults + extra, "names": names + extra}
