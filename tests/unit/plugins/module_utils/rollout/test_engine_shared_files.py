# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One kubeconfig given to two instances with the same kubeconfig_content. The engine writes it once, both
instances restart on a new content, a failed gate puts back what was there, and it is removed only with the last
instance that uses it. Differing contents (or modes, owners) for one path stay refused, naming both instances."""

from __future__ import annotations

import os
import sys

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout import engine as rollout_engine
from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.engine import spec_problems

sys.path.insert(0, os.path.dirname(__file__))
from test_engine import converge, engine, instance, params, snapshot  # noqa: E402  pylint: disable=wrong-import-position

KUBECONFIG = "apiVersion: v1\nkind: Config\nusers: [{name: a, user: {token: one}}]\n"


def sharing(root, name, port, content=KUBECONFIG, state="present", mode="0600"):
    """An instance whose second file is the shared kubeconfig (systemd write order: config, kubeconfig, unit)."""
    entry = instance(root, name, port, state=state)
    entry["files"].insert(1, {"path": "%s/etc/shared.conf" % root, "content": content, "owner": "root",
                              "group": "root", "mode": mode, "secret": True})
    return entry


def count_writes(monkeypatch):
    writes = []
    real = rollout_engine.write_atomically

    def recording(spec, created=None):
        writes.append(spec["path"])
        return real(spec, created)

    monkeypatch.setattr(rollout_engine, "write_atomically", recording)
    return writes


def test_the_same_kubeconfig_for_two_instances_is_accepted():
    assert spec_problems(params("/r", [sharing("/r", "one", 10259), sharing("/r", "two", 10260)])) == []


def test_two_contents_or_two_modes_for_one_kubeconfig_are_refused_naming_both_instances():
    other = params("/r", [sharing("/r", "one", 10259), sharing("/r", "two", 10260, content="other: 1\n")])
    assert spec_problems(other) == [
        "instances[1].files[1].path /r/etc/shared.conf (instance two): also instances[0].files[1] (instance one) "
        "with another content; one file can have one content: give both instances the same one, or each its own path"]
    mode = params("/r", [sharing("/r", "one", 10259), sharing("/r", "two", 10260, mode="0640")])
    assert [problem for problem in spec_problems(mode) if "with another mode;" in problem]


def test_an_absent_instance_may_list_a_file_a_present_one_writes():
    p = params("/r", [sharing("/r", "one", 10259, state="absent"), sharing("/r", "two", 10260, content="new: 1\n")])
    assert spec_problems(p) == []


def test_a_shared_kubeconfig_is_written_once_shown_once_and_restarts_both(tmp_path, monkeypatch):
    converge(params(tmp_path, [sharing(tmp_path, "one", 10259), sharing(tmp_path, "two", 10260)]))
    writes = count_writes(monkeypatch)
    changed = "apiVersion: v1\nkind: Config\nusers: [{name: a, user: {token: two}}]\n"
    eng = engine(params(tmp_path, [sharing(tmp_path, "one", 10259, changed), sharing(tmp_path, "two", 10260, changed)]))
    plan, diff, _changed = eng.plan()
    shared = str(tmp_path / "etc" / "shared.conf")
    # Both read it, so both restart on it; its diff is one.
    for name in ("one", "two"):
        assert (plan["instances"][name]["action"], plan["instances"][name]["files"]) == ("update", [shared])
    assert [entry["before_header"].split(" ")[0] for entry in diff] == [shared]
    eng.apply(plan)
    assert writes == [shared]
    assert ("restart", "one.service") in eng.strategy.calls and ("restart", "two.service") in eng.strategy.calls
    assert (tmp_path / "etc" / "shared.conf").read_text() == changed


def test_a_failed_gate_puts_back_the_shared_kubeconfig_as_it_was(tmp_path):
    converge(params(tmp_path, [sharing(tmp_path, "one", 10259), sharing(tmp_path, "two", 10260)]))
    before = snapshot(tmp_path / "etc")
    eng = engine(params(tmp_path, [sharing(tmp_path, "one", 10259, "new: 1\n"),
                                   sharing(tmp_path, "two", 10260, "new: 1\n")]), failing=[10260])
    plan, _diff, _changed = eng.plan()
    try:
        eng.apply(plan)
    except rollout_engine.RolledBack:
        pass
    else:
        raise AssertionError("the failed gate of two must roll the change back")
    assert snapshot(tmp_path / "etc") == before


def test_one_absent_instance_leaves_the_kubeconfig_the_other_uses_and_the_last_removes_it(tmp_path, monkeypatch):
    converge(params(tmp_path, [sharing(tmp_path, "one", 10259), sharing(tmp_path, "two", 10260)]))
    shared = tmp_path / "etc" / "shared.conf"
    eng, _applied = converge(params(tmp_path, [sharing(tmp_path, "one", 10259, state="absent"),
                                               sharing(tmp_path, "two", 10260)]))
    assert shared.read_text() == KUBECONFIG
    assert not (tmp_path / "etc" / "one.yaml").exists() and not (tmp_path / "units" / "one.service").exists()
    assert (tmp_path / "units" / "two.service").exists()
    removed = []
    monkeypatch.setattr(rollout_engine, "remove_path", lambda path: (removed.append(path), os.unlink(path)))
    eng = engine(params(tmp_path, [sharing(tmp_path, "one", 10259, state="absent"),
                                   sharing(tmp_path, "two", 10260, state="absent")]))
    plan, _diff, _changed = eng.plan()
    # Both go now: the kubeconfig is one instance's to remove (one is gone already but for it), the rest two's.
    assert plan["instances"]["one"]["files"] == [str(shared)]
    assert plan["instances"]["two"]["files"] == [str(tmp_path / "etc" / "two.yaml"), str(tmp_path / "units" / "two.service")]
    eng.apply(plan)
    assert not shared.exists() and removed.count(str(shared)) == 1
