"""kube_release: the release a role puts in a download URL and an image tag, a pre-release's suffix kept."""
from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kubesched.schedulers.plugins.filter.kube_release import kube_release


@pytest.mark.parametrize("given, release", [("1.35.4", "1.35.4"), ("v1.35.4", "1.35.4"),
                                            ("1.38.0-rc.0", "1.38.0-rc.0"), ("v1.38.0-beta.0", "1.38.0-beta.0")])
def test_the_release_keeps_what_names_the_binary_and_the_image(given, release):
    assert kube_release(given, "kube_scheduler_version") == release


@pytest.mark.parametrize("given", ["1.38", "1.38-rc.0", "1.38.0-preview.1", 1.3])
def test_what_names_no_release_fails_naming_the_variable(given):
    with pytest.raises(AnsibleFilterError) as raised:
        kube_release(given, "kube_scheduler_version")
    assert str(raised.value).startswith("kube_scheduler_version: ")
