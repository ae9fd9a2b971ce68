# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How a value the user gave appears in a message (core/messages.py): escaped, cut short, its type in words."""

from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.messages import shown, type_name


def test_a_value_is_shown_as_its_repr_so_control_characters_are_escapes():
    assert shown("kube-scheduler") == "'kube-scheduler'"
    assert shown("a\nb\x00") == "'a\\nb\\x00'"


def test_a_long_text_is_cut_and_says_how_long_it_was():
    assert shown("x" * 100) == "'" + "x" * 79 + "...(100 characters)"
    assert shown(b"y" * 90, limit=10) == "b'" + "y" * 8 + "...(90 characters)"


def test_a_long_value_of_another_type_is_cut_without_a_length():
    assert shown(list(range(50)), limit=12) == "[0, 1, 2, 3,..."


@pytest.mark.parametrize("value, words", [
    ({}, "a dict"), ([], "a list"), ("", "a string"), (1, "a number"), (1.5, "a number"), (True, "a boolean"),
    (None, "nothing"), (b"", "bytes"), (type("Tagged", (list,), {})(), "a list"), (type("Lazy", (dict,), {})(), "a dict"),
])
def test_a_type_is_named_in_words(value, words):
    assert type_name(value) == words
