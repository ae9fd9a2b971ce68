# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host-side half of kubesched.schedulers.scheduler_rollout.

The action plugin of the same name checks the task, renders every file the master should have on the controller,
then runs this module with the host's options (module_utils/rollout/arguments.py: HOST_SPEC): it reads, plans,
applies, commits or restores the master through the engine (module_utils/rollout/engine.py) and turns the engine's
one exception type per outcome into the result, once.
"""

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
    per instance, or a kubeadm-compatible static pod manifest per instance); then this module, on the master,
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
  - On the master this module is the host side, which the action plugin runs with the options marked
    B(Internal.) (a task cannot set them). It compares every file (content, owner, group, mode), the binary link and,
    for systemd, whether each unit is active and enabled; applying, it backs up what the change replaces into
    C(<state_dir>/<instance>/backup/), writes atomically (a hidden temporary file renamed into place) and holds the
    change in C(<state_dir>/held-change.json). Absent instances are removed first (unit stopped, or manifest removed
    and the pod's port free again).
  - The record and each backup's index carry a format version and the sha256 of their body, are synced to disk with
    their directory, and are read back checked; one that cannot be trusted fails every call before anything is
    written (RV(untrusted_record)). A restore writes only the files the record says the change wrote, in the
    directories of the instance's files, from copies whose sha256 matches the index; anything else is reported as
    C(NOT restored) and left as it is.
  - Every instance that would start a process must find its secure port free or held by the process the change
    replaces, as the kernel and systemd or the container runtime say (the unit's main process or cgroup; a container
    of the instance's pod, from the listener's cgroup and C(crictl)), never as its unit or manifest says; a temporary
    standby's port likewise. Otherwise the plan fails naming the process (pid, command, cgroup) and the fix.
  - Its former name, C(kubesched.schedulers.rollout), reaches the host side directly with the internal options; it
    is deprecated and goes in 2.0.0.
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
    description:
      - In a task, the C(instances) returned by M(kubesched.schedulers.scheduler_instances). Required unless
        O(finish).
      - On the host (B(Internal.), set by the action plugin), the instances, each with the files it should
        have (present) or has to lose (absent), as the suboptions below say.
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
  kubernetes_version:
    description:
      - The full Kubernetes release the schedulers run (the systemd binary must say it; static pods get its image and
        probes). Required unless O(finish).
    type: str
  config_dir:
    description: The directory of the instances' config files. Required unless O(finish).
    type: path
  state_dir:
    description:
      - Backups during a change, one directory per instance, and the held change (and adopted kubeadm
        manifests for static pods). Required in a task; on the host, to apply, commit or restore.
    type: path
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
        lock; a lock not renewed for O(lock_timeout) seconds is taken over with a warning. See
        O(lock).
    type: dict
  lock_timeout:
    description:
      - Seconds without renewal after which another run's lock on the master is taken for one whose run died, and
        taken over (60 to 86400). The roles' C(kube_scheduler_rollout_lock_timeout).
    type: int
    default: 1800
  planned_read:
    description:
      - Static pods, with O(apply=true) - what this master's plan read (its registered result's RV(host_read)). The
        apply step renders from it instead of reading the master again, once the master confirms in the apply call
        itself that every file read still has the checksum it had and that the config and state directories are
        still apart from the kubelet's; when one is not, nothing is written and the step reads the master again and renders anew. Omitted (or
        of other instances or another directory, or with a content its checksum does not name), the apply step reads
        first, in a call of its own.
    type: dict
  manifest_dir:
    description:
      - The kubelet's static pod directory (static pods). Empty means the one the kubelet on the master watches
        (C(--pod-manifest-path), else C(staticPodPath) of its config file; kubeadm's C(/etc/kubernetes/manifests)
        on a host without a kubelet), found in the same call that reads the manifests.
      - O(config_dir) and O(state_dir) must lie outside it (the kubelet runs every file there).
    type: path
  mode:
    description:
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
      - V(read) reports only the facts asked for (O(read), O(manifest_names), the host and binary facts);
        V(plan) also compares and diffs every file and runs the offline preflight; V(apply) then changes the master
        and holds the change; V(commit) releases the held change; V(restore) puts the master back from it.
      - Check mode turns V(apply) into V(plan); V(commit) and V(restore) then only report the held change.
    type: str
    default: plan
    choices: [read, plan, apply, commit, restore]
  directories:
    description:
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
      - Directories to create when missing; with a C(mode), owner, group and mode are also fixed.
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
    description:
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
      - A symbolic link that must point to O(link.src) (the systemd binary link). A change restarts every present
        instance.
    type: dict
    suboptions:
      path: {description: The link., type: path, required: true}
      src: {description: Where it points., type: path, required: true}
  binary:
    description:
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
      - The binary the link points to; its C(--version) must be C(Kubernetes v<version>) before anything changes.
    type: dict
    suboptions:
      path: {description: The binary., type: path, required: true}
      version: {description: The release it must say it is., type: str, required: true}
  accounts:
    description:
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
      - The service account to report on (not created).
    type: dict
    suboptions:
      user: {description: The user., type: str, required: true}
      group: {description: The group., type: str, required: true}
  resolve:
    description:
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
      - Paths to report as this host resolves them (RV(resolved)), read-only, in the same call as the rest (the
        controller checks that directories that must stay apart are not one directory by another name).
    type: list
    elements: path
    default: []
  read:
    description:
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
      - Files to read back (content when at most 1 MiB of UTF-8 text, and their sha256).
    type: list
    elements: path
    default: []
  unchanged:
    description:
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
      - What the files were rendered from (a static-pod apply built on what its plan read, O(planned_read)) - before
        anything else the call checks that each file still has that sha256 (null - still missing) and that no
        directory of O(unchanged.apart) is now the kubelet's directory by another name; when one is, it fails with
        C(read_changed) naming them and writes nothing, and the action plugin reads them again and renders anew.
    type: dict
    suboptions:
      files:
        description: Path to the sha256 it had (null when missing).
        type: dict
        default: {}
      manifest_dir:
        description: The kubelet's directory the manifests go to.
        type: path
      apart:
        description: The directories that must not be O(unchanged.manifest_dir) (the config and state directories).
        type: list
        elements: path
        default: []
  manifest_names:
    description:
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
      - Static pods, with no O(instances) (a read-only call) - also read C(<manifest_dir>/<name>.yaml) for each name, in
        the directory O(manifest_dir) or, when that is empty, the one the kubelet on the host watches
        (C(--pod-manifest-path), else C(staticPodPath) of its config file, as M(kubesched.schedulers.kubelet_static_pod_path)
        finds it).
    type: list
    elements: str
  lease_rbac:
    description:
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
      - What the apply call may do about a lease right the plan found missing.
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
  remember:
    description:
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
      - A static-pod apply - the input the controller rendered for this master's next plan, from what the next read
        will find once this apply succeeded. Kept in O(state_dir) (C(last-render.json), root's alone) when the call
        succeeds, for O(speculate).
    type: dict
  speculate:
    description:
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
      - A static-pod read call - also plan with the input O(remember) kept, these options added (the mode, the lock,
        the gate's settings), and return that answer as C(speculated) with the checksum of the input it planned with.
        The action plugin uses it only when the input it renders from this read has the same checksum; otherwise it
        plans in a second call.
    type: dict
  health_check:
    description:
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
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
      - B(Internal.) Set by the action plugin for the host side; a task cannot set it.
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
    details: Reports the changes and their diff; nothing is written and nothing restarts.
  diff_mode:
    support: full
    details: Per changed file; files with credentials show their size and checksum only.
seealso:
  - module: kubesched.schedulers.scheduler_instances
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
host_read:
  description:
    - Static pods, the plan (O(apply=false)) only - what the plan read on the master and rendered from, for its apply
      step (O(planned_read)) - C(manifest_dir) (as RV(manifest_dir)), C(resolved) (the config and state directories as
      the master resolves them) and C(read), per file C(exists), C(sha256) and, for manifests only, C(content) (the
      kubeconfigs' content is never returned; their checksum is what the render uses).
  returned: when kind is static_pod and O(apply=false)
  type: dict
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
read:
  description: Per path of O(read), C(exists), C(content) and C(sha256).
  returned: when O(read) is given
  type: dict
held:
  description: The instances of a held change on this master (check mode, O(mode=commit) or O(mode=restore)).
  returned: in check mode with O(mode=commit) or O(mode=restore)
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
"""

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.kubesched.schedulers.plugins.module_utils._module import CollectionModule
from ansible_collections.kubesched.schedulers.plugins.module_utils._kubelet import KubeletError
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.arguments import HOST_SPEC, MODULE_SPEC
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.held_change import HeldChange
from ansible_collections.kubesched.schedulers.plugins.module_utils._records import RecordDamaged
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import (
    APPLY, COMMIT, PLAN, READ, RESTORE, Engine, spec_problems)
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout import last_render
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import (
    PreflightFailed, ReadChanged, RolledBack, RolloutFailed)
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.lock import LockHeld
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.strategies import strategy_for
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.waiter import Waiter


def main():
    # Documented are a task's options and the host's (MODULE_SPEC); the host takes its own alone (HOST_SPEC). Its
    # messages name it as they always have, by its former name.
    module = CollectionModule('kubesched.schedulers.rollout', argument_spec=MODULE_SPEC, accepted=HOST_SPEC,
                              supports_check_mode=True,
                              required_if=[("mode", mode, ("state_dir",)) for mode in (APPLY, COMMIT, RESTORE)])
    params = module.params
    _hide_secrets(module, (params["remember"] or {}).get("instances") or [])
    problem = _problems(module, params)
    if problem:
        module.fail_json(**problem)

    mode = PLAN if module.check_mode and params["mode"] == APPLY else params["mode"]
    if module.check_mode and params["mode"] in (COMMIT, RESTORE):
        try:
            held = HeldChange.load(params["state_dir"])
        except (RecordDamaged, OSError) as exc:
            module.fail_json(**_failure(exc, {}))
        module.exit_json(changed=params["mode"] == RESTORE and held is not None, held=held.names() if held else [])
    failed, result = _answer(module, params, mode)
    if failed:
        module.fail_json(**result)
    if mode == READ and params["speculate"]:
        speculated = _speculate(module, params)
        if speculated:
            result["speculated"] = speculated
    if mode == APPLY and params["remember"] is not None:
        try:
            last_render.save(params["state_dir"], params["remember"])
        except OSError:
            pass  # a shortcut for the next plan, which then reads and plans in two calls as without it

    module.exit_json(**result)


def _hide_secrets(module, instances):
    for instance in instances:
        for spec in (instance.get("files") or []) + ((instance.get("standby") or {}).get("files") or []):
            if spec.get("secret") and spec.get("content"):
                module.hide([spec["content"]])
        if instance.get("preflight") and instance["preflight"].get("secret"):
            module.hide([instance["preflight"]["config"]])


def _problems(module, params):
    """What fails the call before the engine runs (fail_json's arguments), or None; the secrets hidden first."""
    _hide_secrets(module, params["instances"])
    for instance in params["instances"]:
        if instance["state"] == "present":
            missing = [f["path"] for f in instance["files"] if f["content"] is None]
            if missing or instance["port"] is None or not instance["health_url"]:
                return dict(msg="instances[%s]: a present instance needs port, health_url and the content of "
                                "every file (missing for %s)" % (instance["name"], ", ".join(missing) or "none"))
    # Every file and directory spec is checked before anything is planned or written (all or nothing).
    problems = spec_problems(params)
    if problems:
        return dict(msg="nothing was changed: " + "; ".join(problems), rolled_back=False)
    return None


def _answer(module, params, mode, strategy=None):
    """(failed, the result) of the engine's call in ``mode``: exit_json's arguments, or fail_json's."""
    engine = Engine(params, strategy or strategy_for(params["kind"], module.run_command), Waiter())
    try:
        return False, engine.run(mode)
    except (KubeletError, RecordDamaged, PreflightFailed, RolledBack, RolloutFailed, OSError) as exc:
        return True, _failure(exc, engine.result)


def _failure(exc, known):
    """fail_json's arguments for what ended the engine's call, ``known`` what it found until then."""
    if isinstance(exc, KubeletError):
        return dict(msg=str(exc))
    if isinstance(exc, RecordDamaged):
        # Something is held on this master, and nothing can be known of it: never "nothing pending".
        return dict(msg=str(exc), rolled_back=False, pending=True, untrusted_record=exc.path)
    if isinstance(exc, PreflightFailed):
        result = dict(known, changed=False)
        if isinstance(exc, LockHeld):
            result["lock_holder"] = exc.holder  # the controller may know that run dead (its process gone)
        if isinstance(exc, ReadChanged):
            result["read_changed"] = exc.paths  # the controller reads again and renders anew
        result.update((key, value) for key, value in (("plan", exc.plan), ("diff", exc.diff)) if value is not None)
        return dict(msg=str(exc), rolled_back=False, **result)
    # A failure after the first write was restored (RolledBack); anything else escaping is reported as such.
    return dict(msg=str(exc), rolled_back=isinstance(exc, RolledBack),
                **dict((k, v) for k, v in known.items() if k != "changed"))


class _WouldRunTheBinary(Exception):
    """The plan of a kept input came to an instance whose new config the master's kube-scheduler would check."""


class _WithoutTheBinary(object):
    """The kind's strategy, except that it never runs the master's kube-scheduler on a kept input before the
    controller compared it: that plan stops there instead (_WouldRunTheBinary), and the plan's own call runs it."""

    def __init__(self, strategy):
        self._strategy = strategy

    def __getattr__(self, name):
        return getattr(self._strategy, name)

    def preflight(self, instance, params):
        if instance.get("preflight"):
            raise _WouldRunTheBinary(instance["name"])
        return self._strategy.preflight(instance, params)  # nothing to run: says so


def _speculate(module, params):
    """The plan of the input the last apply kept for this read (last_render.py), with the call's own options: its
    answer and the checksum of that input, or None when nothing is kept, the kept input is not one this module takes,
    the plan would run the master's kube-scheduler (a config changes), or it failed (the controller then plans in a
    call of its own, which does that and says why)."""
    state_dir = params["speculate"].get("state_dir")
    kept = last_render.load(state_dir) if isinstance(state_dir, str) and state_dir else None
    if kept is None:
        return None
    checked = ArgumentSpecValidator(HOST_SPEC).validate(dict(kept, **params["speculate"]))
    if checked.error_messages:
        return None
    planned = checked.validated_parameters
    if planned["mode"] != PLAN or _problems(module, planned):
        return None
    try:
        failed, answer = _answer(module, planned, PLAN, _WithoutTheBinary(strategy_for(planned["kind"], module.run_command)))
    except _WouldRunTheBinary:
        return None
    if failed:
        return None
    return {"input": last_render.digest(kept), "answer": answer}


if __name__ == "__main__":
    main()
