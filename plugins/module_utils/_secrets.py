# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one rule for what is secret, shared by the controller (plugin_utils/core/redaction.py) and the host (diffs of
the files a module replaces): stdlib only, so that modules can carry it, and ansible-core's own secrets API where the
running core has one (register_secrets).

A field is secret when its name, case and ``-``/``_`` ignored, contains ``key``, ``token``, ``password`` or
``secret``, or names certificate data: extender ``tlsConfig.keyData``/``certData``, a kubeconfig's ``token``,
``client-key-data``, ``client-certificate-data``, ``password``. Excepted are the Kubernetes fields whose values are
label keys, not key material (``key`` of a selector requirement or toleration, ``topologyKey``,
``matchLabelKeys``, ``mismatchLabelKeys``) and the fields that hold a path (``keyFile``, ``tokenFile``). A boolean
or null under such a name (``automountServiceAccountToken: false``) is shown.
"""

from __future__ import annotations

import re

try:  # ansible-core 2.22 on: a registered value is masked ($REDACTED$) wherever Ansible shows it
    from ansible.module_utils.secrets import register_secrets as _core_register_secrets
except ImportError:  # older cores: no such API; no_log options and AnsibleModule.no_log_values hide values
    _core_register_secrets = None

REDACTED = "<redacted>"
_WORDS = ("key", "token", "password", "secret", "certdata", "certificatedata")
_LABEL_KEYS = frozenset(("key", "topologykey", "matchlabelkeys", "mismatchlabelkeys"))
# A field that names where a secret is (tlsConfig.keyFile, a kubeconfig's tokenFile) holds a path, which an error
# about a missing file must be able to show.
_PATHS = ("file", "path", "dir")
# Shorter values are not scrubbed from free text (a password "5" would blank every 5 in a message); their fields
# are still redacted wherever they appear as data.
MIN_SCRUBBED = 4
# A block-style key's line (_key_line) starts with its indentation and sequence dashes.
_INDENT = re.compile(r"\s*(?:- )*")
# A flow-style or JSON key and its value, up to the next separator. The key starts where a run of key characters
# starts (the look-behind): a search would otherwise try every position inside a long run, each time to its end.
_INLINE = re.compile(r'(["\']?)(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]+)\1(\s*:\s*)'
                     r'("(?:[^"\\]|\\.)*"|\'(?:[^\']|\'\')*\'|[^,{}\[\]\s]+)')
# Values shown whatever the field's name: a boolean or null is no key material.
_PLAIN_VALUE = re.compile(r'(?:true|false|True|False|TRUE|FALSE|null|Null|NULL|~)\s*(?:#.*)?')


def register_secrets(values):
    """Hand the secret ``values`` (texts) to ansible-core's secrets API, which masks them in every output from
    then on (in the worker that runs a task, the host module's process included, and, told by either, the
    controller's display); returns whether the running core has that API. From 2.22 a result keeps no_log values
    and only output masks them, so a value a module learns of at run time (the content of a secret file it was
    handed as a plain option) is masked only once registered; older cores remove AnsibleModule.no_log_values from
    the result instead (CollectionModule.hide does both)."""
    if _core_register_secrets is None:
        return False
    # The masker masks any length; a short value would blank every occurrence of its text (see MIN_SCRUBBED).
    _core_register_secrets([value for value in values if isinstance(value, str) and len(value.strip()) >= MIN_SCRUBBED])
    return True


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
        found = _key_line(line)
        if found and hidden(found[2].strip()) and not _PLAIN_VALUE.fullmatch(found[4].strip()):
            # The value on this line and every more-indented line after it (a block scalar, a nested mapping).
            prefix = found[0] + found[1] + found[2] + found[1] + found[3]
            out.append("%s %s\n" % (prefix, REDACTED))
            indent = len(found[0].replace("- ", "  "))
            continue
        out.append(_INLINE.sub(inline, line))
    return "".join(out)


def _key_line(line):
    """A block-style mapping line (one line of splitlines(True)) as (indentation and dashes, quote, key, the
    spaces and colon after the key, the rest of the line without its newline), or None.

    What the expression ``^(\\s*(?:- )*)(["']?)([^\\s"':#][^"':]*?|[^"']*)\\2(\\s*:)(?=\\s|$)(.*)$`` matches, in
    one pass: the key ends at its first colon followed by a space or the line's end when that colon comes before any
    quote, else (a key with colons, "a:b: c") at the last such colon before any quote; a quoted key ends at its
    closing quote. The expression took cubic time on a long line of spaces (its groups overlap); its matches are
    kept (tests/unit/hardening/test_secrets_in_every_output.py redacts kubeconfigs through them)."""
    body = line[:-1] if line.endswith("\n") else line
    start = _INDENT.match(line).end()
    quote = line[start] if line[start:start + 1] in ('"', "'") else ""
    key = start + len(quote)

    def colon_after(position):
        """Where ``\\s*:`` followed by a space or the line's end starts matching at position: its colon, or -1."""
        while position < len(body) and body[position].isspace():
            position += 1
        if position < len(body) and body[position] == ":" and (position + 1 >= len(body) or body[position + 1].isspace()):
            return position
        return -1

    # The first quote or colon after the key's start: neither may be part of a key of the first kind.
    stop = key
    while stop < len(line) and line[stop] not in "\"':":
        stop += 1
    if key < len(line) and not line[key].isspace() and line[key] not in "\"':#" and stop > key:
        if quote:
            colon = colon_after(stop + 1) if line[stop:stop + 1] == quote else -1
            if colon >= 0:
                return _parts(line, body, start, quote, key, stop, stop + 1, colon)
        elif line[stop:stop + 1] == ":" and colon_after(stop) == stop:
            end = stop
            while end > key + 1 and line[end - 1].isspace():
                end -= 1
            return _parts(line, body, start, quote, key, end, end, stop)
    # A key of the second kind: any text up to the first quote, ending at the last colon that fits.
    first_quote = key
    while first_quote < len(line) and line[first_quote] not in "\"'":
        first_quote += 1
    if quote:
        colon = colon_after(first_quote + 1) if line[first_quote:first_quote + 1] == quote else -1
        return _parts(line, body, start, quote, key, first_quote, first_quote + 1, colon) if colon >= 0 else None
    for colon in range(min(first_quote, len(body)) - 1, key - 1, -1):
        if body[colon] == ":" and colon_after(colon) == colon:
            return _parts(line, body, start, quote, key, colon, colon, colon)
    return None


def _parts(line, body, start, quote, key, key_end, colon_start, colon):
    return (line[:start], quote, line[key:key_end], line[colon_start:colon + 1], body[colon + 1:])
