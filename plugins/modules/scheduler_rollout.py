# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# This file holds the documentation only: the work is done by the action plugin of the same name, which renders on
# the controller and runs kubesched.schedulers.rollout on the host.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: scheduler_rollout
short_description: Internal - plan or apply the kube-scheduler instances of one master in one call, health-gated
version_added: 1.0.0
description:
  - B(Internal.) Part of the rollout engine of the C(kubesched.schedulers.systemd) and
    C(kubesched.schedulers.static_pod) roles, documented for those who read the roles; not a public interface,
    and its options may change in any release. Use the roles or the playbooks.
  - The rollout engine of the C(kubesched.schedulers.systemd) and C(kubesched.schedulers.static_pod) roles.
  - On the controller it renders every file the master should have from the instances resolved by
    M(kubesched.schedulers.scheduler_instances) (configs, kubeconfigs given as content, and a hardened systemd unit
    per instance, or a kubeadm-compatible static pod manifest per instance); then M(kubesched.schedulers.rollout)
    compares them with the host in one call and returns, per instance, what would change, with a diff.
  - With O(apply=true) (and not in check mode) it applies as C(kubeadm upgrade) does, the master's changed instances together. It backs
    up what the change replaces, writes atomically, restarts the unit (systemd) or lets the kubelet replace the pod
    (static pods), and waits until a B(new) process answers the instance's health endpoint; on any failure every
    file, the binary link and the restarted instances are restored, and the task fails saying what happened.
  - A change that passed the health gate is B(held) on the master until O(finish=commit) (the master's last gate
    passed, the backups go) or O(finish=restore) (a later gate failed, such as the verify role's metrics gate of the
    rollout playbooks, and the master is put back by the same restore - files, binary link, directories, the changed
    instances restarted or their previous static pods back, each probed again). A plan that finds a held change
    (a run that stopped in between) reports the master as pending; the next apply gates it again and holds it.
  - "Before anything running is touched, the plan runs the master's own kube-scheduler offline against the new
    config and flags of every instance that would start a process (C(--write-config-to) with C(--secure-port 0), an
    unreachable C(--master) and an offline kubeconfig in place of the instance's, so no API server is contacted) -
    the binary the unit will run (systemd; once it is installed), or the kube-scheduler inside the image the
    manifest names, through containerd's ctr or (CRI-O) podman with the manifest's hostPaths read-only (static pods; or
    O(preflight_binary)).
    A refusal fails the task for that master with kube-scheduler's own words
    (C(<instance> would be refused by the master's kube-scheduler: unrecognized feature gate: ...)), in check mode
    too; nothing is written and nothing restarts. A run that gave no answer of kube-scheduler's (the runtime could
    not start the container, the binary exited 0 without writing the effective config) fails the same way, naming
    the tool and its words, never as a refusal. A host binary counts only once its C(--version) names the
    instances' release (its minor, for O(preflight_binary)) and its C(--help) names kube-scheduler (the other
    components of a release print the same C(--version)); anything else is C(not kube-scheduler), naming the
    variable that chose it."
  - For static pods the master is read first (its current and adopted manifests, the checksums of kubeconfigs
    this role does not write, what else is in the kubelet's directory, and whether the config or state directory is
    that directory by another name), because a manifest written by kubeadm is adopted and kept to build on. A manifest
    that does not run kube-scheduler is never taken over or removed.
extends_documentation_fragment:
  - action_common_attributes
  - action_common_attributes.flow
  - kubesched.schedulers.attributes
options:
  kind:
    description: How the schedulers run on the master.
    type: str
    required: true
    choices: [systemd, static_pod]
  apply:
    description: Apply the plan and hold it (see O(hold)). V(false) only reports what would change (as check mode does).
    type: bool
    default: false
  hold:
    description:
      - With O(apply=true), hold the healthy change for a gate after this task, until O(finish) ends it.
      - V(false) when no gate follows - the health gate is the master's last, so this one call applies, gates and
        commits (the backups go; the result's C(committed) names the instances).
    type: bool
    default: true
  host_paths:
    description:
      - The systemd role's directories and binary link as its variables give them (C(kube_scheduler_config_dir),
        C(kube_scheduler_unit_dir), C(kube_scheduler_state_dir), C(kube_scheduler_binary_install_dir),
        C(kube_scheduler_binary_link)). The plan's call also resolves them on the master (symbolic links followed;
        the link by its directory) and the role's checks of directories that must neither coincide nor nest run again
        on what they are there, so two names for one directory fail the plan naming both variables.
      - Only with O(apply=false); the apply step builds on the plan that checked them.
    type: dict
  finish:
    description:
      - Finish the change the apply step holds on the master - V(commit) when the master's last gate passed,
        V(restore) when it failed (the result's C(story) says what was put back and how each instance answers).
        Nothing held - nothing to do.
      - Only O(kind), O(state_dir), O(health_timeout) and O(settle) count; in check mode it only reports C(held).
    type: str
    choices: [commit, restore]
  instances:
    description: The C(instances) returned by M(kubesched.schedulers.scheduler_instances). Required unless O(finish).
    type: list
    elements: dict
  kubernetes_version:
    description:
      - The full Kubernetes release the schedulers run (the systemd binary must say it; static pods get its image and
        probes). Required unless O(finish).
    type: str
  config_dir:
    description: The directory of the instances' config files. Required unless O(finish).
    type: path
  state_dir:
    description: Backups during a change, one directory per instance, and the held change (and adopted kubeadm
      manifests for static pods).
    type: path
    required: true
  health_timeout:
    description: Seconds a changed instance has to answer health from a new process for the first time.
    type: int
    default: 180
  settle:
    description:
      - Seconds the new process must then keep answering, without a break and as the same process, before the
        change counts as healthy (a break or another process starts the count again; after O(health_timeout) it
        fails the gate).
      - Never cut short by O(health_timeout) - a first answer within it still gets its whole settle, so a gate takes
        up to O(health_timeout) + O(settle) seconds.
    type: int
    default: 2
  unit_dir:
    description: Where the units go (systemd).
    type: path
    default: /etc/systemd/system
  binary_link:
    description: The stable link the units run (systemd).
    type: path
    default: /usr/local/bin/kube-scheduler
  binary_path:
    description: The side-by-side binary of O(kubernetes_version) the link points to (systemd; required there).
    type: path
  user:
    description: The system user the units run as (systemd).
    type: str
    default: kube-scheduler
  group:
    description: The system group of the units and configs (systemd).
    type: str
    default: kube-scheduler
  preflight_binary:
    description:
      - Static pods - a kube-scheduler on the master of the same build as the image, run for the offline check instead
        of the image's own binary. Empty runs the image's binary through containerd (C(ctr -n k8s.io run --rm)) where
        it answers, else through podman (C(podman run --rm), which reads CRI-O's image store), else through the
        kubelet (a static pod read with crictl); with none the plan fails naming the missing tool and this option.
      - A directory, a missing or a non-executable file fails the plan naming this option; so does a binary whose
        C(--version) does not name a release of O(kubernetes_version)'s minor, whose C(--help) does not name
        kube-scheduler (kube-controller-manager prints the same C(--version)), or that exits 0 without writing the
        effective config (it is not kube-scheduler).
    type: path
    default: ""
  preflight:
    description:
      - Run the offline check of the master's kube-scheduler, and ask every instance the call leaves running as it
        is for its health; V(false) only for reports (the drift check), which ask neither.
      - An instance that does not answer health (one short request; then up to O(health_timeout) seconds, as it may be
        starting) fails the plan, in check mode too, naming it, what it answered and where its logs are
        (C(journalctl -u <unit>), or C(crictl logs)); nothing is rolled out on that master while it does not answer.
        Instances of a held change or with a leftover standby are gated by the apply step instead.
    type: bool
    default: true
  lease_check:
    description:
      - Ask, as each present instance that elects a leader (a SelfSubjectAccessReview through its own kubeconfig, sent
        from the master, read-only), whether it may C(get) and C(update) its lease by name and C(create) leases. A
        missing right fails the plan for that master, naming the instance, the lease, the missing verbs and the
        Role and RoleBinding to add (YAML), unless O(lease_rbac_create=true).
      - An API server the master cannot reach (refused, timed out, TLS) is a warning, not a failure, and the plan's
        C(lease_access) says C(not checked) with the reason; a kubeconfig with an exec plugin is not checked either.
    type: bool
    default: true
  lease_rbac_create:
    description:
      - Let the apply call create (or replace) the missing lease Role and RoleBinding, named
        C(kubesched:lease:<lease name>) in the lease's namespace, with O(lease_rbac_kubeconfig), before the first file
        is written; then the instance is asked again. Never in check mode or in a plan.
    type: bool
    default: false
  lease_rbac_kubeconfig:
    description: An administrator's kubeconfig on the master, used only to create the lease RBAC (O(lease_rbac_create)).
    type: path
    default: /etc/kubernetes/admin.conf
  standbys:
    description:
      - Make before break. Each named instance gets a temporary standby before it is replaced, so that its lease
        moves to the standby and back instead of staying unheld until the new process starts.
      - The standby is a kube-scheduler with the new config and flags on its port plus O(standby_port_offset), and it
        retries the lease every 250ms. For static pods it is a static pod named C(kubesched-standby-<instance>); for
        systemd it is a runtime unit C(/run/systemd/system/kubesched-standby-<instance>.service), never enabled.
      - It is used only when the apply call updates or restarts the running instance. It is gone when the call
        returns, also after a failure. The rollout playbooks name the instances that need one, from the plan of
        every master (see the rollout order guide).
    type: list
    elements: str
    default: []
  standby_port_offset:
    description: How far above an instance's secure port its temporary standby listens (O(standbys)).
    type: int
    default: 1000
  run:
    description:
      - The run this call belongs to, the holder of the master's rollout lock (C(id), C(started), C(controller),
        C(playbook), C(job)). Omitted, it is derived from the ansible-playbook run (this controller's host name, the
        ansible-playbook process and the time it started, the playbooks it was given, the AWX job), the same in
        every task of one run and never in another run.
      - One rollout at a time on a master - while another run holds the lock (its change applied and not yet
        committed or restored) the plan fails, in check mode too, naming that run and when it last renewed the
        lock; a lock not renewed for O(lock_timeout) seconds is taken over with a warning. See the module
        C(kubesched.schedulers.rollout), option C(lock).
    type: dict
  lock_timeout:
    description:
      - Seconds without renewal after which another run's lock on the master is taken for one whose run died, and
        taken over (60 to 86400). The roles' C(kube_scheduler_rollout_lock_timeout).
    type: int
    default: 1800
  manifest_dir:
    description:
      - The kubelet's static pod directory (static pods). Empty means the one the kubelet on the master watches
        (C(--pod-manifest-path), else C(staticPodPath) of its config file; kubeadm's C(/etc/kubernetes/manifests)
        on a host without a kubelet), found in the same call that reads the manifests.
      - O(config_dir) and O(state_dir) must lie outside it (the kubelet runs every file there).
    type: path
    default: ""
attributes:
  check_mode:
    support: full
    details: Reports the changes and their diff; nothing is written and nothing restarts.
  diff_mode:
    support: full
    details: Per changed file; files with credentials show their size and checksum only.
seealso:
  - module: kubesched.schedulers.scheduler_instances
  - module: kubesched.schedulers.rollout
author:
  - kubesched maintainers (@kubesched)
"""

EXAMPLES = r"""
- name: Resolve the instances of this master
  kubesched.schedulers.scheduler_instances:
    instances: "{{ kube_scheduler_instances }}"
    kubernetes_version: 1.34.2
    config_dir: /etc/kubernetes/schedulers
  register: resolved

- name: What would change on this master
  kubesched.schedulers.scheduler_rollout: &rollout
    kind: systemd
    instances: "{{ resolved.instances }}"
    kubernetes_version: 1.34.2
    config_dir: /etc/kubernetes/schedulers
    state_dir: /var/lib/kubesched/systemd
    binary_path: /opt/kube-scheduler/1.34.2/kube-scheduler
  register: plan

- name: Apply it, health-gated
  kubesched.schedulers.scheduler_rollout:
    <<: *rollout  # the same arguments as the plan
    apply: true
  when: plan is changed
"""

RETURN = r"""
pending:
  description:
    - True when something on the master differs from the plan. With O(apply=false) outside check mode the task
      itself reports C(changed=false) (it changed nothing); in check mode C(changed) is C(pending), with the diff.
  returned: always
  type: bool
plan:
  description:
    - What differs, per instance (C(action) none, create, update, restart, start, attributes or remove, and the changed
      files), and C(preflight), what the master's kube-scheduler said of an instance whose process would start (or why
      it did not run yet).
    - C(lease_access) per present instance with a lease (O(lease_check)) - C(status) (V(allowed), V(missing) or
      V(not checked)), C(identity) (the user the API server sees), C(lease), C(missing) verbs, C(detail), C(rbac_yaml)
      (the Role and RoleBinding to add) and C(will_create) (O(lease_rbac_create)); C(holder), the lease's
      C(holderIdentity) now (empty when unheld, null when it could not be read, C(holder_detail) says why) and
      C(held_here), whether that is this master (its host name), from which the rollout playbooks order the masters.
    - C(health) per instance the call leaves running as it is (O(preflight)) - C(status) (V(healthy) or
      V(not healthy)) and C(detail) (the process that answers, or what the instance answered).
  returned: always
  type: dict
lease_rbac_created:
  description: The Roles and RoleBindings the apply call created (O(lease_rbac_create)).
  returned: when created
  type: list
  elements: str
drift:
  description: Static pods only, per present instance, whether its manifest and files are what this role writes and why not.
  returned: when kind is static_pod
  type: dict
  sample: {kube-scheduler: {manifest: /etc/kubernetes/manifests/kube-scheduler.yaml, drifted: true, adopted: true,
           reason: "the manifest was rewritten without the scheduler config (kubeadm upgrade?)"}}
manifest_dir:
  description: Static pods only, the directory the manifests go to (C(path)), where it came from (C(source)), the
    kubelet config file read to find it (C(kubelet_config)), its C(directory) (C([device, inode])) and
    C(other_files), what else the kubelet reads there (names not starting with a dot, besides the instances' manifests).
  returned: when kind is static_pod
  type: dict
  sample: {path: /etc/kubernetes/manifests, source: staticPodPath in /var/lib/kubelet/config.yaml,
           kubelet_config: /var/lib/kubelet/config.yaml, directory: [64768, 1311], other_files: [etcd.yaml]}
resolved:
  description: Systemd with O(host_paths), each path the plan resolved on the master, C(path) its real path.
  returned: when O(host_paths) is given
  type: dict
binary:
  description: Systemd only, whether the side-by-side binary exists and what C(--version) says.
  returned: when kind is systemd
  type: dict
host:
  description: Systemd only, the C(machine) (kernel machine name) and whether C(systemd) booted the master.
  returned: when kind is systemd
  type: dict
accounts:
  description: Systemd only, whether the system user and group exist.
  returned: when kind is systemd
  type: dict
applied:
  description: Per changed instance, whether it restarted, the process that answers health now (C(pid)) and the
    seconds the gate watched it answer without a break (C(healthy_for)).
  returned: when applied
  type: dict
committed:
  description: The instances whose held change was released.
  returned: with O(finish=commit), or O(apply=true) and O(hold=false) when something changed
  type: list
  elements: str
restored:
  description: Whether a held change was restored.
  returned: with O(finish=restore)
  type: bool
story:
  description: What the restore put back and how each instance answers after it.
  returned: with O(finish=restore)
  type: str
not_healthy:
  description: The instances that did not answer health after the restore.
  returned: with O(finish=restore)
  type: list
  elements: str
rolled_back:
  description: True when a change failed and was restored.
  returned: on failure
  type: bool
"""
