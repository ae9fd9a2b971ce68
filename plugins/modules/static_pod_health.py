#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: static_pod_health
short_description: Internal - tell which process listens on a scheduler's port, and wait until a new one is healthy
description:
  - B(Internal.) Part of the rollout engine of the C(kubesched.schedulers.systemd) and
    C(kubesched.schedulers.static_pod) roles, documented for those who read the roles; not a public interface,
    and its options may change in any release. Use the roles or the playbooks.
  - Finds the process listening on TCP I(port) from C(/proc) (it works for host-network pods, whose processes
    are visible from the host).
  - With I(wait=false) it only reports that process id; the role records it before changing a manifest.
  - With I(wait=true) it waits until a process other than I(previous_pid) listens on I(port) and answers
    C(ok) on I(url), then until that same process has answered at every look for I(settle) seconds without a
    break. A health answer from the old pod, before the kubelet has replaced it, therefore never passes the gate,
    nor does a pod that answers once and then restarts.
  - Never changes anything; supports check mode.
options:
  port:
    description: The scheduler's secure port.
    type: int
    required: true
  url:
    description: The health URL (HTTPS, the serving certificate is not verified).
    type: str
  previous_pid:
    description: Process id that listened before the change; it does not count as the new pod.
    type: int
  wait:
    description: Wait for a new healthy process instead of only reporting the current one.
    type: bool
    default: false
  timeout:
    description: Seconds to wait for the first healthy answer of a new process.
    type: int
    default: 180
  settle:
    description:
      - Seconds the new process must then stay the listener and keep answering, without a break (a break or
        another process starts the count again; after I(timeout) it fails).
      - Never cut short by I(timeout) - a first answer within it still gets its whole settle, so the wait takes up
        to I(timeout) + I(settle) seconds.
    type: int
    default: 2
version_added: 1.0.0
author:
  - kubesched maintainers (@kubesched)
"""

EXAMPLES = r"""
- name: Record which process serves port 10259 before changing its manifest
  kubesched.schedulers.static_pod_health:
    port: 10259
  register: before

- name: Wait until the kubelet has replaced it with a healthy pod
  kubesched.schedulers.static_pod_health:
    port: 10259
    url: https://127.0.0.1:10259/livez
    previous_pid: "{{ before.pid | default(omit, true) }}"
    wait: true
    timeout: 180
"""

RETURN = r"""
pid:
  description: Process id listening on the port, null when none.
  returned: always
  type: int
last_error:
  description: The last health check failure while waiting.
  returned: when wait is true
  type: str
healthy_for:
  description: Seconds the gate watched the process answer without a break (at least I(settle) when it passed).
  returned: when wait is true
  type: float
"""

from ansible_collections.kubesched.schedulers.plugins.module_utils._module import CollectionModule
from ansible_collections.kubesched.schedulers.plugins.module_utils._health import listener_pid, wait_for_new_healthy


def main():
    module = CollectionModule(
        'kubesched.schedulers.static_pod_health',
        argument_spec=dict(
            port=dict(type="int", required=True),
            url=dict(type="str"),
            previous_pid=dict(type="int"),
            wait=dict(type="bool", default=False),
            timeout=dict(type="int", default=180),
            settle=dict(type="int", default=2),
        ),
        required_if=[("wait", True, ("url",))],
        supports_check_mode=True,
    )
    params = module.params
    if not params["wait"]:
        module.exit_json(changed=False, pid=listener_pid(params["port"]))
    pid, error, healthy_for = wait_for_new_healthy(params["port"], params["url"], params["previous_pid"],
                                                   params["timeout"], params["settle"])
    if error:
        module.fail_json(msg="no new healthy kube-scheduler on port %d within %ds that held for its %ds settle: %s"
                         % (params["port"], params["timeout"], params["settle"], error),
                         pid=pid, last_error=error, healthy_for=round(healthy_for, 1))
    module.exit_json(changed=False, pid=pid, last_error=None, healthy_for=round(healthy_for, 1))


if __name__ == "__main__":
    main()
