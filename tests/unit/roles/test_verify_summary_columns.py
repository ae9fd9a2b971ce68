"""The verify role's summary tables (what `make demo` prints) fit their columns: a lease holder is a
host name and a UUID (kube-scheduler's identity, 47 characters for ks-demo-m1), longer than the fixed widths the
table had, which shifted every column after it. The role's summary (its filter verify_report) rendered by real
ansible-core."""
from __future__ import annotations

import json
import re
import sys

HOLDER = "ks-demo-m1_0b6f0c0e-5b9a-4d8e-9f3c-1f2a3b4c5d6e"  # kube-scheduler's id: hostname + "_" + UUID
RESULTS = [
    {"name": "default-scheduler", "outcome": "ok", "lease": "kube-system/kube-scheduler", "holder": HOLDER,
     "renewed_seconds_ago": 1.2, "detail": "bound to ks-demo-m2", "source": "instance kube-scheduler"},
    {"name": "a-scheduler-with-a-rather-long-name", "outcome": "FAILED",
     "lease": "a-namespace-of-its-own/a-lease-name-longer-than-thirty-six", "holder": "",
     "renewed_seconds_ago": None, "detail": "not bound within 60s", "source": "deployment x/y"},
]
HEALTH = [
    {"host": "ks-demo-m1.a-long-domain.example.com", "instance": "kube-scheduler-binpack-second", "ok": True,
     "url": "https://127.0.0.1:10260/livez?verbose=false&exclude=x", "detail": "HTTP 200 ok"},
    {"host": "m2", "instance": "s", "ok": False, "url": "https://127.0.0.1:1/livez", "detail": "refused"},
]
PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Render the summary
      ansible.builtin.copy:
        content: "{{ (results | kubesched.schedulers.verify_report(health, [], none, settings)).summary | join('\\n') }}"
        dest: "{{ out }}"
        mode: "0600"
"""


def columns(line):
    """Where each column starts: after a run of two or more spaces."""
    return [0] + [m.end() for m in re.finditer(r"  +", line)]


def test_every_value_starts_under_its_header(tmp_path, ansible_playbook):
    (tmp_path / "play.yml").write_text(PLAY)
    (tmp_path / "vars.json").write_text(json.dumps({
        "out": str(tmp_path / "summary.txt"), "results": RESULTS, "health": HEALTH,
        "settings": {"check_mode": False, "metrics": False, "metrics_gate": False, "lease_audit_fail": False,
                     "token_found": False}}))
    run = ansible_playbook(["-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable,
                            "-e", "@vars.json", "play.yml"], cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    first, second = (tmp_path / "summary.txt").read_text().strip("\n").split("\n\n")
    for table, header_words in ((first, 6), (second, 5)):
        lines = table.splitlines()
        starts = columns(lines[0])
        assert len(starts) == header_words
        for line in lines[1:]:
            # Every value (none has two spaces in it) begins exactly where its header does.
            assert columns(line)[:header_words] == starts, "\n".join(lines)
    assert HOLDER in first and "a-namespace-of-its-own/a-lease-name-longer-than-thirty-six" in first
