"""--feature-gates as an operator may give it: twice under two spellings, and with kube-scheduler's AllAlpha and
AllBeta. What a binary refuses at start is refused before anything is written, naming the variable and the fix."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve
from action_harness import KUBECONFIG, run_action

CONFIG_DIR = "/etc/kubernetes/schedulers"


def instance(extra_flags, **fields):
    return [dict({"name": "kube-scheduler", "default_scheduler": True, "extra_flags": extra_flags}, **fields)]


# --- one flag, one spelling -------------------------------------------------------------------------------------

@pytest.mark.parametrize("extra_flags, keys, flag", [
    ({"--feature-gates": "StorageCapacityScoring=true", "feature-gates": "StorageCapacityScoring=false"},
     "--feature-gates and feature-gates", "--feature-gates"),
    ({"v": 2, "--v": 3}, "--v and v", "--v"),
    ({"-v": 2, "v": 3, "--v": 4}, "--v and -v and v", "--v"),
])
def test_a_flag_given_twice_is_refused_naming_both_keys(extra_flags, keys, flag):
    _resolved, errors, _warnings = resolve(instance(extra_flags), "1.37.2", CONFIG_DIR)
    assert errors == ["kube_scheduler_instances[0].extra_flags: %s name one flag, %s: keep one of them (kube-scheduler "
                      "would get both on its command line and run with the last)" % (keys, flag)]


def test_the_doubled_gate_is_refused_before_the_config_is_checked_with_either_value():
    """The reproducer: VolumeBinding's shape is valid with the first value and refused with the last (the one the
    binary keeps); the refusal is the doubled flag, not a verdict on one of the two."""
    config = {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": "VolumeBinding", "args": {
        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}]}]}
    extra = {"--feature-gates": "StorageCapacityScoring=true", "feature-gates": "StorageCapacityScoring=false"}
    result = run_action("scheduler_instances", {"instances": instance(extra, config=config), "kubernetes_version": "1.37.2",
                                                "config_dir": CONFIG_DIR})
    assert result["failed"] and result["errors"] == [
        "kube_scheduler_instances[0].extra_flags: --feature-gates and feature-gates name one flag, --feature-gates: "
        "keep one of them (kube-scheduler would get both on its command line and run with the last)"]
    assert "Traceback" not in result["msg"] and "instances" not in result


def test_one_spelling_gives_one_flag_on_the_command_line():
    resolved, errors, _warnings = resolve(instance({"--v": 3, "feature-gates": "StorageCapacityScoring=false"}),
                                          "1.37.2", CONFIG_DIR)
    assert errors == []
    flags = resolved[0]["flags"]
    assert [flag for flag in flags if flag.startswith("--v=")] == ["--v=3"]
    assert [flag for flag in flags if flag.startswith("--feature-gates=")] == ["--feature-gates=StorageCapacityScoring=false"]


# --- why: every minor's kube-scheduler runs with the last of two --feature-gates ---------------------------------

SHAPE_CONFIG = {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": "VolumeBinding", "args": {
    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}]}]}
# The minors make binaries builds a kube-scheduler of (tests/support/k8s_binaries.py), and any other present.
MINORS_HERE = [minor for minor in ("1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37", "1.38")
               if os.access(os.environ.get("KUBE_SCHEDULER_BIN_" + minor.replace(".", "_"), ""), os.X_OK)]


def _run_binary(binary, tmp_path, config, gate_flags):
    """kube-scheduler's refusal of ``config`` with one --feature-gates per item of ``gate_flags`` on the offline run
    ("" when it writes its effective config)."""
    (tmp_path / "kubeconfig").write_text(KUBECONFIG)
    (tmp_path / "config").write_text(yaml.safe_dump(dict(
        config, apiVersion="kubescheduler.config.k8s.io/v1", kind="KubeSchedulerConfiguration",
        clientConnection={"kubeconfig": str(tmp_path / "kubeconfig")})))
    argv = [binary, "--config", str(tmp_path / "config"), "--write-config-to", str(tmp_path / "out"),
            "--secure-port", "0", "--master", "https://127.0.0.1:1"]
    for gates in gate_flags:
        argv += ["--feature-gates", gates]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    if run.returncode == 0:
        return ""
    line = run.stderr.strip().splitlines()[-1]
    return yaml.safe_load("{%s}" % line[line.index("err="):].replace("err=", '"err":', 1))["err"]


@pytest.mark.parametrize("minor", MINORS_HERE or [pytest.param("1.37", marks=pytest.mark.skip(
    reason="no kube-scheduler binary (KUBE_SCHEDULER_BIN_1_<minor>, make binaries): the binaries' verdict on two "
           "--feature-gates flags is not measured"))])
def test_each_minors_kube_scheduler_runs_with_the_last_gate_flag_so_two_are_refused(tmp_path, minor):
    """The reproducer on every minor's binary here: VolumeBinding's shape with its gate given twice, on and off. The
    binary keeps the last value (it refuses the shape when the last is false, in words the library gives for that
    value alone); the library refuses the two keys, whichever comes last."""
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config._defaults import capacity_scoring_gate  # pylint: disable=import-outside-toplevel
    binary = os.environ["KUBE_SCHEDULER_BIN_" + minor.replace(".", "_")]
    gate = capacity_scoring_gate(minor)
    prefix = "kube_scheduler_instances[0].config."
    for first, last in (("true", "false"), ("false", "true")):
        real = _run_binary(binary, tmp_path, SHAPE_CONFIG, ["%s=%s" % (gate, first), "%s=%s" % (gate, last)])
        _resolved, alone, _warnings = resolve(instance({"feature-gates": "%s=%s" % (gate, last)}, config=SHAPE_CONFIG),
                                              minor, CONFIG_DIR)
        assert [error[len(prefix):] for error in alone if error.startswith(prefix)] == ([real] if real else []), (
            minor, first, last, real, alone)
        assert ("turn on the feature gate " + gate in real) == (last == "false"), real
        _resolved, both, _warnings = resolve(instance({"--feature-gates": "%s=%s" % (gate, first),
                                                       "feature-gates": "%s=%s" % (gate, last)}, config=SHAPE_CONFIG),
                                             minor, CONFIG_DIR)
        assert both == ["kube_scheduler_instances[0].extra_flags: --feature-gates and feature-gates name one flag, "
                        "--feature-gates: keep one of them (kube-scheduler would get both on its command line and run "
                        "with the last)"]


# --- AllAlpha and AllBeta ---------------------------------------------------------------------------------------

REFUSED_1_37 = {
    "CompositePodGroup is enabled, but depends on features that are disabled: [GenericWorkload]",
    "PodGroupPreemptionPolicy is enabled, but depends on features that are disabled: [GenericWorkload]",
    "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]",
    "WorkloadWithJob is enabled, but depends on features that are disabled: [GenericWorkload]",
}


def _errors(aggregate):
    """The errors of a Go aggregate "[a, b]" (in a map's random order) as a set."""
    return set(part if part.endswith("]") else part + "]" for part in aggregate[1:-1].split("], "))


def _binary_refusal(tmp_path, gates):
    """kube-scheduler 1.37's refusal of --feature-gates ``gates`` on the offline run ("" when it starts), or None
    without the binary (KUBE_SCHEDULER_BIN_1_37)."""
    binary = os.environ.get("KUBE_SCHEDULER_BIN_1_37")
    if not binary or not os.access(binary, os.X_OK):
        return None
    (tmp_path / "kubeconfig").write_text(KUBECONFIG)
    (tmp_path / "config").write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                                     "clientConnection: {kubeconfig: %s}\n" % (tmp_path / "kubeconfig"))
    run = subprocess.run([binary, "--config", str(tmp_path / "config"), "--write-config-to", str(tmp_path / "out"),
                          "--secure-port", "0", "--master", "https://127.0.0.1:1", "--feature-gates", gates],
                         capture_output=True, text=True, timeout=60, check=False)
    if run.returncode == 0:
        return ""
    line = run.stderr.strip().splitlines()[-1]
    return yaml.safe_load("{%s}" % line[line.index("err="):].replace("err=", '"err":', 1))["err"]


def test_allalpha_on_1_37_is_refused_as_kube_scheduler_refuses_it(tmp_path):
    """AllAlpha=true turns on alpha gates whose dependency, GenericWorkload, is a beta gate and stays off: kube-scheduler
    v1.37.2 exits at start. Measured on the binary (tests/differential/gates/1.37.json); compared with it again when
    it is here."""
    _resolved, errors, _warnings = resolve(instance({"feature-gates": "AllAlpha=true"}), "1.37.2", CONFIG_DIR)
    prefix = "kube_scheduler_instances[0].extra_flags.feature-gates: "
    assert len(errors) == 2 and errors[0].startswith(prefix)
    assert _errors(errors[0][len(prefix):]) == REFUSED_1_37
    assert errors[1] == ("  hint (kube_scheduler_instances[0].extra_flags.feature-gates): turn on what they depend on "
                         "as well (GenericWorkload=true), or name the gates you need instead of AllAlpha or AllBeta")
    real = _binary_refusal(tmp_path, "AllAlpha=true")
    if real is None:
        print("KUBE_SCHEDULER_BIN_1_37 is not set: compared with what kube-scheduler v1.37.2 printed")
    else:
        assert _errors(real) == REFUSED_1_37


@pytest.mark.parametrize("gates", ["AllAlpha=true,GenericWorkload=true", "AllBeta=false", "AllAlpha=false",
                                   "AllAlpha=true,AllBeta=true"])
def test_what_kube_scheduler_1_37_starts_with_is_accepted(tmp_path, gates):
    resolved, errors, _warnings = resolve(instance({"feature-gates": gates}), "1.37.2", CONFIG_DIR)
    assert errors == [] and "--feature-gates=" + gates in resolved[0]["flags"]
    assert _binary_refusal(tmp_path, gates) in (None, "")


def test_scheduler_config_names_its_option_in_the_hint():
    result = run_action("scheduler_config", {"config": {"profiles": [{"schedulerName": "a"}]},
                                             "kubernetes_version": "1.37.2", "feature_gates": "AllAlpha=true"})
    assert result["failed"] and result["msg"].splitlines()[-1] == (
        "  hint (feature_gates): turn on what they depend on as well (GenericWorkload=true), or name the gates you "
        "need instead of AllAlpha or AllBeta")
