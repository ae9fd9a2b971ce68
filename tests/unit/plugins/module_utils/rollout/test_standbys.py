# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make before break on the master: the engine starts an instance's temporary standby before its
first write, removes it once the instance's new process passed its gate, and leaves nothing of it behind after a
failure (the one restore) or a killed run (found and removed by the next one). A fake strategy and waiter record
the order of what happens (the real kubelet and systemd: tests/e2e/test_one_master_rollout.py, make bench-lease-gaps)."""

from __future__ import annotations

import os

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import RolledBack
from test_engine import FakeStrategy, FakeWaiter, instance, params, snapshot

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import Engine
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.standbys import carries_text

PORT, STANDBY_PORT = 10259, 11259


class Recorder(FakeStrategy):
    """The fake strategy, recording standbys started and units removed in one log with the waiter's gates."""

    def __init__(self, log):
        super().__init__()
        self.log = log

    def start_standby(self, standby):
        self.log.append(("start standby", standby["unit"]))

    def remove(self, instance, remove_files, waiter, timeout):
        self.log.append(("remove", instance["unit"]))
        remove_files()
        waiter.stopped(instance["port"])


class Waiter(FakeWaiter):
    """Nothing listens on the standby's port until it is started; a gate notes what the instance's config said then."""

    def __init__(self, log, root, failing=(), taken=False):
        super().__init__(failing)
        self.log, self.root = log, root
        self.free = set() if taken else {STANDBY_PORT}

    def listener(self, port):
        return None if port in self.free else super().listener(port)

    def wait_new_healthy(self, port, url, previous_pid, timeout, settle):
        with open(os.path.join(self.root, "etc", "kube-scheduler.yaml")) as handle:
            self.log.append(("gate", port, handle.read()))
        self.free.discard(port)
        return super().wait_new_healthy(port, url, previous_pid, timeout, settle)

    def stopped(self, port):
        if port == STANDBY_PORT:
            self.free.add(port)


def standby(root):
    files = [{"path": "%s/etc/kubesched-standby-kube-scheduler.yaml" % root, "content": MARKED + "a: 2\n",
              "owner": "root", "group": "root", "mode": "0640", "secret": False},
             {"path": "%s/run/kubesched-standby-kube-scheduler.service" % root, "content": MARKED + "[Service]\n",
              "owner": "root",
              "group": "root", "mode": "0644", "secret": False}]
    return {"name": "kubesched-standby-kube-scheduler", "standby_for": "kube-scheduler", "port": STANDBY_PORT,
            "unit": "kubesched-standby-kube-scheduler.service", "health_url": "https://127.0.0.1:%d/readyz" % STANDBY_PORT,
            "files": files}


MARK = "kubesched.schedulers/standby-for: kube-scheduler"
MARKED = "# %s\n" % MARK


def leftover(root):
    return {"paths": [f["path"] for f in standby(root)["files"]], "unit": "kubesched-standby-kube-scheduler.service",
            "port": STANDBY_PORT, "mark": MARK}


def left_by_a_killed_run(root, content=None):
    """The standby's files on the master, as a run killed while it ran left them (``content``: another text)."""
    for spec in standby(root)["files"]:
        os.makedirs(os.path.dirname(spec["path"]), exist_ok=True)
        with open(spec["path"], "w") as handle:
            handle.write(spec["content"] if content is None else content)


def setup(tmp_path, config="a: 2\n", with_standby=True):
    """A master running kube-scheduler on "a: 1"; the change makes it "a: 2" (with a standby when asked)."""
    root = str(tmp_path)
    Engine(params(root, [instance(root, "kube-scheduler", PORT)], hold=False), FakeStrategy(), FakeWaiter()).run("apply")
    extra = {"standby_leftover": leftover(root)}
    if with_standby:
        extra["standby"] = standby(root)
    return root, params(root, [instance(root, "kube-scheduler", PORT, config=config, **extra)], hold=False)


def test_the_standby_is_ready_before_the_first_write_and_gone_once_the_new_process_passed_its_gate(tmp_path):
    root, p = setup(tmp_path)
    log = []
    result = Engine(p, Recorder(log), Waiter(log, root)).run("apply")
    assert result["standbys"] == ["kubesched-standby-kube-scheduler"]
    assert log == [
        ("start standby", "kubesched-standby-kube-scheduler.service"),
        # The standby answers while the instance still runs its old config.
        ("gate", STANDBY_PORT, "a: 1\n"),
        ("gate", PORT, "a: 2\n"),
        ("remove", "kubesched-standby-kube-scheduler.service"),
    ]
    assert not [name for name in snapshot(root) if "standby" in name]
    assert result["plan"]["instances"]["kube-scheduler"]["action"] == "update"


class RefusesTheNewConfig(Waiter):
    """The instance answers on its old config ("a: 1") and never on the new one."""

    def wait_new_healthy(self, port, url, previous_pid, timeout, settle):
        with open(os.path.join(self.root, "etc", "kube-scheduler.yaml")) as handle:
            self.failing = {PORT} if handle.read() != "a: 1\n" else set()
        return super().wait_new_healthy(port, url, previous_pid, timeout, settle)


def test_a_failed_instance_gate_restores_the_instance_then_removes_the_standby(tmp_path):
    root, p = setup(tmp_path)
    log = []
    with pytest.raises(RolledBack, match="The temporary standby kubesched-standby-kube-scheduler is removed"):
        Engine(p, Recorder(log), RefusesTheNewConfig(log, root)).run("apply")
    # The restored instance answers again (its gate on the old config) before the standby hands the lease back.
    assert [entry[:2] for entry in log] == [
        ("start standby", "kubesched-standby-kube-scheduler.service"), ("gate", STANDBY_PORT), ("gate", PORT),
        ("gate", PORT), ("remove", "kubesched-standby-kube-scheduler.service")]
    assert log[3][2] == "a: 1\n"
    assert not [name for name in snapshot(root) if "standby" in name]


def test_a_standby_stays_while_the_restored_instance_does_not_answer_and_goes_once_it_does(tmp_path):
    # Never a master with neither: the standby holds the lease while the instance it stands in for is not healthy.
    root, p = setup(tmp_path)
    log = []
    with pytest.raises(RolledBack, match="The temporary standby kubesched-standby-kube-scheduler is KEPT: it holds the "
                                         "lease while kube-scheduler is not healthy"):
        Engine(p, Recorder(log), Waiter(log, root, failing={PORT})).run("apply")
    assert ("remove", "kubesched-standby-kube-scheduler.service") not in log
    assert all(os.path.exists(path) for path in leftover(root)["paths"])
    # The next run takes the standby over, and removes it once the instance answers.
    log = []
    eng = Engine(p, Recorder(log), Waiter(log, root, taken=True))
    plan, _diff, changed = eng.plan()
    assert changed and plan["standby_leftovers"] == ["kube-scheduler"]
    eng.apply(plan)
    assert log[-1] == ("remove", "kubesched-standby-kube-scheduler.service")
    assert ("gate", PORT, "a: 2\n") in log[:-1] and ("start standby", "kubesched-standby-kube-scheduler.service") not in log
    assert not [name for name in snapshot(root) if "standby" in name]


def test_a_standby_that_never_gets_ready_is_removed_and_the_instance_was_never_touched(tmp_path):
    root, p = setup(tmp_path)
    before = snapshot(root)
    log = []
    with pytest.raises(RolledBack, match="the temporary standby kubesched-standby-kube-scheduler gave no ready answer"):
        Engine(p, Recorder(log), Waiter(log, root, failing={STANDBY_PORT})).run("apply")
    assert ("gate", PORT, "a: 2\n") not in log and log[-1] == ("remove", "kubesched-standby-kube-scheduler.service")
    assert snapshot(root) == before


def test_a_taken_standby_port_stops_the_change_before_the_first_write(tmp_path):
    root, p = setup(tmp_path)
    before = snapshot(root)
    log = []
    with pytest.raises(RolledBack, match="port 11259, for the temporary standby of kube-scheduler, is taken by process "
                                         "11359 on this master; set kube_scheduler_standby_port_offset"):
        Engine(p, Recorder(log), Waiter(log, root, taken=True)).run("apply")
    assert log == [] and snapshot(root) == before


def test_no_standby_for_an_instance_that_is_not_running_or_not_replaced(tmp_path):
    root, p = setup(tmp_path, config="a: 1\n")
    log = []
    Engine(p, Recorder(log), Waiter(log, root)).run("apply")
    assert log == []  # nothing changed
    root, p = setup(tmp_path, config="a: 3\n")
    log = []
    waiter = Waiter(log, root)
    waiter.free.add(PORT)  # the instance does not run: nothing holds its lease
    Engine(p, Recorder(log), waiter).run("apply")
    assert ("start standby", "kubesched-standby-kube-scheduler.service") not in log


def test_a_standby_a_killed_run_left_is_pending_in_the_plan_and_removed_once_its_instance_answers(tmp_path):
    root, p = setup(tmp_path, config="a: 1\n", with_standby=False)
    left_by_a_killed_run(root)
    log = []
    eng = Engine(p, Recorder(log), Waiter(log, root))
    plan, _diff, changed = eng.plan()
    assert changed and plan["standby_leftovers"] == ["kube-scheduler"]
    assert "a temporary standby an earlier run started is still on this master" in eng.result["warnings"][0]
    eng.apply(plan)
    assert log == [("gate", PORT, "a: 1\n"), ("remove", "kubesched-standby-kube-scheduler.service")]
    assert not [name for name in snapshot(root) if "standby" in name]
    assert Engine(p, Recorder([]), Waiter([], root)).plan()[2] is False


def test_a_standby_a_killed_run_left_for_an_instance_now_absent_is_in_the_plan_and_removed_with_it(tmp_path):
    root, _p = setup(tmp_path, config="a: 1\n", with_standby=False)
    left_by_a_killed_run(root)
    gone = {"name": "kube-scheduler", "state": "absent", "unit": "kube-scheduler.service", "port": PORT,
            "files": [{"path": f["path"]} for f in instance(root, "kube-scheduler", PORT)["files"]],
            "standby_leftover": leftover(root)}
    p = params(root, [gone], hold=False)
    log = []
    eng = Engine(p, Recorder(log), Waiter(log, root))
    plan, _diff, changed = eng.plan()
    assert changed and plan["standby_leftovers"] == ["kube-scheduler"]
    assert any("its instance is absent: it stands in for nothing and would keep running; the apply step stops it"
               in warning for warning in eng.result["warnings"])
    eng.apply(plan)
    # No gate: its instance is gone; the standby is stopped and its files go with the instance's.
    assert log == [("remove", "kube-scheduler.service"), ("remove", "kubesched-standby-kube-scheduler.service")]
    assert snapshot(root) == {}
    assert Engine(p, Recorder([]), Waiter([], root)).plan()[2] is False


@pytest.mark.parametrize("content", ["a: 2\n", "# kubesched.schedulers/standby-for: batch\na: 2\n", "[Service]\n"])
def test_a_file_at_a_standbys_path_without_its_mark_is_not_a_leftover_and_stays(tmp_path, content):
    # An instance of the operator's own at the standby's config path (its name once was not reserved), or the mark of
    # another instance's standby: not this instance's standby, so nothing is stopped and nothing is removed.
    root, p = setup(tmp_path, config="a: 1\n", with_standby=False)
    left_by_a_killed_run(root, content)
    log = []
    plan, _diff, changed = Engine(p, Recorder(log), Waiter(log, root)).plan()
    assert not changed and "standby_leftovers" not in plan
    assert all(os.path.exists(spec["path"]) for spec in standby(root)["files"])


def test_a_static_pod_standbys_manifest_is_known_by_its_label():
    manifest = ("apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    kubesched.schedulers/standby-for: 'kube-scheduler'\n"
                "    tier: control-plane\n  name: kubesched-standby-kube-scheduler\n")
    assert carries_text(manifest, MARK)
    assert not carries_text(manifest.replace("'kube-scheduler'", "batch"), MARK)


def test_an_instance_whose_change_moves_its_port_still_gets_its_standby(tmp_path):
    # It runs on the port its installed unit gives it, not yet on the new one: the lease still needs the standby.
    root, p = setup(tmp_path)
    moved = p["instances"][0]
    moved["files"][1]["content"] = "[Service]\nExecStart=/bin/kube-scheduler --secure-port=10271\n"
    moved["port"] = 10271
    log = []
    waiter = Waiter(log, root)
    waiter.free.add(10271)  # nothing listens on the new port yet
    result = Engine(p, Recorder(log), waiter).run("apply")
    assert result["standbys"] == ["kubesched-standby-kube-scheduler"]
    assert log[0] == ("start standby", "kubesched-standby-kube-scheduler.service")
