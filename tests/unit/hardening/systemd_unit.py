"""Render the systemd role's unit (plugin_utils/render/systemd_unit.py) for a resolved instance and read it back with systemd's own rules.

systemd (src/shared/conf-parser.c, src/basic/fileio.c read_line, src/basic/extract-word.c) reads a unit as:
lines end at \\n, \\r\\n, \\r or NUL; a line ending in a backslash continues on the next one (the backslash becomes a
space); lines starting with # or ; are comments; [Name] opens a section; anything else is Key=Value. ExecStart's
value is split into words with quotes and C escapes undone, then %% becomes % and $$ becomes $ (a lone % is a
specifier and a lone $ a variable, which the template must never leave behind).
"""

from __future__ import annotations

import re

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.systemd_unit import systemd_unit

ROLE_VARS = {"kube_scheduler_system_user": "kube-scheduler", "kube_scheduler_system_group": "kube-scheduler",
             "kube_scheduler_binary_link": "/usr/local/bin/kube-scheduler"}
_EOL = re.compile(r"\r\n|\n|\r|\x00")
_C_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"',
              "'": "'", "s": " "}


def render(instance, **role_vars):
    """The unit text the rollout engine writes."""
    merged = dict(ROLE_VARS, **role_vars)
    return systemd_unit(instance, merged["kube_scheduler_binary_link"], merged["kube_scheduler_system_user"],
                        merged["kube_scheduler_system_group"])


def parse(text):
    """[(section, key, value)] in file order, as systemd's config parser sees the unit."""
    entries, section, pending = [], None, None
    for line in _EOL.split(text):
        if pending is not None:
            if line.lstrip().startswith(("#", ";")):
                continue  # comment lines inside a continuation are skipped
            line = pending + " " + line
            pending = None
        stripped = line.strip()
        if stripped.endswith("\\"):
            pending = stripped[:-1]
            continue
        if not stripped or stripped.startswith(("#", ";")):
            continue
        if stripped.startswith("["):
            assert stripped.endswith("]"), "malformed section header %r" % stripped
            section = stripped[1:-1]
            continue
        assert "=" in stripped, "a line systemd cannot parse: %r" % stripped
        key, value = stripped.split("=", 1)
        entries.append((section, key.strip(), value.strip()))
    if pending is not None:
        entries.append((section, "<continuation at end of file>", pending))
    return entries


def exec_words(value):
    """ExecStart's argv: extract_first_word(EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE), then specifiers and variables."""
    words, current, quote, index, started = [], [], None, 0, False
    while index < len(value):
        char = value[index]
        if char == "\\":
            index += 1
            escaped = value[index]
            if escaped == "x":
                current.append(chr(int(value[index + 1:index + 3], 16)))
                index += 2
            else:
                assert escaped in _C_ESCAPES, "an escape systemd would refuse: \\%s" % escaped
                current.append(_C_ESCAPES[escaped])
            started = True
        elif quote:
            if char == quote:
                quote = None
            else:
                current.append(char)
        elif char in "\"'":
            quote, started = char, True
        elif char in " \t":
            if started:
                words.append("".join(current))
                current, started = [], False
        else:
            current.append(char)
            started = True
        index += 1
    assert quote is None, "unbalanced quoting"
    if started:
        words.append("".join(current))
    return [_specifiers_and_variables(word) for word in words]


def _specifiers_and_variables(word):
    out, index = [], 0
    while index < len(word):
        char = word[index]
        if char in "%$":
            assert word[index + 1:index + 2] == char, "a lone %s in %r would be expanded by systemd" % (char, word)
            index += 1
        out.append(char)
        index += 1
    return "".join(out)
