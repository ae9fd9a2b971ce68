"""The verify role's judgement and summary (tasks_from report.yml) run by real ansible-core on the API answers a
cluster gives (pods, events.k8s.io Events, Leases), and its pod template checked against the OpenAPI schema."""
from __future__ import annotations

import datetime
import json
import time
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

ROLE = Path(__file__).resolve().parents[3] / "roles" / "verify"
CASE_PLAY = """
- name: {case}
  hosts: localhost
  gather_facts: false
  vars: {vars}
  tasks:
    - name: Judge
      block:
        - name: Check the variables and convert the booleans, as the role does first
          ansible.builtin.include_role:
            name: kubesched.schedulers.verify
            tasks_from: inputs.yml
        - name: Record the health rows of this host
          ansible.builtin.set_fact:
            __kube_scheduler_verify_health_rows: "{{{{ health_rows }}}}"
        - name: Report
          ansible.builtin.include_role:
            name: kubesched.schedulers.verify
            tasks_from: report.yml
        - name: Keep the results
          ansible.builtin.set_fact:
            {fact}:
              results: "{{{{ __kube_scheduler_verify_results }}}}"
              error: ""
      rescue:
        - name: Keep the failure
          ansible.builtin.set_fact:
            {fact}:
              results: "{{{{ __kube_scheduler_verify_results | default([]) }}}}"
              error: "{{{{ ansible_failed_result.msg }}}}"
"""
POD_PLAY = """
- name: pod
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Load the role's variables
      ansible.builtin.include_vars:
        file: "{{{{ item }}}}"
      loop: ["{role}/defaults/main.yml", "{role}/vars/main.yml"]
    - name: Override the defaults as a caller would
      ansible.builtin.set_fact: {vars}
    - name: Check the variables and convert the booleans, as the role does first
      ansible.builtin.include_role:
        name: kubesched.schedulers.verify
        tasks_from: inputs.yml
    - name: Render the pods
      ansible.builtin.copy:
        content: "{{{{ lookup('ansible.builtin.template', '{role}/templates/pods.yaml.j2') }}}}"
        dest: {out}/pod.yaml
        mode: "0600"
      vars:
        __kube_scheduler_verify_targets: [{{name: bin-packing}}]
"""


def renew_time(seconds_ago):
    moment = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=seconds_ago)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # metav1.MicroTime: RFC 3339 with microseconds


def pod(name, scheduler, uid, node=None, waiting=None):
    conditions = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": waiting}] \
        if waiting else []
    spec = {"schedulerName": scheduler}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "uid": uid}, "spec": spec, "status": {"conditions": conditions}}


def scheduled(uid, reporter):
    return {"reason": "Scheduled", "regarding": {"kind": "Pod", "uid": uid}, "reportingController": reporter,
            "note": "Successfully assigned"}


def lease(name, holder, seconds_ago):
    return {"metadata": {"name": name}, "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15,
                                                 "renewTime": renew_time(seconds_ago)}}


BUILT_AT = time.monotonic()  # the lease times below are relative to now; the playbook runs later
TARGETS = [{"name": "default-scheduler", "lease": "kube-system/kube-scheduler", "source": "instance kube-scheduler"},
           {"name": "bin-packing", "lease": "kube-system/bin-packing", "source": "deployment kube-system/bin-packing"}]
# As the role reads them: one k8s_info list per namespace (looped over the namespaces), other leases beside ours.
LEASES = {"results": [{"item": "kube-system", "resources": [
    lease("kube-controller-manager", "cm-1_9999", 2),
    lease("kube-scheduler", "master-1_1234", 3),
    lease("bin-packing", "bin-packing-7d9f_5678", 1)]}]}
HEALTHY = ({"host": "localhost", "instance": "kube-scheduler", "url": "https://127.0.0.1:10259/livez", "ok": True,
            "detail": "HTTP 200 ok"},)


def case(pods, events, health=HEALTHY):
    return {"__kube_scheduler_verify_targets": TARGETS, "__kube_scheduler_verify_pods": {"resources": pods},
            "__kube_scheduler_verify_events": {"resources": events}, "__kube_scheduler_verify_leases": LEASES,
            "health_rows": health}


CASES = {
    "all_ok": case([pod("p0", "default-scheduler", "u0", "node-1"), pod("p1", "bin-packing", "u1", "node-2")],
                   [scheduled("u0", "default-scheduler"), scheduled("u1", "bin-packing")]),
    "not_bound": case([pod("p0", "default-scheduler", "u0", "node-1"), pod("p1", "bin-packing", "u1")],
                      [scheduled("u0", "default-scheduler")]),
    "not_bound_unschedulable": case(
        [pod("p0", "default-scheduler", "u0", "node-1"),
         pod("p1", "bin-packing", "u1", waiting="0/3 nodes are available: 3 node(s) had untolerated taint.")],
        [scheduled("u0", "default-scheduler")]),
    "wrong_reporter": case([pod("p0", "default-scheduler", "u0", "node-1"), pod("p1", "bin-packing", "u1", "node-2")],
                           [scheduled("u0", "default-scheduler"), scheduled("u1", "default-scheduler")]),
    "stale_event_of_another_pod": case(
        [pod("p0", "default-scheduler", "u0", "node-1"), pod("p1", "bin-packing", "u1", "node-2")],
        [scheduled("u0", "default-scheduler"), scheduled("old-uid", "bin-packing")]),
    "unhealthy": case([pod("p0", "default-scheduler", "u0", "node-1"), pod("p1", "bin-packing", "u1", "node-2")],
                      [scheduled("u0", "default-scheduler"), scheduled("u1", "bin-packing")],
                      list(HEALTHY) + [{"host": "localhost", "instance": "second",
                                        "url": "https://127.0.0.1:10260/livez", "ok": False,
                                        "detail": "Status code was -1: Connection refused"}]),
}


@pytest.fixture(scope="module")
def judged(tmp_path_factory, case_plays):
    out = tmp_path_factory.mktemp("judged")
    pod_play = POD_PLAY.format(out=out, role=ROLE, vars=json.dumps({
        "__kube_scheduler_verify_run": "20260101120000", "kube_scheduler_verify_tolerate_control_plane": True,
        "kube_scheduler_verify_tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                               "effect": "NoSchedule"}]}))
    run, results = case_plays(out, CASE_PLAY, CASES, after=pod_play)
    assert run.returncode == 0, run.stdout + run.stderr
    results["stdout"] = run.stdout
    (results["pod"],) = yaml.safe_load((out / "pod.yaml").read_text())
    return results


def by_name(judged, name):
    return {r["name"]: r for r in judged[name]["results"]}


def test_all_schedulers_scheduled(judged):
    assert judged["all_ok"]["error"] == ""
    results = by_name(judged, "all_ok")
    assert {n: r["outcome"] for n, r in results.items()} == {"default-scheduler": "ok", "bin-packing": "ok"}
    assert results["bin-packing"]["holder"] == "bin-packing-7d9f_5678"
    elapsed = time.monotonic() - BUILT_AT + 1
    assert 0.9 <= results["bin-packing"]["renewed_seconds_ago"] <= 1 + elapsed
    assert 2.9 <= results["default-scheduler"]["renewed_seconds_ago"] <= 3 + elapsed


def test_the_summary_table_is_printed(judged):
    for text in ("SCHEDULER", "RESULT", "LEASE", "HOLDER", "RENEWED", "bin-packing-7d9f_5678", "master-1_1234",
                 "kube-system/bin-packing", "bound to node-2", "HEALTH", "https://127.0.0.1:10259/livez"):
        assert text in judged["stdout"]


@pytest.mark.parametrize("name, message", [
    ("not_bound", "Scheduler bin-packing did not schedule: not bound within 60s: no scheduler of this name answered"),
    ("not_bound_unschedulable", "Scheduler bin-packing did not schedule: not bound within 60s: 0/3 nodes are available"),
    ("wrong_reporter", "Scheduler bin-packing did not schedule: bound to node-2 but the Scheduled event names "
                       "default-scheduler"),
    ("stale_event_of_another_pod", "Scheduler bin-packing did not schedule: bound to node-2 but no Scheduled event"),
    ("unhealthy", "Instance second on localhost is not healthy at https://127.0.0.1:10260/livez"),
])
def test_fails_naming_the_culprit(judged, name, message):
    assert message in judged[name]["error"]
    assert "default-scheduler did not schedule" not in judged[name]["error"]


def test_the_pod_is_valid_and_asks_for_its_scheduler(judged):
    pod = judged["pod"]
    kubernetes_validate.validate(pod, "1.30.0", strict=True)
    kubernetes_validate.validate(pod, "1.36.0", strict=True)
    assert pod["spec"]["schedulerName"] == "bin-packing"
    assert pod["metadata"]["namespace"] == "kubesched-verify"
    assert {t["key"] for t in pod["spec"]["tolerations"]} == {"node-role.kubernetes.io/control-plane",
                                                              "node.kubernetes.io/not-ready"}
