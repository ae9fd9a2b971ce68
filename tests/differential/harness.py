# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Differential testing: one config through the library (configuration.process) and through the real
kube-scheduler binary of the same minor, and the comparison of both outcomes.

The binary runs as /work/shared/k8s/README.md describes ("Offline validation with the real binary"):
``kube-scheduler --config CFG --write-config-to OUT --secure-port 0 --master https://127.0.0.1:1`` exits 0 after
strict decoding, defaulting, validation and building every profile (OUT holds the effective config) or exits 1
with the error on stderr. Binary outcomes are cached under ~/.cache/kubesched/differential, keyed by the sha256 of the
binary and of the config text, so a rerun only runs the library.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import tempfile

import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import configuration
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import errors
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _framework_checks as framework_checks
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import scheduler_plugins

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Beside the binaries, not in the checkout: keyed by the binary's and the config's sha256, so a fresh clone (CI's)
# on the same machine re-checks the binaries against the recordings without running them again.
CACHE_DIR = os.environ.get("DIFF_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "kubesched", "differential")
BINARY_MINORS = ("1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37", "1.38")
# A target is a Kubernetes minor ("1.33": its kube-scheduler) or a scheduler-plugins release
# ("scheduler-plugins-0.33.5": its cmd/scheduler, built on the Kubernetes release scheduler_plugins.RELEASES names).
SCHEDULER_PLUGINS = "scheduler-plugins-"
SCHEDULER_PLUGINS_TARGETS = tuple(SCHEDULER_PLUGINS + release for release in sorted(scheduler_plugins.RELEASES))


def kubernetes_minor(target: str) -> str:
    """The Kubernetes minor of a target: '1.33' for '1.33' and for 'scheduler-plugins-0.33.5'."""
    if target.startswith(SCHEDULER_PLUGINS):
        return ".".join(scheduler_plugins.RELEASES[target[len(SCHEDULER_PLUGINS):]].split(".")[:2])
    return target


def binary_variable(target: str) -> str:
    """KUBE_SCHEDULER_BIN_1_33, or SCHEDULER_PLUGINS_SCHEDULER_BIN_0_33_5 (what make binaries exports)."""
    if target.startswith(SCHEDULER_PLUGINS):
        return "SCHEDULER_PLUGINS_SCHEDULER_BIN_" + target[len(SCHEDULER_PLUGINS):].replace(".", "_")
    return "KUBE_SCHEDULER_BIN_" + target.replace(".", "_")


CACHE_FORMAT = 2


def load_k8s_env():
    """Take KUBE_SCHEDULER_BIN_1_<minor> from .build/k8s.env (written by `make binaries`) unless already set, then
    what ../shared/k8s/install names in the binaries directory (when that script is there) for the variables still
    unset: a binary that arrived after the last `make binaries` is used too."""
    lines = []
    path = os.path.join(ROOT, ".build", "k8s.env")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    install = os.path.join(os.path.dirname(ROOT), "shared", "k8s", "install")
    if os.access(install, os.X_OK):
        proc = subprocess.run([install], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60, check=False)
        lines += proc.stdout.decode("utf-8", "replace").splitlines()
    for line in lines:
        words = shlex.split(line, comments=True)
        if len(words) == 2 and words[0] == "export" and "=" in words[1]:
            name, value = words[1].split("=", 1)
            os.environ.setdefault(name, value)


def binary_path(minor: str):
    """The target's binary from the environment (binary_variable(); make binaries writes .build/k8s.env)."""
    return os.environ.get(binary_variable(minor)) or None


_SHA_CACHE = {}


def binary_go(path: str):
    """The Go toolchain that built a binary ('go1.25.9', from its build info), or None when `go` cannot tell."""
    try:
        answer = subprocess.run(["go", "version", path], capture_output=True, text=True, timeout=60, check=False)
    except OSError:
        return None
    match = re.search(r": (go\S+)$", answer.stdout.strip())
    return match.group(1) if match else None


def file_sha256(path: str) -> str:
    stat = os.stat(path)
    key = (path, stat.st_size, stat.st_mtime)
    if key not in _SHA_CACHE:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _SHA_CACHE[key] = digest.hexdigest()
    return _SHA_CACHE[key]


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# klog's structured line: E... run.go:72] "command failed" err="<Go-quoted error>"
_ERR_RE = re.compile(r'"command failed" err=("(?:[^"\\]|\\.)*")')


def go_unquote(quoted: str) -> str:
    """strconv.Unquote for what klog prints (JSON escapes plus \\x.., \\a, \\v, \\U........)."""
    body = quoted[1:-1]
    out, i = [], 0
    simple = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\", '"': '"',
              "'": "'"}
    while i < len(body):
        char = body[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        esc = body[i + 1]
        if esc in simple:
            out.append(simple[esc])
            i += 2
        elif esc in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[esc]
            out.append(chr(int(body[i + 2:i + 2 + width], 16)))
            i += 2 + width
        else:
            out.append(esc)
            i += 2
    return "".join(out)


# klog writes a multi-line value as err=<\n\tline\n\tline\n >
_ERR_BLOCK_RE = re.compile(r'"command failed" err=<\n((?:\t.*\n)*) >')


def binary_error(stderr: str) -> str:
    match = _ERR_RE.search(stderr)
    if match:
        return go_unquote(match.group(1))
    match = _ERR_BLOCK_RE.search(stderr)
    if match:
        return "\n".join(line[1:] for line in match.group(1).splitlines())
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("I")]
    return "\n".join(lines[-5:]) or stderr[-2000:]


_FRAME_RE = re.compile(r"^\t(\S+\.go:\d+)(?: \+0x[0-9a-f]+)?$")
# Heap addresses change from run to run: field.Path printed with %v up to 1.33 ("&field.Path{...}" as 0xc000...).
_ADDRESS_RE = re.compile(r"\b0x[0-9a-f]{10,12}\b")


def panic_summary(stderr: str) -> str:
    """A Go panic as its message and the first three source lines of the trace, which stay the same from run to run
    (argument words and addresses do not); the whole tail of stderr when it is no panic."""
    lines = stderr.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("panic: ")), None)
    if start is None:
        return _ADDRESS_RE.sub("0x?", stderr[-3000:])
    frames = [m.group(1) for m in (_FRAME_RE.match(line) for line in lines[start:]) if m][:3]
    return "%s\nat %s" % (lines[start], ", ".join(frames))


def _error_of(outcome: dict) -> str:
    """The error of an outcome as compared and recorded: upstream's message (exit 1), a panic's summary (exit 2)."""
    if outcome["rc"] == 0:
        return ""
    if outcome["rc"] != 1:
        return "exit %d: %s" % (outcome["rc"], panic_summary(outcome["stderr"]))
    return _ADDRESS_RE.sub("0x?", binary_error(outcome["stderr"]))


def binary_version(binary: str) -> str:
    """What ``kube-scheduler --version`` prints ("Kubernetes v1.35.4")."""
    proc = subprocess.run([binary, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60,
                          check=False)
    return proc.stdout.decode("utf-8", "replace").strip()


KUBECONFIG = os.path.join(ROOT, ".build", "differential", "kubeconfig")
_DUMMY_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: unreachable
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: unreachable
  context: {cluster: unreachable, user: nobody}
current-context: unreachable
users:
- name: nobody
  user: {token: none}
"""


def materialise(text: str) -> str:
    """Corpus texts name the kubeconfig @KUBECONFIG@ (kube-scheduler opens it at start-up): a dummy one here."""
    if "@KUBECONFIG@" not in text:
        return text
    if not os.path.exists(KUBECONFIG):
        os.makedirs(os.path.dirname(KUBECONFIG), exist_ok=True)
        with open(KUBECONFIG, "w", encoding="utf-8") as handle:
            handle.write(_DUMMY_KUBECONFIG)
    return text.replace("@KUBECONFIG@", KUBECONFIG)


# How long one offline run may take. Most answer in a second; scheduler-plugins' Trimaran plugins with the Prometheus
# metric provider first wait for metrics in 5 s steps (no Prometheus answers here) and only then write the config and
# exit 0: 20 to 45 s on an idle machine, and one passed 60 s in a cold `make test`, whose builds and chains share the
# two cores with it.
BINARY_TIMEOUT = 300


def run_binary(minor: str, text: str, use_cache: bool = True) -> dict:
    """{"ok": bool, "error": str, "effective": dict or None, "cached": bool} for that minor's binary."""
    binary = binary_path(minor)
    if binary is None:
        raise RuntimeError("%s is not set: run `make binaries` and source .build/k8s.env" % binary_variable(minor))
    key = "%s-%s" % (file_sha256(binary)[:24], text_sha256(text))
    cache_file = os.path.join(CACHE_DIR, key[:2], key + ".json")
    if use_cache and os.path.exists(cache_file):
        with open(cache_file, encoding="utf-8") as handle:
            cached = json.load(handle)
        if cached.get("format") == CACHE_FORMAT:
            cached["cached"] = True
            cached["error"] = _error_of(cached)
            return cached
    with tempfile.TemporaryDirectory(prefix="kubesched-diff-") as work:
        config = os.path.join(work, "config")
        out = os.path.join(work, "effective.yaml")
        with open(config, "w", encoding="utf-8") as handle:
            handle.write(text)
        proc = subprocess.run([binary, "--config", config, "--write-config-to", out, "--secure-port", "0",
                               "--master", "https://127.0.0.1:1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=BINARY_TIMEOUT, check=False, cwd=work)
        stderr = proc.stderr.decode("utf-8", "replace")
        effective = None
        if proc.returncode == 0 and os.path.exists(out):
            with open(out, encoding="utf-8") as handle:
                effective = yaml.safe_load(handle)
    outcome = {"format": CACHE_FORMAT, "ok": proc.returncode == 0, "rc": proc.returncode,
               "stderr": "" if proc.returncode == 0 else stderr[-20000:], "effective": effective}
    outcome["error"] = _error_of(outcome)
    os.makedirs(os.path.dirname(cache_file), exist_ok=True)
    tmp = cache_file + ".tmp%d" % os.getpid()
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(outcome, handle, sort_keys=True)
    os.replace(tmp, cache_file)
    outcome["cached"] = False
    return outcome


def run_library(minor: str, text: str) -> dict:
    try:
        if minor.startswith(SCHEDULER_PLUGINS):
            result = configuration.process(content=text, kubernetes_version=kubernetes_minor(minor),
                                           scheduler_plugins_version=minor[len(SCHEDULER_PLUGINS):])
        else:
            result = configuration.process(content=text, kubernetes_version=minor)
    except Exception as exc:  # pylint: disable=broad-except
        return {"ok": False, "crash": "%s: %s" % (type(exc).__name__, exc), "errors": [], "effective": None,
                "plugins": None}
    return {"ok": result.ok, "crash": None, "errors": result.errors, "effective": result.effective,
            "plugins": getattr(result, "plugins", None)}


# ---------------------------------------------------------------------------------------------------------------
# Field names in upstream's error text.

_FIELD_TYPES = "Invalid value|Required value|Duplicate value|Unsupported value|Forbidden|Too long|Too many"
_FIELD_RES = (
    re.compile(r"(?:^|\[|, |: )([A-Za-z][\w.\[\]/-]*): (?:%s)" % _FIELD_TYPES),
    re.compile(r'unknown field "([^"]+)"'),
    re.compile(r'duplicate field "([^"]+)"'),
    re.compile(r"Go struct field [\w]+\.([\w.]+) of type"),
    re.compile(r'key "([^"]+)" already set in map'),
)


def normalise_path(path: str) -> str:
    """Drop indices and map keys: profiles[0].pluginConfig[1].args.x -> profiles.pluginConfig.args.x."""
    return re.sub(r"\[[^\]]*\]", "", path or "").strip(".")


def leaf(path: str) -> str:
    parts = [p for p in normalise_path(path).split(".") if p]
    return parts[-1] if parts else ""


def upstream_fields(message: str) -> list:
    """The fields upstream's message names, in the order it names them."""
    found = []
    for pattern in _FIELD_RES:
        # Names inside quotes are Go-quoted ("\\ufeffparallelism"): compare the name itself.
        found.extend((match.start(1), go_unquote('"%s"' % match.group(1)) if '"' in pattern.pattern else match.group(1))
                     for match in pattern.finditer(message))
    return [normalise_path(f) for _at, f in sorted(found)]


def field_agrees(library_errors: list, message: str) -> bool:
    """The library's first error names the first field upstream names (by path without indices, or by its last
    field name).

    When upstream's message names no field (framework and leader-election errors), only the verdict counts.
    """
    named = upstream_fields(message)
    if not named:
        return True
    if not library_errors:
        return False
    ours = normalise_path(library_errors[0].get("field", ""))
    if not ours:
        return False
    # The first field upstream names: the same path, one a suffix of the other, or the same last field name.
    first = named[0]
    return ours == first or ours.endswith("." + first) or first.endswith("." + ours) or leaf(ours) == leaf(first)


def _plugin_views(effective: dict, minor: str) -> dict:
    """The effective plugins view computed from an effective config (the binary's or ours)."""
    if minor.startswith(SCHEDULER_PLUGINS):
        release = scheduler_plugins.release(minor[len(SCHEDULER_PLUGINS):], kubernetes_minor(minor))
        version = kubernetes_minor(minor)
        plugins = configuration.in_tree_plugins(version)
        plugins.update(release.plugins)
        return framework_checks.plugins_view(effective, version, framework_checks.Registry(plugins))
    return framework_checks.plugins_view(effective, minor)


def compare(minor: str, lib: dict, binary: dict) -> dict:
    """Verdict, field and effective-config agreement of one case; ``problems`` lists what differs."""
    problems = []
    if lib.get("crash"):
        problems.append("library raised " + lib["crash"])
    runtime = (not lib["ok"] and binary["ok"] and bool(lib["errors"])
               and all(e["type"] == errors.LEADER_ELECTION for e in lib["errors"]))
    if runtime:
        # client-go's NewLeaderElector rule (renewDeadline > 1.2 x retryPeriod ...) is checked only once
        # kube-scheduler runs with leader election, which the offline --write-config-to run never reaches
        # (shared/k8s/README.md). The library refuses such a config because the real scheduler exits on it.
        return {"verdict": True, "field": True, "effective": True, "plugins": True, "exact": None, "agree": True,
                "runtime": True, "problems": []}
    verdict = lib["ok"] == binary["ok"] and not lib.get("crash")
    if not verdict:
        problems.append("verdict: library %s, binary %s (%s)" % (
            "accepts" if lib["ok"] else "refuses: " + "; ".join(e["message"] for e in lib["errors"][:2]),
            "accepts" if binary["ok"] else "refuses", binary.get("error", "")[:400]))
    field = True
    exact = None
    if verdict and not binary["ok"]:
        field = field_agrees(lib["errors"], binary["error"])
        if not field:
            problems.append("field: library %r, binary %r" % (
                lib["errors"][0]["field"] if lib["errors"] else None, binary["error"][:400]))
        messages = [e["message"] for e in lib["errors"]]
        exact = binary["error"] in ("\n".join(messages), "[" + ", ".join(messages) + "]") or any(
            binary["error"] == m for m in messages)
    effective = True
    plugins = True
    if verdict and binary["ok"]:
        effective = lib["effective"] == binary["effective"]
        if not effective:
            problems.append("effective config differs: " + diff_summary(lib["effective"], binary["effective"]))
        try:
            plugins = lib.get("plugins") == _plugin_views(binary["effective"], minor)
        except Exception as exc:  # pylint: disable=broad-except
            plugins = False
            problems.append("plugins view from the binary's effective config failed: %s" % exc)
        if not plugins:
            problems.append("plugins view differs from the one the binary's effective config gives")
    return {"verdict": verdict, "field": field, "effective": effective, "plugins": plugins, "exact": exact,
            "agree": verdict and field and effective and plugins, "runtime": False,
            "panic": binary.get("rc") == 2, "problems": problems}


def diff_summary(ours, theirs, path="", out=None, limit=4) -> str:
    out = [] if out is None else out
    _diff(ours, theirs, path, out)
    text = "; ".join(out[:limit])
    if len(out) > limit:
        text += "; ... %d more" % (len(out) - limit)
    return text


def _diff(ours, theirs, path, out):
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in sorted(set(ours) | set(theirs)):
            if key not in theirs:
                out.append("%s.%s only in library (%s)" % (path, key, json.dumps(ours[key])[:80]))
            elif key not in ours:
                out.append("%s.%s only in binary (%s)" % (path, key, json.dumps(theirs[key])[:80]))
            else:
                _diff(ours[key], theirs[key], "%s.%s" % (path, key), out)
    elif isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _diff(a, b, "%s[%d]" % (path, i), out)
    elif ours != theirs:
        out.append("%s: library %s, binary %s" % (path, json.dumps(ours)[:120], json.dumps(theirs)[:120]))
