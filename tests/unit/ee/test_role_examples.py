"""Every role's docs page has examples (argument_specs `examples`, which antsibull-docs renders),
and they work: the instances resolve with the real instance model, the deployment role renders its objects with the
example's variables through real ansible-playbook, and every playbook an example imports exists."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve

REPO = Path(__file__).resolve().parents[3]
ROLES = ("systemd", "static_pod", "deployment", "verify")


def chunks(role):
    """The example's YAML documents: blocks separated by a blank line."""
    spec = yaml.safe_load((REPO / "roles" / role / "meta" / "argument_specs.yml").read_text())
    text = spec["argument_specs"]["main"].get("examples") or ""
    return [yaml.safe_load(block) for block in re.split(r"\n\s*\n", text.strip())]


@pytest.mark.parametrize("role", ROLES)
def test_every_role_has_examples_that_are_yaml_and_import_real_playbooks(role):
    documents = chunks(role)
    assert documents and all(documents)
    for document in documents:
        for play in document if isinstance(document, list) else []:
            imported = play.get("ansible.builtin.import_playbook")
            if imported:
                assert imported.startswith("kubesched.schedulers.")
                assert (REPO / "playbooks" / (imported.split(".")[-1] + ".yml")).is_file()


@pytest.mark.parametrize("role", ["systemd", "static_pod"])
def test_the_host_role_examples_resolve_with_the_instance_model(role):
    (group_vars,) = [d for d in chunks(role) if isinstance(d, dict)]
    _instances, errors, warnings = resolve(
        group_vars["kube_scheduler_instances"], group_vars["kube_scheduler_version"],
        "/etc/kubernetes/schedulers")
    assert (errors, warnings) == ([], [])


def test_the_deployment_example_renders(tmp_path, ansible_playbook):
    (play,) = chunks("deployment")[0]
    variables = play["roles"][0]["vars"]
    (tmp_path / "render.yml").write_text(yaml.safe_dump([{
        "hosts": "localhost", "gather_facts": False, "vars": variables,
        "tasks": [{"name": "Render",
                   "ansible.builtin.include_role": {"name": "kubesched.schedulers.deployment", "tasks_from": "render.yml"}},
                  {"name": "Keep", "ansible.builtin.copy": {
                      "content": "{{ __kube_scheduler_deployment_objects | to_json }}",
                      "dest": str(tmp_path / "objects.json"), "mode": "0600"}}]}]))
    run = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                            "render.yml"], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    kinds = [o["kind"] for o in json.loads((tmp_path / "objects.json").read_text())]
    assert "ConfigMap" in kinds and "Deployment" in kinds
