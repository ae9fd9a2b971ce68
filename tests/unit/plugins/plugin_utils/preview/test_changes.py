# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which scheduler names a rollout's Check job previews, from the masters' plans (their diffs, text running against
text proposed), per cluster; and the filters the rollout engine calls them through, with their one boolean rule."""

from __future__ import annotations

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.kubesched.schedulers.plugins.filter.deployment_objects import deployment_previews
from ansible_collections.kubesched.schedulers.plugins.filter.rollout_order import rollout_preview_report, rollout_previews
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview import changes

API = "kubescheduler.config.k8s.io/v1"
LEAST = {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "LeastAllocated"}}}
MOST = {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}


def config(*profiles, **fields):
    return dict({"apiVersion": API, "kind": "KubeSchedulerConfiguration",
                 "clientConnection": {"kubeconfig": "/etc/kubernetes/scheduler.conf"},
                 "profiles": [dict({"schedulerName": name}, **({"pluginConfig": [args]} if args else {}))
                              for name, args in profiles]}, **fields)


def diff(before, after, path="/etc/kubernetes/schedulers/kube-scheduler.yaml"):
    """A plan's diff entries as the engine reports them: a unit beside the configuration, headers with attributes."""
    return [{"before_header": "/etc/systemd/system/kube-scheduler.service (root:root 0644)",
             "after_header": "/etc/systemd/system/kube-scheduler.service (root:root 0644)",
             "before": "[Service]\nExecStart=/usr/local/bin/kube-scheduler\n", "after": "[Service]\nExecStart=x\n"},
            {"before_header": "%s (root:kube-scheduler 0640)" % path if before else "%s (absent)" % path,
             "after_header": "%s (root:kube-scheduler 0640)" % path,
             "before": yaml.safe_dump(before) if before else "", "after": yaml.safe_dump(after)}]


def test_only_the_names_whose_profile_changes_are_previewed_each_alone():
    before = config(("default-scheduler", LEAST), ("batch", LEAST))
    after = config(("default-scheduler", LEAST), ("batch", MOST))
    (change,) = changes.changed_names(before, after)
    assert change["name"] == "batch"
    assert change["current"]["profiles"] == [{"schedulerName": "batch", "pluginConfig": [LEAST]}]
    assert change["proposed"]["profiles"] == [{"schedulerName": "batch", "pluginConfig": [MOST]}]
    assert change["proposed"]["clientConnection"] == after["clientConnection"]


def test_a_field_outside_the_profiles_moves_every_name_only_when_it_bears_on_placement():
    before = config(("default-scheduler", None), ("batch", None))
    assert changes.changed_names(before, dict(before, leaderElection={"leaderElect": False})) == []
    assert changes.changed_names(before, dict(before, clientConnection={"qps": 100})) == []
    moved = changes.changed_names(before, dict(before, percentageOfNodesToScore=100))
    assert [change["name"] for change in moved] == ["default-scheduler", "batch"]
    assert moved[0]["proposed"]["percentageOfNodesToScore"] == 100 and "percentageOfNodesToScore" not in moved[0]["current"]


def test_a_new_or_removed_name_is_said_not_previewed():
    found = changes.changed_names(config(("old", None)), config(("new", None)))
    assert found == [{"name": "new", "note": "new (nothing runs it now): nothing to compare, not previewed"},
                     {"name": "old", "note": "removed: no pod is placed by it after the change, not previewed"}]
    # A new instance's file: nothing runs now.
    assert changes.changed_names(None, config(("batch", None)))[0]["note"].startswith("new")
    # A profile without a name is kube-scheduler's default-scheduler.
    assert changes.changed_names({"kind": "KubeSchedulerConfiguration"}, config(("default-scheduler", MOST)))[0][
        "name"] == "default-scheduler"


def test_only_scheduler_configurations_of_the_diff_count():
    before, after = config(("default-scheduler", LEAST)), config(("default-scheduler", MOST))
    found = changes.configurations(diff(before, after))
    assert found == [("/etc/kubernetes/schedulers/kube-scheduler.yaml", before, after)]
    # A manifest, a kubeconfig, text that is no YAML, no diff at all.
    assert changes.configurations([{"before": "apiVersion: v1\nkind: Pod\n", "after": "kind: Config\n"},
                                   {"before": "[Unit]\n: :", "after": "{"}]) == []
    assert changes.configurations(None) == [] and changes.configurations({}) == []


def masters(plans, **extra):
    """hostvars of masters in clusters: plans is {host: (cluster, diff)}."""
    out = {}
    for host, (cluster, entries) in plans.items():
        out[host] = dict({"group_names": ["kube_control_plane"], "kube_scheduler_cluster": cluster,
                          "kube_scheduler_version": "1.37.2", "kube_scheduler_plan": {"pending": True, "diff": entries},
                          "kube_scheduler_rollout_preview_kubeconfig": "/k/%s.conf" % cluster,
                          "kube_scheduler_rollout_preview_binaries": "/opt/kubernetes-server"}, **extra.get(host, {}))
    return out


def test_one_preview_per_cluster_and_changed_name_naming_its_masters():
    least, most = config(("default-scheduler", LEAST)), config(("default-scheduler", MOST))
    hostvars = masters({"e1": ("east", diff(least, most)), "e2": ("east", diff(least, most)),
                        "w1": ("west", diff(least, most)), "w2": ("west", [])})
    planned = rollout_previews(["e1", "e2", "w1", "w2"], hostvars, True, "no")
    assert planned["enabled"] is True and planned["required"] is False
    assert [(p["cluster"], p["scheduler_name"], p["masters"]) for p in planned["previews"]] == [
        ("east", "default-scheduler", ["e1", "e2"]), ("west", "default-scheduler", ["w1"])]
    east = planned["previews"][0]
    assert east["kubeconfig"] == "/k/east.conf" and east["binaries_dir"] == "/opt/kubernetes-server"
    assert east["kubernetes_version"] == "1.37.2" and east["problem"] is None and east["binaries"] == {}
    assert east["current"] == least and east["proposed"] == most
    assert east["label"] == "cluster east, scheduler name default-scheduler (e1, e2)"


def test_masters_of_a_cluster_that_run_different_configurations_get_a_preview_each():
    least, most = config(("default-scheduler", LEAST)), config(("default-scheduler", MOST))
    hostvars = masters({"m1": ("one", diff(least, most)), "m2": ("one", diff(config(("default-scheduler", None)), most))})
    planned = rollout_previews(["m1", "m2"], hostvars, "true")
    assert [(p["masters"], p["current"]) for p in planned["previews"]] == [
        (["m1"], least), (["m2"], config(("default-scheduler", None)))]


def test_off_previews_nothing_and_a_bad_spelling_names_the_variable():
    least, most = config(("default-scheduler", LEAST)), config(("default-scheduler", MOST))
    hostvars = masters({"m1": ("one", diff(least, most))})
    assert rollout_previews(["m1"], hostvars) == {"enabled": False, "required": False, "previews": [], "notes": []}
    assert rollout_previews(["m1"], hostvars, False, True)["previews"] == []
    for enabled, required, name in (("yes ", False, changes.ENABLED), (True, "y", changes.REQUIRED), (1, False, changes.ENABLED)):
        with pytest.raises(AnsibleFilterError, match="^%s: Invalid value: " % name):
            rollout_previews(["m1"], hostvars, enabled, required)


def test_what_a_preview_needs_on_the_controller_is_named_when_missing():
    least, most = config(("default-scheduler", LEAST)), config(("default-scheduler", MOST))
    hostvars = masters({"m1": ("one", diff(least, most))}, m1={
        "kube_scheduler_rollout_preview_kubeconfig": "", "kube_scheduler_rollout_preview_binaries": None})
    (preview,) = rollout_previews(["m1"], hostvars, True)["previews"]
    assert preview["problem"].startswith("kube_scheduler_rollout_preview_kubeconfig: Required value: ")
    assert "; kube_scheduler_rollout_preview_binaries: Required value: " in preview["problem"]
    hostvars["m1"]["kube_scheduler_rollout_preview_kubeconfig"] = "/k/one.conf"
    hostvars["m1"]["kube_scheduler_rollout_preview_binaries"] = {"kube_scheduler": "/b/ks", "kubectl": "/b/k"}
    (preview,) = rollout_previews(["m1"], hostvars, True)["previews"]
    assert preview["binaries"] == {"kube_scheduler": "/b/ks"}
    assert preview["problem"] == ("kube_scheduler_rollout_preview_binaries: Unsupported value: kubectl: the keys are "
                                  "etcd, kube_apiserver and kube_scheduler")


def test_the_report_shows_each_table_under_its_name_and_warns_for_each_preview_that_did_not_run():
    least, most = config(("default-scheduler", LEAST)), config(("default-scheduler", MOST))
    hostvars = masters({"e1": ("east", diff(least, most)), "w1": ("west", diff(least, most)),
                        "n1": ("north", diff(least, most)), "s1": ("south", diff(None, config(("batch", None))))},
                       n1={"kube_scheduler_rollout_preview_binaries": ""})
    planned = rollout_previews(["e1", "w1", "n1", "s1"], hostvars, True)
    # The task ran for east and west (north has a problem): west's preview failed, its failed flag set false.
    results = {"results": [{"table": ["nodes used  3  2"], "changed": False},
                           {"failed": False, "failed_when_result": False, "msg": "binaries: kube-scheduler: not found"}]}
    shown = rollout_preview_report(planned, results)
    assert shown["lines"] == [
        "cluster south: scheduler name batch is new (nothing runs it now): nothing to compare, not previewed",
        "cluster east, scheduler name default-scheduler (e1):", "  nodes used  3  2",
        "WARNING: the placement preview of cluster west, scheduler name default-scheduler (w1) did not run: "
        "binaries: kube-scheduler: not found",
        "WARNING: the placement preview of cluster north, scheduler name default-scheduler (n1) did not run: "
        + planned["previews"][2]["problem"]]
    assert shown["failed"] == ["cluster west, scheduler name default-scheduler (w1): binaries: kube-scheduler: not found",
                               "cluster north, scheduler name default-scheduler (n1): " + planned["previews"][2]["problem"]]
    nothing = rollout_preview_report(rollout_previews(["e1"], masters({"e1": ("east", [])}), True), None)
    assert nothing == {"lines": ["no scheduler name's configuration changes: nothing to preview"], "failed": []}


def config_map(config, name="my-scheduler"):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "kube-system"},
            "data": {"config.yaml": yaml.safe_dump(config)}}


def test_the_deployment_role_previews_its_configmap_as_the_cluster_holds_it_against_the_rendered_one():
    least, most = config(("my-scheduler", LEAST)), config(("my-scheduler", MOST))
    others = [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "my-scheduler"}}]
    settings = {"kube_scheduler_rollout_preview_kubeconfig": "/k/admin.conf", "kube_scheduler_version": "1.36",
                "kube_scheduler_rollout_preview_binaries": {"etcd": "/b/etcd", "kube_apiserver": "/b/apiserver",
                                                            "kube_scheduler": "/b/ks"}}
    planned = deployment_previews([config_map(least)] + others, others + [config_map(most)], settings)
    (preview,) = planned["previews"]
    assert preview["label"] == "scheduler name my-scheduler (ConfigMap kube-system/my-scheduler)"
    assert (preview["current"], preview["proposed"]) == (least, most)
    assert preview["kubeconfig"] == "/k/admin.conf" and preview["kubernetes_version"] == "1.36"
    assert preview["binaries"]["kube_scheduler"] == "/b/ks" and preview["problem"] is None
    # The same ConfigMap: nothing to preview. None in the cluster yet: the name is new.
    assert deployment_previews([config_map(most)], [config_map(most)], settings) == {"previews": [], "notes": []}
    assert deployment_previews(others, [config_map(most)], settings)["notes"] == [
        "scheduler name my-scheduler (ConfigMap kube-system/my-scheduler) is new (nothing runs it now): nothing to "
        "compare, not previewed"]


def test_a_configuration_with_extenders_is_neither_previewed_nor_passed_on():
    extender = {"urlPrefix": "https://extender.example", "tlsConfig": {"keyData": "c2VjcmV0"}}
    before = config(("my-scheduler", LEAST), extenders=[extender])
    (preview,) = deployment_previews([config_map(before)], [config_map(dict(before, percentageOfNodesToScore=50))],
                                     {"kube_scheduler_rollout_preview_kubeconfig": "/k", "kube_scheduler_version": "1.36",
                                      "kube_scheduler_rollout_preview_binaries": "/b"})["previews"]
    assert preview["current"] is None and preview["proposed"] is None
    assert preview["problem"].startswith("a preview does not call extenders")
    assert "c2VjcmV0" not in repr(preview)
