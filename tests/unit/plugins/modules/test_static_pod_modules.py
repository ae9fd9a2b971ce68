# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host-side helpers of the static_pod role: kubelet argument parsing and the listener of a port.

Expectations come from how the kubelet reads its flags (pflag: --name=value or --name value, the last one wins;
systemd expands $VAR and ${VAR} from Environment= and EnvironmentFile=) and from the kernel (/proc/net/tcp).
"""

import os
import socket

from ansible_collections.kubesched.schedulers.plugins.module_utils import _kubelet as kubelet
from ansible_collections.kubesched.schedulers.plugins.modules import static_pod_health as health


def test_last_flag_wins_in_both_spellings():
    args = ["--config=/a.yaml", "--pod-manifest-path", "/one", "--config", "/b.yaml", "--pod-manifest-path=/two"]
    assert kubelet.flag_value(args, "config") == "/b.yaml"
    assert kubelet.flag_value(args, "pod-manifest-path") == "/two"
    assert kubelet.flag_value(args, "cgroup-driver") is None


def test_environment_files_as_systemd_reads_them():
    text = '# kubeadm\nKUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/c.sock --node-ip=10.0.0.1"\n' \
           "KUBELET_EXTRA_ARGS=--config=/etc/kubelet/custom.yaml\n"
    assert kubelet._env_assignments(text) == {
        "KUBELET_KUBEADM_ARGS": "--container-runtime-endpoint=unix:///run/c.sock --node-ip=10.0.0.1",
        "KUBELET_EXTRA_ARGS": "--config=/etc/kubelet/custom.yaml",
    }


def test_static_pod_path_from_yaml_and_json_kubelet_configs(tmp_path):
    yaml_config = tmp_path / "config.yaml"
    yaml_config.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                           "staticPodPath: /etc/kubernetes/manifests\n")
    json_config = tmp_path / "config.json"
    json_config.write_text('{"kind": "KubeletConfiguration", "staticPodPath": "/opt/pods"}')
    without = tmp_path / "none.yaml"
    without.write_text("kind: KubeletConfiguration\ncgroupDriver: systemd\n")
    assert kubelet.static_pod_path_in(str(yaml_config)) == "/etc/kubernetes/manifests"
    assert kubelet.static_pod_path_in(str(json_config)) == "/opt/pods"
    assert kubelet.static_pod_path_in(str(without)) is None


def test_listener_pid_is_the_process_holding_the_listening_socket():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    port = server.getsockname()[1]
    try:
        assert health.listener_pid(port) is None  # bound, not listening
        server.listen(1)
        assert health.listener_pid(port) == os.getpid()
    finally:
        server.close()
    assert health.listener_pid(port) is None
