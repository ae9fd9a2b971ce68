# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The error type of the config library, printed the way kube-scheduler prints it.

Field errors follow apimachinery ``field.Error.Error()``: ``<path>: <Type>: <value>: <detail>``,
where Required, Forbidden and TooLong omit the value, ints/bools print with %v, strings with %q
and structs with %#v (staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go).
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import since

# field.ErrorType.String() of the types the scheduler's validation uses.
INVALID = "Invalid value"
REQUIRED = "Required value"
DUPLICATE = "Duplicate value"
NOT_SUPPORTED = "Unsupported value"
FORBIDDEN = "Forbidden"
TOO_LONG = "Too long"

# Error types of the steps before and after validation (not field.ErrorType, our own names).
DECODE = "Decode error"
UNKNOWN_FIELD = "Unknown field"
DUPLICATE_KEY = "Duplicate key"
TYPE_MISMATCH = "Type mismatch"
NOT_REGISTERED = "Not registered"
FRAMEWORK = "Framework error"
LEADER_ELECTION = "Leader election"
FEATURE_GATE = "Feature gate"  # a --feature-gates value kube-scheduler refuses at start (feature_gates.parse)
UNKNOWN_PLUGIN = "Unknown plugin"  # strict names (config/_plugin_names.py): kube-scheduler itself would ignore them

_VALUE_OMITTED = (REQUIRED, FORBIDDEN, TOO_LONG)


class GoLiteral(str):
    """A value already rendered the way Go's fmt would print it (for example ``v1.Duration{Duration:5}``).

    ``json``: how Kubernetes 1.34+ prints it instead (apimachinery's ErrorBody falls back to json.Marshal rather
    than %#v for values that are neither simple nor a fmt.Stringer), e.g. ``"5ns"``; None when unknown.
    """

    def __new__(cls, text, json=None):
        obj = str.__new__(cls, text)
        obj.json = json
        return obj


def go_quote(text: str) -> str:
    """strconv.Quote: a double-quoted Go string literal."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char in "\a\b\f\n\r\t\v":
            out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                        "\t": "\\t", "\v": "\\v"}[char])
        elif char.isprintable():
            out.append(char)
        elif code < 0x80:
            out.append("\\x%02x" % code)
        elif code < 0x10000:
            out.append("\\u%04x" % code)
        else:
            out.append("\\U%08x" % code)
    out.append('"')
    return "".join(out)


def go_value(value) -> str:
    """How ErrorBody prints a bad value: %v for numbers and bools, %q for strings."""
    if isinstance(value, GoLiteral):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    return str(value)


class ConfigError(object):
    """One problem, with the upstream field path, the error type and the whole line kube-scheduler prints."""

    __slots__ = ("field", "type", "message", "modern")

    def __init__(self, field: str, type_: str, message: str, modern: str = None):
        self.field = field
        self.type = type_
        self.message = message
        # The message as Kubernetes 1.34+ prints it, where its bad value is printed differently (see GoLiteral).
        self.modern = modern

    def as_dict(self) -> dict:
        return {"field": self.field, "type": self.type, "message": self.message}

    def __eq__(self, other):
        return isinstance(other, ConfigError) and self.as_dict() == other.as_dict()

    def __repr__(self):
        return "ConfigError(%r)" % (self.message,)


def field_error(path: str, type_: str, value=None, detail: str = "") -> ConfigError:
    """A field.Error rendered like field.Error.Error()."""
    body = type_ if type_ in _VALUE_OMITTED else "%s: %s" % (type_, go_value(value))
    if detail:
        body += ": " + detail
    modern = None
    if type_ not in _VALUE_OMITTED and isinstance(value, GoLiteral) and value.json is not None:
        modern = "%s: %s: %s" % (path, type_, value.json) + (": " + detail if detail else "")
    return ConfigError(path, type_, "%s: %s" % (path, body), modern)


def invalid(path: str, value, detail: str) -> ConfigError:
    return field_error(path, INVALID, value, detail)


def required(path: str, detail: str = "") -> ConfigError:
    return field_error(path, REQUIRED, None, detail)


def duplicate(path: str, value) -> ConfigError:
    return field_error(path, DUPLICATE, value)


def forbidden(path: str, detail: str) -> ConfigError:
    return field_error(path, FORBIDDEN, None, detail)


def not_supported(path: str, value, valid_values) -> ConfigError:
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid_values) if valid_values else ""
    return field_error(path, NOT_SUPPORTED, value, detail)


def for_minor(errors: list, minor: int) -> list:
    """The errors with their messages as that Kubernetes minor prints them."""
    if since("field_error_value_as_json", minor):
        for err in errors:
            if err.modern is not None:
                err.message = err.modern
    return errors


def go_json(value) -> str:
    """encoding/json.Marshal of plain data: compact, HTML characters escaped."""
    import json
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def dedupe(errors: list) -> list:
    """ErrorList.ToAggregate drops repeated messages, keeping the first."""
    seen = set()
    out = []
    for err in errors:
        if err.message not in seen:
            seen.add(err.message)
            out.append(err)
    return out


def go_aggregate(messages: list) -> str:
    """utilerrors.Aggregate.Error(): the message alone, or ``[a, b]`` for several."""
    if len(messages) == 1:
        return messages[0]
    return "[" + ", ".join(messages) + "]"
