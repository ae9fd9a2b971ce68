# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one rule for what is secret, shared by the controller (plugin_utils/redaction.py) and the host (diffs of
the files a module replaces): stdlib only, so that modules can carry it.

A field is secret when its name, case and ``-``/``_`` ignored, contains ``key``, ``token``, ``password`` or
``secret``, or names certificate data: extender ``tlsConfig.keyData``/``certData``, a kubeconfig's ``token``,
``client-key-data``, ``client-certificate-data``, ``password``. Excepted are the Kubernetes fields whose values are
label keys, not key material (``key`` of a selector requirement or toleration, ``topologyKey``,
``matchLabelKeys``, ``mismatchLabelKeys``) and the fields that hold a path (``keyFile``, ``tokenFile``). A boolean
or null under such a name (``automountServiceAccountToken: false``) is shown.
"""

from __future__ import annotations

import re

REDACTED = "<redacted>"
_WORDS = ("key", "token", "password", "secret", "certdata", "certificatedata")
_LABEL_KEYS = frozenset(("key", "topologykey", "matchlabelkeys", "mismatchlabelkeys"))
# A field that names where a secret is (tlsConfig.keyFile, a kubeconfig's tokenFile) holds a path, which an error
# about a missing file must be able to show.
_PATHS = ("file", "path", "dir")
# Shorter values are not scrubbed from free text (a password "5" would blank every 5 in a message); their fields
# are still redacted wherever they appear as data.
MIN_SCRUBBED = 4
_KEY_LINE = re.compile(r'^(\s*(?:- )*)(["\']?)([^\s"\':#][^"\':]*?|[^"\']*)\2(\s*:)(?=\s|$)(.*)$')
# A flow-style or JSON key and its value, up to the next separator.
_INLINE = re.compile(r'(["\']?)([A-Za-z0-9_.-]+)\1(\s*:\s*)("(?:[^"\\]|\\.)*"|\'(?:[^\']|\'\')*\'|[^,{}\[\]\s]+)')
# Values shown whatever the field's name: a boolean or null is no key material.
_PLAIN_VALUE = re.compile(r'(?:true|false|True|False|TRUE|FALSE|null|Null|NULL|~)\s*(?:#.*)?')


def secret_field(name):
    """Whether a field of this name holds a secret (see the module's docstring)."""
    if not isinstance(name, str):
        return False
    folded = name.lower().replace("-", "").replace("_", "")
    return (folded not in _LABEL_KEYS and not folded.endswith(_PATHS)
            and any(word in folded for word in _WORDS))


def secret_value(name, value):
    """Whether ``value`` under the field ``name`` is hidden: text or nested data, not empty, under a secret name."""
    if isinstance(value, (str, bytes, dict, list)):
        return secret_field(name) and len(value) > 0
    return secret_field(name) and isinstance(value, (int, float)) and not isinstance(value, bool)


def redact(data):
    """A copy of ``data`` with every secret value replaced; iterative, so no input is too deep for it."""
    return redacted_copy(data, secret_value)


def redacted_copy(data, hidden, leaf=None):
    """A copy of ``data`` in which the value of every dict key for which ``hidden(key, value)`` holds is
    REDACTED and every other value that is neither a dict nor a list is ``leaf(value)`` (the value itself without
    ``leaf``); iterative, so no input is too deep for it."""
    if not isinstance(data, (dict, list)):
        return data if leaf is None else leaf(data)
    top = {} if isinstance(data, dict) else []
    stack = [(data, top)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, value in items:
            if isinstance(source, dict) and hidden(key, value):
                copied = REDACTED
            elif isinstance(value, (dict, list)):
                copied = {} if isinstance(value, dict) else []
                stack.append((value, copied))
            else:
                copied = value if leaf is None else leaf(value)
            if isinstance(target, dict):
                target[key] = copied
            else:
                target.append(copied)
    return top


def secret_values(data):
    """Every secret text in ``data`` (the leaves under a secret field), longest first, so that a value containing
    another is masked whole."""
    found = set()
    stack = [(data, False)]
    while stack:
        item, hidden = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                stack.append((value, hidden or secret_value(key, value)))
        elif isinstance(item, list):
            stack.extend((value, hidden) for value in item)
        elif hidden and isinstance(item, str) and len(item) >= MIN_SCRUBBED:
            found.add(item)
    return sorted(found, key=lambda value: (-len(value), value))


def redact_text(text, extra_keys=()):
    """YAML or JSON text (a file being replaced, one being written) with the value of every secret field masked:
    block style (the value on the key's line and every more-indented line that continues it) and flow style or
    JSON (the value after the key). ``extra_keys`` are masked too, whatever their name."""
    if not isinstance(text, str) or not text:
        return text
    extra = frozenset(extra_keys or ())

    def hidden(name):
        return name in extra or secret_field(name)

    def inline(match):
        if not hidden(match.group(2)) or _PLAIN_VALUE.fullmatch(match.group(4)):
            return match.group(0)
        return match.group(1) + match.group(2) + match.group(1) + match.group(3) + REDACTED

    out, indent = [], None
    for line in text.splitlines(True):
        if indent is not None:
            if not line.strip() or len(line) - len(line.lstrip()) > indent:
                continue
            indent = None
        match = _KEY_LINE.match(line)
        if match and hidden(match.group(3).strip()) and not _PLAIN_VALUE.fullmatch(match.group(5).strip()):
            # The value on this line and every more-indented line after it (a block scalar, a nested mapping).
            prefix = match.group(1) + match.group(2) + match.group(3) + match.group(2) + match.group(4)
            out.append("%s %s\n" % (prefix, REDACTED))
            indent = len(match.group(1).replace("- ", "  "))
            continue
        out.append(_INLINE.sub(inline, line))
    return "".join(out)
