# -*- coding: utf-8 -*-
"""Each fact of plugin_utils/core/constants.py is defined there once: the code, the roles and the docs use it and spell
no other key of this collection's domains (the rendered Deployment's use: tests/unit/roles/test_deployment_render.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from ansible_collections.kubesched.schedulers.plugins.module_utils import _files
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import constants
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.static_pod_manifest import (
    kubeadm_probes, static_pod_manifest)

ROOT = Path(__file__).resolve().parents[5]
KEY = re.compile(r"(?<![\w.-])(%s|%s)/[a-z][a-z0-9-]*" % (re.escape(constants.DOMAIN), re.escape(constants.LEGACY_DOMAIN)))


def tracked(*folders):
    names = subprocess.run(["git", "ls-files", "--", *folders], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    return [ROOT / name for name in names if (ROOT / name).is_file()]


def test_every_key_the_collection_spells_is_a_constant_of_the_one_domain():
    known = set(constants.ANNOTATIONS.values())
    assert all(key.startswith(constants.DOMAIN + "/") for key in known)
    found = {}
    for path in tracked("plugins", "roles", "playbooks", "docs", "README.md", "extensions"):
        if path.name == "constants.py":
            continue
        for match in KEY.finditer(path.read_text(encoding="utf-8", errors="replace")):
            found.setdefault(match.group(0), set()).add(str(path.relative_to(ROOT)))
    assert {key: where for key, where in found.items() if key not in known} == {}
    # The collection's code and roles use the keys only through the constants: they spell one only in documentation
    # (the tests spell them, as observers of the real objects).

    def spells_it(name):
        return name.startswith(("plugins/", "roles/")) and (
            name.endswith((".py", ".j2")) or "/tasks/" in name or "/vars/" in name)

    code = {key: sorted(filter(spells_it, where)) for key, where in found.items()}
    code = {key: where for key, where in code.items() if where}
    assert code == {}


def test_the_legacy_keys_are_the_same_names_in_the_old_domain():
    assert set(constants.LEGACY_ANNOTATIONS) == set(constants.ANNOTATIONS)
    for name, key in constants.LEGACY_ANNOTATIONS.items():
        assert key == constants.LEGACY_DOMAIN + constants.ANNOTATIONS[name][len(constants.DOMAIN):]


def test_static_pods_carry_the_checksum_key_and_kubeadms_timings():
    instance = {"name": "bin-packing", "secure_port": 10300, "bind_address": "0.0.0.0", "flags": {},
                "config_path": "/etc/kubernetes/schedulers/bin-packing.yaml", "kubeconfig": "/etc/kubernetes/scheduler.conf",
                "image": "registry.k8s.io/kube-scheduler:v1.35.0"}
    manifest = static_pod_manifest(instance, "1.35", "abc")
    assert manifest["metadata"]["annotations"] == {constants.CHECKSUM_ANNOTATION: "abc"}
    for minor in ("1.30", "1.35"):
        for probe, spec in kubeadm_probes("0.0.0.0", 10300, minor).items():
            assert dict((key, value) for key, value in spec.items() if key != "httpGet") == constants.PROBE_TIMINGS[probe]


def test_the_temp_mark_is_the_one_writers():
    assert constants.TEMP_FILE_MARK == _files.TEMP_MARK
    assert _files.temp_pattern(b"x.yaml").fullmatch(b".x.yaml" + constants.TEMP_FILE_MARK.encode() + b"a1B2_c")


def test_the_roles_default_directories_are_the_constants():
    defaults = {}
    for role in ("systemd", "static_pod"):
        defaults[role] = yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text())
        assert defaults[role]["kube_scheduler_config_dir"] == constants.CONFIG_DIR, role
        assert defaults[role]["kube_scheduler_state_dir"] == constants.STATE_DIR, role
    verify = (ROOT / "roles" / "verify" / "tasks" / "main.yml").read_text()
    assert constants.CONFIG_DIR not in verify and "lookup('kubesched.schedulers.constants', 'config_dir')" in verify
