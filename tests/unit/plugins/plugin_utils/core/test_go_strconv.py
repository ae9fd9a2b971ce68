"""Go's strconv.ParseFloat (plugin_utils/core/go_strconv.py), read as Go's own scanner reads the text: its syntax
(internal/strconv/atof.go readFloat and special, atoi.go underscoreOK of Go 1.26), its range error and its message.
What scheduler-plugins' TargetLoadPacking answers for these texts is measured on its binary
(tests/differential/corpus_scheduler_plugins.py)."""

from __future__ import annotations

import math

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.go_strconv import ParseFloatError, parse_float


@pytest.mark.parametrize("text, value", [
    ("1.5", 1.5), ("2", 2.0), ("1e3", 1000.0), (".5", 0.5), ("5.", 5.0), ("+1", 1.0), ("-0", -0.0), ("007", 7.0),
    ("1E+2", 100.0), ("1e-400", 0.0), ("1_000", 1000.0), ("1_0.2_5", 10.25), ("1e1_0", 1e10),
    ("0x1p-2", 0.25), ("0X1.8P1", 3.0), ("0x_1p0", 1.0), ("0x.8p1", 1.0),
    ("inf", math.inf), ("+Inf", math.inf), ("-INFINITY", -math.inf), ("infinity", math.inf),
    ("0" * 5000 + "1", 1.0), ("0." + "0" * 5000 + "1", 0.0),
])
def test_what_go_reads_as_a_float(text, value):
    assert parse_float(text) == value and math.copysign(1, parse_float(text)) == math.copysign(1, value)


def test_nan_is_a_float_unsigned_only():
    assert math.isnan(parse_float("nan")) and math.isnan(parse_float("NaN"))
    for text in ("+nan", "-NaN"):
        with pytest.raises(ParseFloatError):
            parse_float(text)


@pytest.mark.parametrize("text", [
    "", ".", "+", "-", "e5", "1e", "1e+", "1.2.3", " 1", "1 ", "1,5", "abc", "1x", "_1", "1_", "1__0", "1_.5",
    "1._5", "0x1", "0x", "0x1.8", "0xp1", "0_x1p0", "infinit", "infx", "inf ", "nan1", "++1", "1e1.5", "٣",
    "İnf", "\u2212" + "1",
])
def test_what_go_refuses_as_invalid_syntax(text):
    with pytest.raises(ParseFloatError) as refused:
        parse_float(text)
    assert refused.value.reason == "invalid syntax"


@pytest.mark.parametrize("text", ["1e400", "-1e309", "0x1p1024", "1e99999999999999", "9" * 400])
def test_what_go_refuses_as_out_of_range(text):
    with pytest.raises(ParseFloatError, match=r'^strconv\.ParseFloat: parsing ".*": value out of range$'):
        parse_float(text)


def test_the_message_quotes_the_text_as_go_does():
    with pytest.raises(ParseFloatError) as refused:
        parse_float('a"\n')
    assert str(refused.value) == 'strconv.ParseFloat: parsing "a\\"\\n": invalid syntax'


def test_a_long_exponent_moves_the_point_as_far_as_gos_does():
    # Go stops accumulating an exponent once it passes 10000 (at 99999 here): 1 followed by 100,001 zeros and
    # e-99999999 is 100 to Go, although the exact number is about 10 ** -99899998.
    assert parse_float("1" + "0" * 100001 + "e-99999999") == 100.0


@pytest.mark.parametrize("unit", ["9", "1_", "0x", ".", "e", "9e", "inf"])
def test_a_mebibyte_is_read_in_one_pass(unit, shortest_time):
    # Four times the text takes about four times as long in one pass, sixteen in a quadratic one.
    def refused(text):
        with pytest.raises(ParseFloatError):
            parse_float(text)
    texts = [unit * (size // len(unit)) + "x" for size in (1 << 18, 1 << 20)]
    times = [shortest_time(lambda text=text: refused(text))[0] for text in texts]
    assert times[1] < 2.0 and (times[1] < 0.25 or times[1] / times[0] < 12), times
