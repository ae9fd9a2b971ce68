# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout engine's sequence on a temp dir, with a fake strategy and waiter and injectable failures, as
kubeadm's upgrade/staticpods_test.go drives upgradeComponent with a fake path manager and waiter."""

from __future__ import annotations

import os
import stat

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout import engine as rollout_engine
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import Engine
from ansible_collections.kubesched.schedulers.plugins.module_utils._files import sha256
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import ReadChanged, RolloutFailed
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.strategies import (
    StaticPodStrategy, SystemdStrategy, Verdict)


class FakeStrategy(object):
    """Records what the engine asks of a systemd-like kind (a unit file changed: one reload)."""

    def __init__(self):
        self.calls = []
        self.stopped_units = set()
        self.processes = {}  # unit -> the process systemd says it runs (a port holder as the waiter gives it)

    def facts(self, params):
        return {}, []

    def host_problem(self, facts):
        return None

    def reload(self, paths):
        if any(path.endswith(".service") for path in paths):
            self.calls.append(("reload",))

    def restart(self, instance):
        self.calls.append(("restart", instance["unit"]))

    def stop(self, instance):
        self.calls.append(("stop", instance["unit"]))

    def remove(self, instance, remove_files, waiter, timeout):
        self.stop(instance)
        remove_files()

    def running(self, instance):
        return instance["unit"] not in self.stopped_units

    def foreign(self, instance, holder):
        own = self.processes.get(instance.get("unit"))
        return None if own is not None and holder == own else "its unit %s runs %s" % (instance.get("unit"), own or "no process")

    def log_hint(self, instance):
        return "journalctl -u %s" % instance["unit"]

    def log_tail(self, instance):
        return ["%s: the last line it logged" % instance["unit"]]

    def binary_problems(self, params):
        return []

    def preflight(self, instance, params):
        return Verdict("not run: a fake")


class FakeWaiter(object):
    """Every port has a process; a gate passes with a new pid unless the port is in ``failing``."""

    def __init__(self, failing=(), taken=None):
        self.failing = set(failing)
        self.pids = {}
        self.gates = []
        self.taken = dict(taken or {})  # port -> who holds it, for the plan's port check

    def listener(self, port):
        return self.pids.get(port, 100 + port)

    def port_holder(self, port):
        return self.taken.get(port)

    def health(self, port, url):
        """The plan's one look at an instance it leaves running: it answers."""
        return self.listener(port), None

    def wait_new_healthy(self, port, url, previous_pid, timeout, settle):
        self.gates.append(port)
        if port in self.failing:
            return None, "%s: connection refused" % url, 0.0
        self.pids[port] = self.listener(port) + 1
        return self.pids[port], None, settle

    def wait_port_free(self, port, timeout):
        return True


def instance(root, name, port, config="a: 1\n", unit=True, **extra):
    files = [{"path": "%s/etc/%s.yaml" % (root, name), "content": config, "owner": "root", "group": "root",
              "mode": "0640", "secret": False},
             {"path": "%s/units/%s.service" % (root, name), "content": "[Service]\nExecStart=/bin/%s\n" % name,
              "owner": "root", "group": "root", "mode": "0644", "secret": False}]
    entry = {"name": name, "state": "present", "unit": "%s.service" % name if unit else None, "port": port,
             "health_url": "https://127.0.0.1:%d/livez" % port, "named_files": [], "files": files}
    entry.update(extra)
    return entry


def params(root, instances, kind="systemd", **extra):
    base = {"kind": kind, "apply": True, "state_dir": "%s/state" % root, "directories": [], "link": None, "binary": None,
            "accounts": None, "read": [], "instances": instances, "health_timeout": 5, "settle": 0}
    base.update(extra)
    return base


def engine(p, failing=(), strategy=None):
    return Engine(p, strategy or FakeStrategy(), FakeWaiter(failing))


def snapshot(root):
    found = {}
    for directory, _dirs, files in os.walk(str(root)):
        for name in files:
            path = os.path.join(directory, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, str(root))] = (handle.read(), stat.S_IMODE(os.stat(path).st_mode))
    return found


def converge(p, **kwargs):
    """A rollout with no gate after the engine's own: apply, then commit."""
    eng = engine(p, **kwargs)
    plan, _diff, changed = eng.plan()
    applied = eng.apply(plan) if changed else {}
    eng.commit()
    return eng, applied


def test_plan_changes_nothing_and_apply_writes_restarts_and_gates_each_instance(tmp_path):
    p = params(tmp_path, [instance(tmp_path, "one", 10259), instance(tmp_path, "two", 10260)])
    eng = engine(p)
    plan, diff, changed = eng.plan()
    assert changed and plan["instances"]["one"]["action"] == "create"
    assert snapshot(tmp_path) == {}  # planning wrote nothing
    assert [d["after"] for d in diff][0] == "a: 1\n"
    applied = eng.apply(plan)
    assert applied == {"one": {"restarted": True, "pid": 10360, "healthy_for": 0},
                       "two": {"restarted": True, "pid": 10361, "healthy_for": 0}}
    # Written first, one daemon-reload, then both restarted and gated together (their settle times overlap).
    assert eng.strategy.calls == [("reload",), ("restart", "one.service"), ("restart", "two.service")]
    assert sorted(eng.waiter.gates) == [10259, 10260]
    files = snapshot(tmp_path)
    assert files["etc/one.yaml"] == (b"a: 1\n", 0o640) and files["units/two.service"][1] == 0o644
    # Held until the master's last gate: the backups and the record of the change, until the commit clears them.
    assert sorted(os.listdir(str(tmp_path / "state"))) == ["held-change.json", "one", "two"]
    assert eng.commit() == {"changed": False, "committed": ["one", "two"],
                            "removed_backups": [str(tmp_path / "state" / name / "backup") for name in ("one", "two")]}
    assert os.listdir(str(tmp_path / "state")) == []


def test_rerun_is_a_no_op(tmp_path):
    p = params(tmp_path, [instance(tmp_path, "one", 10259)])
    converge(p)
    eng = engine(p)
    _plan, diff, changed = eng.plan()
    assert not changed and diff == []


def test_a_failed_gate_restores_every_instance_this_call_changed_and_keeps_the_backups(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259), instance(tmp_path, "two", 10260)]))
    before = snapshot(tmp_path)
    changed = params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n"),
                                instance(tmp_path, "two", 10260, config="a: 2\n")])
    eng = engine(changed, failing={10260})
    plan, _diff, _changed = eng.plan()
    with pytest.raises(RolloutFailed) as failure:
        eng.apply(plan)
    message = str(failure.value)
    assert "two gave no healthy answer" in message and "two.service: the last line it logged" in message
    assert "the files of one, two" in message and "After restore one answers health again" in message
    after = snapshot(tmp_path)
    # one had passed its gate, but kubeadm's rule holds: a failed run restores everything it changed.
    assert {k: v for k, v in after.items() if not k.startswith("state/")} == before
    assert any(k.startswith("state/two/backup/") for k in after)  # kept for the operator
    assert ("restart", "one.service") in eng.strategy.calls[-4:] and ("restart", "two.service") in eng.strategy.calls[-4:]


def test_a_write_that_fails_halfway_is_restored_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    before = snapshot(tmp_path)
    real_replace = os.replace
    failures = []

    def failing_replace(src, dst):
        if dst.endswith("one.service") and not failures:
            failures.append(dst)  # the disk is full once, then not any more (the restore succeeds)
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(rollout_engine.os, "replace", failing_replace)
    changed = params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 3\n")])
    changed["instances"][0]["files"][1]["content"] = "[Service]\nExecStart=/bin/other\n"
    eng = engine(changed)
    plan, _diff, _changed = eng.plan()
    with pytest.raises(RolloutFailed, match="No space left on device"):
        eng.apply(plan)
    monkeypatch.setattr(rollout_engine.os, "replace", real_replace)
    after = {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("state/")}
    assert after == before  # the config written before the failure is back too; no hidden temp file is left


def test_a_new_instance_that_never_is_healthy_is_removed(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    before = snapshot(tmp_path)
    eng = engine(params(tmp_path, [instance(tmp_path, "one", 10259), instance(tmp_path, "new", 10270)]), failing={10270})
    plan, _diff, _changed = eng.plan()
    assert plan["instances"]["one"]["action"] == "none"
    with pytest.raises(RolloutFailed, match="removed the new instance new, which never was healthy"):
        eng.apply(plan)
    assert ("stop", "new.service") in eng.strategy.calls
    assert {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("state/")} == before


def test_attributes_only_are_fixed_without_a_restart(tmp_path):
    p = params(tmp_path, [instance(tmp_path, "one", 10259)])
    converge(p)
    os.chmod(str(tmp_path / "etc" / "one.yaml"), 0o644)
    eng = engine(p)
    plan, _diff, changed = eng.plan()
    assert changed and plan["instances"]["one"]["action"] == "attributes"
    assert eng.apply(plan) == {"one": {"restarted": False, "pid": None}}
    assert eng.strategy.calls == [] and stat.S_IMODE(os.stat(str(tmp_path / "etc" / "one.yaml")).st_mode) == 0o640


def test_a_stopped_unit_is_started_and_gated(tmp_path):
    p = params(tmp_path, [instance(tmp_path, "one", 10259)])
    converge(p)
    strategy = FakeStrategy()
    strategy.stopped_units.add("one.service")
    eng = engine(p, strategy=strategy)
    plan, _diff, changed = eng.plan()
    assert changed and plan["instances"]["one"]["action"] == "start"
    eng.apply(plan)
    assert strategy.calls == [("restart", "one.service")] and eng.waiter.gates == [10259]


def test_a_new_link_restarts_every_instance_and_a_failure_points_it_back(tmp_path):
    old, new = tmp_path / "bin-1.34", tmp_path / "bin-1.35"
    old.write_text("old")
    new.write_text("new")
    link = {"path": str(tmp_path / "kube-scheduler"), "src": str(old)}
    instances = [instance(tmp_path, "one", 10259), instance(tmp_path, "two", 10260)]
    converge(params(tmp_path, instances, link=link))
    eng = engine(params(tmp_path, instances, link={"path": link["path"], "src": str(new)}), failing={10260})
    plan, diff, _changed = eng.plan()
    assert plan["link_changed"] and plan["instances"]["one"]["action"] == "restart"
    assert {"before": "-> %s\n" % old, "after": "-> %s\n" % new} == {k: diff[0][k] for k in ("before", "after")}
    with pytest.raises(RolloutFailed, match="binary link .* -> .*bin-1.34"):
        eng.apply(plan)
    assert os.readlink(link["path"]) == str(old)


def test_a_missing_named_file_or_a_wrong_binary_changes_nothing(tmp_path):
    named = [{"field": "extenders[0].tlsConfig.certFile", "path": str(tmp_path / "missing.crt")}]
    eng = engine(params(tmp_path, [instance(tmp_path, "one", 10259, named_files=named)]))
    plan, _diff, _changed = eng.plan()
    with pytest.raises(RolloutFailed, match=r"nothing was changed: one: extenders\[0\].tlsConfig.certFile: Invalid value"):
        eng.apply(plan)
    binary = tmp_path / "kube-scheduler"
    binary.write_text("#!/bin/sh\necho Kubernetes v1.33.0\n")
    binary.chmod(0o755)
    eng = Engine(params(tmp_path, [instance(tmp_path, "one", 10259)], binary={"path": str(binary), "version": "1.34.2"}),
                 SystemdStrategy(run=lambda argv: (0, "Kubernetes v1.33.0\n", "")), FakeWaiter())
    plan, _diff, _changed = eng.plan()
    with pytest.raises(RolloutFailed, match="nothing was changed: .*'Kubernetes v1.33.0', not 'Kubernetes v1.34.2'"):
        eng.apply(plan)
    assert snapshot(tmp_path) == {"kube-scheduler": (b"#!/bin/sh\necho Kubernetes v1.33.0\n", 0o755)}


def test_secret_files_never_show_their_content_in_a_diff(tmp_path):
    entry = instance(tmp_path, "one", 10259)
    entry["files"].insert(1, {"path": str(tmp_path / "kubeconfig"), "content": "token: s3cr3t\n", "owner": "root",
                              "group": "root", "mode": "0600", "secret": True})
    _plan, diff, _changed = engine(params(tmp_path, [entry])).plan()
    assert "s3cr3t" not in repr(diff) and any(d["after"].startswith("<secret: 14 bytes, sha256 ") for d in diff)


def test_absent_instances_are_stopped_and_removed_first(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259), instance(tmp_path, "old", 10260)]))
    gone = {"name": "old", "state": "absent", "unit": "old.service", "port": 10260, "files": [
        {"path": str(tmp_path / "etc" / "old.yaml")}, {"path": str(tmp_path / "units" / "old.service")}]}
    eng, _applied = converge(params(tmp_path, [instance(tmp_path, "one", 10259), gone]))
    assert eng.strategy.calls == [("stop", "old.service"), ("reload",)]
    assert sorted(snapshot(tmp_path)) == ["etc/one.yaml", "units/one.service"]


def test_static_pods_are_left_to_the_kubelet(tmp_path):
    p = params(tmp_path, [instance(tmp_path, "one", 10259, unit=False)], kind="static_pod")
    eng, applied = converge(p, strategy=StaticPodStrategy(run=None))
    assert applied["one"]["restarted"] and eng.waiter.gates == [10259]


def test_a_new_instance_is_removed_even_when_one_of_its_files_was_there_before(tmp_path):
    """A shared kubeconfig (kubeadm's scheduler.conf) existed; the unit did not: the instance never ran, so it is
    stopped and its new files removed, and the shared file comes back as it was."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "new.yaml").write_text("kubeadm's\n")
    eng = engine(params(tmp_path, [instance(tmp_path, "new", 10270)]), failing={10270})
    plan, _diff, _changed = eng.plan()
    with pytest.raises(RolloutFailed, match="removed the new instance new"):
        eng.apply(plan)
    # Started once by the change, then after the restore only stopped, never restarted on files it never ran with.
    assert eng.strategy.calls == [("reload",), ("restart", "new.service"), ("reload",), ("stop", "new.service")]
    assert {k: v[0] for k, v in snapshot(tmp_path).items() if not k.startswith("state/")} == {"etc/new.yaml": b"kubeadm's\n"}


def test_one_read_call_finds_the_manifests_by_name_in_the_static_pod_directory(tmp_path):
    manifests = tmp_path / "pods"
    manifests.mkdir()
    (manifests / "kube-scheduler.yaml").write_text("kind: Pod\n")
    # What else the kubelet would run from there comes back in the same call (hidden files it skips, so do we).
    for name in ("etcd.yaml", "notes.txt", ".swp"):
        (manifests / name).write_text("x\n")
    adopted = tmp_path / "adopted.yaml"
    eng = engine(params(tmp_path, [], kind="static_pod", read=[str(adopted)], manifest_dir=str(manifests) + "/",
                        manifest_names=["kube-scheduler", "gpu"]), strategy=StaticPodStrategy(run=None))
    facts = eng.facts()
    st = os.stat(str(manifests))
    assert facts["manifest_dir"] == {"path": str(manifests), "source": "given", "kubelet_config": None,
                                     "directory": [st.st_dev, st.st_ino], "other_files": ["etcd.yaml", "notes.txt"]}
    assert facts["read"][str(manifests / "kube-scheduler.yaml")]["content"] == "kind: Pod\n"
    assert not facts["read"][str(manifests / "gpu.yaml")]["exists"] and not facts["read"][str(adopted)]["exists"]
    assert "host" not in facts  # host facts are the systemd kind's


def test_the_plan_call_resolves_paths_as_the_host_does(tmp_path):
    """What `realpath --canonicalize-missing` said in a call of its own now comes back with the plan: a
    symbolic link is followed, a missing tail kept, and an existing directory has its device and inode."""
    (tmp_path / "units").mkdir()
    (tmp_path / "config").symlink_to(tmp_path / "units")
    wanted = [str(tmp_path / "config"), str(tmp_path / "config" / "new" / "deeper"), str(tmp_path / "units")]
    eng = engine(params(tmp_path, [], resolve=wanted))
    facts = eng.facts()
    st = os.stat(str(tmp_path / "units"))
    assert facts["resolved"] == {
        wanted[0]: {"path": str(tmp_path / "units"), "directory": [st.st_dev, st.st_ino]},
        wanted[1]: {"path": str(tmp_path / "units" / "new" / "deeper"), "directory": None},
        wanted[2]: {"path": str(tmp_path / "units"), "directory": [st.st_dev, st.st_ino]}}
    assert "resolved" not in engine(params(tmp_path, [])).facts()


def test_with_no_later_gate_one_apply_call_gates_and_commits(tmp_path):
    """Hold false - the health gate is the master's last, so the apply call commits: nothing is held, the
    backups go, and the result names what was committed."""
    p = params(tmp_path, [instance(tmp_path, "one", 10259)], hold=False)
    converge(p)
    p = params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n")], hold=False)
    eng = engine(p)
    result = eng.run(rollout_engine.APPLY)
    assert result["changed"] and result["applied"] == {"one": {"restarted": True, "pid": 10360, "healthy_for": 0}}
    assert result["committed"] == ["one"]
    assert eng.waiter.gates == [10259]  # the health gate ran before the commit
    assert os.listdir(str(tmp_path / "state")) == []  # no held change, no backups left
    assert snapshot(tmp_path)["etc/one.yaml"][0] == b"a: 2\n"


def test_with_no_later_gate_a_failed_health_gate_still_restores_and_commits_nothing(tmp_path):
    """The safety of the one-call apply: a change that fails its health gate is put back by the same call, and its
    backups are kept, exactly as when the change is held for a later gate."""
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    eng = engine(params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n")], hold=False), failing={10259})
    with pytest.raises(RolloutFailed, match="one gave no healthy answer"):
        eng.run(rollout_engine.APPLY)
    assert "committed" not in eng.result
    assert snapshot(tmp_path)["etc/one.yaml"][0] == b"a: 1\n"
    assert os.listdir(str(tmp_path / "state")) == ["one"]  # the backups are kept, no held record


def test_with_no_later_gate_a_change_an_earlier_run_left_held_is_gated_again_and_committed(tmp_path):
    """A run that stopped between apply and commit left a change held; the next one-call apply gates it again with
    its own change and commits both."""
    converge(params(tmp_path, [instance(tmp_path, "one", 10259), instance(tmp_path, "two", 10260)]))
    held = engine(params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n"), instance(tmp_path, "two", 10260)]))
    held.run(rollout_engine.APPLY)
    assert "held-change.json" in os.listdir(str(tmp_path / "state"))
    eng = engine(params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n"),
                                   instance(tmp_path, "two", 10260, config="b: 2\n")], hold=False))
    result = eng.run(rollout_engine.APPLY)
    assert sorted(result["committed"]) == ["one", "two"] and sorted(eng.waiter.gates) == [10259, 10260]
    assert os.listdir(str(tmp_path / "state")) == []


def _link_to(path, target):
    path.symlink_to(target)


@pytest.mark.parametrize("change", [
    None,
    lambda root: (root / "state").mkdir(),  # this run's lock goes there: created since the plan, not a change
    lambda root: (root / "scheduler.conf").write_text("rotated since\n"),
    lambda root: (root / "adopted.yaml").write_text("kind: Pod\n"),  # missing when read
    lambda root: _link_to(root / "config", root / "pods"),  # the kubelet's directory by another name
], ids=["unchanged", "state-created", "file-changed", "file-appeared", "config-is-the-kubelets"])
def test_an_apply_rendered_from_what_the_plan_read_writes_nothing_once_that_changed(tmp_path, change):
    """The controller renders a static-pod apply from what its plan read (planned_read) and names what that was: a
    file by its checksum (null: missing); and the directories that must stay apart from the kubelet's. A file
    different on the master now, or one of those directories now the kubelet's, fails the call before anything is
    written (ReadChanged: the controller reads again); else the apply goes on."""
    (tmp_path / "pods").mkdir()
    (tmp_path / "scheduler.conf").write_text("as the plan read it\n")
    unchanged = {"files": {str(tmp_path / "scheduler.conf"): sha256("as the plan read it\n"),
                           str(tmp_path / "adopted.yaml"): None},
                 "manifest_dir": str(tmp_path / "pods"), "apart": [str(tmp_path / "config"), str(tmp_path / "state")]}
    p = params(tmp_path, [instance(tmp_path, "one", 10259, unit=False)], kind="static_pod", unchanged=unchanged)
    eng = engine(p, strategy=StaticPodStrategy(run=None))
    if change is not None:
        change(tmp_path)
    if change is None or (tmp_path / "state").is_dir():
        eng.run("apply")
        assert eng.waiter.gates == [10259] and (tmp_path / "etc" / "one.yaml").read_text() == "a: 1\n"
        return
    before = snapshot(tmp_path)
    with pytest.raises(ReadChanged, match="changed on this master since the plan read it; read again"):
        eng.run("apply")
    assert snapshot(tmp_path) == before and eng.waiter.gates == []  # nothing written, nothing gated
