"""The verify role's sums of what the schedulers counted (plugin_utils/cluster/scheduler_activity.py): counters summed over
the processes of a profile, a restarted process counted from 0, the lease holder's own count, a process that could
not be read named, and the gate's three reasons. The parser itself is checked on a real kube-scheduler's /metrics
in tests/unit/roles/test_secure_metrics.py."""
from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster import scheduler_activity as activity

DEFAULT = {"name": "default-scheduler", "lease": "kube-system/kube-scheduler"}
HOLDERS = {"kube-system/kube-scheduler": "node-2_0c8e5f3a-1b2c-4d5e-8f90-123456789abc"}


def read(host, counted, status=200, profiles=("default-scheduler",), detail=""):
    return {"host": host, "hostname": "node-" + host[1:], "instance": "kube-scheduler", "profiles": list(profiles),
            "status": status, "detail": detail, "metrics": {"attempts": counted} if status == 200 else {}}


def test_the_attempts_of_every_process_are_summed_and_a_restart_counts_from_zero():
    before = [read("m1", {"default-scheduler": {"scheduled": 10, "error": 1}}),
              read("m2", {"default-scheduler": {"scheduled": 7}})]
    # m1 was restarted between the reads (its counter went down); m2 holds the lease and scheduled 2 more.
    after = [read("m1", {"default-scheduler": {"scheduled": 1}}),
             read("m2", {"default-scheduler": {"scheduled": 9, "unschedulable": 1}})]
    [row] = activity.activity([DEFAULT], before, after, {}, {"default-scheduler": 2}, HOLDERS)
    assert (row["scheduled"], row["unschedulable"], row["error"]) == (1 + 2, 1, 0)
    assert (row["leader"], row["leader_scheduled"]) == ("kube-scheduler on m2", 2)
    assert (row["pending_before"], row["pending_after"]) == (0, 2)
    assert activity.gate_problems([row], bound=["default-scheduler"]) == []


def test_a_process_not_read_is_named_and_fails_the_gate():
    after = [read("m1", {}, status=403, detail="HTTP 403"), read("m2", {"default-scheduler": {"scheduled": 3}})]
    [row] = activity.activity([DEFAULT], [], after, {}, {}, HOLDERS)
    assert row["unread"] == ["kube-scheduler on m1: HTTP 403"] and row["processes"] == ["kube-scheduler on m2"]
    [problem] = activity.gate_problems([row], bound=["default-scheduler"])
    assert "m1" in problem and "HTTP 403" in problem


def test_errors_and_a_bound_pod_the_lease_holder_did_not_count_fail_the_gate():
    before = [read("m2", {"default-scheduler": {"scheduled": 4}})]
    after = [read("m2", {"default-scheduler": {"scheduled": 4, "error": 2}})]
    [row] = activity.activity([DEFAULT], before, after, {}, {}, HOLDERS)
    problems = activity.gate_problems([row], bound=["default-scheduler"])
    assert row["error"] == 2 and row["leader_scheduled"] == 0
    assert any("2 scheduling error" in problem for problem in problems)
    assert any("kube-scheduler on m2, which holds the lease, counted no scheduled attempt" in problem
               for problem in problems)


def test_a_holder_on_a_master_not_read_and_a_name_no_instance_serves_are_not_judged():
    after = [read("m1", {"default-scheduler": {}}, profiles=("default-scheduler", "batch"))]
    rows = activity.activity([DEFAULT, {"name": "elsewhere", "lease": ""}], [], after, {}, {}, HOLDERS)
    assert [row["leader"] for row in rows] == ["", ""]
    assert rows[1]["processes"] == [] and rows[1]["unread"] == []
    assert activity.gate_problems(rows, bound=["default-scheduler", "elsewhere"]) == []


def test_pods_waiting_without_a_scheduler_name_are_the_default_schedulers():
    assert activity.pending_by_scheduler(["", "batch", "default-scheduler", "batch"]) == {
        "default-scheduler": 2, "batch": 2}
