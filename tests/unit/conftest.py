"""What every test that runs real Ansible shares: the venv's ansible-playbook with this checkout's collection and a
runner of one play per case; the plays a rollout playbook runs, for stand-ins in place of its roles; what the tests
that check objects against a Kubernetes version's OpenAPI schema share; and the timer of the tests that tell one pass
from a quadratic one."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = Path(sys.executable).with_name("ansible-playbook")

# make unit (and so make test) leaves these out, make preview-tests runs them: the placement preview's real-binary
# cases beyond one per behaviour (each starts several throwaway control planes, half a minute or more under load).
SLOW_PREVIEW = "slow_preview"


def pytest_configure(config):
    config.addinivalue_line("markers", SLOW_PREVIEW + ": a placement preview case on real binaries that make test "
                            "leaves to make preview-tests (the Makefile's UNIT_MARKERS)")


@pytest.fixture(scope="session")
def collections_path() -> str:
    """Where this checkout resolves as kubesched.schedulers: set by the Makefile, else its default location."""
    return os.environ.get("ANSIBLE_COLLECTIONS_PATH", str(REPO / ".build" / "collections"))


@pytest.fixture(scope="session")
def ansible_playbook(collections_path):
    """Run ansible-playbook with ``args`` (extra environment in ``env``); returns the CompletedProcess."""
    def run(args, cwd=None, env=None, timeout=600):
        environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path, ANSIBLE_NOCOLOR="1",
                           ANSIBLE_RETRY_FILES_ENABLED="0", **(env or {}))
        return subprocess.run([str(ANSIBLE_PLAYBOOK)] + [str(arg) for arg in args], cwd=cwd, env=environment,
                              capture_output=True, text=True, timeout=timeout, check=False)
    return run


@pytest.fixture(scope="session")
def host_side_env():
    """The environment in which a task named ansible.legacy.scheduler_rollout runs scheduler_rollout's host side on its
    own, for the tests that hand it what its action plugin would: ansible-core finds plugins/modules/scheduler_rollout.py
    on ANSIBLE_LIBRARY and runs it with no action plugin in front of it (kubesched.schedulers.scheduler_rollout runs the
    action plugin, which takes a task's options; kubesched.schedulers.rollout is the deprecated redirect, proved once by
    test_scheduler_rollout_former_name.py)."""
    return {"ANSIBLE_LIBRARY": str(REPO / "plugins" / "modules")}


PLAYBOOKS = REPO / "playbooks"
IMPORT_PLAYBOOK = "ansible.builtin.import_playbook"
ROLLOUT_ENGINE = "_rollout_engine.yml"


def rollout_plays(kind):
    """The plays playbooks/<kind>.yml (systemd, static_pod) runs, in order, for tests that put stand-ins in place of
    its roles (``from conftest import rollout_plays``): an import of another playbook stays an import (its path made
    absolute), except the rollout engine's, whose plays come in its place, each with the variables the import gives
    it (the kind)."""
    def absolute(play):
        return dict(play, **{IMPORT_PLAYBOOK: str(PLAYBOOKS / play[IMPORT_PLAYBOOK])}) if IMPORT_PLAYBOOK in play else play

    out = []
    for play in yaml.safe_load((PLAYBOOKS / ("%s.yml" % kind)).read_text()):
        if play.get(IMPORT_PLAYBOOK) != ROLLOUT_ENGINE:
            out.append(absolute(play))
            continue
        for engine_play in yaml.safe_load((PLAYBOOKS / ROLLOUT_ENGINE).read_text()):
            if IMPORT_PLAYBOOK in engine_play:
                out.append(absolute(engine_play))
            else:
                out.append(dict(engine_play, vars=dict(engine_play.get("vars") or {}, **play["vars"])))
    return out


# The last play of a case_plays run: every case's kept fact in one file.
KEEP_PLAY = """
- name: Write what every case kept
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Write them
      ansible.builtin.copy:
        content: {content}
        dest: {dest}
        mode: "0600"
      check_mode: false
"""


@pytest.fixture(scope="session")
def case_plays(ansible_playbook):
    """Run ``play`` (a str.format template of one play, with {case}, {vars} and {fact}) once per case of ``cases``
    ({case: its variables}), then the plays ``after`` (text), in one ansible-playbook run against localhost on this
    Python (``check``: as a Check job) in ``directory``; returns the run and {case: what its play kept, or None}. A
    play keeps its result with ``ansible.builtin.set_fact`` of the fact named {fact} (a fact of its own: facts outlive
    their play), and one last play writes them all: a copy task per case, a module run each, took most of such a
    run's CPU time."""
    def run(directory, play, cases, check=False, after="", timeout=600):
        facts = {case: "kept_" + re.sub(r"\W", "_", case) for case in cases}
        assert len(set(facts.values())) == len(facts), facts
        kept = Path(directory) / "kept.json"
        gather = "{{ {%s} | to_json }}" % ", ".join(
            "%s: %s | default(none)" % (json.dumps(case), fact) for case, fact in facts.items())
        plays = "".join(play.format(case=case, vars=json.dumps(values), fact=facts[case])
                        for case, values in cases.items())
        playbook = Path(directory) / "playbook.yml"
        playbook.write_text("---" + plays + after
                            + KEEP_PLAY.format(content=json.dumps(gather), dest=json.dumps(str(kept))))
        finished = ansible_playbook(["-i", "localhost,", "-c", "local", "-e",
                                     "ansible_python_interpreter=" + sys.executable, *(["--check"] if check else []),
                                     playbook], timeout=timeout)
        return finished, json.loads(kept.read_text()) if kept.exists() else None
    return run


@pytest.fixture(scope="session")
def json_task_results():
    """A run's report from the ansible.posix.json callback (ANSIBLE_STDOUT_CALLBACK) as {task name: the result of its
    one host}; lines before the report (-vvv) are skipped. Task names must be unique in the playbook."""
    def parse(proc: subprocess.CompletedProcess) -> dict:
        try:
            report = json.loads(proc.stdout[proc.stdout.find("{\n"):])
        except ValueError:
            pytest.fail("ansible-playbook did not print JSON:\n%s\n%s" % (proc.stdout, proc.stderr))
        results = {}
        for play in report["plays"]:
            for task in play["tasks"]:
                (result,) = task["hosts"].values()
                results[task["task"]["name"]] = result
        return results
    return parse


@pytest.fixture(scope="session")
def skip_without_openapi_schemas():
    """Skip, saying so, when kubernetes-validate has no schemas of ``version`` (a preview minor,
    versions.PREVIEW_MINORS, ships after its newest ones)."""
    def check(version):
        kubernetes_validate = pytest.importorskip("kubernetes_validate")
        newest = kubernetes_validate.utils.latest_version()
        if [int(part) for part in version.split(".")[:2]] > [int(part) for part in newest.split(".")[:2]]:
            pytest.skip("kubernetes-validate %s has no schemas of Kubernetes %s yet" % (newest, version))
    return check


@pytest.fixture(scope="session")
def shortest_time():
    """The shortest CPU time of ``runs`` calls of ``function``, in seconds, and what the last call returned. CPU
    time, not wall time: make test's four chains keep both cores busy, and there a 0.07 s call once took 1.04 s by
    the clock (a linear pass looked quadratic) while the CPU it used stays about the same; the shortest of three
    still drops a run that cold caches or another process on its core slowed."""
    def measure(function, runs=3):
        times = []
        for _run in range(runs):
            start = time.process_time()
            value = function()
            times.append(time.process_time() - start)
        return min(times), value
    return measure
