# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hardened systemd unit of one kube-scheduler instance: one pure function, as kubeadm has one per component.

Pure Python: no Ansible imports.
"""

from __future__ import annotations

_SANDBOX = """\
# Sandbox: nothing is written, no privilege is needed (ports above 1024), only IP and local sockets.
NoNewPrivileges=yes
CapabilityBoundingSet=
AmbientCapabilities=
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
PrivateUsers=yes
DevicePolicy=closed
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
ProcSubset=pid
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
MemoryDenyWriteExecute=yes
RemoveIPC=yes
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallFilter=~@privileged @resources
SystemCallErrorNumber=EPERM
"""


def unit_name(instance):
    return "%s.service" % instance["name"]


def quote_word(word):
    """One ExecStart word as systemd unquotes it: \\ and " escaped, % as %%, $ as $$. The instance model refuses
    control characters in every value that reaches the unit, so no value can end a line."""
    return '"%s"' % (word.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$"))


def systemd_unit(instance, binary_link, user, group):
    """The unit text of a resolved, present instance."""
    exec_start = " \\\n    ".join(quote_word(word) for word in [binary_link] + list(instance["flags"]))
    return "\n".join([
        "# Managed by Ansible (kubesched.schedulers.systemd): local changes are overwritten.",
        "# Instance %s; health %s; profiles and lease are in %s" % (
            instance["name"], instance["health_url"], instance["config_path"]),
        "[Unit]",
        "Description=Kubernetes scheduler %s" % instance["name"],
        "Documentation=https://kubernetes.io/docs/reference/command-line-tools-reference/kube-scheduler/",
        "After=network-online.target",
        "Wants=network-online.target",
        "# Keep retrying: a scheduler that lost its API server or its lease exits and must come back.",
        "StartLimitIntervalSec=0",
        "",
        "[Service]",
        "Type=simple",
        "User=%s" % user,
        "Group=%s" % group,
        "ExecStart=%s" % exec_start,
        "Restart=on-failure",
        "RestartSec=5",
        "SyslogIdentifier=%s" % instance["name"],
        "UMask=0077",
        "",
        _SANDBOX,
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ])
