"""The input model's table of role variables (plugins/plugin_utils/instances/role_variables.py) and the roles' argument specs
name the same variables, so no variable reaches a role without a kind."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.role_variables import ROLE_VARIABLES

ROLES = Path(__file__).resolve().parents[3] / "roles"


@pytest.mark.parametrize("role", sorted(ROLE_VARIABLES))
def test_every_argument_of_every_entry_point_has_a_kind(role):
    specs = yaml.safe_load((ROLES / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    documented = set()
    for spec in specs.values():
        documented.update(spec.get("options") or {})
    assert documented == set(ROLE_VARIABLES[role])


@pytest.mark.parametrize("role", sorted(ROLE_VARIABLES))
def test_every_first_task_of_a_role_checks_its_variables(role):
    """role_inputs runs before anything else that uses a variable (and before any host is contacted)."""
    first = {"systemd": "resolve.yml", "static_pod": "resolve.yml", "deployment": "render.yml", "verify": "main.yml"}
    tasks = yaml.safe_load((ROLES / role / "tasks" / first[role]).read_text())
    if role in ("systemd", "static_pod"):
        # The plan, the first entry point a playbook calls, resolves first.
        plan = yaml.safe_load((ROLES / role / "tasks" / "plan.yml").read_text())
        assert plan[0]["ansible.builtin.import_tasks"] == "resolve.yml"
        # The step both host roles share (roles/_rollout), called first with the role's name; after its guard it
        # checks the variables once for every master of the play, not once per master.
        assert tasks[0]["ansible.builtin.include_role"] == {"name": "kubesched.schedulers._rollout",
                                                            "tasks_from": "resolve", "rolespec_validate": False}
        assert tasks[0]["vars"] == {"_rollout_role": role}
        shared = yaml.safe_load((ROLES / "_rollout" / "tasks" / "resolve.yml").read_text())
        assert shared[0]["ansible.builtin.import_tasks"] == "refuse_alone.yml"
        assert shared[1]["kubesched.schedulers.role_inputs"] == {"role": "{{ _rollout_role }}", "all_hosts": True}
        assert shared[1]["run_once"] is True
    else:
        if role == "verify":  # its own entry point too (tasks_from: inputs), for tests of its later steps
            assert tasks[0]["ansible.builtin.import_tasks"] == "inputs.yml"
            tasks = yaml.safe_load((ROLES / role / "tasks" / "inputs.yml").read_text())
        assert tasks[0]["kubesched.schedulers.role_inputs"] == {"role": role}


def test_every_variable_the_playbooks_read_is_known():
    """A playbook's own variable must never be reported as a typo of a role's."""
    import re

    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.role_variables import known_variables

    playbooks = Path(__file__).resolve().parents[3] / "playbooks"
    names = set()
    for playbook in playbooks.glob("*.yml"):
        names.update(re.findall(r"\bkube_scheduler_[a-z0-9_]*[a-z0-9]", playbook.read_text()))
    assert names - known_variables() == set()
