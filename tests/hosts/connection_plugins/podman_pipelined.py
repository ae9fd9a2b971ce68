# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""containers.podman.podman with Ansible's pipelining: the module goes to the host's python on stdin.

The test hosts are real systemd containers reached with `podman exec`. The stock connection cannot pipeline (it
runs `podman exec` without `-i`, so stdin never reaches the container): every task then costs a temporary
directory, a file transfer, a chmod and a removal, each one more `podman exec`. Measured here on one test host,
30 module calls: 47-52 s and 18 s of CPU stock, 24 s and 6.6 s pipelined. Nothing else changes: the same
container, the same python, the same module code; file transfers (copy, template) still use the mounted root.
Hosts use it with `ansible_connection: podman_pipelined` and `ansible_pipelining: true`; the Makefile puts this
directory on ANSIBLE_CONNECTION_PLUGINS.
"""
from __future__ import annotations

import shlex

from ansible.module_utils.common.text.converters import to_native
from ansible_collections.containers.podman.plugins.connection import podman as upstream

DOCUMENTATION = upstream.DOCUMENTATION.replace("name: podman", "name: podman_pipelined", 1)


class Connection(upstream.Connection):
    """The upstream connection, plus stdin for the pipelined module."""

    transport = "podman_pipelined"
    has_pipelining = True

    def exec_command(self, cmd, in_data=None, sudoable=False):
        # containers.podman from 1.17 (the one ansible 14 bundles) passes the module on stdin itself (podman exec -i).
        if in_data is None or hasattr(upstream.Connection, "_run_podman_command"):
            return super().exec_command(cmd, in_data=in_data, sudoable=sudoable)
        if not self._connected:
            self._connect()
        exec_args = ["exec", "-i"] + (["--user", self.user] if self.user else [])
        return self._podman(exec_args, shlex.split(to_native(cmd, errors="surrogate_or_strict")), in_data)
