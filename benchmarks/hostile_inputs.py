"""Worst-case cost of hostile configuration input: wall time and peak RSS per input.

Each input runs in a fresh Python process (so peak RSS is that input's own) through the library's process() as
the scheduler_config action plugin calls it, or through the instance model as scheduler_instances does. Prints
one line per input: bytes, seconds, peak RSS in MiB, and the outcome (the first error, or "accepted").

The inputs are the first reported attacks (the 592-byte alias bomb in pluginConfig[].args of an unknown plugin,
nesting deeper than 325 levels, a 5 MB config) and the costliest inputs the limits still accept (the most values
per byte just under the 50000-value limit, and the largest aliasing go-yaml's rule allows); then the later ones (2000
levels of flow nesting, a 5000-digit number, 10000 instances, a 1 MiB extra flag), and the newest surfaces (a 1 MiB
feature gate name, one gate given 36000 times, a 1 MiB defaultRequestsMultiplier of scheduler-plugins, four 1 MiB
cluster names of the fleet). An instance list, a config and the fleet's host variables are sized as their JSON
text.

Run with `make bench-hostile`, or with PYTHONPATH set so that the checkout is kubesched.schedulers:
  PYTHONPATH=.build/collections .venv/bin/python benchmarks/hostile_inputs.py
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HOSTILE = os.path.join(HERE, os.pardir, "tests", "unit", "hardening")

CASES = [
    # (label, path, generator in hostile.py, its arguments, its keyword arguments)
    ("alias bomb, 592 bytes", "process", "alias_bomb", [], {}),
    ("alias bomb in config_content", "instances", "alias_bomb", [], {}),
    ("nesting 326 levels, YAML", "process", "nested", [326], {}),
    ("nesting 10000 levels, YAML", "process", "nested", [10000], {}),
    ("nesting 100000 levels, JSON", "process", "nested", [100000], {"json": True}),
    ("nesting 100000 levels, mapping (config)", "instances-dict", "nested_dict", [100000], {}),
    ("5 MB config", "process", "big", [5000000], {}),
    ("1 MiB config, 170000 values", "process", "big", [1040000], {}),
    ("worst accepted: 49000 values in 98 KB", "process", "flat", [49000], {}),
    ("worst accepted: 49000 values in config_content", "instances", "flat", [49000], {}),
    ("aliases: 45000 values from 2.2 KB, accepted", "process", "fan", [45000], {}),
    ("aliases: 120000 values from 2.5 KB, refused", "process", "fan", [120000], {}),
    # The later worst cases.
    ("nesting 2000 levels of flow, YAML", "process", "nested", [2000], {}),
    ("a 5000-digit number", "process", "long_number", [5000], {}),
    ("10000 instances, refused: at most 100", "instances-list", "many_instances", [10000], {}),
    ("100 instances, the most accepted", "instances-list", "many_instances", [100], {}),
    ("a 1 MiB extra flag", "instances-list", "huge_flag", [1 << 20], {}),
    # The newest surfaces: a mebibyte where an operator gives one short value.
    ("a 1 MiB feature gate name", "instances-list", "huge_gates", [1 << 20], {}),
    ("a gate given 36000 times in 1 MiB", "instances-list", "huge_gates", [1 << 20], {"kind": "duplicates"}),
    ("a 1 MiB defaultRequestsMultiplier (scheduler-plugins)", "process-plugins", "huge_multiplier", [1 << 20], {}),
    ("four 1 MiB kube_scheduler_cluster names", "fleet", "huge_cluster", [1 << 20], {}),
]

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import hostile
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.instances.model import resolve
path, generator, args, kwargs = sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), json.loads(sys.argv[5])
value = getattr(hostile, generator)(*args, **kwargs)
# A mapping has no text; an instance list (or a config, or the fleet's hostvars) is sized as its JSON.
size = len(value) if isinstance(value, str) else len(json.dumps(value)) if path != "instances-dict" else 0
start = time.monotonic()
if path == "process":
    result = process(content=value, kubernetes_version="1.33")
    errors = [error["message"] for error in result.errors]
elif path == "process-plugins":
    result = process(config=value, kubernetes_version="1.34.7", scheduler_plugins_version="0.34.7")
    errors = [error["message"] for error in result.errors]
elif path == "fleet":
    from ansible.errors import AnsibleFilterError
    from ansible_collections.kubesched.schedulers.plugins.filter.rollout_order import rollout_waves
    try:
        rollout_waves(sorted(value), value, "c", kind="systemd")
        errors = []
    except AnsibleFilterError as exc:
        errors = [str(exc)]
elif path == "instances-list":
    _resolved, errors, _warnings = resolve(value, "1.33.2", "/etc/kubernetes/schedulers")
else:
    field = "config_content" if path == "instances" else "config"
    _resolved, errors, _warnings = resolve([{"name": "hostile", "default_scheduler": True, field: value}],
                                           "1.33.2", "/etc/kubernetes/schedulers")
seconds = time.monotonic() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(json.dumps(dict(size=size, seconds=seconds, rss=rss, outcome=(errors[0] if errors else "accepted"))))
"""


def run(path, generator, args, kwargs, timeout):
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, HOSTILE, path, generator, json.dumps(args),
                               json.dumps(kwargs)], capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return dict(size=0, seconds=timeout, rss=0.0, outcome="TIMEOUT after %ds" % timeout)
    if proc.returncode != 0:
        return dict(size=0, seconds=0.0, rss=0.0, outcome="CRASH: " + (proc.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(proc.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--timeout", type=int, default=300, help="seconds before an input counts as a hang")
    args = parser.parse_args()
    print("%-55s %9s %8s %9s  %s" % ("input", "bytes", "seconds", "peak MiB", "outcome"))
    worst = dict(seconds=0.0, rss=0.0)
    for label, path, generator, generator_args, generator_kwargs in CASES:
        figures = run(path, generator, generator_args, generator_kwargs, args.timeout)
        worst["seconds"] = max(worst["seconds"], figures["seconds"])
        worst["rss"] = max(worst["rss"], figures["rss"])
        print("%-55s %9d %8.2f %9.1f  %s" % (label, figures["size"], figures["seconds"], figures["rss"],
                                             figures["outcome"][:90]))
    print("worst case: %.2f s, %.1f MiB peak RSS" % (worst["seconds"], worst["rss"]))


if __name__ == "__main__":
    main()
