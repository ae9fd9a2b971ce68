"""The hostile inputs, shared by the regression tests and benchmarks/hostile_inputs.py."""

from __future__ import annotations

import base64

HEAD = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NotAPlugin\n    args:\n")


def alias_bomb(size=592):
    """Nine levels of nine aliases (9**9 = 387 million values once expanded) in the args of an unknown plugin,
    padded with a comment to exactly ``size`` bytes, as the issue's reproducer."""
    names = "abcdefghi"
    lines = ["      a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]"]
    for previous, name in zip(names, names[1:]):
        lines.append("      %s: &%s [%s]" % (name, name, ",".join(["*" + previous] * 9)))
    text = HEAD + "\n".join(lines) + "\n"
    if len(text) < size:
        text += "#" + "." * (size - len(text) - 2) + "\n"
    return text


def nested(depth, json=False):
    """``depth`` levels of nested lists in the args of an unknown plugin, as YAML flow or as JSON text."""
    if json:
        return ('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": '
                '[{"schedulerName": "s", "pluginConfig": [{"name": "NotAPlugin", "args": {"x": %s%s}}]}]}'
                % ("[" * depth, "]" * depth))
    return HEAD + "      x: " + "[" * depth + "]" * depth + "\n"


def nested_dict(depth):
    """The same nesting as a mapping, as a playbook would pass it in config."""
    value = {}
    top = value
    for _unused in range(depth):
        value["x"] = {}
        value = value["x"]
    return {"profiles": [{"schedulerName": "s", "pluginConfig": [{"name": "NotAPlugin", "args": top}]}]}


def big(size):
    """A config of about ``size`` bytes: one list item per line in the args of an unknown plugin."""
    out, total, index = [HEAD, "      items:\n"], len(HEAD) + 13, 0
    while total < size:
        line = "      - {name: item%d, value: %d}\n" % (index, index)
        out.append(line)
        total += len(line)
        index += 1
    return "".join(out)


def flat(values):
    """``values`` numbers in one flow list: the most values per byte, so the costliest text under the limits."""
    return HEAD + "      x: [" + ",".join(["1"] * values) + "]\n"


def fan(values, anchor=1000):
    """One anchored list of ``anchor`` values, aliased until about ``values`` values are decoded."""
    return (HEAD + "      a: &a [" + ",".join(["1"] * (anchor - 1)) + "]\n      b: ["
            + ",".join(["*a"] * (values // (anchor + 1))) + "]\n")


def pem_data(kind, body):
    """base64 of a PEM block whose DER is an ASN.1 sequence around ``body``: enough for the extender TLS checks,
    and recognisable key material for the redaction tests."""
    der = b"\x30" + bytes([len(body)]) + body
    text = "-----BEGIN %s-----\n%s\n-----END %s-----\n" % (kind, base64.b64encode(der).decode(), kind)
    return base64.b64encode(text.encode()).decode()


# The later worst cases (benchmarks/hostile_inputs.py).

def kind_missing(key, cert):
    """A v1 config without ``kind`` whose extender carries TLS key and certificate data: refused, and the refusal must
    not show either."""
    return ("apiVersion: kubescheduler.config.k8s.io/v1\nextenders:\n- urlPrefix: https://x/\n  tlsConfig:\n"
            "    keyData: %s\n    certData: %s\n" % (key, cert))


def many_instances(count):
    """``count`` instances of the instance model, each with its own name, port, lease and schedulerName."""
    return [{"name": "s%d" % index, "secure_port": 10300 + index,
             "config": {"leaderElection": {"resourceName": "s%d" % index},
                        "profiles": [{"schedulerName": "s%d" % index}]}} for index in range(count)]


def huge_flag(size):
    """One instance whose extra flag value is ``size`` bytes (Linux caps one argument at 128 KiB)."""
    return [{"name": "s", "default_scheduler": True, "extra_flags": {"master": "https://" + "a" * size}}]


def long_number(digits):
    """A field holding a number of ``digits`` digits (Python's int() refuses more than 4300)."""
    return ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: %s\n"
            % ("9" * digits))


# The newest surfaces (benchmarks/hostile_inputs.py): a mebibyte where an operator gives one short value.

def huge_gates(size, kind="name"):
    """One instance whose --feature-gates is ``size`` characters: one gate name that long, or one gate given again
    and again (AllAlpha off and on, the last one counting)."""
    if kind == "name":
        gates = "A" * size + "=true"
    else:
        gates = "AllAlpha=false,AllAlpha=true," * (size // 29)
    return [{"name": "s", "default_scheduler": True, "extra_flags": {"feature-gates": gates}}]


def huge_multiplier(digits):
    """scheduler-plugins' TargetLoadPacking with a defaultRequestsMultiplier of ``digits`` digits and an x: the float
    pattern that once backtracked on it (120,000 digits past a minute)."""
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "profiles": [{
        "schedulerName": "trimaran", "plugins": {"multiPoint": {"enabled": [{"name": "TargetLoadPacking"}]}},
        "pluginConfig": [{"name": "TargetLoadPacking", "args": {"defaultRequestsMultiplier": "9" * digits + "x"}}]}]}


def huge_cluster(size):
    """Four masters' kube_scheduler_cluster, each a name of ``size`` characters, as the rollout_waves filter reads
    them from hostvars."""
    return dict(("m%d" % index, {"group_names": ["kube_control_plane"], "kube_scheduler_cluster": "c" * size + str(index),
                                 "kube_scheduler_plan": {"pending": True, "plan": {"instances": {}}}})
                for index in range(4))
