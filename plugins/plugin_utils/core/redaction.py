# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secret-bearing fields of a configuration, and how they are kept out of results, diffs, warnings and errors.

What is secret is one rule, shared with the host-side modules (module_utils/_secrets.py): extender ``tlsConfig``
``keyData``/``certData``, a kubeconfig's token, client key and certificate data, and any field whose name contains
``key``, ``token``, ``password`` or ``secret`` (label-key fields such as ``topologyKey`` excepted). Wherever the
collection shows a configuration (``rendered``, ``effective``, ``config_rendered``, a diff, an error that echoes
the input), these values are replaced by ``<redacted>``; the values themselves are handed to the host-side module
as a ``no_log`` option, so Ansible masks them in everything the module returns, its arguments at ``-vvv``
included; on ansible-core 2.22 and later, which keeps no_log values in results and masks them only in output, the
values are registered with its secrets API too (register_secrets), so every output masks them wherever they show.
What is written to a host or a ConfigMap is always the real value. Pure Python.
"""

from __future__ import annotations

import json

from ansible_collections.kubesched.schedulers.plugins.module_utils._secrets import (
    REDACTED, redact, redact_text, redacted_copy, register_secrets, secret_field, secret_value, secret_values)

# The rule's own functions are this module's too: one import for every controller-side caller.
__all__ = ("REDACTED", "SECRET_KEYS", "leaks", "redact", "redact_message", "redact_result", "redact_text",
           "register_secrets", "scrub", "secret_field", "secret_values")

# The fields a KubeSchedulerConfiguration itself carries key material in (the host-side diff masks these by name
# in any file, and every other field the rule above names).
SECRET_KEYS = ("keyData", "certData")
# kube-scheduler's decoder echoes the whole input when apiVersion or kind is missing: the echo is what lies
# between the first of these and the message's closing quote.
_ECHO_MARKERS = ("Object 'Kind' is missing in '", "Object 'apiVersion' is missing in '")


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
    echo = _echo(message)
    if echo:
        shown = "<the configuration, not repeated here>"
        if parse is not None:
            try:
                shown = json.dumps(redact(parse(message[echo[0]:echo[1]])), sort_keys=True)
            except Exception:  # pylint: disable=broad-exception-caught  # any failure: show nothing of it
                pass
        message = message[:echo[0]] + shown + message[echo[1]:]
    return scrub(message, values)


def _echo(message):
    """(start, end) of the decoder's echo in ``message``, or None: from the first marker to the closing quote that
    ends the message. Found with str.find: the expression it replaces (lazy text before the marker, greedy after)
    took quadratic time on a long message with many markers and no closing quote."""
    if not isinstance(message, str) or not message.endswith("'"):
        return None
    found = sorted((message.find(marker), marker) for marker in _ECHO_MARKERS if marker in message)
    if not found:
        return None
    start = found[0][0] + len(found[0][1])
    return (start, len(message) - 1) if start <= len(message) - 1 else None


def redact_result(value, values=(), parse=None):
    """A task result (or any part of one) safe to show: every secret field redacted as redact() does, every other
    string scrubbed of the known secret ``values`` and of the decoder's whole-input echo (see redact_message);
    iterative."""
    def shown(item):
        return redact_message(item, values, parse) if isinstance(item, str) else item

    return redacted_copy(value, secret_value, shown)


def leaks(value, values):
    """Whether any of the secret ``values`` still shows anywhere in ``value`` (the last check before a result is
    returned: when one does, the whole result is hidden instead)."""
    text = json.dumps(value, sort_keys=True, default=str)
    return any(secret in text or json.dumps(secret)[1:-1] in text for secret in values)
