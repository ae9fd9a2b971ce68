# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host side of the rollout engine: plan a master's schedulers, apply them behind a health gate, hold, commit or restore.

The module kubesched.schedulers.scheduler_rollout runs it on the master (its action plugin renders the files on
the controller); module_utils/rollout/engine.py is where to start reading. Private to the collection, as every
module_utils file is: its names may change in any release.

Public:
- arguments: the module's options, a task's (TASK_SPEC) and the host's (HOST_SPEC), documented together
- engine: Engine, the one straight line of a call (read, plan, apply, commit, restore) and its modes
- plan: Plan and InstancePlan, what the plan says per master and per instance
- held_change: HeldChange, the record of a change from before its first write until its commit or restore
- standbys: make before break on the master, the temporary standbys of one apply call
- strategies: how each kind (systemd units, static pods) makes a change take effect, stops, runs and is checked
- file_specs: the rendered files against the host (compare, diff, write, attributes)
- kubelet_preflight: the image's kube-scheduler run once by the master's kubelet, for the offline preflight
- waiter: the real health gate (the listener of a port, health over HTTPS)
- lock: one rollout at a time on a master, the lock in its state directory
- last_render: the input a static-pod master's next plan will most likely get, kept there by its last apply
- lease_access: may an instance hold its lease, asked as the instance from its master
- kube_api: the API server as a kubeconfig's identity, from the master
- host_facts: the facts of a master the planning call reports

Uses: the flat helpers of module_utils (_files, _records, _health, _kubelet, _named_files, _offline_scheduler,
_rollout_errors, _secrets), which other modules share; nothing of it imports this package.
"""
