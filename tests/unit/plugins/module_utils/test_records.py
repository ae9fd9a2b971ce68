# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_records' type checks: JSON's true and false are booleans only, never the integers 1 and 0 (Python's bool is an
int), and a format version is an integer, never true."""
from __future__ import annotations

import hashlib
import json

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils import _records


@pytest.mark.parametrize("value", [True, False, 1.0, "1", None])
def test_an_integer_field_refuses_a_boolean_a_float_text_and_null(value):
    with pytest.raises(_records.Wrong, match=r"^record\.port: an integer from 0 to 65535 expected, got "):
        _records.integer(value, "record.port", 0, 65535)


def test_an_integer_field_takes_an_integer_in_its_range_and_null_when_allowed():
    assert _records.integer(0, "record.port", 0, 65535) == 0
    assert _records.integer(None, "record.port", 0, 65535, none=True) is None
    with pytest.raises(_records.Wrong, match="or null expected, got 65536"):
        _records.integer(65536, "record.port", 0, 65535, none=True)


@pytest.mark.parametrize("value", [1, 0, "true", None])
def test_a_boolean_field_refuses_the_integers_one_and_zero_and_text(value):
    with pytest.raises(_records.Wrong, match=r"^record\.gated: true or false expected, got "):
        _records.boolean(value, "record.gated")


@pytest.mark.parametrize("value", [True, False])
def test_a_boolean_field_takes_true_and_false(value):
    assert _records.boolean(value, "record.gated") is value


def _record(version):
    body = {"instances": [], "version": version}
    body["sha256"] = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return json.dumps(body).encode()


def test_a_record_whose_version_is_true_is_not_read_as_version_one():
    with pytest.raises(_records.RecordDamaged, match="its format version true is not one this collection reads"):
        _records.decode(_record(True), "/state/change.json", lambda body, version: None, "Look at it.")
    assert _records.decode(_record(_records.VERSION), "/state/change.json", lambda body, version: None,
                           "Look at it.") == {"instances": []}
