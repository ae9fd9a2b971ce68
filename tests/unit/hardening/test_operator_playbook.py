"""The input model through ansible-playbook, as an operator runs it: the collection's systemd playbook against two
masters that cannot be reached (TEST-NET addresses). A mistake must fail on the controller, naming the variable and
the fix, before any host is contacted (a contacted host would show as unreachable); a correct run gets as far as
the first call to a master."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

PLAYBOOK = Path(__file__).resolve().parents[3] / "playbooks" / "systemd.yml"
INVENTORY = """[kube_control_plane]
m1 ansible_host=192.0.2.11
m2 ansible_host=192.0.2.12

[kube_control_plane:vars]
ansible_connection=ssh
ansible_ssh_common_args='-o ConnectTimeout=1 -o StrictHostKeyChecking=no'
ansible_python_interpreter={python}
"""
BASE = 'kube_scheduler_version: "1.35.4"\n'
CASES = {
    "binary_link_injection": BASE + 'kube_scheduler_binary_link: "/usr/local/bin/kube-scheduler\\"\\nExecStartPre=+/bin/true\\n#"\n',
    "empty_unit_dir": BASE + 'kube_scheduler_unit_dir: ""\n',
    "misspelled_instances": BASE + "kube_scheduler_instance:\n  - name: batch\n",
    "yaml_float_version": "kube_scheduler_version: 1.30\n",
    "v_prefixed_version": 'kube_scheduler_version: "v1.35.4"\n',
    "lease_divergence": BASE,
    "host_var_of_one_master": BASE,
}
# host_vars of m2 per case.
HOST_VARS = {
    # The role's variables are checked once for all masters (run_once), so m2's own mistake is found by the
    # one run on m1's behalf, named by its host.
    "host_var_of_one_master": 'kube_scheduler_unit_dir: ""\n',
    "lease_divergence": "kube_scheduler_instances:\n  - name: kube-scheduler\n    default_scheduler: true\n"
                        "    config:\n      percentageOfNodesToScore: 70\n",
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory, ansible_playbook):
    results = {}
    for case, group_vars in CASES.items():
        work = tmp_path_factory.mktemp(case)
        (work / "inventory.ini").write_text(INVENTORY.format(python=sys.executable))
        (work / "group_vars").mkdir()
        (work / "group_vars" / "kube_control_plane.yml").write_text("---\n" + group_vars)
        if case in HOST_VARS:
            (work / "host_vars").mkdir()
            (work / "host_vars" / "m2.yml").write_text("---\n" + HOST_VARS[case])
        proc = ansible_playbook(["-i", "inventory.ini", str(PLAYBOOK)], cwd=work, env=dict(
            ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_HOST_KEY_CHECKING="0",
            ANSIBLE_LOCAL_TEMP=str(work / "tmp")), timeout=300)
        report = json.loads(proc.stdout[proc.stdout.find("{\n"):])
        tasks = [(task["task"]["name"], host, result) for play in report["plays"] for task in play["tasks"]
                 for host, result in task["hosts"].items()]
        results[case] = {"tasks": tasks, "rc": proc.returncode}
    return results


def first_failure(run):
    return next((name, host, result) for name, host, result in run["tasks"]
                if result.get("failed") or result.get("unreachable"))


@pytest.mark.parametrize("case, words", [
    ("binary_link_injection", ["kube_scheduler_binary_link: Invalid value", "must not contain control characters"]),
    ("empty_unit_dir", ["kube_scheduler_unit_dir: Required value: must not be empty (an empty survey field?)"]),
    ("misspelled_instances", ["kube_scheduler_instance: unknown variable; did you mean kube_scheduler_instances?"]),
    ("yaml_float_version", ["kube_scheduler_version: YAML read 1.30 as the number 1.3", 'quote it']),
    ("host_var_of_one_master", ["host m2: kube_scheduler_unit_dir: Required value: must not be empty"]),
    ("lease_divergence", ["shares the lease kube-system/kube-scheduler with host m2",
                          "config.percentageOfNodesToScore differs: 0 here, 70 on m2"]),
])
def test_a_mistake_fails_on_the_controller_naming_the_variable(runs, case, words):
    run = runs[case]
    assert run["rc"] != 0
    assert not any(result.get("unreachable") for _name, _host, result in run["tasks"]), "a host was contacted"
    _name, _host, result = first_failure(run)
    for word in words:
        assert word in result["msg"], result["msg"]


def test_a_v_prefixed_version_passes_every_controller_check(runs):
    name, _host, result = first_failure(runs["v_prefixed_version"])
    # The first task that needs the master is the plan's one call to it (it resolves the directories too).
    assert name.endswith("Ask the master what would change"), (name, result)
    assert result.get("unreachable") or "192.0.2." in result.get("msg", ""), result


MODULE_PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: unsupported_option
      kubesched.schedulers.scheduler_instances:
        instances: []
        kubernetes_version: "1.35.4"
        config_dir: /etc/kubernetes/schedulers
        peer_var: kube_scheduler_instances
      ignore_errors: true
    - name: float_version
      kubesched.schedulers.scheduler_config:
        config: {profiles: [{schedulerName: a}]}
        kubernetes_version: 1.30
      ignore_errors: true
    - name: survey_boolean
      kubesched.schedulers.scheduler_config:
        config: "{{ survey_config }}"
        kubernetes_version: "1.35"
      ignore_errors: true
    - name: host_paths_in_apply
      kubesched.schedulers.scheduler_rollout:
        kind: systemd
        apply: true
        instances: []
        kubernetes_version: "1.35.4"
        config_dir: "{{ work }}/config"
        state_dir: "{{ work }}/state"
        binary_path: "{{ work }}/opt/kube-scheduler"
        host_paths: {kube_scheduler_config_dir: "{{ work }}/config"}
      ignore_errors: true
"""


def test_module_refusals_name_the_fqcn_and_the_fix(tmp_path, ansible_playbook, json_task_results):
    (tmp_path / "play.yml").write_text(MODULE_PLAY)
    proc = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                             "-e", '{"survey_config": {"leaderElection": {"leaderElect": "true"}}}', "-e", "work=%s" % tmp_path,
                             "play.yml"],
                            cwd=tmp_path, env=dict(ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
                                                   ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp")))
    results = json_task_results(proc)
    assert results["unsupported_option"]["msg"].startswith(
        "Unsupported parameters for (kubesched.schedulers.scheduler_instances) module: peer_var (did you mean "
        "peers_var?).")
    assert "ansible_collections" not in results["unsupported_option"]["msg"]
    assert results["float_version"]["msg"].startswith("kubernetes_version: YAML read 1.30 as the number 1.3")
    assert results["survey_boolean"]["msg"].splitlines() == [
        "json: cannot unmarshal string into Go struct field "
        "LeaderElectionConfiguration.leaderElection.leaderElect of type bool",
        "  hint (config.leaderElection.leaderElect): use a boolean, true without quotes: a survey or -e key=value "
        "gives text (convert it with | bool)"]
    # The directories are resolved by the plan's call and checked after it answers: an apply never does.
    assert results["host_paths_in_apply"]["msg"] == ("kubesched.schedulers.scheduler_rollout: host_paths is checked by "
                                                     "the plan (apply: false), before any apply; nothing was changed")
    assert not (tmp_path / "state").exists() and not (tmp_path / "config").exists()


SYMLINK_PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: resolve
      kubesched.schedulers.scheduler_instances:
        instances: [{name: kube-scheduler, default_scheduler: true}]
        kubernetes_version: "1.35.4"
        config_dir: "{{ work }}/config"
      register: resolved
    - name: plan
      kubesched.schedulers.scheduler_rollout:
        kind: static_pod
        instances: "{{ resolved.instances }}"
        kubernetes_version: "1.35.4"
        config_dir: "{{ work }}/config"
        state_dir: "{{ work }}/state"
        manifest_dir: "{{ work }}/manifests"
      ignore_errors: true
"""


def test_a_config_dir_linked_to_the_manifest_dir_is_found_on_the_host(tmp_path, ansible_playbook):
    """The strings differ; the host says they are one directory. Nothing may be written there."""
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "etcd.yaml").write_text("kind: Pod\n")
    (tmp_path / "config").symlink_to(tmp_path / "manifests")
    (tmp_path / "play.yml").write_text(SYMLINK_PLAY)
    proc = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                             "-e", "work=%s" % tmp_path, "play.yml"], cwd=tmp_path,
                            env=dict(ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp")))
    report = json.loads(proc.stdout[proc.stdout.find("{\n"):])
    results = dict((task["task"]["name"], task["hosts"]["localhost"]) for play in report["plays"]
                   for task in play["tasks"])
    assert results["plan"]["failed"]
    assert results["plan"]["msg"].startswith("config_dir (kube_scheduler_config_dir in the static_pod role): Invalid "
                                             "value: '%s/config': on the host it is the static pod directory" % tmp_path)
    assert sorted(p.name for p in (tmp_path / "manifests").iterdir()) == ["etcd.yaml"]
    assert not (tmp_path / "state").exists()


SYSTEMD_LINK_PLAY = """
- name: The systemd role's checks on a master whose config dir is a symbolic link to its unit dir
  hosts: localhost
  gather_facts: false
  vars:
    kube_scheduler_version: "1.35.4"
    kube_scheduler_config_dir: "{{ work }}/{{ config_dir }}"
    kube_scheduler_unit_dir: "{{ work }}/units"
    kube_scheduler_state_dir: "{{ work }}/state"
    kube_scheduler_binary_install_dir: "{{ work }}/opt"
    kube_scheduler_binary_link: "{{ work }}/bin/kube-scheduler"
  tasks:
    - name: plan
      ansible.builtin.import_role:
        name: kubesched.schedulers.systemd
        tasks_from: plan
"""


@pytest.mark.parametrize("config_dir, refused", [("config", True), ("units-inside/schedulers", True),
                                                 ("own", False)])
def test_systemd_directories_are_compared_by_real_path_on_the_master(tmp_path, ansible_playbook, config_dir,
                                                                     refused):
    """A config dir that is (through a symbolic link) the unit dir, or a directory inside it, is refused
    on the master before anything is written there, naming both variables and what the link resolves to.
    The plan's one call to the master resolves them, no call of its own."""
    (tmp_path / "units").mkdir()
    (tmp_path / "units" / "ssh.service").write_text("[Unit]\n")
    (tmp_path / "config").symlink_to(tmp_path / "units")
    (tmp_path / "units-inside").symlink_to(tmp_path / "units")
    (tmp_path / "play.yml").write_text(SYSTEMD_LINK_PLAY)
    proc = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                             "-e", "work=%s" % tmp_path, "-e", "config_dir=%s" % config_dir, "--check", "play.yml"],
                            cwd=tmp_path, env=dict(ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
                                                   ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp")))
    report = json.loads(proc.stdout[proc.stdout.find("{\n"):])
    results = dict((task["task"]["name"].split(" : ")[-1], task["hosts"]["localhost"]) for play in report["plays"]
                   for task in play["tasks"])
    check = results["Ask the master what would change"]
    # The plan's call resolved every directory (and the link's) as the master sees them.
    assert check["resolved"][str(tmp_path / config_dir)]["path"] == str(
        (tmp_path / "units").resolve() / config_dir.partition("/")[2] if "/" in config_dir else (tmp_path / config_dir).resolve())
    assert check["resolved"][str(tmp_path / "bin")]["path"] == str((tmp_path / "bin").resolve())
    if not refused:
        # This host may fail the plan for its own reasons (no systemd, no binary), never for its directories.
        assert "compared by real path" not in check.get("msg", ""), check
        return
    assert check["failed"] and proc.returncode != 0
    real = (tmp_path / "units").resolve()
    line = check["msg"].splitlines()[1]
    resolved = real / config_dir.partition("/")[2] if "/" in config_dir else real
    assert line.startswith("kube_scheduler_config_dir: Invalid value: ")
    assert ("%s kube_scheduler_unit_dir" % ("overlaps" if "/" in config_dir else "is")) in line
    assert line.endswith("(compared by real path on the host: kube_scheduler_config_dir %r is %r). Nothing was "
                         "changed." % (str(tmp_path / config_dir), str(resolved)))
    assert sorted(p.name for p in (tmp_path / "units").iterdir()) == ["ssh.service"]
    assert not (tmp_path / "state").exists()
