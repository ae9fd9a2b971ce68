# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verify role's decisions (plugin_utils/cluster/verify_plan.py) and their filters (plugins/filter/verify_plan.py): which
schedulers it proves, each one's verdict, the report's tables and the reasons it fails, and the rows it keeps of
what it read. tests/unit/roles/test_verify_report.py runs them through the role with real ansible-core."""

from __future__ import annotations

import datetime

import jinja2
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.kubesched.schedulers.plugins.filter import verify_plan as filters
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import constants
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.cluster import verify_plan as plan

NOW = datetime.datetime(2026, 11, 28, 12, 0, 0)
SETTINGS = {"check_mode": False, "metrics": False, "metrics_gate": False, "lease_audit_fail": False,
            "token_found": False}


def instance(name, names, lease=None):
    return {"name": name, "scheduler_names": names, "lease": lease, "health_url": "https://10.0.0.1:10259/livez",
            "health_path": "/livez", "serving_cert": None}


def configmap(name, annotations, namespace="kube-system"):
    return {"metadata": {"name": name, "namespace": namespace, "annotations": annotations}}


def test_schedulers_given_are_verified_as_given_and_nothing_is_discovered():
    found = plan.targets(["a", {"name": "b", "lease": "ns/b"}, {"name": "c"}, "a"],
                         [[instance("kube-scheduler", ["default-scheduler"])]], [configmap("x", {})])
    assert found == [{"name": "a", "lease": "", "source": "given"}, {"name": "b", "lease": "ns/b", "source": "given"},
                     {"name": "c", "lease": "", "source": "given"}, {"name": "a", "lease": "", "source": "given"}]


def test_discovered_schedulers_come_once_from_the_first_instance_then_configmap_that_names_them():
    lease = {"namespace": "kube-system", "name": "kube-scheduler"}
    hosts = [[instance("kube-scheduler", ["default-scheduler"], lease), instance("solo", ["solo"])],
             [instance("kube-scheduler", ["default-scheduler"], lease), instance("again", ["solo", "other"])]]
    configmaps = [
        configmap("cm", {constants.SCHEDULER_NAMES_ANNOTATION: "dep-a,,solo,dep-b",
                         constants.LEASE_ANNOTATION: "kube-system/dep-a", constants.DEPLOYMENT_ANNOTATION: "dep"}),
        # Deployed before the collection's keys: the keys it wrote then are still read.
        configmap("old", {constants.LEGACY_ANNOTATIONS["scheduler_names"]: "old-one",
                          constants.LEGACY_ANNOTATIONS["lease"]: "schedulers/old"}, "schedulers"),
        {"metadata": {"name": "bare", "namespace": "x"}}]
    found = [(target["name"], target["lease"], target["source"]) for target in plan.targets([], hosts, configmaps)]
    assert found == [("default-scheduler", "kube-system/kube-scheduler", "instance kube-scheduler"),
                     ("solo", "", "instance solo"), ("other", "", "instance again"),
                     ("dep-a", "kube-system/dep-a", "deployment kube-system/dep"),
                     ("dep-b", "kube-system/dep-a", "deployment kube-system/dep"),
                     ("old-one", "schedulers/old", "deployment schedulers/old")]


def test_expected_leases_are_every_masters_then_each_deployments_each_once():
    row = {"lease": "kube-system/kube-scheduler", "instance": "kube-scheduler", "host": "m1", "hostname": "m1",
           "config_checksum": "c"}
    targets = [{"name": "a", "lease": "kube-system/a", "source": "deployment kube-system/a"},
               {"name": "b", "lease": "kube-system/a", "source": "deployment kube-system/a"},
               {"name": "c", "lease": "", "source": "deployment kube-system/c"},
               {"name": "d", "lease": "kube-system/d", "source": "instance d"}]
    assert plan.expected_leases([[row], [row]], targets) == [
        row, {"lease": "kube-system/a", "instance": "deployment kube-system/a", "deployment": "a"}]


def pod(scheduler, uid, node=None, waiting=None):
    spec = {"schedulerName": scheduler}
    if node:
        spec["nodeName"] = node
    conditions = [{"type": "PodScheduled", "status": "False", "message": waiting}] if waiting else []
    return {"metadata": {"uid": uid}, "spec": spec, "status": {"conditions": conditions}}


def event(uid, reporter, reason="Scheduled"):
    return {"reason": reason, "regarding": {"uid": uid}, "reportingController": reporter}


LEASES = [{"item": "kube-system", "resources": [
    {"metadata": {"name": "a"}, "spec": {"holderIdentity": "m1_1", "leaseDurationSeconds": 15,
                                         "renewTime": "2026-11-28T11:59:57.750000Z"}},
    {"metadata": {"name": "never"}, "spec": {"leaseDurationSeconds": 15}}]}]


def target(name, lease=""):
    return {"name": name, "lease": lease, "source": "given"}


def test_a_scheduler_passes_when_the_scheduled_event_of_its_own_pod_names_it():
    found = plan.results([target("a", "kube-system/a"), target("b"), target("c"), target("d"), target("e")],
                         [pod("a", "u1", "node-1"), pod("b", "u2", "node-2"), pod("c", "u3", "node-3"),
                          pod("d", "u4", waiting="0/3 nodes are available")],
                         [event("u1", "a"), event("u2", "someone-else"), event("old", "c"), event("u3", "c", "Other")],
                         LEASES, NOW.isoformat(), 60, False)
    assert [(row["name"], row["outcome"], row["detail"]) for row in found] == [
        ("a", "ok", "bound to node-1"),
        ("b", "FAILED", "bound to node-2 but the Scheduled event names someone-else"),
        ("c", "FAILED", "bound to node-3 but no Scheduled event was found"),
        ("d", "FAILED", "not bound within 60s: 0/3 nodes are available"),
        ("e", "FAILED", "not bound within 60s: no scheduler of this name answered")]
    assert (found[0]["holder"], found[0]["renewed_seconds_ago"], found[0]["lease_seconds"]) == ("m1_1", 2.2, 15)
    assert (found[1]["holder"], found[1]["renewed_seconds_ago"], found[1]["lease_seconds"]) == ("", None, None)


def test_in_check_mode_no_pod_was_created_and_a_lease_never_renewed_has_no_age():
    (row,) = plan.results([target("a", "kube-system/never")], [], [], LEASES, NOW, 60, True)
    assert (row["outcome"], row["detail"], row["renewed_seconds_ago"]) == ("skipped", "check mode: no pod created", None)


def verdict(name, outcome, detail="d", lease="", holder="", renewed=None):
    return {"name": name, "source": "given", "outcome": outcome, "detail": detail, "reporter": name, "lease": lease,
            "holder": holder, "renewed_seconds_ago": renewed, "lease_seconds": None}


HEALTH = [{"host": "m1", "instance": "a", "url": "https://127.0.0.1:10259/livez", "ok": True, "detail": "HTTP 200 ok"},
          {"host": "m2", "instance": "b", "url": "https://127.0.0.1:10260/livez", "ok": False, "detail": "refused"}]
AUDIT = [{"lease": "kube-system/x", "holder": "", "renewed_seconds_ago": None, "lease_seconds": None,
          "expected_holders": [], "flags": ["not held"], "detail": "nobody took it"}]
ACTIVITY = {"rows": [{"name": "a", "scheduled": 2.0, "unschedulable": 0.0, "error": 0.0, "processes": ["m1"],
                      "unread": ["m2: HTTP 403"], "pending_before": 1, "pending_after": 0, "leader": "m1"}],
            "gate_problems": ["a: the holder counted no attempt"]}


def test_the_failure_names_each_scheduler_instance_lease_and_gate_reason_in_that_order():
    report = plan.report([verdict("a", "ok"), verdict("b", "FAILED", "not bound")], HEALTH, AUDIT, ACTIVITY,
                         dict(SETTINGS, metrics=True, metrics_gate=True, token_found=True, lease_audit_fail=True))
    assert report["problems"] == ["Scheduler b did not schedule: not bound",
                                  "Instance b on m2 is not healthy at https://127.0.0.1:10260/livez: refused",
                                  "Lease kube-system/x: not held: nobody took it", "a: the holder counted no attempt"]
    assert report["message"] == "Verification failed. " + "".join(problem + ". " for problem in report["problems"])


@pytest.mark.parametrize("settings, expected", [
    ({}, []),
    ({"metrics_gate": True}, ["kube_scheduler_verify_metrics_gate reads /metrics: set kube_scheduler_verify_metrics: true"]),
    ({"metrics_gate": True, "metrics": True}, ["No token may get /metrics for the metrics gate: run "
                                               "playbooks/metrics_access.yml, or set kube_scheduler_verify_metrics_token"]),
    ({"metrics_gate": True, "metrics": True, "token_found": True}, ["a: the holder counted no attempt"]),
])
def test_the_metrics_gate_says_first_what_keeps_it_from_reading(settings, expected):
    # A flagged lease fails only with lease_audit_fail.
    report = plan.report([verdict("a", "ok")], HEALTH[:1], AUDIT, ACTIVITY, dict(SETTINGS, **settings))
    assert report["problems"] == expected


def test_the_summary_lays_out_each_table_after_an_empty_line_in_columns_as_wide_as_their_values():
    lines = plan.summary([verdict("default-scheduler", "ok", "bound to n", "kube-system/kube-scheduler", "m1_77", 1.25),
                          verdict("b", "FAILED", "not bound", "ns/b")], HEALTH, AUDIT, ACTIVITY, True, False)
    assert lines == [
        "SCHEDULER          RESULT  LEASE                       HOLDER  RENEWED   DETAIL",
        "default-scheduler  ok      kube-system/kube-scheduler  m1_77   1.2s ago  bound to n (given)",
        "b                  FAILED  ns/b                        -       none      not bound (given)",
        "",
        "HOST  INSTANCE  HEALTH  URL                            DETAIL",
        "m1    a         ok      https://127.0.0.1:10259/livez  HTTP 200 ok",
        "m2    b         FAILED  https://127.0.0.1:10260/livez  refused",
        "",
        "LEASE          HOLDER  RENEWED  DURATION  EXPECTED    AUDIT     DETAIL",
        "kube-system/x  -       -        -         (not ours)  not held  nobody took it",
        "",
        "Attempts per profile while verify ran; pods waiting for each scheduler name before->after:",
        "SCHEDULER  SCHEDULED  UNSCHEDULABLE  ERROR  PENDING  LEADER  DETAIL",
        "a          2.0        0.0            0.0    1->0     m1      1 of 2 processes read; NOT read: m2: HTTP 403"]
    without_token = plan.summary([verdict("a", "ok")], [], [], ACTIVITY, False, True)
    assert without_token[2:] == ["", "Attempts per profile not read: no token may get /metrics - run "
                                     "playbooks/metrics_access.yml, or set kube_scheduler_verify_metrics_token."]


@pytest.mark.parametrize("text", ["short", "x" * 85, "y" * 86, "a few words " * 10, "word " * 17, "one two" * 20])
@pytest.mark.parametrize("length", [60, 80])
def test_messages_are_shortened_as_jinjas_truncate_shortened_them(text, length):
    expected = jinja2.Environment().from_string("{{ text | truncate(length) }}").render(text=text, length=length)
    assert plan.truncated(text, length) == expected


def test_the_rows_kept_of_health_metrics_and_config_reads():
    health = plan.health_rows([
        {"item": {"name": "a", "health_url": "u1"}, "status": 200, "content": "ok\n"},
        {"item": {"name": "b", "health_url": "u2"}, "status": 500, "content": "[-]x failed " * 10},
        {"item": {"name": "c", "health_url": "u3"}, "status": -1, "msg": "Connection refused"},
        {"item": {"name": "d", "health_url": "u4"}}], "m1")
    assert [(row["ok"], row["detail"]) for row in health] == [
        (True, "HTTP 200 ok"), (False, "HTTP 500 " + plan.truncated(("[-]x failed " * 10).strip(), 60)),
        (False, "Connection refused"), (False, "no answer")]
    source = {"host": "m1", "hostname": "n1", "instance": "a", "profiles": ["p"]}
    reads = plan.metrics_reads([
        {"item": source, "skipped": True}, {"item": source, "status": 403},
        {"item": source, "status": 200, "content": 'scheduler_schedule_attempts_total{profile="p",result="error"} 2\n'}])
    assert [(row["status"], row["detail"], row["metrics"]) for row in reads] == [
        (-1, "no token: run playbooks/metrics_access.yml, or set kube_scheduler_verify_metrics_token", {}),
        (403, "HTTP 403", {}), (200, "HTTP 200", {"attempts": {"p": {"error": 2.0}}})]
    stats = [{"item": {"name": "a", "lease": {"namespace": "kube-system", "name": "l"}}, "stat": {"checksum": "c"}},
             {"item": {"name": "b", "lease": {"namespace": "x", "name": "m"}}, "stat": {"exists": False}}]
    assert plan.lease_expectations(stats, "m1", "node-1") == [
        {"lease": "kube-system/l", "instance": "a", "host": "m1", "hostname": "node-1", "config_checksum": "c"},
        {"lease": "x/m", "instance": "b", "host": "m1", "hostname": "node-1", "config_checksum": None}]


def test_metrics_are_read_where_health_is_answered_and_a_roles_certificate_is_checked():
    signed = dict(instance("b", ["p"]), health_url="https://10.0.0.1:10260/healthz", health_path="/healthz",
                  serving_cert={"cert": "/etc/kubernetes/pki/b.crt"})
    found = plan.metrics_sources([{"host": "m1", "hostname": "node-1", "instances": [instance("a", ["q"]), signed]}])
    assert [(row["instance"], row["hostname"], row["url"], row["signed"]) for row in found] == [
        ("a", "node-1", "https://10.0.0.1:10259/metrics", False), ("b", "node-1", "https://10.0.0.1:10260/metrics", True)]


def test_the_filters_read_each_masters_facts_and_name_what_is_wrong():
    hostvars = {"m1": {"__kube_scheduler_verify_host_instances": [instance("a", ["a"])],
                       "ansible_facts": {"nodename": "node-1"}}, "m2": {}}
    assert [t["name"] for t in filters.verify_targets([], ["m1", "m2"], hostvars, [])] == ["a"]
    assert [s["hostname"] for s in filters.verify_metrics_sources(["m1", "m2"], hostvars)] == ["node-1"]
    with pytest.raises(AnsibleFilterError, match="verify_targets: given must be lists"):
        filters.verify_targets("a", [], hostvars, [])
    with pytest.raises(AnsibleFilterError, match="verify_report: settings must have check_mode"):
        filters.verify_report([], [], [], None, {})
    with pytest.raises(AnsibleFilterError, match="verify_results: not what the verify role reads"):
        filters.verify_results([{"lease": ""}], [], [], [], NOW.isoformat(), 60, False)
