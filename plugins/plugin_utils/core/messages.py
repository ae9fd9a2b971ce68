# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How a value the user gave appears in a message of this collection: shown() and type_name().

The input model (inputs/kinds.py) and the config library's check of extra_plugins (config/extra_plugins.py) word
their refusals with them. Pure Python: no Ansible imports.
"""

from __future__ import annotations


def shown(value, limit=80):
    """A value for a message: repr, so control characters show as escapes, and cut short."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return text[:limit] + "...(%d characters)" % len(value) if isinstance(value, (str, bytes)) else text[:limit] + "..."


# Checked in this order: bool before int (a bool is an int); subclasses too, so Ansible's tagged and lazy containers
# (a survey's multi-select answer is a list subclass) are named as what they hold.
_TYPE_NAMES = ((bool, "a boolean"), (dict, "a dict"), (list, "a list"), (str, "a string"), (int, "a number"),
               (float, "a number"), (type(None), "nothing"))


def type_name(value):
    return next((word for kind, word in _TYPE_NAMES if isinstance(value, kind)), type(value).__name__)
