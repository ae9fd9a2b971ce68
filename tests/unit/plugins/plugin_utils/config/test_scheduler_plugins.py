# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A scheduler-plugins release as the target of the config library and of the scheduler_config action.

What its binary answers, case by case, is the differential corpus's job (tests/differential: family
scheduler_plugins, recorded/scheduler-plugins-<release>.jsonl). Here: what no binary says - the release and the
Kubernetes version belong together, a release the collection has not measured is refused, a misspelled plugin gets
the closest scheduler-plugins name, and the option works through the action plugin.
"""

from __future__ import annotations

import os
import sys

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import configuration
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import scheduler_plugins

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "hardening"))
from action_harness import run_action  # noqa: E402  pylint: disable=wrong-import-position,import-error

RELEASE = "0.33.5"
GANG = {
    "leaderElection": {"leaderElect": True, "resourceName": "scheduler-plugins", "resourceNamespace": "kube-system"},
    "profiles": [{
        "schedulerName": "gang-scheduler",
        "plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}, {"name": "CapacityScheduling"}]},
                    "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}},
        "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}}],
    }],
}


def _process(config, kubernetes_version="1.33", release=RELEASE, **kwargs):
    return configuration.process(config=config, kubernetes_version=kubernetes_version,
                                 scheduler_plugins_version=release, **kwargs)


def test_every_known_release_names_the_kubernetes_it_is_built_on():
    for release, kubernetes in scheduler_plugins.RELEASES.items():
        # The library's in-tree behaviour of that minor is what the release's binary runs.
        assert release.split(".")[1] == kubernetes.split(".")[1], release


def test_a_gang_scheduling_config_is_accepted_with_its_plugins_at_their_points():
    result = _process(GANG)
    assert result.ok, result.errors
    points = result.plugins["gang-scheduler"]
    assert [p["name"] for p in points["queueSort"]] == ["Coscheduling"]
    assert "Coscheduling" in [p["name"] for p in points["permit"]]
    assert "CapacityScheduling" in [p["name"] for p in points["reserve"]]
    args = {e["name"]: e["args"] for e in result.effective["profiles"][0]["pluginConfig"]}
    assert args["Coscheduling"]["permitWaitingTimeSeconds"] == 10


def test_the_same_config_without_the_release_is_refused_naming_the_plugin():
    result = configuration.process(config=GANG, kubernetes_version="1.33")
    assert not result.ok
    assert 'Coscheduling" does not exist' in result.errors[0]["message"]


@pytest.mark.parametrize("kubernetes_version", ["1.32", "1.34", "1.37"])
def test_a_release_with_another_minor_is_refused_with_the_fix(kubernetes_version):
    with pytest.raises(scheduler_plugins.SchedulerPluginsError) as error:
        _process(GANG, kubernetes_version)
    message = str(error.value)
    assert "scheduler-plugins 0.33.5 is built on Kubernetes 1.33.5, not %s" % kubernetes_version in message
    assert "set kubernetes_version to 1.33" in message
    assert message.endswith("(0.34.7)" if kubernetes_version == "1.34" else "(none is known to this collection yet)")


def test_an_unknown_release_is_refused_listing_the_known_ones():
    with pytest.raises(scheduler_plugins.SchedulerPluginsError) as error:
        _process(GANG, release="0.35.4")
    assert "0.35.4 is not a scheduler-plugins release this collection knows; it knows 0.33.5, 0.34.7" in str(error.value)


def test_extra_plugins_cannot_redeclare_a_scheduler_plugins_plugin():
    with pytest.raises(ValueError) as error:
        _process(GANG, extra_plugins=["Coscheduling"])
    assert "already exists in kube-scheduler 1.33 with scheduler-plugins 0.33.5" in str(error.value)


def test_extra_plugins_still_add_an_operators_own_plugin():
    score = {"enabled": [{"name": "MyScore"}, {"name": "PodState"}]}
    config = {"profiles": [{"schedulerName": "s", "plugins": {"score": score}}]}
    assert _process(config, extra_plugins=[{"name": "MyScore", "extension_points": ["score"]}]).ok


def test_a_misspelled_plugin_gets_the_closest_scheduler_plugins_name_through_the_action():
    config = {"profiles": [{"schedulerName": "s", "plugins": {"multiPoint": {"enabled": [{"name": "Cosheduling"}]}}}]}
    result = run_action("scheduler_config", {"config": config, "kubernetes_version": "1.33",
                                             "scheduler_plugins_version": RELEASE})
    assert result.get("failed"), result
    assert 'PreFilterPlugin "Cosheduling" does not exist' in result["msg"]
    assert "did you mean Coscheduling?" in result["msg"]


def test_the_action_refuses_bad_args_in_the_binarys_words_and_writes_nothing():
    config = {"profiles": [{"schedulerName": "s", "plugins": {"permit": {"enabled": [{"name": "Coscheduling"}]}},
                            "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": -5}}]}]}
    result = run_action("scheduler_config", {"config": config, "kubernetes_version": "1.33", "dest": "/etc/x.yaml",
                                             "scheduler_plugins_version": RELEASE})
    assert result.get("failed") and result["_module_calls"] == []
    assert ('initializing plugin "Coscheduling": permitWaitingTimeSeconds: Invalid value: -5: must be greater than 0'
            in result["msg"])


def test_the_action_renders_an_accepted_config_for_the_host():
    result = run_action("scheduler_config", {"config": GANG, "kubernetes_version": "1.33", "dest": "/etc/x.yaml",
                                             "scheduler_plugins_version": RELEASE})
    assert not result.get("failed"), result
    written = yaml.safe_load(result["_module_calls"][0]["content"])
    assert written["profiles"][0]["pluginConfig"] == GANG["profiles"][0]["pluginConfig"]


def test_the_upgrade_check_names_the_minors_a_release_cannot_follow():
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.upgrade.upgrade_check import check_upgrade  # pylint: disable=import-outside-toplevel
    report = check_upgrade(config=GANG, current_version="1.34", target_versions=["1.35", "1.36"],
                           scheduler_plugins_version="0.34.7")
    assert not report["ok"]
    assert "skew" not in report["current"] and "skew" not in report["targets"]["1.35"]  # one minor older: allowed
    skew = report["targets"]["1.36"]["skew"]
    assert "scheduler-plugins 0.34.7 is built on Kubernetes 1.34: with a 1.36 API server it is 2 minors older" in skew
    assert all(target["starts"] for target in report["targets"].values())  # the binary stays the release's
    older = check_upgrade(config=GANG, current_version="1.33", target_versions=["1.33"], scheduler_plugins_version="0.34.7")
    assert "newer" in older["current"]["skew"] and "move to scheduler-plugins 0.33.5" in older["current"]["skew"]


def test_the_upgrade_check_action_fails_on_skew_when_asked():
    result = run_action("scheduler_upgrade_check", {"config": GANG, "current_version": "1.34", "target_versions": ["1.36"],
                                                    "scheduler_plugins_version": RELEASE, "fail_on_error": True})
    assert result.get("failed") and "1.36 (scheduler-plugins 0.33.5 is built on Kubernetes 1.33" in result["msg"], result
