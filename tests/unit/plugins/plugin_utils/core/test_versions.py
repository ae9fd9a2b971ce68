# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The release in which upstream changed a behaviour is data (versions.CHANGED_IN, read by versions.since;
versions.ARGS_SCHEME_LINE, read by versions.of_release), not a literal minor compared in the code. A scan of the
collection's plugins (plugin_utils and the rest) fails on any new ``minor >= 34``, ``minor_number(v) < 31``,
``100 if minor <= 32 else ...`` or ``minor >= SOME_SINCE`` (a module constant holding a minor), and every release the
tables name must be a minor the collection knows."""

from __future__ import annotations

import ast
import os

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import versions

PLUGIN_UTILS = os.path.dirname(os.path.dirname(os.path.abspath(versions.__file__)))
PLUGINS = os.path.dirname(PLUGIN_UTILS)
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
# Kubernetes 1.20 to 1.99, as a number or a version string: what a literal minor looks like.
_MINOR_NUMBERS = range(20, 100)


def _minor_literal(node, constants) -> bool:
    """Whether ``node`` is a literal minor: 34, "1.34", "v1.34.2", or a module constant holding one."""
    if isinstance(node, ast.Name) and node.id in constants:
        node = constants[node.id]
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
        return False
    if isinstance(node.value, int):
        return node.value in _MINOR_NUMBERS
    if isinstance(node.value, str):
        major, _dot, rest = node.value.lstrip("v").partition(".")
        return major == "1" and rest.split(".")[0].isdigit() and int(rest.split(".")[0]) in _MINOR_NUMBERS
    return False


def _about_a_version(node, source) -> bool:
    """Whether the other side of the comparison is a Kubernetes version or minor (names minor or version)."""
    text = (ast.get_source_segment(source, node) or "").lower()
    return "minor" in text or "version" in text


def _module_constants(tree) -> dict:
    """NAME = <constant> at the top of a module (or a class), so ``minor >= NAMED_PROBE_PORT_SINCE`` is seen too."""
    constants = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef)):
            for statement in node.body:
                if (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant)
                        and all(isinstance(target, ast.Name) for target in statement.targets)):
                    constants.update((target.id, statement.value) for target in statement.targets)
    return constants


def literal_minor_comparisons(source: str, filename: str = "<source>") -> list:
    """Every comparison of a version or minor with a literal minor in ``source``: ["file:line: text"]."""
    tree = ast.parse(source, filename)
    constants = _module_constants(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left] + list(node.comparators)
        for left, op, right in zip(operands, node.ops, operands[1:]):
            if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                hit = (right.elts and all(_minor_literal(elt, constants) for elt in right.elts)
                       and _about_a_version(left, source))
            elif isinstance(op, _ORDERING):
                hit = ((_minor_literal(right, constants) and _about_a_version(left, source))
                       or (_minor_literal(left, constants) and _about_a_version(right, source)))
            else:
                hit = False
            if hit:
                found.append((node.lineno, node.col_offset, ast.get_source_segment(source, node)))
                break
    return ["%s:%d: %s" % (filename, line, text) for line, _column, text in sorted(found)]


def _plugin_sources():
    """(path relative to plugins/, text) of every Python file of the collection's plugins."""
    for root, _dirs, names in sorted(os.walk(PLUGINS)):
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as handle:
                    yield os.path.relpath(path, PLUGINS), handle.read()


# What the scan must catch: the shapes of a literal minor comparison, as they once were in plugins/plugin_utils.
CAUGHT = '''
NAMED_PROBE_PORT_SINCE = 34
def f(minor, version, kubernetes_version, self):
    a = minor >= 34
    b = minor_number(kubernetes_version) >= NAMED_PROBE_PORT_SINCE
    c = minor_number(version) <= 33
    d = (self.minor or 0) >= 35
    e = 100 if minor <= 32 else 110 if minor <= 34 else 111
    g = "U" if minor is not None and minor < 31 else "u"
    h = minor_of(version) >= "1.31"
    i = 31 <= minor
    j = minor in (30, 31)
    k = int(version.split(".")[1]) > 29
'''
# What it must leave alone: releases read from tables, and numbers that are not minors.
LEFT_ALONE = '''
def f(minor, version, table, durations, weight):
    a = minor >= REMOVED.get(gate, minor + 1)
    b = since <= minor
    c = table[max(since for since in table if since <= minor)]
    d = durations["leaseDuration"] <= 0
    e = weight <= 0 or weight > 100
    g = dict(width=1 << 30)
    h = len(version) > 3
    i = versions.since("kubeadm_named_probe_port", version)
'''


def test_the_scan_catches_every_literal_minor_comparison():
    found = literal_minor_comparisons(CAUGHT)
    assert [line.split(": ", 1)[1] for line in found] == [
        "minor >= 34",
        "minor_number(kubernetes_version) >= NAMED_PROBE_PORT_SINCE",
        "minor_number(version) <= 33",
        "(self.minor or 0) >= 35",
        "minor <= 32",
        "minor <= 34",
        "minor < 31",
        'minor_of(version) >= "1.31"',
        "31 <= minor",
        "minor in (30, 31)",
        'int(version.split(".")[1]) > 29',
    ]
    assert literal_minor_comparisons(LEFT_ALONE) == []


def test_the_plugins_compare_no_literal_minor():
    """A release where upstream changed something goes into versions.CHANGED_IN (or a per-release table such as
    versions.ARGS_SCHEME_LINE) and is read with versions.since (or versions.of_release)."""
    found = []
    for name, source in _plugin_sources():
        found.extend(literal_minor_comparisons(source, name))
    assert found == []
    assert "plugin_utils/core/versions.py" in dict(_plugin_sources())


def test_every_release_the_tables_name_is_a_known_minor():
    releases = list(versions.CHANGED_IN.values()) + list(versions.ARGS_SCHEME_LINE)
    unknown = [release for release in releases if release not in versions.SUPPORTED_MINORS]
    assert releases and unknown == []
    # A fact that held in the oldest minor already would be no change at all.
    assert versions.SUPPORTED_MINORS[0] not in versions.CHANGED_IN.values()
    assert min(versions.ARGS_SCHEME_LINE, key=versions.minor_number) == versions.SUPPORTED_MINORS[0]


@pytest.mark.parametrize("fact", sorted(versions.CHANGED_IN))
def test_since_turns_at_the_release_it_changed_in(fact):
    changed_in = versions.minor_number(versions.CHANGED_IN[fact])
    for minor in versions.SUPPORTED_MINORS:
        number = versions.minor_number(minor)
        assert versions.since(fact, minor) is versions.since(fact, "v%s.7" % minor) is versions.since(fact, number)
        assert versions.since(fact, minor) is (number >= changed_in)
    # No version is the newest released minor, as everywhere (versions.minor_of).
    assert versions.since(fact, None) is versions.since(fact, versions.NEWEST_MINOR)


def test_an_unknown_fact_or_version_is_refused():
    with pytest.raises(KeyError):
        versions.since("no_such_fact", "1.34")
    with pytest.raises(versions.UnsupportedVersion):
        versions.since("kubeadm_named_probe_port", "1.29")


@pytest.mark.parametrize("version, line", [
    ("1.30", 100), ("1.32.5", 100), ("1.33", 110), ("v1.34.4", 110), ("1.35", 111), (36, 111), ("1.38", 111)])
def test_of_release_reads_the_value_that_holds_for_the_version(version, line):
    assert versions.of_release(versions.ARGS_SCHEME_LINE, version) == line


@pytest.mark.parametrize("given, release, minor", [
    ("1.38.0-rc.0", "1.38.0-rc.0", "1.38"), ("v1.38.0-beta.0", "1.38.0-beta.0", "1.38"),
    (" v1.37.0-alpha.2 ", "1.37.0-alpha.2", "1.37"), ("1.36.0-rc.1", "1.36.0-rc.1", "1.36")])
def test_a_pre_release_is_a_version_of_its_minor_and_keeps_its_suffix(given, release, minor):
    assert versions.normalise(given, "kube_scheduler_version", full=True) == release
    assert versions.normalise(given) == release
    assert versions.full_version(given) == release
    assert versions.minor_of(given) == minor
    assert versions.prerelease(given) == release
    assert versions.since("kube_scheduler_livez_readyz", given)


def test_a_pre_release_warns_naming_the_minor_it_is_validated_as():
    assert versions.preview_warning("1.38.0-rc.0") == (
        "Kubernetes 1.38.0-rc.0 is a pre-release: validated as 1.38, a preview: its facts were measured on "
        "kube-scheduler v1.38.0-beta.0, a pre-release; re-measured when 1.38.0 ships (make new-minor VERSION=1.38.0)")
    assert versions.preview_warning("v1.37.0-rc.1") == (
        "Kubernetes 1.37.0-rc.1 is a pre-release: validated as 1.37, whose facts were measured on its releases; its "
        "kube-scheduler may still differ from them")
    assert versions.prerelease("1.37.2") is None and versions.preview_warning("1.37.2") is None


@pytest.mark.parametrize("given", ["1.38-rc.0", "1.38.0-rc", "1.38.0-rc.x", "1.38.0-gamma.1", "1.38.0rc0",
                                   "1.38.0-rc.0+build", "1.39.0-rc.0", "1.29.0-rc.0"])
def test_what_is_not_a_pre_release_of_a_known_minor_is_refused(given):
    with pytest.raises(versions.UnsupportedVersion) as raised:
        versions.normalise(given, "kube_scheduler_version", full=True)
    assert str(raised.value).startswith("kube_scheduler_version: ")


@pytest.mark.parametrize("value, variable, expected", [
    (1.3, "kubernetes_version", 'kubernetes_version: YAML read 1.30 as the number 1.3, not a version: quote it, '
                                'kubernetes_version: "1.30"'),
    (1.35, "target_versions[1]", 'target_versions[1]: YAML read 1.35 as the number 1.35, not a version: quote it, '
                                 'target_versions[1]: "1.35"'),
    (135, "kubernetes_version", "kubernetes_version: Invalid value: 135: must be a version string such as \"1.35.4\""),
])
def test_a_version_yaml_read_as_a_number_is_named_before_templating_makes_it_text(value, variable, expected):
    assert versions.unquoted_number(value, variable).startswith(expected)


@pytest.mark.parametrize("value", ["1.30", "v1.35.4", True, None, ["1.35"], "not a version"])
def test_anything_but_a_number_is_left_to_the_argument_spec_and_normalise(value):
    assert versions.unquoted_number(value) is None
