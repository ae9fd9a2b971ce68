# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# This file holds the documentation only: the work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rollout_lease
short_description: Internal - hold or release the cluster's rollout Lease, one rollout of a cluster at a time
version_added: 1.0.0
description:
  - B(Internal.) Part of the rollout playbooks (C(kubesched.schedulers.systemd), C(kubesched.schedulers.static_pod));
    not a public interface, and its options may change in any release.
  - One rollout at a time in a cluster. With O(state=held) the run takes, or renews, the C(coordination.k8s.io/v1)
    Lease C(kube-system/kubesched-rollout) of the cluster O(kubeconfig) reaches - C(holderIdentity) is the run's id,
    the annotation C(rollout-run) of the collection's domain names the run (its start, controller, playbook, AWX job),
    C(renewTime) and C(leaseDurationSeconds) (O(duration)) say until when it holds. With O(state=released) the run
    deletes it, only while it holds it.
  - A Lease another run holds and renewed less than its C(leaseDurationSeconds) ago fails the task, naming that run
    and when it expires; nothing is written. An expired one is taken over (C(leaseTransitions) + 1) with a warning.
    Every write is conditional (a create, or a replace or delete at the resourceVersion read), so two runs that race
    never both hold it.
  - The run is the ansible-playbook run, the same for every task of it (the controller's host name, the
    ansible-playbook process and the time it started) and another for every other run.
  - With an empty O(kubeconfig) nothing is asked and the task says that no cluster lock applies (each master's own
    lock, option O(kubesched.schedulers.scheduler_rollout#module:lock), still does).
  - Runs on the controller; the kubeconfig's user needs C(get), C(create), C(update) and C(delete) on C(leases) in
    C(kube-system).
extends_documentation_fragment:
  - action_common_attributes
  - action_common_attributes.flow
  - kubesched.schedulers.attributes
options:
  state:
    description: V(held) takes or renews the Lease for this run; V(released) deletes it when this run holds it.
    type: str
    choices: [held, released]
    default: held
  kubeconfig:
    description: A kubeconfig on the controller that reaches the cluster's API server; empty means no cluster lock.
    type: str
    default: ""
  context:
    description: The kubeconfig's context; empty means its current context.
    type: str
    default: ""
  duration:
    description: The Lease's C(leaseDurationSeconds), 60 to 86400 - how long it holds without a renewal.
    type: raw
    default: 1800
  run:
    description: The run (C(id), C(started), C(controller), C(playbook), C(job)); omitted, this ansible-playbook run.
    type: dict
attributes:
  check_mode:
    support: full
    details: Reads the Lease and fails the same way when another run holds it; writes nothing.
  diff_mode:
    support: none
seealso:
  - module: kubesched.schedulers.rollout
author:
  - kubesched maintainers (@kubesched)
"""

EXAMPLES = r"""
- name: Take this cluster's rollout Lease
  kubesched.schedulers.rollout_lease:
    kubeconfig: "{{ kube_scheduler_rollout_lock_kubeconfig }}"
    duration: "{{ kube_scheduler_rollout_lock_timeout }}"

- name: Release it, the rollout ended
  kubesched.schedulers.rollout_lease:
    state: released
    kubeconfig: "{{ kube_scheduler_rollout_lock_kubeconfig }}"
"""

RETURN = r"""
held:
  description: Whether this run holds the Lease after the task (false in check mode and without a kubeconfig).
  returned: always
  type: bool
lease:
  description: The Lease, C(namespace/name).
  returned: when O(state=held) and a kubeconfig is given
  type: str
run:
  description: The run that holds (or held) the Lease.
  returned: when a kubeconfig is given
  type: dict
"""
