# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the rollout engine is asked to put on a master: the files per instance, in write order, for both kinds."""

from __future__ import annotations

import hashlib
import os
import sys

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.rollout.rollout_files import (
    RolloutError, check_outside, static_pod_host, static_pod_reads, systemd_host)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles"))
from test_static_pod_manifest import KUBEADM_1_31  # noqa: E402  pylint: disable=wrong-import-position

VERSION = "1.34.2"
KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n"


def systemd_settings(version):
    return {"unit_dir": "/etc/systemd/system", "config_dir": "/etc/kubernetes/schedulers", "version": version,
            "binary_link": "/usr/local/bin/kube-scheduler", "binary_path": "/opt/kube-scheduler/%s/kube-scheduler" % version,
            "user": "kube-scheduler", "group": "kube-scheduler"}


def static_settings(version):
    return {"manifest_dir": "/etc/kubernetes/manifests", "config_dir": "/etc/kubernetes/schedulers",
            "state_dir": "/var/lib/kubesched/static-pod", "version": version}


def resolved_at(version, *raw):
    instances, errors, _warnings = resolve(list(raw), version, "/etc/kubernetes/schedulers")
    assert not errors, errors
    return instances


SYSTEMD, STATIC = systemd_settings(VERSION), static_settings(VERSION)


def resolved(*raw):
    return resolved_at(VERSION, *raw)


def two():
    return resolved(
        {"name": "kube-scheduler", "default_scheduler": True},
        {"name": "binpack", "secure_port": 10260, "kubeconfig": "/etc/kubernetes/binpack.conf", "kubeconfig_content": KUBECONFIG,
         "config": {"profiles": [{"schedulerName": "binpack"}], "leaderElection": {"resourceName": "binpack"}}},
        {"name": "old", "state": "absent", "kubeconfig": "/etc/kubernetes/old.conf", "kubeconfig_content": KUBECONFIG})


def paths(entry):
    return [f["path"] for f in entry["files"]]


def test_systemd_writes_config_and_kubeconfig_before_the_unit_and_removes_the_unit_first():
    host = systemd_host(two(), SYSTEMD)
    default, binpack, old = host["instances"]
    assert paths(default) == ["/etc/kubernetes/schedulers/kube-scheduler.yaml", "/etc/systemd/system/kube-scheduler.service"]
    assert paths(binpack) == ["/etc/kubernetes/schedulers/binpack.yaml", "/etc/kubernetes/binpack.conf",
                              "/etc/systemd/system/binpack.service"]
    # The engine removes in reverse order: the unit goes first, so nothing runs on a half-removed instance.
    assert paths(old)[-1] == "/etc/systemd/system/old.service" and old["state"] == "absent"
    # A serving certificate it may have had, and its key, go last (resolve()'s default certificate directory).
    assert paths(old)[:2] == ["/etc/kubernetes/pki/schedulers/old.crt", "/etc/kubernetes/pki/schedulers/old.key"]
    kubeconfig = binpack["files"][1]
    assert kubeconfig["secret"] and kubeconfig["content"] == KUBECONFIG
    assert (kubeconfig["owner"], kubeconfig["group"], kubeconfig["mode"]) == ("kube-scheduler", "kube-scheduler", "0600")
    assert binpack["unit"] == "binpack.service" and binpack["port"] == 10260
    assert binpack["health_url"] == "https://127.0.0.1:10260/livez"
    assert host["link"] == {"path": SYSTEMD["binary_link"], "src": SYSTEMD["binary_path"]}
    assert host["binary"] == {"path": SYSTEMD["binary_path"], "version": VERSION}


def test_systemd_unit_runs_the_link_with_the_instance_flags():
    default = systemd_host(two(), SYSTEMD)["instances"][0]
    unit = default["files"][-1]["content"]
    assert '"/usr/local/bin/kube-scheduler"' in unit
    assert '"--config=/etc/kubernetes/schedulers/kube-scheduler.yaml"' in unit
    assert "User=kube-scheduler" in unit


def test_named_files_include_the_kubeconfig_the_scheduler_opens():
    binpack = systemd_host(two(), SYSTEMD)["instances"][1]
    assert {"field": "clientConnection.kubeconfig", "path": "/etc/kubernetes/binpack.conf"} in binpack["named_files"]


def read_answer(files):
    return {path: {"exists": True, "content": text, "sha256": hashlib.sha256(text.encode()).hexdigest()}
            for path, text in files.items()}


def test_static_pod_reads_adopted_manifests_and_the_kubeconfigs_it_does_not_write():
    # The current manifests are read by name in the directory the engine finds, in the same call.
    reads = static_pod_reads(two(), STATIC["state_dir"])
    assert not [path for path in reads if path.startswith("/etc/kubernetes/manifests/")]
    assert "/var/lib/kubesched/static-pod/adopted/kube-scheduler.yaml" in reads
    assert "/etc/kubernetes/scheduler.conf" in reads  # kubeadm's, not written by the role: its checksum counts
    assert "/etc/kubernetes/binpack.conf" not in reads  # written by the role from kubeconfig_content


def test_static_pod_adopts_kubeadm_manifest_and_keeps_a_copy_outside_the_manifest_dir():
    instances = two()
    read = read_answer({"/etc/kubernetes/manifests/kube-scheduler.yaml": KUBEADM_1_31, "/etc/kubernetes/scheduler.conf": "x"})
    host, drift = static_pod_host(instances, STATIC, read)
    default = host["instances"][0]
    assert paths(default) == ["/etc/kubernetes/schedulers/kube-scheduler.yaml",
                              "/var/lib/kubesched/static-pod/adopted/kube-scheduler.yaml",
                              "/etc/kubernetes/manifests/kube-scheduler.yaml"]
    assert default["files"][1]["content"] == KUBEADM_1_31
    manifest = yaml.safe_load(default["files"][-1]["content"])
    kubeadm = yaml.safe_load(KUBEADM_1_31)
    assert manifest["spec"]["containers"][0]["image"] == kubeadm["spec"]["containers"][0]["image"]
    assert "--config=/etc/kubernetes/schedulers/kube-scheduler.yaml" in manifest["spec"]["containers"][0]["command"]
    assert drift["kube-scheduler"]["adopted"] and "kubeadm upgrade" in drift["kube-scheduler"]["reason"]
    assert drift["binpack"]["reason"] == "the manifest is missing" and not drift["binpack"]["adopted"]


def test_static_pod_checksum_follows_the_kubeconfig_on_the_host():
    instances = two()
    first, _drift = static_pod_host(instances, STATIC, read_answer({"/etc/kubernetes/scheduler.conf": "one"}))
    second, _drift = static_pod_host(instances, STATIC, read_answer({"/etc/kubernetes/scheduler.conf": "two"}))
    same, _drift = static_pod_host(instances, STATIC, read_answer({"/etc/kubernetes/scheduler.conf": "one"}))
    manifest = [h["instances"][0]["files"][-1]["content"] for h in (first, second, same)]
    assert manifest[0] != manifest[1] and manifest[0] == manifest[2]


def test_static_pod_refuses_a_foreign_manifest_that_does_not_run_kube_scheduler():
    nginx = "apiVersion: v1\nkind: Pod\nmetadata: {name: kube-scheduler}\nspec:\n  containers: [{name: web, image: nginx}]\n"
    with pytest.raises(RolloutError, match="does not run kube-scheduler"):
        static_pod_host(two(), STATIC, read_answer({"/etc/kubernetes/manifests/kube-scheduler.yaml": nginx}))
    with pytest.raises(RolloutError, match="left alone"):
        static_pod_host(resolved({"name": "old", "state": "absent"}), STATIC,
                        read_answer({"/etc/kubernetes/manifests/old.yaml": nginx}))


def test_static_pod_rerun_on_its_own_manifest_builds_on_the_adopted_copy():
    instances = two()
    read = read_answer({"/etc/kubernetes/manifests/kube-scheduler.yaml": KUBEADM_1_31})
    host, _drift = static_pod_host(instances, STATIC, read)
    ours = host["instances"][0]["files"][-1]["content"]
    again, drift = static_pod_host(instances, STATIC, read_answer({
        "/etc/kubernetes/manifests/kube-scheduler.yaml": ours,
        "/var/lib/kubesched/static-pod/adopted/kube-scheduler.yaml": KUBEADM_1_31}))
    # Same manifest as the first run, no second adoption copy.
    assert again["instances"][0]["files"][-1]["content"] == ours
    assert "/var/lib/kubesched/static-pod/adopted/kube-scheduler.yaml" not in paths(again["instances"][0])
    assert drift["kube-scheduler"]["adopted"]


@pytest.mark.parametrize("directory, inside", [("/etc/kubernetes/manifests", True), ("/etc/kubernetes/manifests/x", True),
                                               ("/etc/kubernetes/manifests-state", False), ("/etc/kubernetes", False)])
def test_nothing_the_role_stores_may_lie_in_the_static_pod_directory(directory, inside):
    if inside:
        with pytest.raises(RolloutError, match="is inside the static pod directory /etc/kubernetes/manifests"):
            check_outside("/etc/kubernetes/manifests/", [directory])
    else:
        check_outside("/etc/kubernetes/manifests", [directory])


def test_static_pod_removes_the_manifest_first_and_the_serving_certificate_last():
    host, _drift = static_pod_host(two(), STATIC, read_answer({}))
    old = host["instances"][2]
    assert old["state"] == "absent"
    assert paths(old)[-1] == "/etc/kubernetes/manifests/old.yaml"
    assert paths(old)[:2] == ["/etc/kubernetes/pki/schedulers/old.crt", "/etc/kubernetes/pki/schedulers/old.key"]


def sharing(*states, other_path=False):
    """kube-scheduler and gpu with one kubeconfig_content at one path (gpu's own path when ``other_path``)."""
    gpu = {"name": "gpu", "secure_port": 10260, "kubeconfig": "/etc/kubernetes/gpu.conf" if other_path else "/etc/kubernetes/shared.conf",
           "kubeconfig_content": KUBECONFIG, "state": states[1],
           "config": {"profiles": [{"schedulerName": "gpu"}], "leaderElection": {"resourceName": "gpu"}}}
    return resolved({"name": "kube-scheduler", "default_scheduler": True, "kubeconfig": "/etc/kubernetes/shared.conf",
                     "kubeconfig_content": KUBECONFIG, "state": states[0]}, gpu)


@pytest.mark.parametrize("render", [lambda instances: systemd_host(instances, SYSTEMD),
                                    lambda instances: static_pod_host(instances, STATIC, read_answer({}))[0]],
                         ids=["systemd", "static_pod"])
def test_an_absent_instance_removes_its_kubeconfig_only_when_no_instance_that_stays_uses_it(render):
    # The other instance still runs with it.
    _default, gpu = render(sharing("present", "absent"))["instances"]
    assert "/etc/kubernetes/shared.conf" not in paths(gpu)
    # Both go: one of them removes it.
    both = render(sharing("absent", "absent"))["instances"]
    assert [paths(entry).count("/etc/kubernetes/shared.conf") for entry in both] == [1, 1]
    # A path of its own, written from its kubeconfig_content: it goes with the instance.
    _default, gpu = render(sharing("present", "absent", other_path=True))["instances"]
    assert "/etc/kubernetes/gpu.conf" in paths(gpu)


def test_two_instances_present_with_one_kubeconfig_both_list_it_with_one_content():
    default, gpu = systemd_host(sharing("present", "present"), SYSTEMD)["instances"]
    first, second = [next(f for f in entry["files"] if f["path"] == "/etc/kubernetes/shared.conf") for entry in (default, gpu)]
    assert first == second and first["content"] == KUBECONFIG
