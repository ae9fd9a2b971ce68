# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A change held between the engine's apply and the master's last gate (the verify role's metrics gate in the
rollout playbooks): committed, or restored in a later call exactly as a failed apply restores, from what the apply
left on the master (a later module call has nothing else)."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils import _records
from ansible_collections.kubesched.schedulers.plugins.module_utils._files import TEMP_MARK
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.held_change import FILE_NAME
from ansible_collections.kubesched.schedulers.plugins.module_utils._records import RecordDamaged
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import APPLY, COMMIT, PLAN, RESTORE, Engine
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import (
    PreflightFailed, RolledBack, RolloutFailed)

from test_engine import FakeStrategy, FakeWaiter, converge, instance, params, snapshot


def outside_state(root):
    return dict((path, found) for path, found in snapshot(root).items() if not path.startswith("state/"))


def later_call(root, waiter, mode, **extra):
    """What the role's commit or restore step sends: the kind's state directory and the gate's timing, no files."""
    strategy = FakeStrategy()
    result = Engine(dict({"kind": "systemd", "state_dir": "%s/state" % root, "health_timeout": 5, "settle": 0},
                         **extra), strategy, waiter).run(mode)
    return result, strategy


def test_a_restore_in_a_later_call_puts_back_files_link_and_directories_and_restarts_what_changed(tmp_path):
    old, new = tmp_path / "bin-1.34", tmp_path / "bin-1.35"
    old.write_text("old")
    new.write_text("new")
    link = {"path": str(tmp_path / "kube-scheduler"), "src": str(old)}
    converge(params(tmp_path, [instance(tmp_path, "one", 10259), instance(tmp_path, "two", 10260)], link=link))
    before = outside_state(tmp_path)
    changed = params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n"), instance(tmp_path, "two", 10260)],
                     link={"path": link["path"], "src": str(new)},
                     directories=[{"path": str(tmp_path / "extra" / "dir"), "owner": "root", "group": "root",
                                   "mode": "0750"}])
    waiter = FakeWaiter()
    applied = Engine(changed, FakeStrategy(), waiter).run(APPLY)["applied"]
    assert applied["one"]["restarted"] and os.readlink(link["path"]) == str(new)
    new_pids = dict((port, waiter.listener(port)) for port in (10259, 10260))

    result, strategy = later_call(tmp_path, waiter, RESTORE)

    assert result["restored"] and result["changed"] and result["not_healthy"] == []
    assert result["instances"] == ["one", "two"]  # the link restarted both
    assert "After restore one answers health again" in result["story"]
    assert outside_state(tmp_path) == before  # the config, the link's target, no directory made by the change
    assert os.readlink(link["path"]) == str(old) and not (tmp_path / "extra").exists()
    assert strategy.calls == [("reload",), ("restart", "one.service"), ("restart", "two.service")]
    # A NEW process of each: the one that passed the health gate (and then the last gate failed) does not count.
    assert all(waiter.listener(port) != new_pids[port] for port in new_pids)
    assert not (tmp_path / "state" / FILE_NAME).exists()
    assert (tmp_path / "state" / "one" / "backup").is_dir()  # kept for the operator, as after a failed apply
    # The master is as before the change: the plan of that change is pending again, nothing else.
    assert Engine(changed, FakeStrategy(), waiter).plan()[0]["instances"]["one"]["action"] == "update"


def test_a_new_instance_that_fails_the_last_gate_is_stopped_and_its_files_go(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    before = outside_state(tmp_path)
    waiter = FakeWaiter()
    Engine(params(tmp_path, [instance(tmp_path, "one", 10259), instance(tmp_path, "new", 10270)]),
           FakeStrategy(), waiter).run(APPLY)
    assert (tmp_path / "units" / "new.service").exists()

    result, strategy = later_call(tmp_path, waiter, RESTORE)

    assert result["instances"] == ["new"] and "removed the new instance new" in result["story"]
    assert strategy.calls == [("reload",), ("stop", "new.service")]
    assert outside_state(tmp_path) == before


def test_a_commit_releases_the_backups_and_a_restore_after_it_has_nothing_to_do(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    waiter = FakeWaiter()
    Engine(params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n")]), FakeStrategy(), waiter).run(APPLY)
    after_change = outside_state(tmp_path)

    committed, _strategy = later_call(tmp_path, waiter, COMMIT)
    restored, strategy = later_call(tmp_path, waiter, RESTORE)

    assert committed == {"changed": False, "committed": ["one"], "removed_backups": [str(tmp_path / "state" / "one" / "backup")]}
    assert os.listdir(str(tmp_path / "state")) == []
    assert not restored["restored"] and not restored["changed"] and strategy.calls == []
    assert outside_state(tmp_path) == after_change


def test_the_held_record_names_no_file_content(tmp_path):
    secret = "token: do-not-show-me\n"
    one = instance(tmp_path, "one", 10259, config=secret)
    one["files"][0]["secret"] = True
    waiter = FakeWaiter()
    listened_before = waiter.listener(10259)
    Engine(params(tmp_path, [one]), FakeStrategy(), waiter).run(APPLY)
    record = (tmp_path / "state" / FILE_NAME).read_text()
    assert "do-not-show-me" not in record
    assert json.loads(record)["instances"] == [{"name": "one", "state": "present", "unit": "one.service",
                                                "port": 10259, "health_url": "https://127.0.0.1:10259/livez",
                                                "pid_before": listened_before, "gated": True,
                                                "dirs": [str(tmp_path / "etc"), str(tmp_path / "units")]}]
    assert os.stat(str(tmp_path / "state" / FILE_NAME)).st_mode & 0o777 == 0o600


def test_a_change_a_stopped_run_left_held_is_pending_gated_again_and_restored_with_the_next(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    before = outside_state(tmp_path)
    waiter = FakeWaiter()
    first = params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n")])
    Engine(first, FakeStrategy(), waiter).run(APPLY)  # the run stops here: no commit, no restore

    rerun = Engine(first, FakeStrategy(), waiter)
    planned = rerun.run(PLAN)
    assert planned["changed"] and planned["plan"]["held"] == ["one"]
    assert planned["plan"]["instances"]["one"]["action"] == "none"
    assert "never committed or restored" in planned["warnings"][0]
    again = Engine(first, FakeStrategy(), waiter)
    assert again.run(APPLY)["applied"] == {"one": {"restarted": False, "pid": waiter.listener(10259), "healthy_for": 0}}
    assert again.strategy.calls == [] and waiter.gates[-1] == 10259  # gated on the process it runs, not restarted

    # A second change on top of the unproven one: a failed gate goes back to before both.
    second = params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 3\n")])
    with pytest.raises(RolledBack, match="the files of one"):
        Engine(second, FakeStrategy(), FakeWaiter(failing={10259})).run(APPLY)
    assert outside_state(tmp_path) == before
    assert not (tmp_path / "state" / FILE_NAME).exists()


def test_an_apply_that_fails_restores_the_same_way_and_holds_nothing(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    with pytest.raises(RolledBack):
        Engine(params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n")]), FakeStrategy(),
               FakeWaiter(failing={10259})).run(APPLY)
    result, strategy = later_call(tmp_path, FakeWaiter(), RESTORE)
    assert not result["restored"] and strategy.calls == []  # the rescue's restore step finds nothing held


class Killed(BaseException):
    """The engine's process ends here (SIGKILL, an OOM kill, a reboot): no handler of the engine's runs."""


class KilledAtTheGate(FakeWaiter):
    """Kills the engine when its health gate starts, after its last write."""

    def wait_new_healthy(self, port, url, previous_pid, timeout, settle):
        raise Killed()


def killed_at_the_gate(root, config):
    """A change of "one" to ``config``, its engine killed between its last write and its gate's pass."""
    converge(params(root, [instance(root, "one", 10259)]))
    changed = params(root, [instance(root, "one", 10259, config=config)])
    with pytest.raises(Killed):
        Engine(changed, FakeStrategy(), KilledAtTheGate()).run(APPLY)
    assert (root / "etc" / "one.yaml").read_text() == config  # written, never gated
    return changed


def test_a_change_is_recorded_before_its_first_write_and_a_killed_run_leaves_it_pending(tmp_path):
    killed_at_the_gate(tmp_path, "a: 2\n")
    record = json.loads((tmp_path / "state" / FILE_NAME).read_text())
    assert record["gate_passed"] is False and [entry["name"] for entry in record["instances"]] == ["one"]
    assert sorted(record["written"]) == [str(tmp_path / "etc" / "one.yaml")]
    assert (tmp_path / "state" / "one" / "backup" / "index.json").exists()


def test_the_next_run_restores_a_killed_change_that_fails_its_gate_again_whatever_the_files_look_like(tmp_path):
    changed = killed_at_the_gate(tmp_path, "a: 2\n")
    eng = Engine(changed, FakeStrategy(), FakeWaiter(failing={10259}))
    plan, _diff, pending = eng.plan()
    # The files are the change's already: only the record says it was never proven.
    assert pending and plan["instances"]["one"]["action"] == "none" and plan["held"] == ["one"]
    assert "was never gated to the end" in eng.result["warnings"][0]
    with pytest.raises(RolledBack, match="one gave no healthy answer .* Restored: the files of one"):
        eng.apply(plan)
    assert (tmp_path / "etc" / "one.yaml").read_text() == "a: 1\n"
    assert ("restart", "one.service") in eng.strategy.calls
    assert not (tmp_path / "state" / FILE_NAME).exists()


def test_the_next_run_commits_a_killed_change_that_passes_its_gate_and_the_run_after_is_a_no_op(tmp_path):
    changed = killed_at_the_gate(tmp_path, "a: 2\n")
    eng, applied = converge(changed)
    assert applied == {"one": {"restarted": False, "pid": 10360, "healthy_for": 0}} and eng.waiter.gates == [10259]
    assert (tmp_path / "etc" / "one.yaml").read_text() == "a: 2\n"
    assert os.listdir(str(tmp_path / "state")) == []  # committed: the record and the backup are gone
    assert Engine(changed, FakeStrategy(), FakeWaiter()).plan()[2] is False


def test_a_change_whose_gate_never_passed_is_never_committed(tmp_path):
    killed_at_the_gate(tmp_path, "a: 2\n")
    with pytest.raises(RolloutFailed, match="never passed its health gate .* so it is not committed"):
        later_call(tmp_path, FakeWaiter(), COMMIT)
    assert json.loads((tmp_path / "state" / FILE_NAME).read_text())["gate_passed"] is False


def test_backups_a_restore_kept_go_with_the_next_run_which_says_so_and_the_run_after_is_a_no_op(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    with pytest.raises(RolledBack, match="Backups are kept in"):
        converge(params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n")]), failing={10259})
    backup = str(tmp_path / "state" / "one" / "backup")
    assert os.path.isdir(backup)
    same = params(tmp_path, [instance(tmp_path, "one", 10259)])
    eng = Engine(same, FakeStrategy(), FakeWaiter())
    result = eng.run(APPLY)
    assert result["changed"] and result["plan"]["stale_backups"] == [backup]
    assert result["removed_backups"] == [backup] and not os.path.exists(backup)
    assert eng.strategy.calls == []  # nothing restarted for it
    assert Engine(same, FakeStrategy(), FakeWaiter()).run(APPLY)["changed"] is False


def test_the_plan_refuses_a_secure_port_another_process_holds_before_any_write(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    before = snapshot(tmp_path)
    moved = instance(tmp_path, "one", 10271)
    moved["files"][1]["content"] = "[Service]\nExecStart=/bin/one --secure-port=10271\n"
    eng = Engine(params(tmp_path, [moved]), FakeStrategy(), FakeWaiter(taken={10271: "process 77 (nginx)"}))
    with pytest.raises(PreflightFailed, match="one: secure port 10271 is taken on this master by process 77 "
                                              r"\(nginx\), not by the kube-scheduler this change replaces \(its "
                                              r"unit one.service runs no process\): kube-scheduler would exit at start"):
        eng.run(APPLY)
    assert snapshot(tmp_path) == before


def test_a_port_held_by_the_instance_the_change_replaces_is_no_refusal(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    waiter = FakeWaiter(taken={10259: "process 5 (kube-scheduler)"})
    strategy = FakeStrategy()
    strategy.processes["one.service"] = "process 5 (kube-scheduler)"
    result = Engine(params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n")]), strategy,
                    waiter).run(APPLY)
    assert result["applied"]["one"]["restarted"]
    # A new instance may not take a port anything holds.
    eng = Engine(params(tmp_path, [instance(tmp_path, "new", 10259)]), strategy, waiter)
    with pytest.raises(PreflightFailed, match="new: secure port 10259 is taken .* \\(its unit new.service runs no "
                                              "process\\)"):
        eng.run(APPLY)


def test_a_restore_awaits_health_on_the_port_the_instance_listened_on_before_the_change(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    moved = instance(tmp_path, "one", 10271)
    moved["files"][1]["content"] = "[Service]\nExecStart=/bin/one --secure-port=10271\n"
    waiter = FakeWaiter(failing={10271})
    with pytest.raises(RolledBack, match="After restore one answers health again at https://127.0.0.1:10259/livez"):
        Engine(params(tmp_path, [moved]), FakeStrategy(), waiter).run(APPLY)
    assert waiter.gates == [10271, 10259]


# --- records read back checked ------------------------------------------------------------------------------------

def held_one(root, config="a: 2\n"):
    """A change of "one" to ``config`` applied and held (its record and backup on the master)."""
    converge(params(root, [instance(root, "one", 10259)]))
    changed = params(root, [instance(root, "one", 10259, config=config)])
    Engine(changed, FakeStrategy(), FakeWaiter()).run(APPLY)
    return changed


def every_mode(root, changed):
    """What each mode answers: the exception it raised (or its result)."""
    answers = {}
    for mode in ("read", PLAN, APPLY, COMMIT, RESTORE):
        p = changed if mode in ("read", PLAN, APPLY) else {"kind": "systemd", "state_dir": "%s/state" % root,
                                                           "health_timeout": 5, "settle": 0}
        try:
            answers[mode] = Engine(p, FakeStrategy(), FakeWaiter()).run(mode)
        except Exception as exc:  # pylint: disable=broad-except
            answers[mode] = exc
    return answers


def damage_cut_short(path):
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def damage_checksum(path):
    path.write_text(path.read_text().replace('"gate_passed": true', '"gate_passed": false'))


def damage_version(path):
    path.write_text(path.read_text().replace('"version": 1', '"version": 9'))


def damage_type(path):
    # A hand edit that keeps the file JSON: a port that is not a number, and the checksum recomputed to match.
    record = json.loads(path.read_text())
    record["instances"][0]["port"] = "10259"
    path.write_bytes(_records.encode(dict((k, v) for k, v in record.items() if k not in ("version", "sha256"))))


def damage_name(path):
    # A name that leads out of the state directory: its backup would be looked for (and released) elsewhere.
    record = json.loads(path.read_text())
    record["instances"][0]["name"] = "../../etc"
    path.write_bytes(_records.encode(dict((k, v) for k, v in record.items() if k not in ("version", "sha256"))))


@pytest.mark.parametrize("damage, problem", [
    (damage_cut_short, "it is not JSON ("),
    (damage_checksum, "its checksum does not match its content"),
    (damage_version, "its format version 9 is not one this collection reads (0 or 1)"),
    (damage_type, 'instances[0].port: an integer from 1 to 65535 or null expected, got "10259"'),
    (damage_name, 'instances[0].name: a name expected (no "/", not "." or ".."), got "../../etc"'),
])
def test_a_record_that_cannot_be_trusted_fails_every_mode_naming_it_and_what_to_do(tmp_path, damage, problem):
    changed = held_one(tmp_path)
    record = tmp_path / "state" / FILE_NAME
    if damage is damage_cut_short:
        record.write_bytes(record.read_bytes()[:61])  # as in the field: cut inside a string
    else:
        damage(record)
    after_change = outside_state(tmp_path)

    answers = every_mode(tmp_path, changed)

    for mode, answer in answers.items():
        assert isinstance(answer, RecordDamaged), (mode, answer)
        message = str(answer)
        assert message.startswith("%s cannot be trusted: %s" % (record, problem)), (mode, message)
        assert ("put back by hand what the change wrote from the backups in %s/state/<instance>/backup" % tmp_path
                in message and "then remove %s" % record in message), message
    assert outside_state(tmp_path) == after_change and record.exists()  # nothing written, nothing released


def test_a_backup_index_that_cannot_be_trusted_fails_every_mode_naming_it(tmp_path):
    changed = held_one(tmp_path)
    index = tmp_path / "state" / "one" / "backup" / "index.json"
    damage_cut_short(index)
    for mode, answer in every_mode(tmp_path, changed).items():
        assert isinstance(answer, RecordDamaged), (mode, answer)
        assert str(answer).startswith("%s cannot be trusted: it is not JSON" % index), str(answer)
        assert "from the copies in %s" % index.parent in str(answer)


def test_records_carry_a_version_and_the_checksum_of_their_body_and_each_copy_its_sha256(tmp_path):
    held_one(tmp_path)
    record = json.loads((tmp_path / "state" / FILE_NAME).read_text())
    assert record["version"] == 1 and record["sha256"] == _records.checksum(record)
    assert record["instances"][0]["dirs"] == [str(tmp_path / "etc"), str(tmp_path / "units")]
    index = json.loads((tmp_path / "state" / "one" / "backup" / "index.json").read_text())
    assert index["version"] == 1 and index["sha256"] == _records.checksum(index)
    for entry in index["entries"]:
        with open(entry["copy"], "rb") as handle:
            assert entry["sha256"] == hashlib.sha256(handle.read()).hexdigest()


def test_records_are_synced_with_their_directories(tmp_path, monkeypatch):
    synced = []
    real = os.fsync

    def fsync(fd):
        synced.append(os.readlink("/proc/self/fd/%d" % fd))
        return real(fd)

    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    monkeypatch.setattr(os, "fsync", fsync)
    Engine(params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n")]), FakeStrategy(),
           FakeWaiter()).run(APPLY)
    state = str(tmp_path / "state")
    backup = state + "/one/backup"
    for path in (state, backup, backup + "/0", state + "/one"):
        assert path in synced, (path, synced)
    # A record is synced as its temp file, before the rename over it.
    for temp in (state + "/." + FILE_NAME + TEMP_MARK, backup + "/.index.json" + TEMP_MARK):
        assert [path for path in synced if path.startswith(temp)], (temp, synced)


def previous_version(root):
    """The record and index as the version before checksums wrote them: no version, no sha256, no dirs."""
    state = root / "state"
    record = json.loads((state / FILE_NAME).read_text())
    for key in ("version", "sha256"):
        del record[key]
    for entry in record["instances"]:
        del entry["dirs"]
    (state / FILE_NAME).write_text(json.dumps(record, indent=1, sort_keys=True))
    index = state / "one" / "backup" / "index.json"
    entries = json.loads(index.read_text())["entries"]
    index.write_text(json.dumps([dict((k, v) for k, v in e.items() if k != "sha256") for e in entries]))


def test_records_the_previous_version_wrote_still_restore_and_commit(tmp_path):
    converge(params(tmp_path, [instance(tmp_path, "one", 10259)]))
    before = outside_state(tmp_path)
    Engine(params(tmp_path, [instance(tmp_path, "one", 10259, config="a: 2\n")]), FakeStrategy(),
           FakeWaiter()).run(APPLY)
    previous_version(tmp_path)
    result, _strategy = later_call(tmp_path, FakeWaiter(), RESTORE)
    assert result["restored"] and "NOT restored" not in result["story"]
    assert outside_state(tmp_path) == before

    held_one(tmp_path, config="a: 3\n")
    previous_version(tmp_path)
    committed, _strategy = later_call(tmp_path, FakeWaiter(), COMMIT)
    assert committed["committed"] == ["one"]


def forge_index(root, extra):
    """The backup index of "one" with ``extra`` entries (path, bytes of its copy), its checksum recomputed."""
    backup = root / "state" / "one" / "backup"
    index = json.loads((backup / "index.json").read_text())
    entries = index["entries"]
    for path, data in extra:
        copy = backup / str(len(entries) + 10)
        copy.write_bytes(data)
        entries.append({"path": str(path), "existed": True, "copy": str(copy),
                        "sha256": hashlib.sha256(data).hexdigest()})
    (backup / "index.json").write_bytes(_records.encode({"entries": entries}))


def test_a_restore_writes_only_what_the_record_says_the_change_wrote(tmp_path):
    held_one(tmp_path)
    hosts = tmp_path / "hosts"  # a stand-in for /etc/hosts
    hosts.write_text("127.0.0.1 localhost\n")
    never_written = tmp_path / "etc" / "operators.yaml"  # beside the instance's files, never written by the change
    never_written.write_text("mine\n")
    forge_index(tmp_path, [(hosts, b"0.0.0.0 evil\n"), (never_written, b"theirs\n")])

    result, _strategy = later_call(tmp_path, FakeWaiter(), RESTORE)

    assert hosts.read_text() == "127.0.0.1 localhost\n" and never_written.read_text() == "mine\n"
    assert (tmp_path / "etc" / "one.yaml").read_text() == "a: 1\n"  # what the change wrote is put back
    for path in (hosts, never_written):
        assert ("NOT restored: " in result["story"] and "%s (refused: the record of the change does not name it "
                "among the files the change wrote" % path in result["story"]), result["story"]


def test_a_restore_writes_nothing_outside_the_directories_of_the_instances_files(tmp_path):
    held_one(tmp_path)
    elsewhere = tmp_path / "elsewhere.conf"
    elsewhere.write_text("as it is\n")
    record_path = tmp_path / "state" / FILE_NAME
    record = json.loads(record_path.read_text())
    record["written"][str(elsewhere)] = "0" * 64  # the record itself names it (a hand edit, its checksum redone)
    record_path.write_bytes(_records.encode(dict((k, v) for k, v in record.items() if k not in ("version", "sha256"))))
    forge_index(tmp_path, [(elsewhere, b"replaced\n")])

    result, _strategy = later_call(tmp_path, FakeWaiter(), RESTORE)

    assert elsewhere.read_text() == "as it is\n"
    assert ("%s (refused: it is outside the directories of the files of one (%s, %s)"
            % (elsewhere, tmp_path / "etc", tmp_path / "units")) in result["story"], result["story"]


def test_a_backup_copy_whose_checksum_is_not_the_indexs_is_never_written(tmp_path):
    held_one(tmp_path)
    index = json.loads((tmp_path / "state" / "one" / "backup" / "index.json").read_text())
    (config,) = [entry for entry in index["entries"] if entry["path"].endswith("one.yaml")]
    with open(config["copy"], "w") as handle:
        handle.write("a: damaged\n")

    result, _strategy = later_call(tmp_path, FakeWaiter(), RESTORE)

    assert (tmp_path / "etc" / "one.yaml").read_text() == "a: 2\n"  # left as the change wrote it
    assert ("NOT restored: %s (its copy does not match the sha256 the backup's index recorded for it; its copy is %s)"
            % (tmp_path / "etc" / "one.yaml", config["copy"])) in result["story"], result["story"]
