"""The static pod strategy's log lines for a failed gate or an unhealthy instance: which container's, read with
crictl's own answers (its JSON as cri-tools 1.37 prints it). On real kubelets: tests/e2e/test_one_master_rollout.py, whose
gate failure names the kube-scheduler's bind error."""
from __future__ import annotations

import json

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.strategies import StaticPodStrategy


def container(cid, created, state, attempt=0, sandbox="pod-1"):
    return {"id": cid, "podSandboxId": sandbox, "metadata": {"name": "gpu", "attempt": attempt}, "state": state,
            "createdAt": str(created)}


def strategy(containers, logs=None, ps_rc=0):
    asked = []

    def run(argv):
        asked.append(argv)
        if argv[1] == "ps":
            return ps_rc, json.dumps({"containers": containers}), ""
        return 0, "", (logs or {}).get(argv[-1], "")
    return StaticPodStrategy(run, which=lambda name: "/usr/local/bin/" + name), asked


def test_the_newest_container_of_the_instance_is_read():
    found, asked = strategy([container("old", 1, "CONTAINER_EXITED", sandbox="pod-0"),
                             container("new", 2, "CONTAINER_RUNNING", sandbox="pod-1")],
                            {"new": "I0101 started\n\nE0101 not ready\n"})
    assert found.log_tail({"name": "gpu"}) == ["I0101 started", "E0101 not ready"]
    assert asked[0][:6] == ["crictl", "ps", "--all", "--last", "2", "--output"]
    assert "^gpu$" in asked[0] and asked[1] == ["crictl", "logs", "--tail", "10", "new"]


def test_a_restarting_container_gives_the_lines_of_the_attempt_that_ended():
    found, _asked = strategy([container("now", 20, "CONTAINER_RUNNING", attempt=3),
                              container("ended", 10, "CONTAINER_EXITED", attempt=2)],
                             {"ended": 'E0101 "command failed" err="bind: address already in use"\n'})
    assert found.log_tail({"name": "gpu"}) == ['E0101 "command failed" err="bind: address already in use"']


def test_the_first_attempt_and_another_pods_container_are_not_taken_for_it():
    first, _asked = strategy([container("now", 20, "CONTAINER_RUNNING"), container("ended", 10, "CONTAINER_EXITED")],
                             {"now": "I0101 first attempt\n", "ended": "E0101 older\n"})
    assert first.log_tail({"name": "gpu"}) == ["I0101 first attempt"]
    other_pod, _asked = strategy([container("now", 20, "CONTAINER_RUNNING", attempt=1),
                                  container("ended", 10, "CONTAINER_EXITED", sandbox="pod-0")],
                                 {"now": "I0101 new pod\n", "ended": "E0101 old pod\n"})
    assert other_pod.log_tail({"name": "gpu"}) == ["I0101 new pod"]


def test_no_lines_without_crictl_a_runtime_that_answers_or_a_container():
    assert StaticPodStrategy(lambda argv: 1 / 0, which=lambda name: None).log_tail({"name": "gpu"}) == []
    assert strategy([container("x", 1, "CONTAINER_EXITED")], ps_rc=1)[0].log_tail({"name": "gpu"}) == []
    assert strategy([])[0].log_tail({"name": "gpu"}) == []
    garbled = StaticPodStrategy(lambda argv: (0, "connect: connection refused", ""), which=lambda name: name)
    assert garbled.log_tail({"name": "gpu"}) == []


def test_at_most_ten_lines():
    found, _asked = strategy([container("c", 1, "CONTAINER_EXITED")], {"c": "".join("E%d\n" % n for n in range(30))})
    assert found.log_tail({"name": "gpu"}) == ["E%d" % n for n in range(20, 30)]
