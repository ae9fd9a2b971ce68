#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rollout
short_description: Internal - plan or apply the files of kube-scheduler instances on a master, health-gated, in one call
version_added: 1.0.0
description:
  - B(Internal.) Part of the rollout engine of the C(kubesched.schedulers.systemd) and
    C(kubesched.schedulers.static_pod) roles, documented for those who read the roles; not a public interface,
    and its options may change in any release. Use the roles or the playbooks.
  - The host side of the rollout engine shared by the C(kubesched.schedulers.systemd) and
    C(kubesched.schedulers.static_pod) roles. Usually called through M(kubesched.schedulers.scheduler_rollout), which
    renders every file on the controller.
  - Plan (O(mode=plan), or check mode) compares every file (content, owner, group, mode), the binary link and, for
    systemd, whether each unit is active and enabled, and returns per instance what would change, with a diff.
    Files marked secret are shown by size and checksum only.
  - Apply, as C(kubeadm upgrade) does per component, the changed instances of the master together (the master is the
    unit of a rollout) - back up what the change replaces into
    C(<state_dir>/<instance>/backup/), write atomically (a hidden temporary file renamed into place), restart the
    unit (systemd) or let the kubelet replace the pod (static pods), then wait until a process other than the one
    that listened before listens on the instance's port, answers C(ok) on its health URL, and keeps doing so for
    O(settle) seconds. On any failure every file this call changed comes back (new files are removed), the binary
    link too, the restored instances restart and are probed again, the backups are kept, and the module fails
    saying what happened.
  - On success the change is held (C(<state_dir>/held-change.json) with the backups), because the master's last gate
    may come after this call (the verify role's metrics gate of the rollout playbooks). O(mode=commit) releases it
    once that gate passed (the backups go); O(mode=restore) puts the master back from it, by the same restore as a
    failed apply (files, binary link, directories, the instances restarted and probed), and keeps the backups. With
    O(hold=false) no gate follows, and the apply call commits its own change once every health gate passed. A
    plan that finds a held change (a run that stopped between apply and commit) reports it as pending; the next
    apply gates it again and holds it with its own change.
  - The record and each backup's index carry a format version and the sha256 of their body, are synced to disk with
    their directory, and are read back checked; one that cannot be trusted fails every mode before anything is
    written (see RV(untrusted_record)). A restore writes only the files the record says the change wrote, in the
    directories of the instance's files, from copies whose sha256 matches the index; anything else is reported as
    C(NOT restored) and left as it is.
  - The plan also runs the master's own kube-scheduler offline against the new config and flags of every instance
    that would start a process (O(instances[].preflight)) - C(--write-config-to) with C(--secure-port 0) and an
    unreachable C(--master), and the config's kubeconfig replaced by an offline one, so no API server is ever
    contacted. A refusal fails the call with kube-scheduler's own message (C(would be refused by the master's
    kube-scheduler)); nothing is written and nothing restarts. Only kube-scheduler's answer counts (exit 0 with the
    effective config written, or exit 1 with its error); a run that gave neither (the runtime could not start the
    container, the binary is not kube-scheduler) fails the call naming the tool and its words
    (C(could not check the new config) and C(the preflight could not run the image through podman), then podman's).
  - A host binary's answer counts only once it is known to be a kube-scheduler of the instances' release - its
    C(--version) names that release (systemd) or a release of its minor (static pods' host binary), and its C(--help)
    names kube-scheduler, as every scheduler built on kube-scheduler's command does (scheduler-plugins' too); the
    other components of a release print the same C(--version). An image's answer counts as kube-scheduler's where it
    wrote the effective config; the image is the one the manifest runs.
  - Before the first write it checks the binary's C(--version), that the link path is a link, and that every file
    an instance's config names (kubeconfig, extender TLS files) exists or is written by this call.
  - Every instance that would start a process must find its secure port free or held by the process the change
    replaces, as the kernel and systemd or the container runtime say (the unit's main process or cgroup; a container
    of the instance's pod, from the listener's cgroup and C(crictl)), never as its unit or manifest says; a temporary
    standby's port likewise. Otherwise the call fails naming the process (pid, command, cgroup) and the fix.
  - Absent instances are removed first (unit stopped, or manifest removed and the pod's port free again).
options:
  kind:
    description: How the schedulers run.
    type: str
    required: true
    choices: [systemd, static_pod]
  mode:
    description:
      - V(read) reports only the facts asked for (O(read), O(manifest_names), the host and binary facts);
        V(plan) also compares and diffs every file and runs the offline preflight; V(apply) then changes the master
        and holds the change; V(commit) releases the held change; V(restore) puts the master back from it.
      - Check mode turns V(apply) into V(plan); V(commit) and V(restore) then only report the held change.
    type: str
    default: plan
    choices: [read, plan, apply, commit, restore]
  state_dir:
    description: Where backups live during a change, one directory per instance, and the held change.
    type: path
  directories:
    description: Directories to create when missing; with a C(mode), owner, group and mode are also fixed.
    type: list
    elements: dict
    default: []
    suboptions:
      path: {description: The directory., type: path, required: true}
      owner: {description: Its owner., type: str, default: root}
      group: {description: Its group., type: str, default: root}
      mode:
        description:
          - Its mode, octal; omitted means only create it (mode 0700) when missing.
          - When a change fails, a directory this call made is removed again and one it changed gets its owner, group
            and mode back.
        type: str
  link:
    description: A symbolic link that must point to O(link.src) (the systemd binary link). A change restarts every present instance.
    type: dict
    suboptions:
      path: {description: The link., type: path, required: true}
      src: {description: Where it points., type: path, required: true}
  binary:
    description: The binary the link points to; its C(--version) must be C(Kubernetes v<version>) before anything changes.
    type: dict
    suboptions:
      path: {description: The binary., type: path, required: true}
      version: {description: The release it must say it is., type: str, required: true}
  accounts:
    description: The service account to report on (not created).
    type: dict
    suboptions:
      user: {description: The user., type: str, required: true}
      group: {description: The group., type: str, required: true}
  resolve:
    description:
      - Paths to report as this host resolves them (RV(resolved)), read-only, in the same call as the rest (the
        controller checks that directories that must stay apart are not one directory by another name).
    type: list
    elements: path
    default: []
  hold:
    description:
      - With O(mode=apply), hold the healthy change for a gate after this call (O(mode=commit) or O(mode=restore)
        ends it). V(false) when no gate follows - the health gate is the master's last, so the change is committed in
        this call (its backups go) and RV(committed) names its instances.
    type: bool
    default: true
  read:
    description: Files to read back (content when at most 1 MiB of UTF-8 text, and their sha256).
    type: list
    elements: path
    default: []
  manifest_names:
    description:
      - Static pods, with no O(instances) (a read-only call) - also read C(<manifest_dir>/<name>.yaml) for each name, in
        the directory O(manifest_dir) or, when that is empty, the one the kubelet on the host watches
        (C(--pod-manifest-path), else C(staticPodPath) of its config file, as M(kubesched.schedulers.kubelet_static_pod_path)
        finds it).
    type: list
    elements: str
  manifest_dir:
    description: The static pod directory for O(manifest_names); empty means the one the kubelet watches.
    type: path
  instances:
    description: The instances, each with the files it should have (present) or has to lose (absent).
    type: list
    elements: dict
    default: []
    suboptions:
      name: {description: The instance name., type: str, required: true}
      state: {description: Present or absent., type: str, default: present, choices: [present, absent]}
      unit: {description: The systemd unit of the instance., type: str}
      port: {description: "The secure port, where the health gate looks for a new process.", type: int}
      health_url: {description: The HTTPS health URL., type: str}
      named_files:
        description: Files the config names, C(field) and C(path); each must exist or be written by this call.
        type: list
        elements: dict
        default: []
      preflight:
        description:
          - What the master's own kube-scheduler is run with, offline, when the plan would start this instance's
            process. Without it no offline run is made.
          - "systemd: O(binary.path), the binary the unit will run. Static pods: O(instances[].preflight.binary) when
            given, else O(instances[].preflight.command) inside O(instances[].preflight.image) with
            O(instances[].preflight.mounts) read-only, through containerd (C(ctr -n k8s.io run --rm)) where it answers,
            else podman (C(podman run --rm), CRI-O's image store); with neither the plan fails naming the missing tool."
        type: dict
        suboptions:
          config:
            description:
              - The new config, its C(clientConnection.kubeconfig) set to C(/kubesched-preflight/kubeconfig), the
                offline kubeconfig the run writes (the real one may point at a live API server).
            type: str
            required: true
          flags:
            description: The flags the instance runs with (its C(--config) is dropped; the run adds its own).
            type: list
            elements: str
            default: []
          secret:
            description: The config holds credentials; it never shows in any output.
            type: bool
            default: false
          command:
            description: The command inside the image (static pods).
            type: str
            default: kube-scheduler
          image:
            description: The image the manifest names (static pods).
            type: str
          binary:
            description:
              - A host binary of the same build as O(instances[].preflight.image), run instead of the image. Its
                C(--version) must name a release of the minor of O(instances[].preflight.version) and its C(--help)
                usage line must name kube-scheduler before its answer counts; anything else fails the call as not
                kube-scheduler.
            type: path
          version:
            description: The Kubernetes release the instance is configured for (static pods' host binary).
            type: str
          mounts:
            description: The manifest's hostPath volumes, C(host) path and C(container) mount path.
            type: list
            elements: dict
            default: []
            suboptions:
              host: {description: The path on the master., type: path, required: true}
              container: {description: Where the container sees it., type: path, required: true}
          manifest_dir:
            description:
              - The kubelet's static pod directory (static pods). On a master without C(ctr) or C(podman) the kubelet
                runs the image as a static pod there, read with C(crictl); the manifest is removed afterwards.
            type: path
      files:
        description:
          - In write order (the unit or manifest last); for absent instances only C(path) counts.
          - Instances may list one path (a kubeconfig they share) with the same content, owner, group and mode. It is
            written once and every instance that lists it restarts when it changes; differing specs are refused. An
            absent instance does not remove a file a present instance lists, and of several absent ones only the
            first removes it.
        type: list
        elements: dict
        default: []
        suboptions:
          path: {description: The file., type: path, required: true}
          content: {description: "Its text. For O(instances[].files[].secret=true) files it is masked in every output.", type: str}
          owner: {description: Its owner., type: str, default: root}
          group: {description: Its group., type: str, default: root}
          mode: {description: "Its mode, octal (C(\"0640\")); a symbolic mode is refused before anything is written.", type: str, default: "0600"}
          secret: {description: Never show its content in a diff., type: bool, default: false}
      lease_access:
        description:
          - Ask, as this instance (SelfSubjectAccessReviews through its kubeconfig, from this master; read-only), whether
            it may get, update and create its lease. A missing right fails the plan with the Role and RoleBinding to add
            unless O(lease_rbac.create=true); an API server this master cannot reach is a warning (C(not checked)).
        type: dict
        suboptions:
          kubeconfig: {description: "The instance's kubeconfig; the one in O(instances[].files) when this call writes it.", type: path, required: true}
          namespace: {description: The lease's namespace., type: str, required: true}
          name: {description: The lease's name., type: str, required: true}
      standby:
        description:
          - Make before break. A temporary standby of this instance, with the new config on a spare port. When the
            plan updates or restarts the running instance, the apply call starts the standby first and waits until it
            is ready. Then the standby takes the lease when the old process releases it.
          - The standby goes once the instance's new process has passed its health gate, and the lease moves back.
            After a failure it goes once the instance is restored.
        type: dict
        suboptions:
          name: {description: "The standby's pod or unit name.", type: str, required: true}
          standby_for: {description: The instance it stands in for., type: str, required: true}
          unit: {description: "Its runtime unit (systemd), started and never enabled.", type: str}
          port: {description: Its secure port; it must be free., type: int, required: true}
          health_url: {description: "Its readiness URL, which answers once it takes part in the election.", type: str, required: true}
          files:
            description: Its config copy, then its manifest or runtime unit.
            type: list
            elements: dict
            required: true
            suboptions:
              path: {description: The file., type: path, required: true}
              content: {description: Its text., type: str}
              owner: {description: Its owner., type: str, default: root}
              group: {description: Its group., type: str, default: root}
              mode: {description: "Its mode, octal.", type: str, default: "0600"}
              secret: {description: Never show its content., type: bool, default: false}
      standby_leftover:
        description:
          - Where this instance's temporary standby would be. A run that stopped while the standby ran leaves its
            files. The plan reports them, and the apply step stops that standby and removes them before anything else.
        type: dict
        suboptions:
          paths: {description: Its files., type: list, elements: path, required: true}
          unit: {description: Its runtime unit (systemd)., type: str}
          port: {description: Its port (a static pod's must be free before the call goes on)., type: int, required: true}
          mark:
            description:
              - A line each of its files carries (the standby pod's label, a comment in its config copy and unit). A
                file at one of O(instances[].standby_leftover.paths) without it is not a standby of this collection
                and is left alone.
            type: str
            required: true
  lease_rbac:
    description: What the apply call may do about a lease right the plan found missing.
    type: dict
    suboptions:
      create:
        description: Create (or replace) the missing Role and RoleBinding before the first write, then ask again.
        type: bool
        default: false
      kubeconfig:
        description: An administrator's kubeconfig on this master, used only to create them.
        type: path
        default: /etc/kubernetes/admin.conf
  health_timeout:
    description: Seconds a changed instance has to answer health from a new process for the first time.
    type: int
    default: 180
  settle:
    description:
      - Seconds the new process must then keep answering, at every look, without a break and as the same process
        (another process on the port, or a look without an answer, starts the count again; after O(health_timeout)
        it fails the gate).
      - Never cut short by O(health_timeout) - a first answer within it still gets its whole settle, so a gate takes
        up to O(health_timeout) + O(settle) seconds.
    type: int
    default: 2
  health_check:
    description:
      - Ask every present instance that this call leaves running as it is (nothing to restart, or its owner and mode
        alone) for its health, one short request each (3 seconds at most), side by side. One that does not answer
        is asked again for up to O(health_timeout) seconds (it may be starting), then fails the call in the plan,
        before anything is written (in check mode too), naming the instance, what it answered and where its logs
        are (C(journalctl -u <unit>), or C(crictl logs)). Instances of a held change or with a leftover standby are
        gated by the apply step instead.
      - V(false) only for reports (the drift check).
    type: bool
    default: true
  lock:
    description:
      - One rollout at a time on this master - the run this call belongs to and the master's rollout lock
        (C(<state_dir>/rollout-lock.json), root's, mode 0600, checked and taken under an exclusive C(flock) of
        O(state_dir) and replaced by an atomic rename).
      - Before anything is read as pending, a plan (check mode too) fails while another run holds the lock, naming
        that run (its id, start, controller and playbook) and when it last renewed it; V(apply), V(commit) and
        V(restore) take or renew it, and it stays while a change of the run is held on this master (released by the
        commit or the restore, or when the call ends with nothing held).
      - A lock not renewed for O(lock.timeout) seconds is taken for one whose run died and is taken over, with a
        warning. A call that names no run takes no lock, and is refused by a live one.
    type: dict
    suboptions:
      run:
        description: The run (C(id), C(started), C(controller), C(playbook), C(job)); the same C(id) re-enters.
        type: dict
      timeout:
        description: Seconds without renewal after which another run's lock is taken over.
        type: int
        default: 1800
      take_over:
        description:
          - The id of a run the controller found dead (a run of the same controller whose ansible-playbook process is
            gone), whose lock is taken over at once, with a warning. A refusal returns the holder (RV(lock_holder)).
        type: str
attributes:
  check_mode:
    support: full
    details: The plan, with its diff; nothing is written.
  diff_mode:
    support: full
  platform:
    platforms: posix
extends_documentation_fragment:
  - action_common_attributes
seealso:
  - module: kubesched.schedulers.scheduler_rollout
author:
  - kubesched maintainers (@kubesched)
"""

EXAMPLES = r"""
- name: What would change for one static pod (usually through kubesched.schedulers.scheduler_rollout)
  kubesched.schedulers.rollout:
    kind: static_pod
    mode: plan
    state_dir: /var/lib/kubesched/static-pod
    instances:
      - name: kube-scheduler
        port: 10259
        health_url: https://127.0.0.1:10259/livez
        files:
          - {path: /etc/kubernetes/schedulers/kube-scheduler.yaml, content: "{{ config_text }}"}
          - {path: /etc/kubernetes/manifests/kube-scheduler.yaml, content: "{{ manifest_text }}"}
"""

RETURN = r"""
plan:
  description:
    - C(link_changed), C(directories) to make, and per instance its changed C(files) and its C(action), one of none,
      create, update, restart, start, attributes or remove; and C(preflight), what the master's kube-scheduler said
      (or why it did not run) for an instance whose process would start.
    - C(health) of an instance the call leaves running as it is (O(health_check)), C(status) (V(healthy) or
      V(not healthy)) and C(detail) (the process that answers, or what the instance answered).
  returned: always
  type: dict
read:
  description: Per path of O(read), C(exists), C(content) and C(sha256).
  returned: when O(read) is given
  type: dict
resolved:
  description:
    - Per path of O(resolve), C(path), its real path (symbolic links followed, a missing tail kept, as C(realpath
      --canonicalize-missing)), and C(directory), C([device, inode]) of an existing directory, else null.
  returned: when O(resolve) is given
  type: dict
binary:
  description: C(exists) and C(version_output) of O(binary.path).
  returned: when O(binary) is given
  type: dict
accounts:
  description: C(user_exists) and C(group_exists).
  returned: when O(accounts) is given
  type: dict
host:
  description:
    - C(machine), the kernel's machine name (such as C(x86_64)), and C(systemd), whether systemd booted the host.
    - The systemd kind fails on a host that systemd did not boot, before anything else.
  returned: for O(kind=systemd)
  type: dict
manifest_dir:
  description: C(path), C(source) (where it came from, in words), C(kubelet_config), C(directory) (C([device, inode]),
    null when it is not an existing directory) of the static pod directory, and C(other_files), the names in it
    that the kubelet reads too (not starting with a dot) besides the manifests of O(manifest_names).
  returned: when O(manifest_names) is given
  type: dict
applied:
  description: Per changed instance (and per instance of a held change gated again), C(restarted), the C(pid)
    that answers health now and C(healthy_for), the seconds the gate watched it answer without a break (at least
    O(settle)).
  returned: when applied
  type: dict
held:
  description: The instances of a held change on this master (check mode, O(mode=commit) or O(mode=restore)).
  returned: in check mode with O(mode=commit) or O(mode=restore)
  type: list
  elements: str
committed:
  description: The instances whose held change was released.
  returned: when O(mode=commit), or O(mode=apply) with O(hold=false) and a change
  type: list
  elements: str
restored:
  description: Whether a held change was restored.
  returned: when O(mode=restore)
  type: bool
story:
  description: What the restore put back and how each instance answers after it.
  returned: when O(mode=restore)
  type: str
not_healthy:
  description: Instances that did not answer health after the restore.
  returned: when O(mode=restore)
  type: list
  elements: str
lock_holder:
  description: The run that holds the master's rollout lock, when that refused the call.
  returned: when another run's lock refused the call
  type: dict
untrusted_record:
  description:
    - The record of the change held on the master, or a backup's index, that could not be trusted (it cannot be
      read, is not JSON, its checksum does not match, its format version is unknown, or a field has the wrong
      type). Every mode fails on it, before anything is written, with C(pending=true) and a message naming the file,
      what is wrong and what to do.
  returned: when such a record stops the call
  type: str
rolled_back:
  description: True when a change failed and everything it changed was restored; false when it failed before the
    first write (nothing was changed).
  returned: on failure
  type: bool
"""

from ansible_collections.kubesched.schedulers.plugins.module_utils._module import CollectionModule
from ansible_collections.kubesched.schedulers.plugins.module_utils._kubelet import KubeletError
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.held_change import HeldChange
from ansible_collections.kubesched.schedulers.plugins.module_utils._records import RecordDamaged
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import (
    APPLY, COMMIT, MODES, PLAN, RESTORE, Engine, spec_problems)
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import PreflightFailed, RolledBack, RolloutFailed
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.lock import DEFAULT_TIMEOUT, LockHeld
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.strategies import strategy_for
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.waiter import Waiter

# content is not no_log: that would mask every diff; the contents of secret files are masked in main().
_FILE = dict(path=dict(type="path", required=True), content=dict(type="str"),
             owner=dict(type="str", default="root"), group=dict(type="str", default="root"),
             mode=dict(type="str", default="0600"), secret=dict(type="bool", default=False))
ARGUMENT_SPEC = dict(
    kind=dict(type="str", required=True, choices=["systemd", "static_pod"]),
    mode=dict(type="str", default=PLAN, choices=list(MODES)),
    state_dir=dict(type="path"),
    directories=dict(type="list", elements="dict", default=[], options=dict(
        path=dict(type="path", required=True), owner=dict(type="str", default="root"),
        group=dict(type="str", default="root"), mode=dict(type="str"))),
    link=dict(type="dict", options=dict(path=dict(type="path", required=True), src=dict(type="path", required=True))),
    binary=dict(type="dict", options=dict(path=dict(type="path", required=True), version=dict(type="str", required=True))),
    accounts=dict(type="dict", options=dict(user=dict(type="str", required=True), group=dict(type="str", required=True))),
    read=dict(type="list", elements="path", default=[]),
    resolve=dict(type="list", elements="path", default=[]),
    hold=dict(type="bool", default=True),
    manifest_names=dict(type="list", elements="str"),
    manifest_dir=dict(type="path"),
    instances=dict(type="list", elements="dict", default=[], options=dict(
        name=dict(type="str", required=True),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        unit=dict(type="str"), port=dict(type="int"), health_url=dict(type="str"),
        named_files=dict(type="list", elements="dict", default=[]),
        preflight=dict(type="dict", options=dict(
            config=dict(type="str", required=True), flags=dict(type="list", elements="str", default=[]),
            secret=dict(type="bool", default=False), command=dict(type="str", default="kube-scheduler"),
            image=dict(type="str"), binary=dict(type="path"), version=dict(type="str"), manifest_dir=dict(type="path"),
            mounts=dict(type="list", elements="dict", default=[], options=dict(
                host=dict(type="path", required=True), container=dict(type="path", required=True))))),
        files=dict(type="list", elements="dict", default=[], options=_FILE),
        lease_access=dict(type="dict", options=dict(
            kubeconfig=dict(type="path", required=True), namespace=dict(type="str", required=True),
            name=dict(type="str", required=True))),
        standby=dict(type="dict", options=dict(
            name=dict(type="str", required=True), standby_for=dict(type="str", required=True),
            unit=dict(type="str"), port=dict(type="int", required=True), health_url=dict(type="str", required=True),
            files=dict(type="list", elements="dict", required=True, options=_FILE))),
        standby_leftover=dict(type="dict", options=dict(
            paths=dict(type="list", elements="path", required=True), unit=dict(type="str"),
            port=dict(type="int", required=True), mark=dict(type="str", required=True))))),
    lease_rbac=dict(type="dict", options=dict(create=dict(type="bool", default=False),
                                              kubeconfig=dict(type="path", default="/etc/kubernetes/admin.conf"))),
    health_timeout=dict(type="int", default=180),
    settle=dict(type="int", default=2),
    health_check=dict(type="bool", default=True),
    lock=dict(type="dict", options=dict(run=dict(type="dict"), timeout=dict(type="int", default=DEFAULT_TIMEOUT),
                                        take_over=dict(type="str"))),
)


def main():
    module = CollectionModule('kubesched.schedulers.rollout', argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                              required_if=[("mode", mode, ("state_dir",)) for mode in (APPLY, COMMIT, RESTORE)])
    params = module.params
    for instance in params["instances"]:
        for spec in instance["files"] + ((instance["standby"] or {}).get("files") or []):
            if spec["secret"] and spec["content"]:
                module.hide([spec["content"]])
        if instance["preflight"] and instance["preflight"]["secret"]:
            module.hide([instance["preflight"]["config"]])
        if instance["state"] == "present":
            missing = [f["path"] for f in instance["files"] if f["content"] is None]
            if missing or instance["port"] is None or not instance["health_url"]:
                module.fail_json(msg="instances[%s]: a present instance needs port, health_url and the content of "
                                     "every file (missing for %s)" % (instance["name"], ", ".join(missing) or "none"))

    # Every file and directory spec is checked before anything is planned or written (all or nothing).
    problems = spec_problems(params)
    if problems:
        module.fail_json(msg="nothing was changed: " + "; ".join(problems), rolled_back=False)

    mode = PLAN if module.check_mode and params["mode"] == APPLY else params["mode"]
    engine = Engine(params, strategy_for(params["kind"], module.run_command), Waiter())
    try:
        if module.check_mode and params["mode"] in (COMMIT, RESTORE):
            held = HeldChange.load(params["state_dir"])
            module.exit_json(changed=params["mode"] == RESTORE and held is not None, held=held.names() if held else [])
        module.exit_json(**engine.run(mode))
    except KubeletError as exc:
        module.fail_json(msg=str(exc))
    except RecordDamaged as exc:
        # Something is held on this master, and nothing can be known of it: never "nothing pending".
        module.fail_json(msg=str(exc), rolled_back=False, pending=True, untrusted_record=exc.path)
    except PreflightFailed as exc:
        result = dict(engine.result, changed=False)
        if isinstance(exc, LockHeld):
            result["lock_holder"] = exc.holder  # the controller may know that run dead (its process gone)
        result.update((key, value) for key, value in (("plan", exc.plan), ("diff", exc.diff)) if value is not None)
        module.fail_json(msg=str(exc), rolled_back=False, **result)
    except (RolledBack, RolloutFailed, OSError) as exc:
        # A failure after the first write was restored (RolledBack); anything else escaping is reported as such.
        module.fail_json(msg=str(exc), rolled_back=isinstance(exc, RolledBack),
                         **dict((k, v) for k, v in engine.result.items() if k != "changed"))


if __name__ == "__main__":
    main()
