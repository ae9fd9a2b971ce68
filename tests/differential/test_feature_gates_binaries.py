# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""--feature-gates as an input of the model: configs run through the library with
``feature_gates=<value>`` and through the real kube-scheduler with ``--feature-gates <value>``, compared as the
differential harness compares (verdict, field, effective config, plugins view; a refused flag by its message).
Live on each binary present (KUBE_SCHEDULER_BIN_1_<minor>), skipped without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import configuration

harness.load_k8s_env()

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" \
         "clientConnection: {kubeconfig: @KUBECONFIG@}\n"
CONFIGS = {
    "defaults": "",
    "shape": "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n"
             "    args: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}\n",
    "empty shape": "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: {shape: []}\n",
    "dra args": "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {}\n",
    "dra binding timeout": "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {bindingTimeout: 1m}\n",
    # 1.38: allowed only while TopologyAwareWorkloadScheduling is on (an unknown field before).
    "placements": "percentageOfPlacementsToScore: 30\nprofiles:\n- percentageOfPlacementsToScore: 5\n",
    "placements out of range": "percentageOfPlacementsToScore: 101\n",
}
GATES = (
    "GenericWorkload=true", "GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
    "TopologyAwareWorkloadScheduling=true", "GangScheduling=true", "StorageCapacityScoring=false",
    "StorageCapacityScoring=true", "VolumeCapacityPriority=true", "InPlacePodVerticalScalingSchedulerPreemption=true",
    "NodeDeclaredFeatures=false", "NodeDeclaredFeatures=true", "DRASchedulerFilterTimeout=false",
    "DRADeviceBindingConditions=false", "DRADeviceBindingConditions=true", "DynamicResourceAllocation=false",
    "NoSuchGate=true", "GenericWorkload=maybe", "GenericWorkload", "foo:GenericWorkload=true",
    "kube:GenericWorkload=true", " GenericWorkload = TRUE ,", "GenericWorkload=1",
    # AllAlpha and AllBeta set every alpha (beta) gate not given by name (gates.ALL_FORMS), and a gate given by name
    # keeps its value beside them.
    "AllAlpha=true", "AllAlpha=false", "AllBeta=true", "AllBeta=false", "AllAlpha=true,AllBeta=true",
    "AllAlpha=false,AllBeta=false", "AllAlpha=true,GenericWorkload=true", "AllBeta=false,StorageCapacityScoring=true",
    "StorageCapacityScoring=true,AllBeta=false", "AllAlpha=true,VolumeCapacityPriority=false",
)


def run_binary(minor, text, gates):
    """The binary's answer, cached as harness.run_binary caches its own: by the binary's sha256, the config and the
    gates (a rerun, or CI's fresh clone on the same machine, runs no binary again)."""
    key = "gates-%s-%s" % (harness.file_sha256(harness.binary_path(minor))[:24], harness.text_sha256(text + "\0" + gates))
    cache_file = os.path.join(harness.CACHE_DIR, key[6:8], key + ".json")
    if os.path.exists(cache_file):
        with open(cache_file, encoding="utf-8") as handle:
            return json.load(handle)
    answer = _run_binary(minor, text, gates)
    os.makedirs(os.path.dirname(cache_file), exist_ok=True)
    tmp = cache_file + ".tmp%d" % os.getpid()
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(answer, handle, sort_keys=True)
    os.replace(tmp, cache_file)
    return answer


def _run_binary(minor, text, gates):
    with tempfile.TemporaryDirectory(prefix="kubesched-gates-") as work:
        config = os.path.join(work, "config")
        out = os.path.join(work, "effective.yaml")
        with open(config, "w", encoding="utf-8") as handle:
            handle.write(text)
        proc = subprocess.run([harness.binary_path(minor), "--config", config, "--write-config-to", out,
                               "--secure-port", "0", "--master", "https://127.0.0.1:1", "--feature-gates", gates],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, check=False, cwd=work)
        stderr = proc.stderr.decode("utf-8", "replace")
        effective = None
        if proc.returncode == 0:
            with open(out, encoding="utf-8") as handle:
                effective = yaml.safe_load(handle)
    error = "" if proc.returncode == 0 else harness.binary_error(stderr)
    cobra = [line for line in stderr.splitlines() if line.startswith("Error: ")]
    if proc.returncode != 0 and cobra:  # 1.30: cobra's flag error, then the usage
        error = cobra[0][len("Error: "):]
    return {"ok": proc.returncode == 0, "rc": proc.returncode, "error": error, "effective": effective}


def _errors(aggregate):
    """The errors of a Go aggregate "[a, b]" as a set."""
    return set(part.rstrip("]") for part in aggregate[1:-1].split("], "))


def run_library(minor, text, gates):
    result = configuration.process(content=text, kubernetes_version=minor, feature_gates=gates)
    return {"ok": result.ok, "crash": None, "errors": result.errors, "effective": result.effective,
            "plugins": getattr(result, "plugins", None)}


@pytest.mark.parametrize("minor", harness.BINARY_MINORS)
def test_library_follows_the_feature_gates_as_the_binary_does(minor):
    if harness.binary_path(minor) is None:
        pytest.skip("no kube-scheduler %s (KUBE_SCHEDULER_BIN_%s)" % (minor, minor.replace(".", "_")))
    problems = []
    for gates in GATES:
        for name, body in CONFIGS.items():
            text = harness.materialise(HEADER + body)
            binary = run_binary(minor, text, gates)
            lib = run_library(minor, text, gates)
            compared = harness.compare(minor, lib, binary)
            if not compared["agree"]:
                problems.append("%s / %s: %s" % (gates, name, "; ".join(compared["problems"])[:600]))
            elif not binary["ok"] and binary["error"].count("feature gate") + binary["error"].count("depends on") \
                    + binary["error"].count("component not registered") + binary["error"].count("bool value"):
                messages = [e["message"] for e in lib["errors"]]
                # Of several bad gates kube-scheduler names one, in a Go map's random order: the same refusal of
                # another gate of the value is the same answer.
                same = len(messages) == 1 and messages[0].split(": ")[:-1] == binary["error"].split(": ")[:-1] \
                    and binary["error"].rsplit(": ", 1)[-1] in gates
                # Several dependency errors are aggregated in a Go map's random order.
                same = same or (len(messages) == 1 and messages[0].startswith("[") and
                                _errors(messages[0]) == _errors(binary["error"]))
                # Config errors that name a gate (1.38: percentageOfPlacementsToScore needs
                # TopologyAwareWorkloadScheduling) are each an error of the library, one Go aggregate of the binary.
                same = same or (len(messages) > 1 and "[%s]" % ", ".join(messages) == binary["error"])
                if messages != [binary["error"]] and not same:
                    problems.append("%s / %s: message: library %r, binary %r" % (gates, name, messages,
                                                                                 binary["error"]))
    assert not problems, "%d disagreements on %s:\n%s" % (len(problems), minor, "\n".join(problems))
