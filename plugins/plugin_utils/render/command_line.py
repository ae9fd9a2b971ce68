# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The command line of a host instance: the flags this collection sets, then the operator's extra_flags, each checked
as kube-scheduler of the minor takes it. The systemd unit and the static pod manifest lay these words out.

Pure Python: no Ansible imports.
"""

from __future__ import annotations

import re

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.kube_scheduler_flags import (
    BOOL, EXITING_FLAGS, IGNORED_WITH_CONFIG, LEADER_ELECTION_PREFIX, MANAGED_FLAGS, REMOVED, SERVING_FLAGS, flags_for)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs import kinds

_FLAG_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


def serving_flags(cert):
    """The flags that serve /metrics and health with ``cert`` (cert and key paths): SERVING_FLAGS."""
    return ["--tls-cert-file=%s" % cert["cert"], "--tls-private-key-file=%s" % cert["key"]]


def argv(instance, extra_flags, path, kubernetes_version):
    """(argv, problems): the flags this collection sets for ``instance`` (resolved: kubeconfig, bind_address,
    config_path, secure_port, serving_cert), then each of the operator's ``extra_flags`` in name order as one word,
    or a problem naming its field (``path``.extra_flags.<flag>) when kube-scheduler ``kubernetes_version`` would
    refuse it, ignore it, or it would fight a flag or setting this collection owns."""
    known = flags_for(kubernetes_version)
    words = [
        "--authentication-kubeconfig=%s" % instance["kubeconfig"],
        "--authorization-kubeconfig=%s" % instance["kubeconfig"],
        "--bind-address=%s" % instance["bind_address"],
        "--config=%s" % instance["config_path"],
        "--secure-port=%d" % instance["secure_port"],
    ]
    if instance["serving_cert"]:
        words.extend(serving_flags(instance["serving_cert"]))
    problems = []
    for flag in sorted(extra_flags, key=str):
        value = extra_flags[flag]
        where = "%s.extra_flags.%s" % (path, kinds.field_key(flag))
        name = flag.lstrip("-") if isinstance(flag, str) else None
        if name is None or not _FLAG_NAME.fullmatch(name):
            problems.append("%s: Invalid flag name %s: a kube-scheduler flag has only lower-case letters, digits "
                            "and '-'" % (where, kinds.shown(flag)))
        elif value is None:
            problems.append("%s: has no value (null): give a value, or remove the flag to get kube-scheduler's "
                            "default" % where)
        elif isinstance(value, str) and kinds.CONTROL.search(value):
            problems.append("%s: Invalid value: %s: must not contain control characters such as newlines, carriage "
                            "returns or NUL (it is written into the unit's command line)" % (where, kinds.shown(value)))
        elif instance["serving_cert"] and name in SERVING_FLAGS:
            problems.append("%s: set by this collection from serving_cert (a certificate signed by the cluster CA); "
                            "do not pass it, or set serving_cert: false to bring your own" % where)
        elif name in MANAGED_FLAGS or name in EXITING_FLAGS:
            problems.append("%s: set by this collection from %s; do not pass it"
                            % (where, MANAGED_FLAGS.get(name) or EXITING_FLAGS[name]))
        elif name.startswith(LEADER_ELECTION_PREFIX):
            problems.append("%s: leader-election flags override the config file; set leaderElection in the "
                            "config instead, so the lease checks see the real lease" % where)
        elif name in IGNORED_WITH_CONFIG:
            problems.append("%s: kube-scheduler ignores this deprecated flag when --config is set; set %s in the "
                            "config instead" % (where, IGNORED_WITH_CONFIG[name]))
        elif name in REMOVED:
            problems.append("%s: kube-scheduler has no such flag (%s)" % (where, REMOVED[name]))
        elif name not in known:
            problems.append("%s: unknown flag for kube-scheduler %s (it would exit with \"unknown flag: --%s\")"
                            % (where, kubernetes_version, name))
        elif known[name] == BOOL and not isinstance(value, bool):
            problems.append("%s: takes true or false, got %s" % (where, kinds.shown(value)))
        elif isinstance(value, (dict, list)):
            problems.append("%s: takes a single value; join lists with commas as kube-scheduler expects" % where)
        elif not isinstance(value, (str, int, float)):
            problems.append("%s: takes a string, a number or a boolean, got %s" % (where, kinds.type_name(value)))
        else:
            word = "--%s=%s" % (name, str(value).lower() if isinstance(value, bool) else value)
            try:
                words.append(kinds.flag_argument(word, where))
            except kinds.InputError as exc:
                problems.append(str(exc))
    return words, problems
