# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Go types of kubescheduler.config.k8s.io/v1 per minor (config/schema.py): the identity of the kind, the args
kinds each minor registers, and the field names strict decoding knows."""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import schema
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import SUPPORTED_MINORS

IN_EVERY_MINOR = {"DefaultPreemptionArgs", "InterPodAffinityArgs", "NodeAffinityArgs",
                  "NodeResourcesBalancedAllocationArgs", "NodeResourcesFitArgs", "PodTopologySpreadArgs",
                  "VolumeBindingArgs"}


def test_the_kind_and_its_api_version():
    assert (schema.GROUP, schema.API_VERSION, schema.KIND) == (
        "kubescheduler.config.k8s.io", "kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration")


@pytest.mark.parametrize("version", SUPPORTED_MINORS)
def test_the_args_kinds_every_minor_registers(version):
    kinds = set(schema.plugin_args_types(version))
    assert IN_EVERY_MINOR <= kinds
    assert all(isinstance(node, schema.Struct) for node in schema.plugin_args_types(version).values())


def test_args_kinds_come_and_go_with_their_releases():
    """DynamicResourcesArgs from 1.34 on; PlacementBinPackingArgs only in 1.36 (types_pluginargs.go)."""
    registered = dict((version, set(schema.plugin_args_types(version))) for version in ("1.33", "1.34", "1.36", "1.37"))
    assert "DynamicResourcesArgs" not in registered["1.33"] and "DynamicResourcesArgs" in registered["1.34"]
    assert "PlacementBinPackingArgs" in registered["1.36"] and "PlacementBinPackingArgs" not in registered["1.37"]


def test_the_configuration_type_knows_its_fields_and_the_extension_points_given():
    node = schema.configuration_type("1.35", ("queueSort", "score"))
    assert isinstance(node, schema.Struct)
    assert {"apiVersion", "kind", "profiles", "leaderElection", "clientConnection"} <= set(node.fields)
    profile = node.fields["profiles"].item
    assert set(profile.fields["plugins"].fields) >= {"queueSort", "score"}
    assert node.fields["leaderElection"].fields["leaseDuration"].kind == "duration"
