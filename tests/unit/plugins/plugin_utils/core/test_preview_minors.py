# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A preview minor (versions.PREVIEW_MINORS): accepted wherever a minor is, every answer for it warns
which pre-release its facts were measured on, and nothing that defaults a version ever picks it."""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import versions
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.upgrade.upgrade_check import check_upgrade

PREVIEW = "1.38"
WARNING = ("Kubernetes 1.38 is a preview: its facts were measured on kube-scheduler v1.38.0-beta.0, a pre-release; "
           "re-measured when 1.38.0 ships (make new-minor VERSION=1.38.0)")


def test_the_preview_is_accepted_and_never_the_default():
    assert versions.PREVIEW_MINORS == {PREVIEW: "1.38.0-beta.0"}
    assert versions.SUPPORTED_MINORS[-1] == PREVIEW and versions.SUPPORTED_MINORS[:-1] == versions.RELEASED_MINORS
    assert versions.NEWEST_MINOR == "1.37" and versions.NEWEST_MINOR not in versions.PREVIEW_MINORS
    assert versions.minor_of(None) == versions.minor_of("") == "1.37"
    assert versions.normalise("v1.38.1", full=True) == "1.38.1" and versions.normalise("1.38") == PREVIEW


@pytest.mark.parametrize("version", ["1.38", "1.38.0", "v1.38.2"])
def test_the_warning_names_the_pre_release(version):
    assert versions.preview_warning(version) == WARNING


@pytest.mark.parametrize("version", [None, "1.30", "1.37.2"])
def test_a_released_minor_has_no_warning(version):
    assert versions.preview_warning(version) is None
    assert process(config={}, kubernetes_version=version).warnings == []


def test_process_warns_first_whether_it_accepts_or_refuses():
    accepted = process(config={"profiles": [{"pluginConfig": [{"name": "NoSuch", "args": {}}]}]},
                       kubernetes_version="1.38.0")
    assert accepted.ok and accepted.warnings[0] == WARNING and len(accepted.warnings) == 2
    refused = process(config={"parallelism": 0}, kubernetes_version="1.38.0")
    assert not refused.ok and refused.warnings == [WARNING]


def test_instances_warn_once_for_the_version_not_per_instance():
    instances = [{"name": "kube-scheduler", "default_scheduler": True},
                 {"name": "batch-scheduler", "secure_port": 10260,
                  "config": {"leaderElection": {"resourceName": "batch-scheduler"},
                             "profiles": [{"schedulerName": "batch"}]}}]
    resolved, errors, warnings = resolve(instances, "1.38.0", "/etc/kubernetes/schedulers")
    assert errors == [] and len(resolved) == 2
    assert warnings == [WARNING]
    _resolved, _errors, released = resolve(instances, "1.37.2", "/etc/kubernetes/schedulers")
    assert released == []


def test_the_upgrade_to_the_preview_warns_on_its_target_only():
    report = check_upgrade(config={}, current_version="1.37.2", target_versions=["1.38.0"])
    assert report["ok"] and report["current"]["warnings"] == []
    assert report["targets"][PREVIEW]["warnings"] == [WARNING]
    assert report["targets"][PREVIEW]["changes"] == {"plugins": [], "defaults": []}


def test_a_minor_after_the_preview_names_both_the_preview_and_the_newest_release():
    with pytest.raises(versions.UnsupportedVersion) as raised:
        versions.normalise("1.39.0", full=True)
    message = str(raised.value)
    assert "1.39 is newer than 1.38, the newest minor this collection knows (a preview; 1.37 is the newest released " \
           "one)" in message
    assert message.endswith("supported minor versions are 1.30, 1.31, 1.32, 1.33, 1.34, 1.35, 1.36, 1.37, "
                            "1.38 (preview)")
