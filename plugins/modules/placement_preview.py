# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# This file holds the documentation only: the work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: placement_preview
short_description: See where the real kube-scheduler would place the cluster's pods under a proposed configuration
version_added: 1.1.0
description:
  - Takes a read-only snapshot of the cluster with the verb C(list) only - Nodes with their labels, taints,
    allocatable, conditions and images; Namespaces; PriorityClasses; every bound or pending Pod; what the volume
    plugins read (PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes, CSIDrivers,
    CSIStorageCapacities); PodDisruptionBudgets (preemption); and DeviceClasses, ResourceSlices and ResourceClaims where
    the cluster serves C(resource.k8s.io/v1) (its discovery says) - starts a throwaway control
    plane on the controller (etcd and kube-apiserver on 127.0.0.1, on free ports, with certificates and tokens of
    its own, in a private temp directory), loads the snapshot into it and runs the real kube-scheduler of
    O(kubernetes_version) with the current and then the proposed configuration, O(runs) times each, until every pod
    is bound or reported unschedulable.
  - Reports per configuration, side by side - the nodes used (nodes holding a pod other than a DaemonSet's or a
    mirror pod), each node's requested CPU and memory as a share of its allocatable (min, median, p90, max), the
    pods that do not fit with kube-scheduler's own reason, the pods per zone (C(topology.kubernetes.io/zone)), the
    pods whose node changes between the two configurations, and the time taken; a value that differs between runs
    (ties kube-scheduler breaks at random) shows its range. The first column, C(cluster now), is the cluster as the
    snapshot found it, so the preview of the current configuration can be read against it. As a table in RV(table)
    and RV(msg), and with
    O(picture) as an SVG or HTML file of each node's utilization, current against proposed.
  - Both configurations are first checked as M(kubesched.schedulers.scheduler_config) checks them, for the minor
    O(kubernetes_version); one that kube-scheduler would refuse fails the task before anything starts, with
    kube-scheduler's own error line and a hint. A configuration with extenders is refused (they are services of the
    real cluster, and one may bind pods).
  - Each binary is checked before anything starts - kube-apiserver and kube-scheduler must say they are that
    component (their own C(--help)) of the minor O(kubernetes_version) (their own C(--version)), etcd that it is etcd.
  - Nothing is written to the cluster. The throwaway control plane is removed when the task ends - normally, on
    failure, on SIGINT or SIGTERM (every process stopped by its pid, the directory removed); its processes die with
    the task if it is killed, and the directory such a task leaves is removed by the next preview.
  - Loaded as it was - each Node carries exactly its taints (the admission that would add
    C(node.kubernetes.io/not-ready) is off, and the taints are compared after the load); once kube-scheduler
    schedules, pods are created a creation second at a time, oldest first, so its queue meets them in the order the
    cluster did; a second's pods (a creationTimestamp tells no more) are sent side by side, the higher priority and
    the ones the cluster bound first. They come without their node, with their own priority, tolerations and
    overhead. Mirror pods and bound pods of a scheduler name neither
    configuration serves keep their node. A pod kube-scheduler preempts is deleted at once, as a kubelet would.
  - Claims, budgets and devices as the cluster holds them - a bound claim keeps its volume (and the volume its node
    affinity), an unbound WaitForFirstConsumer claim stays unbound until kube-scheduler chooses; the claim it then
    binds to a volume is bound as the cluster's PersistentVolume controller would, and one it provisions gets a volume
    on the chosen node's topology (the keys that node's CSINode reports for the provisioner). Each
    PodDisruptionBudget keeps the status the cluster's disruption controller gave it, which preemption counts.
    ResourceClaims are loaded unallocated and allocated again by kube-scheduler, also those of pods that keep their
    node.
  - Not reproduced - pods with generic ephemeral volumes or claims from ResourceClaimTemplates (kube-controller-manager
    makes those claims for the pod the cluster runs; RV(not_reproduced) lists such pods, which show as
    unschedulable), ResourceClaims where the cluster serves no C(resource.k8s.io/v1), pods bound by their own
    C(nodeName) (they are placed again).
  - With O(scheduler_plugins_version), the scheduler is that scheduler-plugins release's (give its binary as
    O(binaries.kube_scheduler)); the throwaway control plane gets scheduler-plugins' own CRDs that the enabled plugins
    read (PodGroups for Coscheduling, ElasticQuotas for CapacityScheduling, as the deployment role applies them),
    the snapshot their objects, and the scheduler the RBAC rules it needs for them. Plugins that read other projects'
    objects (NodeResourceTopologyMatch, NetworkOverhead, TopologicalSort, SySched) are refused.
requirements:
  - On the controller, the Python packages C(kubernetes), C(urllib3) and C(cryptography); without urllib3 or
    cryptography the task fails before anything starts, naming them.
extends_documentation_fragment:
  - action_common_attributes
  - action_common_attributes.flow
  - kubesched.schedulers.attributes
attributes:
  check_mode:
    support: full
    details: The cluster is only read; the preview runs the same in check mode, and O(picture) is written.
  diff_mode:
    support: none
    details: Nothing of the cluster changes.
options:
  kubeconfig:
    description:
      - The cluster's kubeconfig on the controller - a path, or the kubeconfig as a dict. Omitted or empty, the
        C(kubernetes) client's default (C(KUBECONFIG) or C(~/.kube/config)).
      - Its identity needs C(list), cluster-wide, on nodes, namespaces, pods, persistentvolumeclaims,
        persistentvolumes, C(priorityclasses.scheduling.k8s.io), C(storageclasses), C(csinodes), C(csidrivers) and
        C(csistoragecapacities) of C(storage.k8s.io), C(poddisruptionbudgets.policy), and, where the cluster serves
        C(resource.k8s.io/v1), its C(deviceclasses), C(resourceslices) and C(resourceclaims); the task names what is
        missing and the ClusterRole that grants it (docs/docsite/rst/placement_preview.rst shows it whole).
    type: raw
  context:
    description: The kubeconfig context.
    type: str
  kubernetes_version:
    description:
      - The minor the cluster's kube-scheduler runs, such as V(1.37) or V(1.37.2); both configurations are checked
        for it and the binaries must be of it (kube-apiserver may be one minor newer, as the version skew policy lets
        a cluster run it). Defaults to the newest supported minor.
      - With O(scheduler_plugins_version), the minor that release is built on (V(1.34) for V(0.34.7)), as the
        deployment role's C(kube_scheduler_deployment_version).
    type: str
  scheduler_plugins_version:
    description:
      - Preview kubernetes-sigs/scheduler-plugins' scheduler of this release (such as V(0.34.7)) instead of
        kube-scheduler; both configurations are checked as M(kubesched.schedulers.scheduler_config) checks them with
        its O(kubesched.schedulers.scheduler_config#module:scheduler_plugins_version).
    type: str
  current:
    description: The configuration running now, as a dict in upstream field names (a KubeSchedulerConfiguration).
    type: dict
  current_src:
    description: The configuration running now, as a file on the controller (searched like the C(files) of a role).
    type: path
  proposed:
    description: The proposed configuration, as a dict in upstream field names.
    type: dict
  proposed_src:
    description: The proposed configuration, as a file on the controller.
    type: path
  names:
    description: The two configurations' names in the table and the picture (not V(cluster now), the first column's).
    type: list
    elements: str
    default: [current, proposed]
  feature_gates:
    description: The scheduler's C(--feature-gates), as kube-scheduler takes them; checked and passed to it.
    type: str
  binaries:
    description: The binaries' paths on the controller; each one given wins over O(binaries_dir).
    type: dict
    default: {}
    suboptions:
      etcd:
        description: etcd (any 3.4 or newer); defaults to C(etcd) on the PATH.
        type: path
      kube_apiserver:
        description: kube-apiserver of O(kubernetes_version).
        type: path
      kube_scheduler:
        description: kube-scheduler of O(kubernetes_version), or scheduler-plugins' scheduler of O(scheduler_plugins_version).
        type: path
  binaries_dir:
    description:
      - A directory holding C(kube-apiserver) and C(kube-scheduler) (and C(etcd)), flat or laid out as upstream's
        server release tarball unpacks them (C(kubernetes/server/bin/)).
    type: path
  runs:
    description: How many times each configuration runs (1 to 20); the table shows the range of what differs.
    type: int
    default: 3
  timeout:
    description: Seconds one run may take before the preview fails, naming how many pods were undecided.
    type: int
    default: 1800
  picture:
    description:
      - A file on the controller to write the picture to - V(.svg) (self-contained) or V(.html) (the picture and the
        table). Replaced whole.
    type: path
seealso:
  - module: kubesched.schedulers.scheduler_config
author:
  - kubesched maintainers (@kubesched)
"""

EXAMPLES = r"""
- name: What MostAllocated would do to this cluster
  kubesched.schedulers.placement_preview:
    kubeconfig: ~/.kube/config
    kubernetes_version: "1.37"
    current:
      profiles:
        - schedulerName: default-scheduler
    proposed:
      profiles:
        - schedulerName: default-scheduler
          pluginConfig:
            - name: NodeResourcesFit
              args:
                scoringStrategy:
                  type: MostAllocated
    binaries_dir: /opt/kubernetes-server   # kubernetes/server/bin/ inside
    picture: preview.html
  delegate_to: localhost
  run_once: true
  register: preview

- name: Show the table
  ansible.builtin.debug:
    msg: "{{ preview.table }}"
  run_once: true
"""

RETURN = r"""
table:
  description: The side-by-side table, a line each.
  returned: success
  type: list
  elements: str
msg:
  description: The table as one text.
  returned: always
  type: str
configs:
  description:
    - Per configuration name, and for C(cluster now) (the cluster as it is), C(runs) (each run's C(nodes_used),
      C(cpu_percent) and C(memory_percent) with C(min), C(median), C(p90) and C(max) over all nodes,
      C(unschedulable), C(reasons) (kube-scheduler's message and the number of pods), C(zones), C(preempted),
      C(seconds)), C(spread) (min and max over the runs) and
      C(unschedulable_pods) (namespace/name to kube-scheduler's message, of the first run, at most 100) and
      C(per_node) (each node's requested C(cpu_millicores), C(memory_bytes) and their shares of its allocatable, in
      the first run).
  returned: success
  type: dict
moved:
  description: >-
    The pods whose node differs between the two configurations - C(count) and C(pods) (at most 100) of the first pair
    of runs, C(spread) over the pairs.
  returned: success
  type: dict
snapshot:
  description:
    - How many of each kind were read (C(nodes), C(pods), C(namespaces), C(priority_classes),
      C(persistent_volume_claims), C(persistent_volumes), C(storage_classes), C(csi_nodes), C(csi_drivers),
      C(csi_storage_capacities), C(pod_disruption_budgets), C(device_classes), C(resource_slices),
      C(resource_claims)), C(dra) (whether the cluster serves C(resource.k8s.io/v1)), and how many pods kept their node
      (C(kept_on_their_node)).
  returned: success
  type: dict
not_reproduced:
  description: >-
    What the preview cannot reproduce (C(note)), and C(pods) - namespace/name to what of the pod it cannot reproduce
    (at most 100).
  returned: success
  type: dict
observed:
  description: The name of the column of the cluster as it is, C(cluster now).
  returned: success
  type: str
binaries:
  description: The version of each binary run.
  returned: success
  type: dict
picture:
  description: The picture's absolute path, or null without O(picture).
  returned: success
  type: str
seconds:
  description: C(load) (control plane start and snapshot load) and C(total).
  returned: success
  type: dict
"""
