"""The shared instance model: derived values, and every check that must fail before a host is touched.

Expectations come from kube-scheduler facts (default port 10259, lease kube-system/kube-scheduler, /livez from
1.31 and /healthz before, flags removed upstream) and from the model's documented contract.
"""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve

CONFIG_DIR = "/etc/kubernetes/schedulers"
DEFAULT = {"name": "kube-scheduler", "default_scheduler": True}


def second(**overrides):
    instance = {
        "name": "batch-scheduler",
        "secure_port": 10260,
        "config": {"leaderElection": {"resourceName": "batch-scheduler"},
                   "profiles": [{"schedulerName": "batch"}]},
    }
    instance.update(overrides)
    return instance


def resolve_ok(instances, version="1.34.2", peers=None):
    resolved, errors, _warnings = resolve(instances, version, CONFIG_DIR, peers)
    assert errors == []
    return resolved


def resolve_errors(instances, version="1.34.2", peers=None):
    resolved, errors, _warnings = resolve(instances, version, CONFIG_DIR, peers)
    assert resolved == []
    assert errors
    return "\n".join(errors)


@pytest.mark.parametrize("version, tag", [("1.38.0-rc.0", "v1.38.0-rc.0"), ("v1.38.0-beta.0", "v1.38.0-beta.0")])
def test_a_pre_release_names_its_own_image_and_warns(version, tag):
    resolved, errors, warnings = resolve([DEFAULT], version, CONFIG_DIR)
    assert errors == [] and resolved[0]["image"] == "registry.k8s.io/kube-scheduler:" + tag
    assert resolved[0]["health_url"] == "https://127.0.0.1:10259/livez"
    assert [warning.split(":")[0] for warning in warnings] == ["Kubernetes %s is a pre-release" % tag[1:]]


def test_default_instance_is_the_kubeadm_default_scheduler():
    [instance] = resolve_ok([DEFAULT])
    assert instance["secure_port"] == 10259
    assert instance["bind_address"] == "127.0.0.1"
    assert instance["scheduler_names"] == ["default-scheduler"]
    assert instance["lease"] == {"namespace": "kube-system", "name": "kube-scheduler"}
    assert instance["config_path"] == "/etc/kubernetes/schedulers/kube-scheduler.yaml"
    assert instance["health_url"] == "https://127.0.0.1:10259/livez"
    assert instance["image"] == "registry.k8s.io/kube-scheduler:v1.34.2"
    assert instance["flags"] == [
        "--authentication-kubeconfig=/etc/kubernetes/scheduler.conf",
        "--authorization-kubeconfig=/etc/kubernetes/scheduler.conf",
        "--bind-address=127.0.0.1",
        "--config=/etc/kubernetes/schedulers/kube-scheduler.yaml",
        "--secure-port=10259",
    ]


def test_rendered_config_carries_the_instance_kubeconfig_because_flags_are_ignored_with_config():
    [instance] = resolve_ok([dict(DEFAULT, kubeconfig="/etc/kubernetes/other.conf")])
    rendered = yaml.safe_load(instance["config_rendered"])
    assert rendered["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert rendered["kind"] == "KubeSchedulerConfiguration"
    assert rendered["clientConnection"]["kubeconfig"] == "/etc/kubernetes/other.conf"
    assert len(instance["config_checksum"]) == 64


@pytest.mark.parametrize("version, path", [("1.30.5", "/healthz"), ("1.31.0", "/livez"), ("1.36.1", "/livez")])
def test_health_path_follows_the_version(version, path):
    [instance] = resolve_ok([DEFAULT], version=version)
    assert instance["health_path"] == path


@pytest.mark.parametrize("bind, url", [
    ("0.0.0.0", "https://127.0.0.1:10259/livez"),
    ("::", "https://[::1]:10259/livez"),
    ("10.0.0.5", "https://10.0.0.5:10259/livez"),
    ("fd00::5", "https://[fd00::5]:10259/livez"),
])
def test_health_url_probes_loopback_for_wildcard_addresses(bind, url):
    [instance] = resolve_ok([dict(DEFAULT, bind_address=bind)])
    assert instance["health_url"] == url


def test_two_instances_side_by_side():
    resolved = resolve_ok([DEFAULT, second()])
    assert [i["name"] for i in resolved] == ["kube-scheduler", "batch-scheduler"]
    assert resolved[1]["lease"] == {"namespace": "kube-system", "name": "batch-scheduler"}
    assert resolved[1]["scheduler_names"] == ["batch"]


def test_second_scheduler_on_the_default_lease_is_refused():
    errors = resolve_errors([DEFAULT, second(config={"profiles": [{"schedulerName": "batch"}]})])
    assert "kube_scheduler_instances[1].config.leaderElection.resourceName" in errors
    assert "kube-system/kube-scheduler" in errors


def test_default_lease_is_allowed_when_declared_default_or_without_leader_election():
    resolve_ok([{"name": "kube-scheduler", "default_scheduler": True}])
    [instance] = resolve_ok([{"name": "solo", "config": {"leaderElection": {"leaderElect": False}}}])
    assert instance["lease"] is None
    assert instance["leader_elect"] is False


@pytest.mark.parametrize("instances, field", [
    ([DEFAULT, second(secure_port=10259)], "kube_scheduler_instances[1].secure_port"),
    ([DEFAULT, second(config={"leaderElection": {"resourceName": "batch-scheduler"},
                              "profiles": [{"schedulerName": "default-scheduler"}]})],
     "kube_scheduler_instances[1].config.profiles"),
    ([second(), second(name="batch-2", secure_port=10261)], "kube_scheduler_instances[1].config.profiles"),
    ([DEFAULT, dict(DEFAULT, secure_port=10260, config={"profiles": [{"schedulerName": "x"}]})],
     "only one instance can be the default scheduler"),
    ([DEFAULT, DEFAULT], "kube_scheduler_instances[1].name"),
])
def test_collisions_between_instances_name_the_field(instances, field):
    assert field in resolve_errors(instances)


def test_lease_collision_between_instances():
    other = second(name="batch-2", secure_port=10261,
                   config={"leaderElection": {"resourceName": "batch-scheduler"},
                           "profiles": [{"schedulerName": "batch-2"}]})
    errors = resolve_errors([second(), other])
    assert "kube_scheduler_instances[1].config.leaderElection: lease kube-system/batch-scheduler" in errors


def test_absent_instances_free_their_port():
    resolved = resolve_ok([DEFAULT, second(secure_port=10259, state="absent")])
    assert resolved[1]["state"] == "absent"


def test_removing_an_instance_needs_no_valid_config():
    # Its config would take the default lease and has a bad value: irrelevant for a removal.
    gone = {"name": "old-scheduler", "state": "absent", "secure_port": 10261,
            "config": {"percentageOfNodesToScore": 150}, "extra_flags": {"address": "0.0.0.0"}}
    [_default, resolved] = resolve_ok([DEFAULT, gone])
    assert resolved["config_path"] == "/etc/kubernetes/schedulers/old-scheduler.yaml"
    assert resolved["health_url"] == "https://127.0.0.1:10261/livez"
    assert resolved["lease"] is None and resolved["scheduler_names"] == []


@pytest.mark.parametrize("instance, expected", [
    ({"name": "Kube_Scheduler"}, "kube_scheduler_instances[0].name: Invalid value"),
    ({"default_scheduler": True}, "kube_scheduler_instances[0].name: Required value"),
    (dict(DEFAULT, secure_port=0), "kube_scheduler_instances[0].secure_port: Invalid value: 0"),
    (dict(DEFAULT, secure_port="http"), "kube_scheduler_instances[0].secure_port: Invalid value: 'http'"),
    (dict(DEFAULT, bind_address="localhost"), "kube_scheduler_instances[0].bind_address: Invalid value"),
    (dict(DEFAULT, state="stopped"), "kube_scheduler_instances[0].state: Unsupported value"),
    (dict(DEFAULT, kubeconfig="scheduler.conf"), "kube_scheduler_instances[0].kubeconfig: Invalid value: 'scheduler.conf': must be an absolute"),
    (dict(DEFAULT, sceduler_port=1), "kube_scheduler_instances[0].sceduler_port: unknown field"),
    (dict(DEFAULT, config={}, config_content="kind: x"), "mutually exclusive"),
    (dict(DEFAULT, config="profiles: []"), "kube_scheduler_instances[0].config: must be a dict"),
])
def test_bad_fields_are_named(instance, expected):
    assert expected in resolve_errors([instance])


def test_config_errors_carry_the_upstream_field_path_under_the_instance():
    errors = resolve_errors([dict(DEFAULT, config={"percentageOfNodesToScore": 150})])
    assert ("kube_scheduler_instances[0].config.percentageOfNodesToScore: Invalid value: 150: "
            "not in valid range [0-100]") in errors


def test_config_content_is_strictly_decoded_as_text():
    text = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "parallelism: 8\nparallelism: 4\n")
    errors = resolve_errors([dict(DEFAULT, config_content=text)])
    assert "kube_scheduler_instances[0].config_content" in errors
    assert "already set in map" in errors


def test_config_content_resolves_like_the_same_config_dict():
    config = {"profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}]}
    text = yaml.safe_dump(dict(config, apiVersion="kubescheduler.config.k8s.io/v1",
                               kind="KubeSchedulerConfiguration"))
    [from_dict] = resolve_ok([dict(DEFAULT, config=config)])
    [from_text] = resolve_ok([dict(DEFAULT, config_content=text)])
    assert from_text["config_rendered"] == from_dict["config_rendered"]
    assert from_text["scheduler_names"] == ["a", "b"]


def test_a_different_kubeconfig_in_the_config_is_refused():
    errors = resolve_errors([dict(DEFAULT, config={"clientConnection": {"kubeconfig": "/root/.kube/config"}})])
    assert "kube_scheduler_instances[0].config.clientConnection.kubeconfig" in errors


@pytest.mark.parametrize("flags, expected", [
    ({"address": "0.0.0.0"}, "removed in 1.24; use --bind-address"),
    ({"port": 0}, "removed in 1.24"),
    ({"kubeconfig": "/x"}, "ignores this deprecated flag when --config is set; set clientConnection.kubeconfig"),
    ({"kube-api-qps": 100}, "set clientConnection.qps"),
    ({"leader-elect-resource-name": "x"}, "set leaderElection in the config"),
    ({"secure-port": 10300}, "set by this collection from secure_port"),
    ({"config": "/tmp/c.yaml"}, "set by this collection from config_path"),
    ({"no-such-flag": 1}, 'unknown flag for kube-scheduler 1.34.2 (it would exit with "unknown flag: --no-such-flag")'),
    ({"permit-port-sharing": "yes please"}, "takes true or false"),
])
def test_extra_flags_are_checked_against_what_kube_scheduler_does_with_them(flags, expected):
    errors = resolve_errors([dict(DEFAULT, extra_flags=flags)])
    assert "kube_scheduler_instances[0].extra_flags." in errors
    assert expected in errors


def test_accepted_extra_flags_are_appended_sorted():
    flags = {"v": 2, "permit-port-sharing": True, "feature-gates": "SchedulerQueueingHints=true"}
    [instance] = resolve_ok([dict(DEFAULT, extra_flags=flags)])
    assert instance["flags"][5:] == ["--feature-gates=SchedulerQueueingHints=true",
                                     "--permit-port-sharing=true", "--v=2"]


def test_flags_follow_the_version():
    # --emulated-version arrived with compatibility versions in 1.31.
    assert "unknown flag" in resolve_errors([dict(DEFAULT, extra_flags={"emulated-version": "1.30"})],
                                            version="1.30.4")
    resolve_ok([dict(DEFAULT, extra_flags={"emulated-version": "1.30"})], version="1.31.0")


def test_replicas_on_other_masters_must_agree():
    peers = {"master-2": [DEFAULT, second(config={"leaderElection": {"resourceName": "other-lease"},
                                                  "profiles": [{"schedulerName": "batch"}]})]}
    errors = resolve_errors([DEFAULT, second()], peers=peers)
    assert "instance batch-scheduler has lease" in errors
    assert "host master-2" in errors


def test_other_instances_on_other_masters_must_not_share_lease_or_scheduler_name():
    rogue = second(name="rogue", secure_port=10270)
    errors = resolve_errors([DEFAULT, second()], peers={"master-3": [DEFAULT, rogue]})
    assert "schedulerName batch of instance batch-scheduler is also served by instance rogue on host master-3" \
        in errors
    assert "lease kube-system/batch-scheduler" in errors


def test_a_bad_peer_fails_this_host_too_so_nothing_is_half_applied():
    peers = {"master-2": [dict(DEFAULT, secure_port=99999)]}
    errors = resolve_errors([DEFAULT], peers=peers)
    assert errors.startswith("host master-2: kube_scheduler_instances[0].secure_port")


def test_identical_peers_pass():
    resolved = resolve_ok([DEFAULT, second()], peers={"master-2": [DEFAULT, second()],
                                                      "master-3": [DEFAULT, second()]})
    assert len(resolved) == 2


def test_an_unknown_feature_gate_in_extra_flags_is_refused_there():
    errors = resolve_errors([dict(DEFAULT, extra_flags={"feature-gates": "NoSuchGate=true"})], version="1.37.2")
    assert "kube_scheduler_instances[0].extra_flags.feature-gates: " in errors
    assert "unrecognized feature gate: NoSuchGate" in errors


def test_the_instance_feature_gates_decide_what_its_config_may_hold():
    shape = {"profiles": [{"schedulerName": "batch", "pluginConfig": [{"name": "VolumeBinding", "args": {
        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}]}],
        "leaderElection": {"resourceName": "batch-scheduler"}}
    assert resolve_ok([DEFAULT, second(config=shape)], version="1.37.2")
    errors = resolve_errors([DEFAULT, second(config=shape, extra_flags={"--feature-gates": "StorageCapacityScoring=false"})],
                            version="1.37.2")
    assert "kube_scheduler_instances[1].config.profiles[0].pluginConfig[0].args.shape" in errors
