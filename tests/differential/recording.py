# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Recorded answers of the real kube-scheduler binaries, so the differential suite runs where they are missing.

One file per minor, ``recorded/<minor>.jsonl``, written by ``make differential`` (run.py) and read by the CI tests.
Every line is one JSON object with sorted keys, and the lines are sorted, so a changed answer is a changed line in
``git diff``:

  {"recording": {...}}          the binary (file name, ``--version``, sha256), the command, the families recorded
  {"base": {...}}               the effective config the binary writes for the corpus's minimal config
  {"effective": ID, ...}        one distinct effective config, as edits of ``base`` (ID: sha256 of it, 12 digits)
  {"case": [FAMILY, NAME, SHA], "rc": N, "error": ..., "effective": ID}
                                one corpus case: exit code, the error upstream printed (exit 1; a panic is
                                summarised by its message and first frames, without goroutine addresses), and
                                for exit 0 the ID of its effective config. SHA is the sha256 (16 digits) of the
                                config text, so a changed case is no longer found and has to be re-recorded.

Effective configs are stored as edits because 1123 accepted configs of a minor hold 541 distinct effective configs
of about 3.2 kB each (1.7 MB), mostly the same defaults. ``top`` edits the config without its profiles and each
entry of ``profiles`` edits the base's first profile; an edit is ``{"set": PATH, "to": VALUE}``, ``{"del": PATH}``
or ``{"list": PATH, "items": [...]}`` (a list rebuilt from the base list's items, ``{"base": i}`` with optional
``"edits"``, and new ``{"new": VALUE}`` items). Decoding gives back exactly the binary's effective config, which
the comparison then uses as data, as it uses the binary's own output.

The kubeconfig the harness gives configs (its path depends on the checkout) is written ``@KUBECONFIG@``.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
RECORD_DIR = os.environ.get("DIFF_RECORD_DIR") or os.path.join(HERE, "recorded")
FORMAT = 1
# The corpus's minimal config: its effective config is the base the others are stored as edits of.
BASE_TEXT = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
             "clientConnection:\n  kubeconfig: @KUBECONFIG@\n")


def path_of(minor: str) -> str:
    return os.path.join(RECORD_DIR, minor + ".jsonl")


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def portable(value):
    """The text or data with the harness's kubeconfig path written @KUBECONFIG@ (the path depends on the checkout)."""
    if isinstance(value, str):
        return value.replace(harness.KUBECONFIG, "@KUBECONFIG@")
    return json.loads(portable(json.dumps(value)))


def local(value):
    """The inverse of portable(): @KUBECONFIG@ becomes this checkout's kubeconfig path."""
    if isinstance(value, str):
        return value.replace("@KUBECONFIG@", harness.KUBECONFIG)
    return json.loads(json.dumps(value).replace("@KUBECONFIG@", harness.KUBECONFIG.replace("\\", "\\\\")))


def case_key(family: str, name: str, text: str) -> tuple:
    """(family, name, sha256 of the portable config text, 16 digits): names repeat, texts within a family do not."""
    return (family, name, hashlib.sha256(portable(text).encode("utf-8")).hexdigest()[:16])


def answer_of(outcome: dict) -> dict:
    """What the comparison uses of a binary outcome, portable: exit code, error, effective config."""
    return {"rc": outcome["rc"], "error": portable(outcome["error"]),
            "effective": portable(outcome["effective"]) if outcome["rc"] == 0 else None}


def outcome_of(answer: dict) -> dict:
    """A recorded answer in the shape harness.run_binary returns (for harness.compare)."""
    return {"ok": answer["rc"] == 0, "rc": answer["rc"], "error": local(answer["error"]),
            "effective": local(answer["effective"]) if answer["effective"] is not None else None, "cached": True}


# ---------------------------------------------------------------------------------------------------------------
# Effective configs as edits of the base.

def edits(base, new, path=None) -> list:
    """The edits that turn ``base`` into ``new`` (apply() is the inverse)."""
    path = path or []
    out = []
    if _canonical(base) == _canonical(new):  # not ==: 50 and 50.0 are written differently, keep which it was
        return out
    if isinstance(base, dict) and isinstance(new, dict):
        for key in base:
            if key not in new:
                out.append({"del": path + [key]})
        for key in new:
            if key in base:
                out.extend(edits(base[key], new[key], path + [key]))
            else:
                out.append({"set": path + [key], "to": new[key]})
    elif isinstance(base, list) and isinstance(new, list) and len(base) == len(new):
        for i, (old_item, new_item) in enumerate(zip(base, new)):
            out.extend(edits(old_item, new_item, path + [i]))
    elif isinstance(base, list) and isinstance(new, list):
        # Items added or removed (pluginConfig, enabled lists): keep the base's items where they line up.
        items = []
        matcher = difflib.SequenceMatcher(None, [_canonical(x) for x in base], [_canonical(x) for x in new],
                                          autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                items.extend({"base": i} for i in range(i1, i2))
            elif tag == "replace" and i2 - i1 == j2 - j1:
                for i, j in zip(range(i1, i2), range(j1, j2)):
                    items.append({"base": i, "edits": edits(base[i], new[j])})
            elif tag in ("insert", "replace"):
                items.extend({"new": item} for item in new[j1:j2])
        out.append({"list": path, "items": items})
    else:
        out.append({"set": path, "to": new})
    return out


def _parent(root, path):
    node = root
    for step in path[:-1]:
        node = node[step]
    return node


def apply(base, changes):
    """``base`` with ``changes`` (from edits()) applied; base itself is left as it was."""
    root = {"": json.loads(json.dumps(base))}
    for change in changes:
        if "del" in change:
            path = [""] + change["del"]
            del _parent(root, path)[path[-1]]
        elif "set" in change:
            path = [""] + change["set"]
            _parent(root, path)[path[-1]] = json.loads(json.dumps(change["to"]))
        else:
            path = [""] + change["list"]
            old = _parent(root, path)[path[-1]]
            _parent(root, path)[path[-1]] = [
                json.loads(json.dumps(item["new"])) if "new" in item else apply(old[item["base"]], item.get("edits", []))
                for item in change["items"]]
    return root[""]


def encode(base: dict, effective: dict) -> dict:
    """{"top": edits without the profiles, "profiles": [edits of base's first profile]} (profiles None if absent)."""
    strip = {k: v for k, v in effective.items() if k != "profiles"}
    base_top = {k: v for k, v in base.items() if k != "profiles"}
    profiles = effective.get("profiles")
    return {"top": edits(base_top, strip),
            "profiles": None if profiles is None else [edits(base["profiles"][0], p) for p in profiles]}


def decode(base: dict, encoded: dict) -> dict:
    out = apply({k: v for k, v in base.items() if k != "profiles"}, encoded["top"])
    if encoded["profiles"] is not None:
        out["profiles"] = [apply(base["profiles"][0], p) for p in encoded["profiles"]]
    return out


def effective_id(effective) -> str:
    return hashlib.sha256(_canonical(effective).encode("utf-8")).hexdigest()[:12]


# ---------------------------------------------------------------------------------------------------------------
# Files.

def binary_info(minor: str) -> dict:
    """The binary an answer comes from: file name, its --version line, sha256 and the Go that built it (its error
    texts carry that Go's words: encoding/json's, strconv's)."""
    binary = harness.binary_path(minor)
    return {"minor": minor, "binary": os.path.basename(binary), "version": harness.binary_version(binary),
            "sha256": harness.file_sha256(binary), "go": harness.binary_go(binary),
            "command": "kube-scheduler --config CFG --write-config-to OUT --secure-port 0 --master https://127.0.0.1:1"}


def write(minor: str, info: dict, base: dict, answers: dict) -> str:
    """Write recorded/<minor>.jsonl: ``answers`` maps case_key() to answer_of(); ``base`` is answer_of()'s
    effective config of BASE_TEXT. Returns the path."""
    variants = {}
    lines = []
    for key, answer in answers.items():
        line = {"case": list(key), "rc": answer["rc"]}
        if answer["rc"] == 0:
            line["effective"] = effective_id(answer["effective"])
            variants.setdefault(line["effective"], answer["effective"])
        else:
            line["error"] = answer["error"]
        lines.append(line)
    stored = []
    for ident, effective in variants.items():
        encoded = encode(base, effective)
        if _canonical(decode(base, encoded)) != _canonical(effective):  # a recording that does not give back the binary's output is useless
            raise AssertionError("effective config %s does not survive its encoding" % ident)
        stored.append(dict(encoded, effective=ident))
    families = sorted({key[0] for key in answers})
    out = [_canonical({"recording": dict(info, families=families, format=FORMAT, cases=len(lines),
                                         effective_configs=len(stored))}),
           _canonical({"base": base})]
    out += sorted(_canonical(x) for x in stored)
    out += [_canonical(x) for x in sorted(lines, key=lambda x: x["case"])]
    os.makedirs(RECORD_DIR, exist_ok=True)
    path = path_of(minor)
    tmp = path + ".tmp%d" % os.getpid()
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write("\n".join(out) + "\n")
    os.replace(tmp, path)
    return path


class Recording:
    """One minor's recorded answers: ``info`` (the recording line), ``answers`` {case_key: answer}."""

    def __init__(self, info: dict, answers: dict):
        self.info = info
        self.answers = answers

    def describe(self) -> str:
        return "%s (%s, sha256 %s, %s)" % (self.info["binary"], self.info["version"], self.info["sha256"][:16],
                                           self.info.get("go") or "Go version not recorded")


def load(minor: str):
    """The Recording of that minor, or None when there is none."""
    path = path_of(minor)
    if not os.path.exists(path):
        return None
    info, base, variants, answers = None, None, {}, {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            if "recording" in item:
                info = item["recording"]
            elif "base" in item:
                base = item["base"]
            elif "case" in item:
                answers[tuple(item["case"])] = {
                    "rc": item["rc"], "error": item.get("error", ""),
                    "effective": variants[item["effective"]] if item["rc"] == 0 else None}
            else:
                variants[item["effective"]] = decode(base, item)
    if info is None or info.get("format") != FORMAT:
        raise ValueError("%s is not a recording of format %d: re-record with make differential" % (path, FORMAT))
    return Recording(info, answers)


def changes(old, new: dict) -> dict:
    """How many answers changed, were added and removed between two recordings' answers (old may be None)."""
    old = old.answers if old is not None else {}
    return {"changed": sum(1 for k in new if k in old and old[k] != new[k]),
            "new": sum(1 for k in new if k not in old), "removed": sum(1 for k in old if k not in new)}


def answer_difference(recorded: dict, live: dict) -> str:
    """One line saying how a live answer differs from the recorded one."""
    if recorded["rc"] != live["rc"]:
        return "exit %d recorded, %d now (%s)" % (recorded["rc"], live["rc"], (live["error"] or "accepts")[:300])
    if recorded["error"] != live["error"]:
        return "error recorded %r, now %r" % (recorded["error"][:300], live["error"][:300])
    return "effective config: " + harness.diff_summary(live["effective"], recorded["effective"]).replace(
        "library", "now").replace("binary", "recorded")
