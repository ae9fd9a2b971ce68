# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The process() facade: usage errors, rendering, effective config, error fields, extra_plugins, warnings."""

from __future__ import annotations

import hashlib

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.module_utils.configuration import process

# Bin-packing profile from the Kubernetes docs (Resource Bin Packing, MostAllocated).
BIN_PACKING = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - args:
      scoringStrategy:
        resources:
        - name: cpu
          weight: 1
        - name: memory
          weight: 1
        - name: intel.com/foo
          weight: 3
        - name: intel.com/bar
          weight: 3
        type: MostAllocated
    name: NodeResourcesFit
"""


@pytest.mark.parametrize("kwargs", [{}, {"content": "a: 1", "config": {}}])
def test_exactly_one_input(kwargs):
    with pytest.raises(ValueError):
        process(**kwargs)


@pytest.mark.parametrize("version", ["1.29", "2.0", "latest", "1.37.0"])
def test_bad_version_is_a_usage_error(version):
    with pytest.raises(ValueError):
        process(config={}, kubernetes_version=version)


@pytest.mark.parametrize("version, minor", [(None, "1.36"), ("1.30", "1.30"), ("1.34.2", "1.34"), ("v1.35.1", "1.35")])
def test_version_forms(version, minor):
    assert process(config={}, kubernetes_version=version).version == minor


def test_valid_config_result():
    result = process(content=BIN_PACKING, kubernetes_version="1.33")
    assert result.ok and result.errors == []
    assert result.profiles == ["default-scheduler"]
    assert result.effective["kind"] == "KubeSchedulerConfiguration"
    assert result.checksum == hashlib.sha256(result.rendered.encode("utf-8")).hexdigest()
    rendered = yaml.safe_load(result.rendered)
    assert rendered["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert "!!python" not in result.rendered and result.rendered.endswith("\n")


def test_rendered_is_canonical_and_round_trips():
    first = process(content=BIN_PACKING)
    shuffled = process(config=yaml.safe_load(BIN_PACKING.replace("kind: KubeSchedulerConfiguration\n", "")))
    assert first.rendered == shuffled.rendered
    again = process(content=first.rendered)
    assert again.rendered == first.rendered and again.checksum == first.checksum
    assert again.effective == first.effective


def test_rendered_keeps_strings_that_look_like_other_types():
    result = process(config={"profiles": [{"schedulerName": "yes"}]})
    assert yaml.safe_load(result.rendered)["profiles"][0]["schedulerName"] == "yes"
    assert process(content=result.rendered).ok


def test_dict_input_may_omit_api_version_and_kind():
    assert process(config={"parallelism": 4}).effective["parallelism"] == 4


def test_errors_have_upstream_fields_and_nothing_is_rendered():
    result = process(config={"profiles": [{"schedulerName": "a", "percentageOfNodesToScore": 101}]})
    assert result.errors == [{"field": "profiles[0].percentageOfNodesToScore", "type": "Invalid value",
                              "message": "profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid "
                                         "range [0-100]"}]
    assert result.effective is None and result.rendered is None and result.checksum is None and not result.ok


def test_json_content():
    result = process(content='{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
                             ' "parallelism": 4}')
    assert result.ok and result.effective["parallelism"] == 4


def test_out_of_tree_plugin_must_be_declared(run, messages):
    body = "profiles:\n- schedulerName: a\n  plugins:\n    permit:\n      enabled: [{name: Coscheduling}]\n"
    assert messages(run(body)) == [
        'initializing profiles: creating profile for scheduler name a: PermitPlugin "Coscheduling" does not exist']
    assert run(body, extra_plugins=["Coscheduling"]).ok
    assert run(body, extra_plugins=[{"name": "Coscheduling", "extension_points": ["permit"]}]).ok
    wrong_point = run(body, extra_plugins=[{"name": "Coscheduling", "extension_points": ["queueSort"]}])
    assert messages(wrong_point) == ['initializing profiles: creating profile for scheduler name a: plugin '
                                     '"Coscheduling" does not extend PermitPlugin plugin']


@pytest.mark.parametrize("extra", [[{"name": "ImageLocality"}], [{"name": "X", "extension_points": ["nope"]}],
                                   [{"name": "X", "weight": 1}], [3]])
def test_bad_extra_plugins_are_usage_errors(extra):
    with pytest.raises(ValueError):
        process(config={}, extra_plugins=extra)


def test_warnings(run):
    result = run("""
        profiles:
        - schedulerName: a
          plugins:
            multiPoint:
              disabled: [{name: InterPodAffinity}]
            score:
              enabled: [{name: ImageLocality, weight: 0}]
            filter:
              enabled: [{name: NodeName, weight: 2}]
              disabled: [{name: NodeName}]
          pluginConfig:
          - name: InterPodAffinity
            args: {hardPodAffinityWeight: 5}
          - name: NotAPlugin
            args: {x: 1}
        """)
    assert result.ok, result.errors
    assert result.warnings == [
        "profiles[0].pluginConfig[0]: plugin InterPodAffinity is not enabled in profile a; its args are ignored",
        "profiles[0].pluginConfig[1]: NotAPlugin is not a plugin of this kube-scheduler; its args are ignored",
        "profiles[0].plugins.filter.enabled[0].weight: weight is used only for score plugins; it is ignored here",
        "profiles[0].plugins.score.enabled[0].weight: a score weight of 0 is treated as 1 by kube-scheduler; "
        "disable the plugin to turn it off",
    ]
