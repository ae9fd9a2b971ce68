# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nothing is committed that was not gated: every instance a recorded change holds is gated from its record (its
unit or manifest, its port, its health URL) by the next apply, whether or not that call still names it, and put back
when it fails; the record follows an instance a later change moves; an instance the call wants absent is removed,
which is the restore of that part; and the commit releases no instance the gate did not watch. One test per shape
the inventory may take after a run was killed between its first write and its gate: the instance dropped from the
call, renamed, moved to another port, switched to absent."""

from __future__ import annotations

import json

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.held_change import FILE_NAME
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import APPLY, COMMIT, Engine
from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import RolledBack, RolloutFailed

from test_engine import FakeStrategy, FakeWaiter, converge, instance, params
from test_held_change import Killed, KilledAtTheGate, later_call


def killed_at_the_gate(root, instances):
    """A change to ``instances`` whose engine was killed between its last write and its gate's pass."""
    with pytest.raises(Killed):
        Engine(params(root, instances), FakeStrategy(), KilledAtTheGate()).run(APPLY)


def record(root):
    return json.loads((root / "state" / FILE_NAME).read_text())


def moved(root, name, port, config="a: 1\n"):
    entry = instance(root, name, port, config=config)
    entry["files"][1]["content"] = "[Service]\nExecStart=/bin/%s --secure-port=%d\n" % (name, port)
    return entry


def test_an_instance_dropped_from_the_call_is_gated_from_its_record_and_put_back_when_nothing_answers(tmp_path):
    """A record naming gone (its gate never passed), then an apply for batch only, nothing listening on gone's
    port: gone's gate fails and the master goes back to before both changes (before: committed ['gone', 'batch'])."""
    converge(params(tmp_path, [moved(tmp_path, "gone", 10270)]))
    killed_at_the_gate(tmp_path, [moved(tmp_path, "gone", 10270, config="a: 2\n")])
    waiter = FakeWaiter(failing={10270})
    eng = Engine(params(tmp_path, [moved(tmp_path, "batch", 10280)], hold=False), FakeStrategy(), waiter)
    with pytest.raises(RolledBack) as failure:
        eng.run(APPLY)
    assert "gone gave no healthy answer from a new process" in str(failure.value)
    assert "committed" not in eng.result
    # Both gated by the apply (gone from its record), then gone awaited again once restored.
    assert sorted(waiter.gates[:2]) == [10270, 10280] and waiter.gates[2:] == [10270]
    assert (tmp_path / "etc" / "gone.yaml").read_text() == "a: 1\n"  # gone's change put back
    assert not (tmp_path / "etc" / "batch.yaml").exists()  # the new instance removed with it
    assert ("restart", "gone.service") in eng.strategy.calls
    assert not (tmp_path / "state" / FILE_NAME).exists()


def test_an_instance_renamed_in_the_call_is_gated_under_its_old_name_on_its_old_port(tmp_path):
    """old's change was never gated; the call names it new (another name, another port): old still runs what the
    record says it runs, so it is gated there with new, and both are committed once both answered."""
    converge(params(tmp_path, [moved(tmp_path, "old", 10259)]))
    killed_at_the_gate(tmp_path, [moved(tmp_path, "old", 10259, config="a: 2\n")])
    waiter = FakeWaiter()
    result = Engine(params(tmp_path, [moved(tmp_path, "new", 10271, config="a: 2\n")], hold=False), FakeStrategy(),
                    waiter).run(APPLY)
    assert sorted(waiter.gates) == [10259, 10271]
    assert result["applied"]["old"] == {"restarted": False, "pid": waiter.listener(10259), "healthy_for": 0}
    assert result["committed"] == ["old", "new"]


def test_an_instance_moved_to_another_port_is_gated_where_it_listens_now_after_a_second_killed_run(tmp_path):
    """one's change (port 10259) was never gated; the next run moves one to 10271 and is killed at its gate too:
    the record follows one to 10271 (its port before both changes stays 10259, where a restore awaits it), so the
    run after that gates it there, not on 10259 where nothing listens any more."""
    converge(params(tmp_path, [moved(tmp_path, "one", 10259)]))
    killed_at_the_gate(tmp_path, [moved(tmp_path, "one", 10259, config="a: 2\n")])
    killed_at_the_gate(tmp_path, [moved(tmp_path, "one", 10271, config="a: 2\n")])
    [entry] = record(tmp_path)["instances"]
    assert (entry["port"], entry["health_url"], entry["port_before"]) == (
        10271, "https://127.0.0.1:10271/livez", 10259)
    waiter = FakeWaiter(failing={10259})
    result = Engine(params(tmp_path, [moved(tmp_path, "one", 10271, config="a: 2\n")], hold=False), FakeStrategy(),
                    waiter).run(APPLY)
    assert waiter.gates == [10271] and result["committed"] == ["one"]


def test_an_instance_switched_to_absent_is_not_committed_and_nothing_of_it_is_kept(tmp_path):
    """two was being made when the run was killed; its files were then removed by hand, and the call wants it
    absent: nothing of it is left to remove, gate or put back, so the change holds nothing of it (before: its
    record was committed as ['two'], never gated)."""
    converge(params(tmp_path, [moved(tmp_path, "one", 10259)]))
    killed_at_the_gate(tmp_path, [moved(tmp_path, "one", 10259), moved(tmp_path, "two", 10260)])
    for path in ("etc/two.yaml", "units/two.service"):
        (tmp_path / path).unlink()
    absent = dict(moved(tmp_path, "two", 10260), state="absent")
    waiter = FakeWaiter()
    eng = Engine(params(tmp_path, [moved(tmp_path, "one", 10259), absent], hold=False), FakeStrategy(), waiter)
    result = eng.run(APPLY)
    assert result["committed"] == [] and 10260 not in waiter.gates
    assert not (tmp_path / "state").exists() or not any((tmp_path / "state").iterdir())


def test_a_commit_refuses_a_held_change_whose_instances_were_not_all_gated(tmp_path):
    """A record whose gate passed but that does not say every instance passed it (one an earlier version wrote,
    which gated without gone) is not committed; the record stays for the next apply to gate."""
    converge(params(tmp_path, [moved(tmp_path, "gone", 10270)]))
    Engine(params(tmp_path, [moved(tmp_path, "gone", 10270, config="a: 2\n"), moved(tmp_path, "batch", 10280)]),
           FakeStrategy(), FakeWaiter()).run(APPLY)
    held = record(tmp_path)
    assert held["gate_passed"] is True
    # As an earlier version wrote it: no format version, no checksum, no word of which instances were gated.
    for key in ("version", "sha256"):
        held.pop(key)
    for instance in held["instances"]:
        instance.pop("gated")
    (tmp_path / "state" / FILE_NAME).write_text(json.dumps(held))
    with pytest.raises(RolloutFailed, match="gone, batch: the change recorded on this master names gone, batch, which its "
                                            "health gate never watched, so it is not committed"):
        later_call(tmp_path, FakeWaiter(), COMMIT)
    assert (tmp_path / "state" / FILE_NAME).exists()
