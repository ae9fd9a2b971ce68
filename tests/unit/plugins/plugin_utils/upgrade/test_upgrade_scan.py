# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster scan's static pods: their flags on each minor, and kubeadm's manifest that has no --config."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.upgrade.upgrade_check import check_upgrade
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.upgrade.upgrade_scan import flag_names, scan, table

# kubeadm's kube-scheduler command (tests/realnode/kubeadm-scheduler-manifest.sh), after the binary.
KUBEADM_FLAGS = ["--authentication-kubeconfig=/etc/kubernetes/scheduler.conf",
                 "--authorization-kubeconfig=/etc/kubernetes/scheduler.conf", "--bind-address=127.0.0.1",
                 "--kubeconfig=/etc/kubernetes/scheduler.conf", "--leader-elect=true"]
WHERE = "host m1 path /etc/kubernetes/manifests/kube-scheduler.yaml"


def test_kubeadms_manifest_is_checked_on_the_defaults_of_each_minor():
    report, = scan([{"where": WHERE, "source": "static pod", "flags": KUBEADM_FLAGS}], "1.30.12", ["1.32"])
    assert report["ok"] and report["current"]["starts"] and report["current"]["errors"] == []
    assert report["api_version"].startswith("no --config")
    # The same as a config that sets nothing: what kube-scheduler runs on without --config.
    alone = check_upgrade(config={}, current_version="1.30.12", target_versions=["1.32"])
    assert report["targets"]["1.32"]["changes"] == alone["targets"]["1.32"]["changes"]
    assert "flags" not in report
    assert table(report)[0] == WHERE + " (no --config: the defaults of each minor)"


def test_a_removed_flag_stops_every_minor_with_cobras_error_and_the_replacement():
    # kube-scheduler v1.35.4 --port=0 exits 1 with "Error: unknown flag: --port".
    report, = scan([{"where": WHERE, "flags": KUBEADM_FLAGS + ["--port=0", "--port", "0"]}], "1.30", ["1.35"])
    assert not report["ok"]
    for found in (report["current"], report["targets"]["1.35"]):
        assert not found["starts"]
        assert found["errors"] == [{"field": "--port", "message": "unknown flag: --port (removed in 1.24; the "
                                                                  "insecure port is gone, use --secure-port)"}]


def test_a_flag_added_later_fails_only_the_minors_before_it():
    flags = KUBEADM_FLAGS + ["--requestheader-uid-headers=X-Remote-Uid"]  # new in 1.32
    report, = scan([{"where": WHERE, "flags": flags}], "1.32", ["1.31", "1.35"])
    assert report["current"]["starts"] and report["targets"]["1.35"]["starts"]
    assert [e["field"] for e in report["targets"]["1.31"]["errors"]] == ["--requestheader-uid-headers"]
    assert not report["ok"]


def test_a_static_pods_config_file_is_checked_with_its_flags():
    content = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    report, = scan([{"where": "host m1 path /etc/kubernetes/kube-scheduler.yaml", "content": content,
                     "flags": ["--config=/etc/kubernetes/kube-scheduler.yaml", "--address=0.0.0.0"]}],
                   "1.30", ["1.31"])
    assert report["api_version"] == "kubescheduler.config.k8s.io/v1"
    assert [e["field"] for e in report["targets"]["1.31"]["errors"]] == ["--address"]


def test_flag_names_are_the_long_flags_only():
    assert flag_names(["--v=2", "-v", "2", "--leader-elect", "true", "--", "--config=/x"]) == [
        "v", "leader-elect", "config"]


def test_kubeadms_manifest_from_1_36_to_1_37():
    """What kube-scheduler 1.37 runs on without --config, against 1.36 (the library's effective configs, which agree
    with what v1.37.2 writes and with the recorded v1.36.3 answers):
    podGroupPostFilter gets DynamicResources and DefaultPreemption (testing/defaults of v1.37.2), NodeName,
    NodeUnschedulable and TaintToleration gain PreFilter, NodeName runs before NodeUnschedulable, and
    VolumeBindingArgs get the default shape (StorageCapacityScoring beta and on)."""
    report, = scan([{"where": WHERE, "flags": KUBEADM_FLAGS}], "1.36.3", ["1.37.2"])
    assert report["ok"]
    changes = report["targets"]["1.37"]["changes"]
    appear = sorted((c["extension_point"], c["plugin"]) for c in changes["plugins"] if c["change"] == "appears")
    assert appear == [("podGroupPostFilter", "DefaultPreemption"), ("podGroupPostFilter", "DynamicResources"),
                      ("preFilter", "NodeName"), ("preFilter", "NodeUnschedulable"), ("preFilter", "TaintToleration")]
    assert not [c for c in changes["plugins"] if c["change"] == "disappears"]
    order = [c for c in changes["plugins"] if c["change"] == "order" and c["extension_point"] == "filter"]
    assert [c["after"][:2] for c in order] == [["NodeName", "NodeUnschedulable"]]
    assert [(c["path"], c["change"], c["after"]) for c in changes["defaults"]] == [
        ("profiles[schedulerName=default-scheduler].pluginConfig[name=VolumeBinding].args.shape", "added",
         [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}])]
    assert "  ".join(table(report)).count("plugins run in another order: NodeName, NodeUnschedulable") >= 1


def test_a_flag_new_in_1_36_fails_1_35():
    # --tls-curve-preferences: in v1.37.2's --help, not in v1.35.4's.
    report, = scan([{"where": WHERE, "flags": KUBEADM_FLAGS + ["--tls-curve-preferences=29"]}], "1.35", ["1.37"])
    assert report["targets"]["1.37"]["starts"]
    assert [e["field"] for e in report["current"]["errors"]] == ["--tls-curve-preferences"]
