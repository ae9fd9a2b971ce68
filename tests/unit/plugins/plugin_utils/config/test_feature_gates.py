"""feature_gates against upstream's own gate tables: pkg/features of every supported release in the Go module
cache (k8s.io/kubernetes@v1.NN.P, fetched by tests/binaries when the binaries are built; the test is skipped for a
release that is not there). Each gate's default, stage and lock at that release must be what the release's file
says, and a gate the file does not list must not exist in that minor."""

from __future__ import annotations

import glob
import os
import re
import subprocess

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _feature_gates as feature_gates
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import PREVIEW_MINORS, SUPPORTED_MINORS


def _module_cache():
    if os.environ.get("GOMODCACHE"):
        return os.environ["GOMODCACHE"]
    try:
        out = subprocess.run(["go", "env", "GOMODCACHE"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             timeout=30, check=False).stdout.decode().strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out or os.path.join(os.path.expanduser("~"), "go", "pkg", "mod")


def _release_dir(minor):
    """The newest k8s.io/kubernetes@v<minor>.P in the module cache (a preview minor: the pre-release it is measured
    on), or None."""
    if minor in PREVIEW_MINORS:
        found = os.path.join(_module_cache(), "k8s.io", "kubernetes@v%s" % PREVIEW_MINORS[minor])
        return found if os.path.isdir(found) else None
    found = glob.glob(os.path.join(_module_cache(), "k8s.io", "kubernetes@v%s.*" % minor))
    found = [path for path in found if re.search(r"@v\d+\.\d+\.\d+$", path)]
    return max(found, key=lambda path: int(path.rsplit(".", 1)[1])) if found else None


_VERSIONED = re.compile(r'Version: version\.MustParse\("1\.(\d+)"\), Default: (true|false),'
                        r'(?: LockToDefault: (true|false),)? PreRelease: featuregate\.(\w+)'
                        r'(?:, LockToDefault: (true|false))?')
_PLAIN = re.compile(r'\{Default: (true|false), PreRelease: featuregate\.(\w+)(?:, LockToDefault: (true|false))?\}')


def upstream_spec(release_dir, gate, minor):
    """(default, stage, locked) of ``gate`` as that release's pkg/features/*.go give it, or None if not listed."""
    for path in sorted(glob.glob(os.path.join(release_dir, "pkg", "features", "*.go"))):
        if path.endswith("_test.go"):
            continue
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        versioned = re.search(r"^\t%s: \{\n((?:\t\t.*\n)+?)\t\}," % gate, text, re.M)
        if versioned:
            current = None
            for since, default, lock1, stage, lock2 in _VERSIONED.findall(versioned.group(1)):
                if int(since) <= minor:
                    current = (default == "true", stage, "true" in (lock1, lock2))
            if current:
                return current
        plain = re.search(r"^\t%s: \s*%s" % (gate, _PLAIN.pattern), text, re.M)
        if plain:
            return (plain.group(1) == "true", plain.group(2), plain.group(3) == "true")
    return None


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
@pytest.mark.parametrize("gate", sorted(feature_gates.GATES))
def test_gate_as_upstream_release_defines_it(version, gate):
    release_dir = _release_dir(version)
    if release_dir is None:
        pytest.skip("k8s.io/kubernetes@v%s is not in the Go module cache" % PREVIEW_MINORS.get(version, version + ".*"))
    minor = int(version.split(".")[1])
    assert feature_gates.spec(gate, version) == upstream_spec(release_dir, gate, minor)


@pytest.mark.parametrize("gate, version, on", [
    # The gates the library's facts follow, as kube_features.go of v1.37.2 defines them.
    ("StorageCapacityScoring", "1.36", False), ("StorageCapacityScoring", "1.37", True),
    ("GenericWorkload", "1.37", False), ("GangScheduling", "1.37", False),
    ("NodeDeclaredFeatures", "1.37", True), ("DynamicResourceAllocation", "1.37", True),
])
def test_enabled(gate, version, on):
    assert feature_gates.enabled(gate, version) is on


def test_removed_gates_do_not_exist():
    assert feature_gates.spec("GangScheduling", "1.36") == (False, "Alpha", False)
    assert feature_gates.spec("GangScheduling", "1.37") is None
    assert feature_gates.spec("VolumeCapacityPriority", "1.33") is None
    assert feature_gates.spec("NodeDeclaredFeatures", "1.37") == (True, "GA", True)


# --feature-gates as kube-scheduler v1.37.2 (and v1.30.14 for the 1.30 form) answered it (see
# tests/differential/test_feature_gates_binaries.py, which compares with the binaries themselves).
@pytest.mark.parametrize("value, message", [
    ("NoSuchGate=true", "unrecognized feature gate: NoSuchGate"),
    ("GangScheduling=true", "unrecognized feature gate: GangScheduling"),
    ("NodeDeclaredFeatures=false", "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true"),
    ("GenericWorkload=maybe",
     'invalid value of GenericWorkload=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'),
    ("GenericWorkload", "missing bool value for GenericWorkload"),
    ("foo:GenericWorkload=true", "component not registered: foo"),
    ("TopologyAwareWorkloadScheduling=true",
     "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
])
def test_feature_gates_refused_as_kube_scheduler_1_37_refuses_them(value, message):
    with pytest.raises(feature_gates.FeatureGateError) as raised:
        feature_gates.parse(value, "1.37")
    assert str(raised.value) == message


@pytest.mark.parametrize("value, gates", [
    ("GenericWorkload=true", {"GenericWorkload": True}),
    ("kube:GenericWorkload=true", {"GenericWorkload": True}),
    (" GenericWorkload = TRUE ,", {"GenericWorkload": True}),
    ("GenericWorkload=1,TopologyAwareWorkloadScheduling=t", {"GenericWorkload": True,
                                                             "TopologyAwareWorkloadScheduling": True}),
    ({"StorageCapacityScoring": False}, {"StorageCapacityScoring": False}),
    ("", {}), (None, {}),
])
def test_feature_gates_accepted(value, gates):
    assert feature_gates.parse(value, "1.37") == gates


def test_feature_gates_on_1_30_are_a_flag_error():
    with pytest.raises(feature_gates.FeatureGateError) as raised:
        feature_gates.parse("GenericWorkload=true", "1.30")
    assert str(raised.value) == ('invalid argument "GenericWorkload=true" for "--feature-gates" flag: '
                                 'unrecognized feature gate: GenericWorkload')


def test_the_config_follows_the_gates_in_force():
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
    header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

    def multipoint(result):
        return [p["name"] for p in result.effective["profiles"][0]["plugins"]["multiPoint"]["enabled"]]
    # v1.37.2 --feature-gates GenericWorkload=true: GangScheduling is the last default plugin.
    assert multipoint(process(content=header, kubernetes_version="1.37", feature_gates="GenericWorkload=true"))[-1] \
        == "GangScheduling"
    assert "GangScheduling" not in multipoint(process(content=header, kubernetes_version="1.37"))
    # InPlacePodVerticalScalingSchedulerPreemption=true: DeferredPodScheduling right before NodeResourcesFit.
    names = multipoint(process(content=header, kubernetes_version="1.37",
                               feature_gates={"InPlacePodVerticalScalingSchedulerPreemption": True}))
    assert names[names.index("NodeResourcesFit") - 1] == "DeferredPodScheduling"
    # StorageCapacityScoring=false: a shape is refused again, as in 1.36.
    shape = header + "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: {shape: []}\n"
    assert process(content=shape, kubernetes_version="1.37").ok
    refused = process(content=shape, kubernetes_version="1.37", feature_gates="StorageCapacityScoring=false")
    assert [e["field"] for e in refused.errors] == ["profiles[0].pluginConfig[0].args.shape"]
    # A refused flag: kube-scheduler stops before it reads the config.
    bad = process(content=header, kubernetes_version="1.37", feature_gates="GangScheduling=true")
    assert [(e["field"], e["message"]) for e in bad.errors] == [
        ("--feature-gates", "unrecognized feature gate: GangScheduling")]
