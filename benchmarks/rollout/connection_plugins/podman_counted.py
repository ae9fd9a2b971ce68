# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""containers.podman.podman as it is, counting every module it runs on a host (`make bench-rollout`).

A module call is one module sent to the host: the stock connection puts it there as AnsiballZ_<module>.py (with
pipelining it would go on stdin). Each is one line "<host> <module>" appended to BENCH_CALLS_LOG, so the benchmark
can say how many round trips each master cost, beside the wall time. Nothing else changes: the same `podman exec`
per step as the stock connection, which is the baseline of both the naive playbook and the collection's.
"""
from __future__ import annotations

import os

from ansible_collections.containers.podman.plugins.connection import podman as upstream

DOCUMENTATION = upstream.DOCUMENTATION.replace("name: podman", "name: podman_counted", 1)


class Connection(upstream.Connection):
    """The upstream connection; every module sent is counted."""

    transport = "podman_counted"

    def _count(self, module):
        log = os.environ.get("BENCH_CALLS_LOG")
        if log:
            with open(log, "a") as out:  # one short line per write: appends of forks do not interleave
                out.write("%s %s\n" % (self._container_id, module))

    def put_file(self, in_path, out_path):
        name = os.path.basename(out_path)
        if name.startswith("AnsiballZ_"):
            self._count(name[len("AnsiballZ_"):].rsplit(".", 1)[0])
        return super().put_file(in_path, out_path)

    def exec_command(self, cmd, in_data=None, sudoable=False):
        if in_data is not None:
            self._count("pipelined")
        return super().exec_command(cmd, in_data=in_data, sudoable=sudoable)
