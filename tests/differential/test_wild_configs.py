# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The configs nobody on this project wrote (../shared/wild-configs: 362 KubeSchedulerConfiguration files from
public repositories and pages): the library's verdict and first field against the real kube-scheduler's.

For a minor whose verdicts are in ../shared/wild-configs/k8s-<minor>/verdicts.json (the binaries' answers, with
overrides.json for the six host-dependent cases), those are the expectation. A newer minor without a verdicts file
(1.37) is run through its binary (KUBE_SCHEDULER_BIN_1_<minor>) the way the verdicts were made: each case as
published, its clientConnection.kubeconfig pointing at a dummy kubeconfig. Skipped without the data or the binary.
The data is other people's files: read from ../shared, never copied into the project.
"""

from __future__ import annotations

import json
import os
import sys

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402  pylint: disable=wrong-import-position

WILD = os.path.join(os.path.dirname(harness.ROOT), "shared", "wild-configs")

harness.load_k8s_env()


def _case_dir():
    for minor in harness.BINARY_MINORS:
        path = os.path.join(WILD, "k8s-%s" % minor, "cases")
        if os.path.isdir(path):
            return path
    return None


def _cases():
    path = _case_dir()
    out = []
    for name in sorted(os.listdir(path)):
        with open(os.path.join(path, name), encoding="utf-8", errors="surrogateescape") as handle:
            out.append((name, handle.read()))
    return out


def _overrides():
    path = os.path.join(WILD, "overrides.json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def with_dummy_kubeconfig(text):
    """The case with its clientConnection.kubeconfig (if any) replaced by the dummy one, as the verdicts were made:
    every occurrence of the path in the text (YAML or JSON) is rewritten."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    kubeconfig = ((data or {}).get("clientConnection") or {}).get("kubeconfig") if isinstance(data, dict) else None
    if not isinstance(kubeconfig, str) or not kubeconfig:
        return text
    harness.materialise("@KUBECONFIG@")  # writes the dummy kubeconfig
    return text.replace(kubeconfig, harness.KUBECONFIG)


def _expected(minor):
    """{case: (valid, error or None)}: recorded verdicts, else the binary's answers; None when neither is here."""
    path = os.path.join(WILD, "k8s-%s" % minor, "verdicts.json")
    overrides = _overrides()
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            verdicts = dict((v["case"], (v["valid"], v.get("error"))) for v in json.load(handle))
    elif harness.binary_path(minor):
        verdicts = {}
        for name, text in _cases():
            outcome = harness.run_binary(minor, with_dummy_kubeconfig(text))
            verdicts[name] = (outcome["ok"], None if outcome["ok"] else outcome["error"])
    else:
        return None
    for name, override in overrides.items():
        if name in verdicts:
            verdicts[name] = (override["valid"], None if override["valid"] else verdicts[name][1])
    return verdicts


@pytest.mark.parametrize("minor", harness.BINARY_MINORS)
def test_library_agrees_with_the_binary_on_wild_configs(minor):
    if _case_dir() is None:
        pytest.skip("no ../shared/wild-configs here")
    expected = _expected(minor)
    if expected is None:
        pytest.skip("kube-scheduler %s: no wild-configs verdicts and no binary (KUBE_SCHEDULER_BIN_%s)"
                    % (minor, minor.replace(".", "_")))
    problems = []
    for name, text in _cases():
        valid, error = expected[name]
        lib = harness.run_library(minor, text)
        if lib.get("crash"):
            problems.append("%s: library raised %s" % (name, lib["crash"]))
        elif lib["ok"] != valid:
            problems.append("%s: library %s, binary %s" % (
                name, "accepts" if lib["ok"] else "refuses: " + lib["errors"][0]["message"][:300],
                "accepts" if valid else "refuses: " + (error or "")[:300]))
        elif not valid and error and not harness.field_agrees(lib["errors"], error):
            problems.append("%s: field: library %r, binary %r" % (name, lib["errors"][0]["field"], error[:300]))
    assert not problems, "%d of %d wild configs disagree on %s:\n%s" % (
        len(problems), len(expected), minor, "\n".join(problems))
