# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rebuild corpus/upstream_tables.json: every config the library's unit tests run through process().

Those tests port upstream's test tables (validation_test.go, defaults_test.go, the framework and plugin-args
tests) and the docs' examples. This runs them once with process() observed and keeps each config text (dict
inputs are written as YAML), except calls with extra_plugins (the real binary has no out-of-tree plugins).
Run it after changing those tests:  .venv/bin/python tests/differential/capture_unit_configs.py
"""

from __future__ import annotations

import json
import os
import re
import sys

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "corpus", "upstream_tables.json")
VALIDATORS = {
    "validate_default_preemption_args": "DefaultPreemption",
    "validate_inter_pod_affinity_args": "InterPodAffinity",
    "validate_pod_topology_spread_args": "PodTopologySpread",
    "validate_balanced_allocation_args": "NodeResourcesBalancedAllocation",
    "validate_node_affinity_args": "NodeAffinity",
    "validate_volume_binding_args": "VolumeBinding",
    "validate_node_resources_fit_args": "NodeResourcesFit",
    "validate_dynamic_resources_args": "DynamicResources",
}
KUBECONFIG_RE = re.compile(r'(kubeconfig"?\s*:\s*"?)(/[^\s"]+)')


class Recorder(object):
    def __init__(self):
        self.test = None
        self.extra = None
        self.texts = {}

    def pytest_runtest_setup(self, item):
        self.test = item.nodeid.split("::", 1)[-1]

    def install(self):
        from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import configuration
        registry, decode = configuration._registry, configuration._decode  # pylint: disable=protected-access

        def _registry(version, extra_plugins):
            self.extra = extra_plugins
            return registry(version, extra_plugins)

        def _decode(content, config, version):
            if not self.extra:
                text = content
                if text is None and isinstance(config, dict):
                    body = dict(config)
                    body.setdefault("apiVersion", "kubescheduler.config.k8s.io/v1")
                    body.setdefault("kind", "KubeSchedulerConfiguration")
                    text = yaml.safe_dump(body, default_flow_style=False, sort_keys=False)
                if isinstance(text, str):
                    # The binary opens the kubeconfig at start-up: the harness puts a dummy one in its place.
                    text = KUBECONFIG_RE.sub(r"\1" + "@KUBECONFIG@", text)
                if isinstance(text, str) and text not in self.texts:
                    self.texts[text] = self.test
            return decode(content, config, version)

        configuration._registry = _registry  # pylint: disable=protected-access
        configuration._decode = _decode  # pylint: disable=protected-access

        # test_validation_pluginargs.py calls the args validators directly (upstream's validation_pluginargs_test.go
        # tables): each args dict becomes a profile's pluginConfig for that plugin.
        from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import _validation_pluginargs as validation_pluginargs
        for function, plugin in VALIDATORS.items():
            setattr(validation_pluginargs, function, self._wrap(getattr(validation_pluginargs, function), plugin))

    def _wrap(self, validator, plugin):
        def wrapped(path, args, *rest):
            if isinstance(args, dict) and not self.extra:
                plain = dict((k, v) for k, v in args.items() if k not in ("apiVersion", "kind"))
                text = yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                       "kind": "KubeSchedulerConfiguration",
                                       "profiles": [{"pluginConfig": [{"name": plugin, "args": plain}]}]},
                                      default_flow_style=False, sort_keys=False)
                self.texts.setdefault(text, self.test)
            return validator(path, args, *rest)
        return wrapped


def validation_table():
    """test_validation.py's port of TestValidateKubeSchedulerConfiguration (it calls the validator directly): each
    case as a whole config, with upstream's CustomSort/CustomBind swapped for in-tree plugins the binary has."""
    import copy
    sys.path.insert(0, os.path.join(ROOT, "tests", "unit", "plugins", "plugin_utils", "config"))
    import test_validation  # pylint: disable=import-error,import-outside-toplevel
    for name, changes, _expected in test_validation.CASES:
        config = copy.deepcopy(test_validation.VALID)
        for path, value in changes:
            test_validation._set(config, path, value)  # pylint: disable=protected-access
        text = yaml.safe_dump(dict(config, apiVersion="kubescheduler.config.k8s.io/v1",
                                   kind="KubeSchedulerConfiguration"), default_flow_style=False, sort_keys=True)
        yield "validation_test: " + name, text.replace("CustomSort", "PrioritySort").replace("CustomBind",
                                                                                             "DefaultBinder")


def main() -> int:
    recorder = Recorder()
    recorder.install()
    code = pytest.main(["-q", "-p", "no:cacheprovider", os.path.join(ROOT, "tests", "unit", "plugins", "plugin_utils")],
                       plugins=[recorder])
    for name, text in validation_table():
        recorder.texts.setdefault(text, name)
    entries = [{"name": name, "text": text} for text, name in sorted(recorder.texts.items(), key=lambda i: (i[1], i[0]))]
    with open(OUT, "w", encoding="utf-8") as handle:
        json.dump(entries, handle, indent=1, sort_keys=True)
        handle.write("\n")
    print("%d configs written to %s" % (len(entries), os.path.relpath(OUT, ROOT)))
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
