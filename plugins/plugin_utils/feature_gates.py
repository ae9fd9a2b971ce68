# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The feature gates the config library depends on, keyed as upstream keys them.

pkg/features/kube_features.go (defaultVersionedKubernetesFeatureGates) gives every gate a list of versioned
specs: from that release on, the gate has that default, stage and lock. A kube-scheduler binary of minor N
uses the newest spec whose release is <= N; a gate that release's file no longer lists does not exist there
(REMOVED). The specs below are copied from kube_features.go of v1.37.2 (the older minors' files agree with
them for the releases they cover; VolumeCapacityPriority, GangScheduling and WorkloadAwarePreemption from the
last release that lists them). Adding a minor is adding its specs here, not a comparison in the code.

Pure Python: no Ansible imports.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.versions import minor_number

ALPHA, BETA, GA, DEPRECATED = "Alpha", "Beta", "GA", "Deprecated"

# gate -> ((first minor, default, stage, locked to default), ...), oldest first.
GATES = {
    # DRA: DynamicResources in the default plugins (applyDynamicResources).
    "DynamicResourceAllocation": ((26, False, ALPHA, False), (32, False, BETA, False), (34, True, GA, False),
                                  (35, True, GA, True)),
    # DynamicResourcesArgs.filterTimeout defaults to 10s while on.
    "DRASchedulerFilterTimeout": ((34, True, BETA, False),),
    # DynamicResourcesArgs.bindingTimeout defaults to 10m while both are on.
    "DRADeviceBindingConditions": ((34, False, ALPHA, False), (36, True, BETA, False)),
    "DRAResourceClaimDeviceStatus": ((32, False, ALPHA, False), (33, True, BETA, False), (37, True, GA, True)),
    # VolumeBindingArgs.shape: defaulted and allowed while on (VolumeCapacityPriority until 1.32).
    "VolumeCapacityPriority": ((21, False, ALPHA, False),),
    "StorageCapacityScoring": ((33, False, ALPHA, False), (37, True, BETA, False)),
    # NodeDeclaredFeatures in the default plugins.
    "NodeDeclaredFeatures": ((35, False, ALPHA, False), (36, True, BETA, False), (37, True, GA, True)),
    # GangScheduling in the default plugins: its own gate in 1.35-1.36, GenericWorkload from 1.37.
    "GangScheduling": ((35, False, ALPHA, False),),
    "GenericWorkload": ((35, False, ALPHA, False), (37, False, BETA, False)),
    "WorkloadAwarePreemption": ((36, False, ALPHA, False),),
    # TopologyPlacementGenerator and PodGroupPodsCount in the default plugins.
    "TopologyAwareWorkloadScheduling": ((36, False, ALPHA, False),),
    # DeferredPodScheduling in the default plugins (before NodeResourcesFit).
    "InPlacePodVerticalScalingSchedulerPreemption": ((37, False, ALPHA, False),),
}

# gate -> the first minor whose kube_features.go no longer lists it.
REMOVED = {
    "VolumeCapacityPriority": 33,       # renamed StorageCapacityScoring
    "GangScheduling": 37,               # folded into GenericWorkload
    "WorkloadAwarePreemption": 37,
}


def spec(gate, version):
    """(default, stage, locked) of ``gate`` in that version's binary, or None where the gate does not exist."""
    minor = minor_number(version)
    if gate not in GATES or minor >= REMOVED.get(gate, minor + 1):
        return None
    current = None
    for since, default, stage, locked in GATES[gate]:
        if since <= minor:
            current = (default, stage, locked)
    return current


def enabled(gate, version):
    """Whether ``gate`` is on by default in that version's binary (a gate that does not exist is off)."""
    found = spec(gate, version)
    return bool(found and found[0])
