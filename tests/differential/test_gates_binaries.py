# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The library's feature-gate table (plugin_utils/config/_feature_gates.py) against the gates each binary knows, measured by
gates.py (recorded in gates/<minor>.json: stage, default and lock of every gate, from --help and --feature-gates).

Every gate the library models must exist in exactly the minors whose binary knows it, with that binary's default,
stage and lock. Runs on the recordings (no binary needed); a minor whose binary is present but differs from the
measured one fails until gates.py measures it again."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gates  # noqa: E402  pylint: disable=wrong-import-position
import harness  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _feature_gates as feature_gates

harness.load_k8s_env()


@pytest.mark.parametrize("minor", harness.BINARY_MINORS)
def test_modelled_gates_are_the_binarys(minor):
    measured = gates.load(minor)
    if measured is None:
        pytest.skip("no gates/%s.json: measure it with tests/differential/gates.py %s" % (minor, minor))
    binary = harness.binary_path(minor)
    if binary is not None and os.path.basename(binary) == measured["binary"]:
        assert harness.file_sha256(binary) == measured["sha256"], (
            "%s differs from the binary gates/%s.json was measured on: run tests/differential/gates.py %s"
            % (binary, minor, minor))
    known = measured["gates"]
    differ = []
    for gate in sorted(feature_gates.GATES):
        ours = feature_gates.spec(gate, minor)
        theirs = known.get(gate)
        ours = None if ours is None else (ours[0], ours[1].upper(), ours[2])
        theirs = None if theirs is None else (theirs["default"], theirs["stage"], theirs["locked"])
        if ours != theirs:
            differ.append("%s: library %s, %s %s" % (gate, ours, measured["binary"], theirs))
    assert not differ, "\n".join(differ)


def _errors(message):
    """A Go aggregate "[a, b]" (in a map's random order) as a set of its errors; one error as itself."""
    if message.startswith("[") and message.endswith("]"):
        return set(part.rstrip("]") for part in message[1:-1].split("], "))
    return {message}


@pytest.mark.parametrize("minor", harness.BINARY_MINORS)
def test_allalpha_and_allbeta_are_refused_as_the_binary_refuses_them(minor):
    """What each form of gates.ALL_FORMS does on the binary (recorded in gates/<minor>.json as ``all_forms``): the
    library refuses exactly those forms, with the binary's errors (several in any order, as Go's map gives them)."""
    measured = gates.load(minor)
    if measured is None or "all_forms" not in measured:
        pytest.skip("AllAlpha and AllBeta not measured on %s: tests/differential/gates.py --all-forms %s" % (minor, minor))
    assert sorted(measured["all_forms"]) == sorted(gates.ALL_FORMS)
    differ = []
    for form, refused in sorted(measured["all_forms"].items()):
        try:
            feature_gates.parse(form, minor)
            ours = ""
        except feature_gates.FeatureGateError as exc:
            ours = str(exc)
        if _errors(ours) != _errors(refused) if refused else ours:
            differ.append("%s: library %r, %s %r" % (form, ours[:300], measured["binary"], refused[:300]))
    assert not differ, "\n".join(differ)


@pytest.mark.parametrize("minor", harness.BINARY_MINORS)
def test_hostile_gate_strings_get_the_binarys_verdict(minor):
    """Every --feature-gates string of gates.HOSTILE_FORMS (a gate given twice in one string, spaces, blank pairs,
    Go's boolean spellings, unknown gates, another component, long names and values), as the binary answered it
    (recorded in gates/<minor>.json as ``hostile_forms``): the library accepts what it starts with and refuses the
    rest in its words."""
    measured = gates.load(minor)
    if measured is None or "hostile_forms" not in measured:
        pytest.skip("hostile --feature-gates strings not measured on %s: tests/differential/gates.py --all-forms %s"
                    % (minor, minor))
    forms = gates.hostile_forms(measured["gates"])
    assert sorted(measured["hostile_forms"]) == sorted(forms)
    differ = []
    for form, refused in sorted(measured["hostile_forms"].items()):
        try:
            feature_gates.parse(forms[form], minor)
            ours = ""
        except feature_gates.FeatureGateError as exc:
            # 1.30's flag parser quotes the whole value before the error (gates.py records the error alone).
            ours = str(exc)
            quoted = 'invalid argument "%s" for "--feature-gates" flag: ' % forms[form]
            ours = ours[len(quoted):] if ours.startswith(quoted) else ours
        if (_errors(ours) != _errors(refused)) if refused else ours:
            differ.append("%r: library %r, %s %r" % (forms[form][:80], ours[:300], measured["binary"], refused[:300]))
    assert not differ, "\n".join(differ)
