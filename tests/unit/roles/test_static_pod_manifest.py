# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The static_pod role's manifest builder against kubeadm's kube-scheduler manifest.

Expectations are kubeadm's (cmd/kubeadm/app/phases/controlplane/manifests.go, volumes.go and
cmd/kubeadm/app/util/staticpod/utils.go; the /livez + /readyz switch is kubernetes#126945, released in 1.32; from
1.34 the probes name the port, probe-port, which the container declares), and every manifest is checked by
kubernetes-validate against the OpenAPI schema of its Kubernetes version.
"""

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render import static_pod_manifest as builder

# 1.38 is a preview: kubeadm v1.38.0-beta.0 writes the scheduler's manifest as 1.37 does.
VERSIONS = ["1.30.14", "1.31.13", "1.32.9", "1.33.5", "1.34.2", "1.35.0", "1.36.0", "1.37.2", "1.38.0"]
KUBECONFIG = "/etc/kubernetes/scheduler.conf"

# kube-scheduler.yaml as kubeadm 1.31 writes it (GetStaticPodSpecs + ComponentPod + the scheduler's volumes),
# with a ClusterConfiguration that adds scheduler.extraArgs v=2 and a proxy env, to see that adoption keeps them.
KUBEADM_1_31 = """
apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: null
  labels:
    component: kube-scheduler
    tier: control-plane
  name: kube-scheduler
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-scheduler
    - --authentication-kubeconfig=/etc/kubernetes/scheduler.conf
    - --authorization-kubeconfig=/etc/kubernetes/scheduler.conf
    - --bind-address=127.0.0.1
    - --kubeconfig=/etc/kubernetes/scheduler.conf
    - --leader-elect=true
    - --v=2
    env:
    - name: HTTPS_PROXY
      value: http://proxy.example:3128
    image: registry.k8s.io/kube-scheduler:v1.31.13
    imagePullPolicy: IfNotPresent
    livenessProbe:
      failureThreshold: 8
      httpGet:
        host: 127.0.0.1
        path: /healthz
        port: 10259
        scheme: HTTPS
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    name: kube-scheduler
    resources:
      requests:
        cpu: 100m
    startupProbe:
      failureThreshold: 24
      httpGet:
        host: 127.0.0.1
        path: /healthz
        port: 10259
        scheme: HTTPS
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    volumeMounts:
    - mountPath: /etc/kubernetes/scheduler.conf
      name: kubeconfig
      readOnly: true
  hostNetwork: true
  priority: 2000001000
  priorityClassName: system-node-critical
  securityContext:
    seccompProfile:
      type: RuntimeDefault
  volumes:
  - hostPath:
      path: /etc/kubernetes/scheduler.conf
      type: FileOrCreate
    name: kubeconfig
status: {}
"""


def instance(name="kube-scheduler", port=10259, bind="127.0.0.1", version="1.34.2", extra=()):
    """A resolved instance in the shape kubesched.schedulers.scheduler_instances returns."""
    config_path = "/etc/kubernetes/schedulers/%s.yaml" % name
    return {
        "name": name, "state": "present", "secure_port": port, "bind_address": bind, "kubeconfig": KUBECONFIG,
        "config_path": config_path, "image": "registry.k8s.io/kube-scheduler:v%s" % version,
        "flags": ["--authentication-kubeconfig=%s" % KUBECONFIG, "--authorization-kubeconfig=%s" % KUBECONFIG,
                  "--bind-address=%s" % bind, "--config=%s" % config_path, "--secure-port=%d" % port] + list(extra),
    }


def render(version, base=None, image=None, checksum="c1", **kwargs):
    text = builder.static_pod_manifest_yaml(instance(version=version, **kwargs), version, checksum, base, image)
    return text, yaml.safe_load(text)


def kubeadm_probe(path, failure_threshold, period, initial_delay, port=10259):
    probe = {"httpGet": {"host": "127.0.0.1", "path": path, "port": port, "scheme": "HTTPS"},
             "failureThreshold": failure_threshold, "periodSeconds": period, "timeoutSeconds": 15}
    if initial_delay:
        probe["initialDelaySeconds"] = initial_delay
    return probe


@pytest.mark.parametrize("version", VERSIONS)
def test_new_manifest_has_kubeadm_pod_fields(version):
    _text, pod = render(version)
    assert pod["metadata"]["labels"] == {"component": "kube-scheduler", "tier": "control-plane"}
    assert pod["metadata"]["namespace"] == "kube-system"
    spec = pod["spec"]
    assert spec["hostNetwork"] is True
    assert spec["priorityClassName"] == "system-node-critical" and spec["priority"] == 2000001000
    assert spec["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    (container,) = spec["containers"]
    assert container["image"] == "registry.k8s.io/kube-scheduler:v%s" % version
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["resources"] == {"requests": {"cpu": "100m"}}
    assert container["command"][0] == "kube-scheduler"
    assert {"name": "kubeconfig", "hostPath": {"path": KUBECONFIG, "type": "FileOrCreate"}} in spec["volumes"]
    assert {"name": "kubeconfig", "mountPath": KUBECONFIG, "readOnly": True} in container["volumeMounts"]


@pytest.mark.parametrize("version", ["1.30.14", "1.31.13"])
def test_probes_before_1_32_are_healthz_without_readiness(version):
    _text, pod = render(version)
    container = pod["spec"]["containers"][0]
    assert container["livenessProbe"] == kubeadm_probe("/healthz", 8, 10, 10)
    assert container["startupProbe"] == kubeadm_probe("/healthz", 24, 10, 10)
    assert "readinessProbe" not in container


@pytest.mark.parametrize("version", ["1.32.9", "1.33.5"])
def test_probes_of_1_32_and_1_33_are_livez_and_readyz_on_the_port_number(version):
    _text, pod = render(version)
    container = pod["spec"]["containers"][0]
    assert container["livenessProbe"] == kubeadm_probe("/livez", 8, 10, 10)
    assert container["readinessProbe"] == kubeadm_probe("/readyz", 3, 1, 0)
    assert container["startupProbe"] == kubeadm_probe("/livez", 24, 10, 10)
    assert "ports" not in container


@pytest.mark.parametrize("version", ["1.34.2", "1.35.0", "1.36.0", "1.37.2", "1.38.0"])
def test_probes_from_1_34_name_the_port_the_container_declares(version):
    _text, pod = render(version)
    container = pod["spec"]["containers"][0]
    assert container["livenessProbe"] == kubeadm_probe("/livez", 8, 10, 10, "probe-port")
    assert container["readinessProbe"] == kubeadm_probe("/readyz", 3, 1, 0, "probe-port")
    assert container["startupProbe"] == kubeadm_probe("/livez", 24, 10, 10, "probe-port")
    assert container["ports"] == [{"containerPort": 10259, "name": "probe-port", "protocol": "TCP"}]


@pytest.mark.parametrize("version,named", [("1.33.5", False), ("1.34.2", True)])
def test_probes_follow_port_and_drop_host_for_unspecified_bind_address(version, named):
    # kubeadm's getProbeAddress: 0.0.0.0 and :: give no host, so the kubelet probes the pod IP.
    for bind in ("0.0.0.0", "::"):
        _text, pod = render(version, port=10261, bind=bind)
        container = pod["spec"]["containers"][0]
        for name in ("livenessProbe", "readinessProbe", "startupProbe"):
            http_get = container[name]["httpGet"]
            assert "host" not in http_get and http_get["port"] == ("probe-port" if named else 10261)
        assert container.get("ports") == ([{"containerPort": 10261, "name": "probe-port", "protocol": "TCP"}]
                                          if named else None)


def test_config_is_a_flag_and_a_read_only_file_mount():
    _text, pod = render("1.34.2", name="bin-packing", port=10260)
    container = pod["spec"]["containers"][0]
    config = "/etc/kubernetes/schedulers/bin-packing.yaml"
    assert "--config=%s" % config in container["command"]
    assert {"name": "kubesched-config", "hostPath": {"path": config, "type": "File"}} in pod["spec"]["volumes"]
    assert {"name": "kubesched-config", "mountPath": config, "readOnly": True} in container["volumeMounts"]
    assert pod["metadata"]["name"] == container["name"] == "bin-packing"


def test_only_the_checksum_annotation_changes_with_the_config():
    _text, first = render("1.34.2", checksum="one")
    _text, second = render("1.34.2", checksum="two")
    assert first["metadata"]["annotations"] == {builder.CHECKSUM_ANNOTATION: "one"}
    second["metadata"]["annotations"][builder.CHECKSUM_ANNOTATION] = "one"
    assert first == second


def test_adopting_kubeadm_manifest_keeps_kubeadm_fields_and_adds_the_config():
    base = yaml.safe_load(KUBEADM_1_31)
    _text, pod = render("1.31.13", base=base)
    container = pod["spec"]["containers"][0]
    assert container["command"] == [
        "kube-scheduler",
        "--authentication-kubeconfig=%s" % KUBECONFIG,
        "--authorization-kubeconfig=%s" % KUBECONFIG,
        "--bind-address=127.0.0.1",
        "--config=/etc/kubernetes/schedulers/kube-scheduler.yaml",
        "--secure-port=10259",
        "--v=2",
    ]  # --kubeconfig is ignored and --leader-elect would override the config file: both go
    assert container["env"] == base["spec"]["containers"][0]["env"]
    assert container["image"] == "registry.k8s.io/kube-scheduler:v1.31.13"
    assert container["livenessProbe"] == base["spec"]["containers"][0]["livenessProbe"]
    assert "creationTimestamp" not in pod["metadata"] and "status" not in pod
    assert [v["name"] for v in pod["spec"]["volumes"]] == ["kubeconfig", "kubesched-config"]


def test_adoption_takes_an_explicit_image_and_upgrades_probes_with_the_version():
    base = yaml.safe_load(KUBEADM_1_31)
    _text, pod = render("1.32.9", base=base, image="example.org/my-scheduler:1")
    container = pod["spec"]["containers"][0]
    assert container["image"] == "example.org/my-scheduler:1"
    assert container["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert container["readinessProbe"] == kubeadm_probe("/readyz", 3, 1, 0)


def kubeadm_1_34():
    """The same manifest as kubeadm 1.34 writes it: /livez, /readyz, and every probe on the named port."""
    pod = yaml.safe_load(KUBEADM_1_31)
    container = pod["spec"]["containers"][0]
    container["image"] = "registry.k8s.io/kube-scheduler:v1.34.2"
    container["ports"] = [{"containerPort": 10259, "name": "probe-port", "protocol": "TCP"}]
    container["livenessProbe"] = kubeadm_probe("/livez", 8, 10, 10, "probe-port")
    container["readinessProbe"] = kubeadm_probe("/readyz", 3, 1, 0, "probe-port")
    container["startupProbe"] = kubeadm_probe("/livez", 24, 10, 10, "probe-port")
    return pod


def test_adopting_kubeadm_1_34_keeps_the_named_port_and_moves_it_with_the_instance():
    _text, pod = render("1.34.2", base=kubeadm_1_34(), port=10300)
    container = pod["spec"]["containers"][0]
    assert container["ports"] == [{"containerPort": 10300, "name": "probe-port", "protocol": "TCP"}]
    for name in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert container[name]["httpGet"]["port"] == "probe-port"


def test_adopting_an_older_kubeadm_manifest_on_1_34_declares_the_named_port():
    _text, pod = render("1.34.2", base=yaml.safe_load(KUBEADM_1_31))
    container = pod["spec"]["containers"][0]
    assert container["ports"] == [{"containerPort": 10259, "name": "probe-port", "protocol": "TCP"}]
    assert container["startupProbe"] == kubeadm_probe("/livez", 24, 10, 10, "probe-port")


def test_adopting_a_1_34_manifest_for_1_33_probes_numbers_and_keeps_the_port_entry_current():
    # A downgrade: kubeadm 1.33 probes the number; a probe-port entry left from 1.34 must not name a stale port.
    _text, pod = render("1.33.5", base=kubeadm_1_34(), port=10300)
    container = pod["spec"]["containers"][0]
    assert container["livenessProbe"]["httpGet"]["port"] == 10300
    assert container["ports"] == [{"containerPort": 10300, "name": "probe-port", "protocol": "TCP"}]


def test_other_ports_of_an_adopted_manifest_stay():
    base = kubeadm_1_34()
    base["spec"]["containers"][0]["ports"].insert(0, {"containerPort": 9090, "protocol": "TCP"})
    _text, pod = render("1.35.0", base=base, port=10300)
    assert pod["spec"]["containers"][0]["ports"] == [
        {"containerPort": 9090, "protocol": "TCP"}, {"containerPort": 10300, "name": "probe-port", "protocol": "TCP"}]


def test_adoption_is_stable_and_extra_flags_override_kubeadm_ones():
    base = yaml.safe_load(KUBEADM_1_31)
    text, pod = render("1.31.13", base=base, extra=["--v=4"])
    again, _pod = render("1.31.13", base=yaml.safe_load(text), extra=["--v=4"])
    assert again == text
    assert [arg for arg in pod["spec"]["containers"][0]["command"] if arg.startswith("--v=")] == ["--v=4"]


def test_adoption_refuses_a_pod_without_kube_scheduler():
    etcd = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "etcd"},
            "spec": {"containers": [{"name": "etcd", "command": ["etcd"]}]}}
    assert builder.is_scheduler_pod(yaml.safe_load(KUBEADM_1_31))
    assert not builder.is_scheduler_pod(etcd)
    with pytest.raises(ValueError):
        builder.static_pod_manifest(instance(), "1.34.2", "c", etcd)


def test_yaml_is_sorted_and_never_folds_long_flags():
    long_flag = "--feature-gates=" + ",".join("Gate%02d=true" % i for i in range(20))
    text, _pod = render("1.34.2", extra=[long_flag])
    assert "    - %s\n" % long_flag in text
    top_level = [line.split(":")[0] for line in text.splitlines() if line and not line.startswith(" ")]
    assert top_level == sorted(top_level) == ["apiVersion", "kind", "metadata", "spec"]


@pytest.mark.parametrize("version", VERSIONS)
def test_manifests_are_valid_pods_for_their_version(version, tmp_path, skip_without_openapi_schemas):
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    skip_without_openapi_schemas(version)
    manifests = [render(version)[1], render(version, base=yaml.safe_load(KUBEADM_1_31))[1],
                 render(version, base=kubeadm_1_34(), port=10300)[1],
                 render(version, name="two", port=10260, bind="0.0.0.0")[1]]
    for pod in manifests:
        kubernetes_validate.validate(pod, version, strict=True)
