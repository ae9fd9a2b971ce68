# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Go durations, the one parser and the one formatter of the library: time.ParseDuration (as metav1.Duration's
UnmarshalJSON uses it, Go's messages and overflow rules included) and time.Duration.String (what
kube-scheduler writes back). Pure Python: no Ansible imports.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import errors


_UNITS = {"ns": 1, "us": 10 ** 3, "\u00b5s": 10 ** 3, "\u03bcs": 10 ** 3, "ms": 10 ** 6, "s": 10 ** 9,
          "m": 60 * 10 ** 9, "h": 3600 * 10 ** 9}
_DIGITS = "0123456789"


def parse_duration(text: str) -> int:
    """time.ParseDuration (Go's algorithm, overflow rules included): nanoseconds, or ValueError with Go's message."""
    orig = text
    invalid = ValueError("time: invalid duration " + errors.go_quote(orig))
    neg = False
    if text[:1] in ("-", "+"):
        neg = text[0] == "-"
        text = text[1:]
    if text == "0":
        return 0
    if text == "":
        raise invalid
    total = 0
    while text:
        if not (text[0] == "." or text[0] in _DIGITS):
            raise invalid
        # leadingInt
        value, pos = 0, 0
        while pos < len(text) and text[pos] in _DIGITS:
            if value > (1 << 63) // 10:
                raise invalid
            value = value * 10 + int(text[pos])
            if value > 1 << 63:
                raise invalid
            pos += 1
        pre = pos > 0
        text = text[pos:]
        # leadingFraction: digits past overflow are dropped, the fraction is applied in float64
        fraction, scale, post = 0, 1.0, False
        if text[:1] == ".":
            text = text[1:]
            pos, overflow = 0, False
            while pos < len(text) and text[pos] in _DIGITS:
                if not overflow:
                    if fraction > (1 << 63) // 10:
                        overflow = True
                    else:
                        candidate = fraction * 10 + int(text[pos])
                        if candidate > 1 << 63:
                            overflow = True
                        else:
                            fraction, scale = candidate, scale * 10
                pos += 1
            post = pos > 0
            text = text[pos:]
        if not pre and not post:
            raise invalid
        pos = 0
        while pos < len(text) and text[pos] != "." and text[pos] not in _DIGITS:
            pos += 1
        if pos == 0:
            raise ValueError("time: missing unit in duration " + errors.go_quote(orig))
        unit_name, text = text[:pos], text[pos:]
        if unit_name not in _UNITS:
            raise ValueError("time: unknown unit %s in duration %s" % (errors.go_quote(unit_name), errors.go_quote(orig)))
        unit = _UNITS[unit_name]
        if value > (1 << 63) // unit:
            raise invalid
        value *= unit
        if fraction > 0:
            value += int(float(fraction) * (float(unit) / scale))
            if value > 1 << 63:
                raise invalid
        total += value
        if total > 1 << 63:
            raise invalid
    if neg:
        return -total
    if total > (1 << 63) - 1:
        raise invalid
    return total


def _fraction(value, digits):
    whole, rest = divmod(value, 10 ** digits)
    return str(whole) + ("." + str(rest).zfill(digits).rstrip("0") if rest else "")


def format_duration(nanoseconds):
    """Go's time.Duration.String(): 15s, 1m30s, 1h0m0s, 500ms, 0s."""
    if nanoseconds == 0:
        return "0s"
    size = abs(nanoseconds)
    if size < 10 ** 3:
        text = "%dns" % size
    elif size < 10 ** 6:
        text = _fraction(size, 3) + "\u00b5s"
    elif size < 10 ** 9:
        text = _fraction(size, 6) + "ms"
    else:
        seconds, nanos = divmod(size, 10 ** 9)
        text = _fraction((seconds % 60) * 10 ** 9 + nanos, 9) + "s"
        minutes = seconds // 60
        if minutes:
            text = "%dm%s" % (minutes % 60, text)
            if minutes // 60:
                text = "%dh%s" % (minutes // 60, text)
    return ("-" if nanoseconds < 0 else "") + text
