# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The feature gates the config library depends on, keyed as upstream keys them.

pkg/features/kube_features.go (defaultVersionedKubernetesFeatureGates) gives every gate a list of versioned
specs: from that release on, the gate has that default, stage and lock. A kube-scheduler binary of minor N
uses the newest spec whose release is <= N; a gate that release's file no longer lists does not exist there
(REMOVED). The specs below are copied from kube_features.go of v1.37.2 and of v1.38.0-beta.0, the pre-release the
1.38 preview is measured on (the older minors' files agree with them for the releases they cover;
VolumeCapacityPriority, GangScheduling, WorkloadAwarePreemption and DynamicResourceAllocation from the last release
that lists them). Adding a minor is adding its specs here, not a comparison in the code.

Pure Python: no Ansible imports.
"""

from __future__ import annotations

import json
import os

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import minor_number, since

ALPHA, BETA, GA, DEPRECATED = "Alpha", "Beta", "GA", "Deprecated"

# gate -> ((first minor, default, stage, locked to default), ...), oldest first.
GATES = {
    # DRA: DynamicResources in the default plugins (applyDynamicResources), until 1.38 lists it there always.
    "DynamicResourceAllocation": ((26, False, ALPHA, False), (32, False, BETA, False), (34, True, GA, False),
                                  (35, True, GA, True)),
    # DynamicResourcesArgs.filterTimeout defaults to 10s while on.
    "DRASchedulerFilterTimeout": ((34, True, BETA, False),),
    # DynamicResourcesArgs.bindingTimeout defaults to 10m while both are on.
    "DRADeviceBindingConditions": ((34, False, ALPHA, False), (36, True, BETA, False), (38, True, GA, True)),
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
    "TopologyAwareWorkloadScheduling": ((36, False, ALPHA, False), (38, False, BETA, False)),
    # DeferredPodScheduling in the default plugins (before NodeResourcesFit).
    "InPlacePodVerticalScalingSchedulerPreemption": ((37, False, ALPHA, False),),
}

# gate -> the first minor whose kube_features.go no longer lists it.
REMOVED = {
    "VolumeCapacityPriority": 33,       # renamed StorageCapacityScoring
    "GangScheduling": 37,               # folded into GenericWorkload
    "WorkloadAwarePreemption": 37,
    "DynamicResourceAllocation": 38,   # GA and locked since 1.35; DRA is always on
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


def enabled(gate, version, gates=None):
    """Whether ``gate`` is on in that version's binary: as ``gates`` (the --feature-gates in force, parse()) set it,
    else its default (a gate that does not exist is off)."""
    found = spec(gate, version)
    if found is None:
        return False
    if gates and gate in gates:
        return bool(gates[gate])
    return bool(found[0])


# -- --feature-gates: the gates in force -----------------------------------------------------------------------

class FeatureGateError(ValueError):
    """A --feature-gates value kube-scheduler refuses at start, in its words."""


_INVENTORY = {}


def _measured(version):
    """What tests/differential/gates.py measured on that version's binary (feature_gate_inventory.json): {"gates":
    {gate: [default, locked] (+ [dependencies])}, "alpha": [gate, ...], "beta": [gate, ...]}, or None."""
    if not _INVENTORY:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "feature_gate_inventory.json")
        with open(path, encoding="utf-8") as handle:
            _INVENTORY.update(json.load(handle))
    return _INVENTORY.get("%d.%d" % (1, minor_number(version)))


def inventory(version):
    """{gate: [default, locked] (+ [dependencies])} of every gate that version's binary knows, as measured on it by
    tests/differential/gates.py (feature_gate_inventory.json), or None for a minor not measured."""
    found = _measured(version)
    return found["gates"] if found else None


# component-base featuregate: AllAlpha and AllBeta set every alpha (beta) gate of the binary that is not given by
# name (setUnsetAlphaGates, setUnsetBetaGates): a gate given by name keeps its value, whatever the order.
_SETS_STAGE = {"AllAlpha": "alpha", "AllBeta": "beta"}


def _with_all(gates, version):
    """``gates`` with what AllAlpha and AllBeta among them set (the stages as measured on that version's binary)."""
    measured = _measured(version)
    expanded = dict(gates)
    for special, stage in sorted(_SETS_STAGE.items()):
        if special in gates and measured is not None:
            for name in measured.get(stage, ()):
                if name not in gates:
                    expanded[name] = gates[special]
    return expanded


_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def _pairs(value, minor):
    """(name, text) pairs of a --feature-gates value as kube-scheduler splits it: "kube:" or no component from 1.31
    (ColonSeparatedMultimapStringString), plain "name=value" in 1.30 (featureGate.Set)."""
    for pair in value.split(","):
        if not pair:
            continue
        if since("feature_gates_flag_by_component", minor):
            component, colon, pair = pair.partition(":")
            if not colon:
                component, pair = "", component
            if component.strip() not in ("", "kube"):
                raise FeatureGateError("component not registered: %s" % component.strip())
        for entry in pair.split(","):
            if not entry.strip() and since("feature_gates_flag_by_component", minor):
                continue
            # 1.30's featureGate.Set skips only empty pairs: a blank one is a name without a value.
            name, equals, text = entry.partition("=")
            if not equals:
                raise FeatureGateError("missing bool value for %s" % name.strip())
            yield name.strip(), text.strip()


def parse(value, version):
    """The gates a --feature-gates value sets ({gate: bool}), checked as kube-scheduler of that version checks them
    (unknown gates, locked gates, dependencies: its words); a dict {gate: bool} is taken as the set pairs.
    Raises FeatureGateError. For a minor whose gates were not measured only the syntax and the gates of GATES
    are checked."""
    minor = minor_number(version)
    if value is None or value == "" or value == {}:
        return {}
    try:
        if isinstance(value, dict):
            pairs = [(str(name), value[name]) for name in value]
        elif isinstance(value, str):
            pairs = list(_pairs(value, minor))
        else:
            raise FeatureGateError("feature gates must be a --feature-gates string such as \"GenericWorkload=true\" "
                                   "or a mapping of gate names to booleans")
        gates = {}
        for name, text in pairs:
            if isinstance(text, bool):
                gates[name] = text
            elif str(text) in _TRUE or str(text) in _FALSE:
                gates[name] = str(text) in _TRUE
            else:
                raise FeatureGateError('invalid value of %s=%s, err: strconv.ParseBool: parsing "%s": invalid syntax'
                                       % (name, text, text))
        known = inventory(version)
        errors = []
        for name, on in gates.items():  # the gates given by name: AllAlpha and AllBeta set no locked gate
            if known is not None:
                if name not in known:
                    errors.append("unrecognized feature gate: %s" % name)
                elif known[name][1] and on != known[name][0]:
                    errors.append("cannot set feature gate %s to %s, feature is locked to %s"
                                  % (name, str(on).lower(), str(known[name][0]).lower()))
            elif name in GATES and spec(name, version) is None:
                errors.append("unrecognized feature gate: %s" % name)
        if errors:
            # kube-scheduler stops at one of them (the first of a Go map's random order): the first given here.
            raise FeatureGateError(errors[0])
        gates = _with_all(gates, version)
        if known is not None:
            # Every gate in force (set or by default) whose dependencies are off; all of them, aggregated.
            def on(name):
                return gates[name] if name in gates else bool(known.get(name, [False])[0])
            for name in sorted(known):
                off = [need for need in (known[name][2] if len(known[name]) > 2 else []) if not on(need)]
                if on(name) and off:
                    errors.append("%s is enabled, but depends on features that are disabled: [%s]"
                                  % (name, " ".join(off)))
        if errors:
            raise FeatureGateError(errors[0] if len(errors) == 1 else "[%s]" % ", ".join(errors))
    except FeatureGateError as exc:
        if not since("feature_gates_flag_by_component", minor) and isinstance(value, str):
            # 1.30's flag parser reports it (cobra): the whole value quoted.
            raise FeatureGateError('invalid argument "%s" for "--feature-gates" flag: %s' % (value, exc))
        raise
    return gates
