# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Go's strconv.ParseFloat, for the plugin args a Go plugin parses with it (scheduler-plugins' TargetLoadPacking).

One pass over the text, as Go's own scanner (internal/strconv/atof.go: special, readFloat; atoi.go: underscoreOK)
reads it: no regular expression, so a long hostile text is refused in linear time. The value is Python's correctly
rounded float of the digits and exponent Go reads; Go caps the exponent it accumulates at five digits, and so does
this. Pure Python: no Ansible imports.
"""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.errors import go_quote

SYNTAX = "invalid syntax"
RANGE = "value out of range"

_DIGITS = frozenset("0123456789")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


class ParseFloatError(ValueError):
    """strconv.NumError of ParseFloat: ``str()`` is Go's message, ``reason`` SYNTAX or RANGE."""

    def __init__(self, text, reason):
        super().__init__("strconv.ParseFloat: parsing %s: %s" % (go_quote(text), reason))
        self.reason = reason


def parse_float(text: str) -> float:
    """strconv.ParseFloat(text, 64): the float, or ParseFloatError with Go's message."""
    special = _special(text)
    if special is not None:
        value, length = special
        if length != len(text):
            raise ParseFloatError(text, SYNTAX)
        return value
    read = _read_float(text)
    if read is None:
        raise ParseFloatError(text, SYNTAX)
    digits, exponent, hexadecimal = read
    try:
        value = float.fromhex("%sp%d" % (digits, exponent)) if hexadecimal else float("%se%d" % (digits, exponent))
    except OverflowError:
        raise ParseFloatError(text, RANGE)
    if value in (float("inf"), float("-inf")):
        raise ParseFloatError(text, RANGE)
    return value


def _special(text):
    """special(): "inf", "infinity" (signed or not) and "nan" (unsigned), any case: (value, characters read)."""
    sign, start = 1.0, 0
    if text[:1] in ("+", "-"):
        sign, start = (-1.0 if text[0] == "-" else 1.0), 1
    elif text[:1] in ("n", "N"):
        return (float("nan"), 3) if _ascii_lower(text[:3]) == "nan" else None
    elif text[:1] not in ("i", "I"):
        return None
    word = _ascii_lower(text[start:start + 8])
    common = 0
    while common < len(word) and word[common] == "infinity"[common]:
        common += 1
    if 3 < common < 8:
        common = 3  # anything longer than "inf" that is not "infinity": only "inf" is read
    if common in (3, 8):
        return sign * float("inf"), start + common
    return None


def _ascii_lower(text):
    """Go compares bytes and folds only A-Z; str.lower() would also fold letters such as U+0130 to an i."""
    return "".join(chr(ord(char) + 32) if "A" <= char <= "Z" else char for char in text)


def _read_float(text):
    """readFloat() for a text it must read whole: (mantissa as Python reads it, exponent, hexadecimal) or None."""
    length, index = len(text), 0
    sign = ""
    if index < length and text[index] in "+-":
        sign = text[index]
        index += 1
    hexadecimal = index + 2 < length and text[index] == "0" and text[index + 1] in "xX"
    digit_set = _HEX_DIGITS if hexadecimal else _DIGITS
    if hexadecimal:
        index += 2
    mantissa_start = index
    underscores = seen_dot = seen_digits = False
    while index < length:
        char = text[index]
        if char == "_":
            underscores = True
        elif char == ".":
            if seen_dot:
                break
            seen_dot = True
        elif char in digit_set:
            seen_digits = True
        else:
            break
        index += 1
    if not seen_digits:
        return None
    mantissa = text[mantissa_start:index]
    exponent = 0
    if index < length and text[index] in ("pP" if hexadecimal else "eE"):
        index += 1
        if index >= length:
            return None
        exponent_sign = 1
        if text[index] in "+-":
            exponent_sign = -1 if text[index] == "-" else 1
            index += 1
        if index >= length or text[index] not in _DIGITS:
            return None
        while index < length and (text[index] in _DIGITS or text[index] == "_"):
            if text[index] == "_":
                underscores = True
            elif exponent < 10000:  # Go stops there: the point moves "a lot", the exact number does not matter
                exponent = exponent * 10 + ord(text[index]) - 48
            index += 1
        exponent *= exponent_sign
    elif hexadecimal:
        return None  # a hexadecimal float must have its p exponent
    if index != length or (underscores and not _underscores_ok(text[:index])):
        return None
    mantissa = mantissa.replace("_", "")
    return (sign + ("0x" if hexadecimal else "") + mantissa, exponent, hexadecimal)


def _underscores_ok(text):
    """underscoreOK(): an underscore only between digits, or between the base prefix and a digit."""
    if text[:1] in ("+", "-"):
        text = text[1:]
    saw, index, hexadecimal = "^", 0, False
    if len(text) >= 2 and text[0] == "0" and text[1] in "bBoOxX":
        saw, index, hexadecimal = "0", 2, text[1] in "xX"
    digits = _HEX_DIGITS if hexadecimal else _DIGITS
    for char in text[index:]:
        if char in digits:
            saw = "0"
        elif char == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"
