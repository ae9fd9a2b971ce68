# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every feature gate a kube-scheduler binary knows, with its stage, default and lock, measured on the binary.

``kube-scheduler --help`` lists each gate that is not GA with its stage and default (``kube:X=true|false (BETA -
default=true)``). GA gates are not listed: each candidate name from the release's sources (every ``Feature = "X"``
of k8s.io/kubernetes/pkg/features and of the staging modules whose gates kube-scheduler registers, in the Go module
cache) is tried with ``--feature-gates X=true`` on the offline run: "unrecognized feature gate: X" or accepted. For
every known gate, the value opposite to its default shows whether it is locked ("cannot set feature gate X to false,
feature is locked to true") and which disabled gates it depends on ("X is enabled, but depends on features that are
disabled: [Y]").

    .venv/bin/python tests/differential/gates.py 1.37      # KUBE_SCHEDULER_BIN_1_37; writes gates/1.37.json

and then plugin_utils/config/feature_gate_inventory.json (every measured minor), which the library checks --feature-gates
with. AllAlpha and AllBeta set every alpha (beta) gate not given by name: what the binary answers to each of
ALL_FORMS is recorded beside the gates (``all_forms``: its refusal, "" when it starts), and so is its answer to every
hostile --feature-gates string of HOSTILE_FORMS (``hostile_forms``);

    .venv/bin/python tests/differential/gates.py --all-forms 1.37   # only those, into the existing gates/1.37.json

The recording (gates/<minor>.json) names the binary (file, --version, sha256); test_gates_binaries.py compares the
library's gate table (plugin_utils/config/_feature_gates.py) with it.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402  pylint: disable=wrong-import-position

HERE = os.path.dirname(os.path.abspath(__file__))
# 1.30 lists "X=true|false (...)"; from 1.31 the flag is per component: "kube:X=true|false (...)".
_HELP = re.compile(r"^\s+(?:kube:)?(\w+)=true\|false \((\w+) - default=(true|false)\)", re.M)
# From 1.31 the gates are set after flag parsing ("command failed" err="..."); 1.30's flag parser refuses them
# ("Error: invalid argument ... for "--feature-gates" flag: ...").
_FAILED = re.compile(r'"command failed" err="(.*)"\s*$|^Error: invalid argument .* flag: (.*)$', re.M)
_SOURCES = ("kubernetes@v{k}/pkg/features", "apiserver@v{s}/pkg/features",
            "apiextensions-apiserver@v{s}/pkg/features", "client-go@v{s}/features", "component-base@v{s}",
            "controller-manager@v{s}/pkg/features")


# The forms of AllAlpha and AllBeta measured on every binary, with a gate given beside them (given by name, a gate
# keeps its value whatever AllAlpha or AllBeta say).
ALL_FORMS = ("AllAlpha=true", "AllAlpha=false", "AllBeta=true", "AllBeta=false", "AllAlpha=true,AllBeta=true",
             "AllAlpha=false,AllBeta=false")
# The strings an operator or a survey may give --feature-gates, measured on every binary (``hostile_forms``): a gate
# given twice in one string, spaces, empty and blank pairs, case and Go's other boolean spellings, what ParseBool
# refuses, unknown and misspelt gates, another component, and long names and values. {gate} is a gate of the
# release that is no AllAlpha or AllBeta (VolumeBinding's shape gate: form_gate).
HOSTILE_FORMS = (
    "{gate}=true,{gate}=false", "{gate}=false,{gate}=true", " {gate} = true ", "{gate}= true", "{gate} =true",
    "\t{gate}=true", "{gate}=true ,", ",{gate}=true", "{gate}=true,,{gate}=false", "{gate}=true, ,{gate}=false",
    " ", ",", ",,", " , ", "{gate}=TRUE", "{gate}=True", "{gate}=1", "{gate}=t", "{gate}=F", "{gate}=0",
    "{gate}=yes", "{gate}=", "{gate}", "=true", "{gate}=true=false", "{gate}==true", "{gate}=true;{gate}=false",
    "NoSuchGate=true", "NoSuchGate=false", "{lower}=true", "{gate}=true,NoSuchGate=true", "kube:{gate}=true",
    "foo:{gate}=true", "AllAlpha=false,AllAlpha=true", "AllAlpha=true,AllAlpha=false", "AllBeta=true,AllBeta=false",
    "AllAlpha = false", "AllBeta=false,AllAlpha=false,{gate}=true", "A" * 1000 + "=true", "{gate}=" + "t" * 1000)


def form_gate(gates):
    """The gate HOSTILE_FORMS name in a release whose binary knows ``gates``: VolumeBinding's shape gate (renamed in
    1.33)."""
    return "StorageCapacityScoring" if "StorageCapacityScoring" in gates else "VolumeCapacityPriority"


def hostile_forms(gates):
    """{form as recorded: the --feature-gates string it stands for} in a release whose binary knows ``gates``."""
    gate = form_gate(gates)
    return dict((form, form.replace("{gate}", gate).replace("{lower}", gate.lower()))
                for form in HOSTILE_FORMS)


def path(minor):
    return os.path.join(HERE, "gates", "%s.json" % minor)


def load(minor):
    if not os.path.exists(path(minor)):
        return None
    with open(path(minor), encoding="utf-8") as handle:
        return json.load(handle)


def candidate_names(release):
    """Every ``Feature = "X"`` name in the release's feature packages (k8s.io modules of the Go module cache)."""
    cache = os.environ.get("GOMODCACHE") or os.path.join(os.path.expanduser("~"), "go", "pkg", "mod")
    staging = "0." + release.split(".", 1)[1]
    names = set()
    for pattern in _SOURCES:
        root = os.path.join(cache, "k8s.io", pattern.format(k=release, s=staging))
        for name in glob.glob(os.path.join(root, "**", "*.go"), recursive=True):
            if name.endswith("_test.go"):
                continue
            with open(name, encoding="utf-8", errors="replace") as handle:
                names.update(re.findall(r'Feature = "([A-Za-z0-9]+)"', handle.read()))
    return names


def _refusal(binary, work, config, flag):
    """What the binary refuses --feature-gates ``flag`` with on the offline run, "" when it accepts it."""
    proc = subprocess.run([binary, "--config", config, "--write-config-to", os.path.join(work, "out"),
                           "--secure-port", "0", "--master", "https://127.0.0.1:1", "--feature-gates", flag],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, check=False)
    found = _FAILED.search(proc.stderr.decode("utf-8", "replace"))
    if not found:
        return ""
    return harness.go_unquote('"%s"' % found.group(1)) if found.group(1) is not None else found.group(2)


def _config(work):
    config = os.path.join(work, "config")
    with open(config, "w", encoding="utf-8") as handle:
        handle.write(harness.materialise("apiVersion: kubescheduler.config.k8s.io/v1\n"
                                         "kind: KubeSchedulerConfiguration\n"
                                         "clientConnection: {kubeconfig: @KUBECONFIG@}\n"))
    return config


def measure_all_forms(binary):
    """{form: the binary's refusal, "" when it starts} for every form of ALL_FORMS."""
    with tempfile.TemporaryDirectory(prefix="kubesched-gates-") as work:
        config = _config(work)
        return dict((form, _refusal(binary, work, config, form)) for form in ALL_FORMS)


def measure_hostile_forms(binary, gates):
    """{form of HOSTILE_FORMS: the binary's refusal of the string it stands for, "" when it starts}."""
    with tempfile.TemporaryDirectory(prefix="kubesched-gates-") as work:
        config = _config(work)
        return dict((form, _refusal(binary, work, config, flag)) for form, flag in hostile_forms(gates).items())


def measure(binary):
    help_text = subprocess.run([binary, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60,
                               check=False).stdout.decode("utf-8", "replace")
    version = subprocess.run([binary, "--version"], stdout=subprocess.PIPE, timeout=60,
                             check=False).stdout.decode().strip()
    release = version.split()[-1].lstrip("v")
    gates = dict((name, {"stage": stage, "default": default == "true"})
                 for name, stage, default in _HELP.findall(help_text))
    with tempfile.TemporaryDirectory(prefix="kubesched-gates-") as work:
        config = _config(work)

        def refusal(flag):
            return _refusal(binary, work, config, flag)

        for name in sorted(candidate_names(release) - set(gates)):
            if "unrecognized feature gate" not in refusal(name + "=true"):
                gates[name] = {"stage": "GA", "default": True}
        for name, gate in sorted(gates.items()):
            if name in ("AllAlpha", "AllBeta"):
                gate["locked"] = False
                continue
            error = refusal("%s=%s" % (name, "false" if gate["default"] else "true"))
            gate["locked"] = "is locked to" in error
            if "depends on features that are disabled" in error:
                gate["refused"] = error
    return {"binary": os.path.basename(binary), "version": version, "sha256": harness.file_sha256(binary),
            "gates": gates, "all_forms": measure_all_forms(binary), "hostile_forms": measure_hostile_forms(binary, gates)}


# The two gates that set others; their own stage names no gate.
_ALL = ("AllAlpha", "AllBeta")
INVENTORY = os.path.join(harness.ROOT, "plugins", "plugin_utils", "config", "feature_gate_inventory.json")


def write_inventory():
    """plugin_utils/config/feature_gate_inventory.json, what the library reads (feature_gates.inventory): per measured minor,
    gate -> [default, locked] and the gates it was refused without ("X is enabled, but depends on ..."), and which
    gates are alpha and beta (what AllAlpha and AllBeta set)."""
    inventory = {}
    for name in sorted(glob.glob(os.path.join(HERE, "gates", "*.json"))):
        minor = os.path.basename(name)[:-len(".json")]
        measured = load(minor)
        known = {}
        needs = {}
        for found in measured["gates"].values():
            for gate, disabled in re.findall(r"(\w+) is enabled, but depends on features that are disabled: "
                                             r"\[([\w ]*)\]", found.get("refused", "")):
                needs.setdefault(gate, set()).update(disabled.split())
        for gate, found in sorted(measured["gates"].items()):
            known[gate] = [found["default"], found["locked"]] + ([sorted(needs[gate])] if gate in needs else [])
        inventory[minor] = {"binary": "%s (%s)" % (measured["binary"], measured["version"]), "gates": known,
                            "alpha": sorted(gate for gate, found in measured["gates"].items()
                                            if found["stage"] == "ALPHA" and gate not in _ALL),
                            "beta": sorted(gate for gate, found in measured["gates"].items()
                                           if found["stage"] == "BETA" and gate not in _ALL)}
    with open(INVENTORY, "w", encoding="utf-8") as handle:
        json.dump(inventory, handle, separators=(",", ":"), sort_keys=True)
        handle.write("\n")


def main():
    harness.load_k8s_env()
    forms_only = "--all-forms" in sys.argv[1:]
    for minor in [argument for argument in sys.argv[1:] if argument != "--all-forms"]:
        binary = harness.binary_path(minor)
        if binary is None:
            sys.exit("no kube-scheduler %s: set KUBE_SCHEDULER_BIN_%s" % (minor, minor.replace(".", "_")))
        if forms_only:
            measured = load(minor)
            if measured is None or measured["sha256"] != harness.file_sha256(binary):
                sys.exit("gates/%s.json was not measured on %s: measure every gate (without --all-forms)" % (minor, binary))
            measured["all_forms"] = measure_all_forms(binary)
            measured["hostile_forms"] = measure_hostile_forms(binary, measured["gates"])
        else:
            measured = measure(binary)
        os.makedirs(os.path.dirname(path(minor)), exist_ok=True)
        with open(path(minor), "w", encoding="utf-8") as handle:
            json.dump(measured, handle, indent=1, sort_keys=True)
            handle.write("\n")
        print("%s: %d gates of %s (%s) -> %s"
              % (minor, len(measured["gates"]), measured["binary"], measured["version"], path(minor)))
    write_inventory()


if __name__ == "__main__":
    main()
