"""kubeadm_scheduler_patch: kubeadm's ClusterConfiguration for the instance the static_pod role adopts, from
instances resolved by the real instance model, and checked against what kubeadm does with it: kubeadm's default
flags (manifests.go getSchedulerCommand) overridden by extraArgs, its kubeconfig volume plus extraVolumes. The
resulting command and mounts are compared with the manifest the static_pod role writes for the same instance."""
from __future__ import annotations

import sys

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.filter.kubeadm_scheduler_patch import (
    KubeadmPatchError, kubeadm_scheduler_patch)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.static_pod_manifest import static_pod_manifest

# kubeadm's scheduler command before extraArgs (cmd/kubeadm/app/phases/controlplane/manifests.go).
KUBEADM_DEFAULT_ARGS = {
    "authentication-kubeconfig": "/etc/kubernetes/scheduler.conf",
    "authorization-kubeconfig": "/etc/kubernetes/scheduler.conf",
    "bind-address": "127.0.0.1",
    "kubeconfig": "/etc/kubernetes/scheduler.conf",
    "leader-elect": "true",
}


def resolved(instance, version="1.34.2"):
    instances, errors, _warnings = resolve([instance], version, "/etc/kubernetes/schedulers")
    assert errors == []
    return instances[0]


def kubeadm_command(patch):
    """What kubeadm writes: its defaults overridden by extraArgs (either form), as kube-scheduler flags."""
    extra = patch["scheduler"]["extraArgs"]
    args = dict(KUBEADM_DEFAULT_ARGS)
    args.update({a["name"]: a["value"] for a in extra} if isinstance(extra, list) else extra)
    return sorted("--%s=%s" % item for item in args.items())


def test_the_default_scheduler_keeps_its_config_through_kubeadm():
    instance = resolved({"name": "kube-scheduler", "default_scheduler": True})
    patch = kubeadm_scheduler_patch(instance, "1.34.2")
    assert (patch["apiVersion"], patch["kind"]) == ("kubeadm.k8s.io/v1beta4", "ClusterConfiguration")
    args = patch["scheduler"]["extraArgs"]
    assert args == sorted(args, key=lambda a: a["name"])
    assert {"name": "config", "value": "/etc/kubernetes/schedulers/kube-scheduler.yaml"} in args
    assert all(isinstance(a["value"], str) for a in args)
    assert patch["scheduler"]["extraVolumes"] == [{
        "name": "kubesched-config", "hostPath": "/etc/kubernetes/schedulers/kube-scheduler.yaml",
        "mountPath": "/etc/kubernetes/schedulers/kube-scheduler.yaml", "readOnly": True, "pathType": "File"}]


@pytest.mark.parametrize("version", ["1.30.4", "1.31.0", "1.34.2", "1.35.1"])
def test_kubeadms_command_equals_the_role_s_manifest(version):
    # The flags kubeadm upgrade writes from the patch run the scheduler as the static_pod role does: the same
    # instance flags; kubeadm's --kubeconfig (ignored next to --config) and --leader-elect set to the config's.
    instance = resolved({"name": "kube-scheduler", "default_scheduler": True, "secure_port": 10300,
                         "extra_flags": {"v": 4}}, version)
    patch = kubeadm_scheduler_patch(instance, version)
    role = static_pod_manifest(instance, version, "0" * 64)["spec"]["containers"][0]["command"][1:]
    extra = sorted(set(kubeadm_command(patch)) - set(role))
    assert extra == ["--kubeconfig=/etc/kubernetes/scheduler.conf", "--leader-elect=true"]
    assert set(role) <= set(kubeadm_command(patch))
    assert "--secure-port=10300" in kubeadm_command(patch) and "--v=4" in kubeadm_command(patch)


def test_v1beta3_for_kubeadm_1_30_takes_a_map():
    patch = kubeadm_scheduler_patch(resolved({"name": "kube-scheduler", "default_scheduler": True}, "1.30.4"), "1.30.4")
    assert patch["apiVersion"] == "kubeadm.k8s.io/v1beta3"
    assert patch["scheduler"]["extraArgs"]["config"] == "/etc/kubernetes/schedulers/kube-scheduler.yaml"


def test_leader_election_off_in_the_config_overrides_kubeadms_flag():
    instance = resolved({"name": "kube-scheduler", "default_scheduler": True,
                         "config": {"leaderElection": {"leaderElect": False},
                                    "profiles": [{"schedulerName": "default-scheduler"}]}})
    assert "--leader-elect=false" in kubeadm_command(kubeadm_scheduler_patch(instance, "1.34.2"))


def test_a_kubeconfig_of_its_own_is_mounted_too():
    instance = resolved({"name": "kube-scheduler", "default_scheduler": True,
                         "kubeconfig": "/etc/kubernetes/kubesched.conf"})
    patch = kubeadm_scheduler_patch(instance, "1.34.2")
    mounts = {v["name"]: v for v in patch["scheduler"]["extraVolumes"]}
    assert mounts["kubesched-kubeconfig"]["hostPath"] == "/etc/kubernetes/kubesched.conf"
    assert mounts["kubesched-kubeconfig"]["readOnly"] is True
    assert "--kubeconfig=/etc/kubernetes/kubesched.conf" in kubeadm_command(patch)
    assert "--authentication-kubeconfig=/etc/kubernetes/kubesched.conf" in kubeadm_command(patch)


@pytest.mark.parametrize("instance, version, words", [
    ({"name": "bin-packing", "config": {"leaderElection": {"resourceName": "bin-packing"},
                                        "profiles": [{"schedulerName": "bin-packing"}]}}, "1.34.2", ["kubeadm manages only its own scheduler", "bin-packing"]),
    ({"name": "kube-scheduler", "default_scheduler": True, "state": "absent"}, "1.34.2", ["absent"]),
    ({"name": "kube-scheduler", "default_scheduler": True}, "latest", ["kubernetes_version", "latest"]),
])
def test_refused(instance, version, words):
    with pytest.raises(KubeadmPatchError) as error:
        kubeadm_scheduler_patch(resolved(instance), version)
    for word in words:
        assert word in str(error.value)


def test_not_a_resolved_instance():
    with pytest.raises(KubeadmPatchError, match="not a resolved scheduler instance: no flags, config_path"):
        kubeadm_scheduler_patch({"name": "kube-scheduler", "kubeconfig": "/x"}, "1.34.2")


PLAY = """
- name: The filter through Ansible
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Resolve
      kubesched.schedulers.scheduler_instances:
        instances: [{name: kube-scheduler, default_scheduler: true}]
        kubernetes_version: "1.33.1"
        config_dir: /etc/kubernetes/schedulers
      register: resolved
    - name: Keep the patch
      ansible.builtin.copy:
        content: "{{ resolved.instances[0] | kubesched.schedulers.kubeadm_scheduler_patch('1.33.1') | to_nice_yaml }}"
        dest: "{out}/patch.yml"
        mode: "0600"
    - name: A wrong instance fails with the reason
      ansible.builtin.debug:
        msg: "{{ {'name': 'x'} | kubesched.schedulers.kubeadm_scheduler_patch('1.33.1') }}"
      ignore_errors: true
      register: refused
    - name: Keep the reason
      ansible.builtin.copy:
        content: "{{ refused.msg }}"
        dest: "{out}/refused.txt"
        mode: "0600"
"""


def test_the_filter_in_a_playbook(tmp_path, ansible_playbook):
    (tmp_path / "play.yml").write_text(PLAY.replace("{out}", str(tmp_path)))
    run = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                            tmp_path / "play.yml"])
    assert run.returncode == 0, run.stdout + run.stderr
    patch = yaml.safe_load((tmp_path / "patch.yml").read_text())
    assert patch["scheduler"]["extraArgs"][3] == {"name": "config", "value": "/etc/kubernetes/schedulers/kube-scheduler.yaml"}
    assert "not a resolved scheduler instance" in (tmp_path / "refused.txt").read_text()
