# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secret-bearing fields of a configuration, and how they are kept out of results, diffs, warnings and errors.

A KubeSchedulerConfiguration carries key material in its extenders' ``tlsConfig`` (``keyData``, the client key,
and ``certData``, the client certificate, both base64). Wherever the collection shows a configuration (``rendered``,
``effective``, ``config_rendered``, a diff, an error that echoes the input), these values are replaced by
``<redacted>``; the values themselves are handed to the host-side module as a ``no_log`` option, so Ansible masks
them in everything the module returns, its arguments at ``-vvv`` included. Pure Python.
"""

from __future__ import annotations

import json
import re

SECRET_KEYS = ("keyData", "certData")
REDACTED = "<redacted>"
# kube-scheduler's decoder echoes the whole input when apiVersion or kind is missing.
_ECHO = re.compile(r"\A(.*?Object '(?:Kind|apiVersion)' is missing in ')(.*)(')\Z", re.DOTALL)


def _secret(key, value):
    return key in SECRET_KEYS and value not in (None, "")


def redact(data):
    """A copy of ``data`` with every secret-bearing value replaced; iterative, so no input is too deep for it."""
    if not isinstance(data, (dict, list)):
        return data
    top = {} if isinstance(data, dict) else []
    stack = [(data, top)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, value in items:
            if isinstance(source, dict) and _secret(key, value):
                copied = REDACTED
            elif isinstance(value, (dict, list)):
                copied = {} if isinstance(value, dict) else []
                stack.append((value, copied))
            else:
                copied = value
            if isinstance(target, dict):
                target[key] = copied
            else:
                target.append(copied)
    return top


def secret_values(data):
    """Every secret-bearing string value in ``data``, longest first (so a value containing another is masked whole)."""
    found = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if _secret(key, value) and isinstance(value, str):
                    found.add(value)
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(value for value in item if isinstance(value, (dict, list)))
    return sorted(found, key=lambda value: (-len(value), value))


def scrub(text, values):
    """``text`` with every occurrence of the secret ``values`` replaced."""
    if not isinstance(text, str):
        return text
    for value in values:
        text = text.replace(value, REDACTED)
    return text


def redact_message(message, values=(), parse=None):
    """An error or warning line safe to show: known secret values replaced and, when the decoder echoes the whole
    input ("Object 'Kind' is missing in '...'"), the echo replaced by the input as JSON with its secrets redacted
    (``parse`` turns the echoed text into data; without it, or when it fails, the echo is left out)."""
    match = _ECHO.match(message or "")
    if match:
        shown = "<the configuration, not repeated here>"
        if parse is not None:
            try:
                shown = json.dumps(redact(parse(match.group(2))), sort_keys=True)
            except Exception:  # pylint: disable=broad-exception-caught  # any failure: show nothing of it
                pass
        message = match.group(1) + shown + match.group(3)
    return scrub(message, values)
