"""The verify role's default test-pod image follows the cluster's minor the way kubeadm does, so
the nodes already have it. Rendered by real ansible-playbook from the role's own defaults and vars."""
from __future__ import annotations

import pytest

# kubeadm's PauseVersion (cmd/kubeadm/app/constants/constants.go) of each release branch, read upstream; 1.38 (a
# preview) in v1.38.0-beta.0's.
KUBEADM_PAUSE = {"1.30.14": "3.9", "1.31.8": "3.10", "1.32.5": "3.10", "1.33.3": "3.10", "1.34.7": "3.10.1",
                 "1.35.4": "3.10.1", "v1.35.4": "3.10.1", "1.36.3": "3.10.2",
                 "1.37.2": "3.10.2", "1.38.0": "3.10.2"}

PLAY = """
- name: {case}
  hosts: localhost
  gather_facts: false
  vars: {vars}
  tasks:
    - name: Load the role's defaults and vars (its health step with no instance does nothing)
      ansible.builtin.include_role:
        name: kubesched.schedulers.verify
        tasks_from: health.yml
        public: true
      vars:
        __kube_scheduler_verify_host_instances: []
    - name: Keep the image
      ansible.builtin.set_fact:
        {fact}: "{{{{ kube_scheduler_verify_image }}}}"
"""


@pytest.fixture(scope="module")
def images(tmp_path_factory, case_plays):
    cases = {"v" + version: {"kube_scheduler_verify_version": version} for version in KUBEADM_PAUSE}
    cases["no_version"] = {}
    cases["from_kube_scheduler_version"] = {"kube_scheduler_version": "1.31.8"}
    cases["given"] = {"kube_scheduler_verify_version": "1.30.14", "kube_scheduler_verify_image": "mirror/pause:x"}
    run, kept = case_plays(tmp_path_factory.mktemp("images"), PLAY, cases)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    return kept


@pytest.mark.parametrize("version", sorted(KUBEADM_PAUSE))
def test_the_default_image_is_kubeadms_pause_of_the_minor(images, version):
    assert images["v" + version] == "registry.k8s.io/pause:" + KUBEADM_PAUSE[version]


def test_without_a_version_the_newest_minors_pause_and_kube_scheduler_version_counts(images):
    assert images["no_version"] == "registry.k8s.io/pause:3.10.2"
    assert images["from_kube_scheduler_version"] == "registry.k8s.io/pause:3.10"
    assert images["given"] == "mirror/pause:x"
