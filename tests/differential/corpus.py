# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The differential corpus: files under corpus/ plus deterministic mutations of valid configs.

Every case is (family, name, text). The same checkout always gives the same cases in the same order (the only
randomness is a random.Random with a fixed seed), so binary results stay cached between runs.

Families:
  upstream_tables  configs the unit tests run through process() (their cases are ported from upstream's
                   validation_test.go, defaults_test.go, framework tests...), captured by capture_unit_configs.py
  docs             Kubernetes documentation examples (corpus/docs/)
  types            a wrong JSON type for each field
  ranges           boundary values of each number
  unknown_fields   unknown keys at every level, plugin args included
  plugins          every plugin name at every extension point, enabled and disabled
  multipoint       multiPoint / enabled / disabled combinations, weights, queue sort across profiles
  extenders        extender fields, defaults, managed resources and their interplay with NodeResourcesFit
  syntax           YAML/JSON corners: multi-document files, exponent numbers, .inf/.nan, quoting, anchors
  plugin_args      feature-gated plugin-args fields (empty list vs absent), every args kind
  fit_args         NodeResourcesFit argument combinations
  mutations        seeded random mutations (drop, null, retype, boundary, duplicate, unknown key, empty) of valid configs
  upgrade_check    the configs test_upgrade_check_binaries.py runs on every minor (and the v1.36 NodeResourcesFit
                   rule's cases), so it has recorded answers where the binaries are missing
  docs_mutations   the same mutations of every docs example (make differential only, not CI)
  every_path       null, empty and a wrong type at every path of three rich configs (make differential only, not CI)
  profiles_mix     two or three profiles with seeded plugin sets and args (make differential only, not CI)
"""

from __future__ import annotations

import glob
import itertools
import json
import os
import random

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
SEED = 20261123
# A self-signed test certificate and its key (openssl req -x509 -newkey ec, CN=kubesched-differential), base64
# as the v1 []byte fields hold them; fixed text so the corpus stays deterministic. Not a secret: test data only.
CA_PEM = (
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJtakNDQVQrZ0F3SUJBZ0lVR01XUDB0ZkpmRjBKTDRldS9XWU5WT0RpS01j"
    "d0NnWUlLb1pJemowRUF3SXcKSVRFZk1CMEdBMVVFQXd3V2EzVmlaWE5qYUdWa0xXUnBabVpsY21WdWRHbGhiREFnRncweU5qRXhN"
    "ak15TURFMgpORFJhR0E4eU1USTJNVEF6TURJd01UWTBORm93SVRFZk1CMEdBMVVFQXd3V2EzVmlaWE5qYUdWa0xXUnBabVpsCmNt"
    "VnVkR2xoYkRCWk1CTUdCeXFHU000OUFnRUdDQ3FHU000OUF3RUhBMElBQkZVbytqeVZQOGxialhPeDFVekUKem5iTmdJSG9aTXUw"
    "eS9lc1VsbHRYNk5ueVRXUEFXMlZRUzBHbFp1OTRhaElsYlUreWwvM0RJSitCVEdKKzNwYgo5Y2VqVXpCUk1CMEdBMVVkRGdRV0JC"
    "VEZjdUtTN0ZrMkdmbTIzWndOR0ZhSUNMRTV4REFmQmdOVkhTTUVHREFXCmdCVEZjdUtTN0ZrMkdmbTIzWndOR0ZhSUNMRTV4REFQ"
    "QmdOVkhSTUJBZjhFQlRBREFRSC9NQW9HQ0NxR1NNNDkKQkFNQ0Ewa0FNRVlDSVFDLzJucVFJOU52dmc1SzEwMWsvMmExTGRCUlg4"
    "SWgyU2Q2MGpHSUZWY0d2UUloQVBYRQorU1Z3QTFQd2k2QlE5VGUzNXpvYlUrbUx4ZmV1VFNPQVliYXNWZWwyCi0tLS0tRU5EIENF"
    "UlRJRklDQVRFLS0tLS0K")
KEY_PEM = (
    "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JR0hBZ0VBTUJNR0J5cUdTTTQ5QWdFR0NDcUdTTTQ5QXdFSEJHMHdhd0lCQVFR"
    "Z01EcjJZQWdiL0FOOU1wZkoKYk5qeXhRNEwwVWFDT1pwb1ZqYmxpYW1XTHFhaFJBTkNBQVJWS1BvOGxUL0pXNDF6c2RWTXhNNTJ6"
    "WUNCNkdUTAp0TXYzckZKWmJWK2paOGsxandGdGxVRXRCcFdidmVHb1NKVzFQc3BmOXd5Q2ZnVXhpZnQ2Vy9YSAotLS0tLUVORCBQ"
    "UklWQVRFIEtFWS0tLS0tCg==")

FAMILIES = ("upstream_tables", "docs", "types", "ranges", "unknown_fields", "plugins", "multipoint", "extenders",
            "syntax", "yaml", "plugin_args", "fit_args", "mutations", "upgrade_check", "docs_mutations", "every_path",
            "profiles_mix")
# The families the CI entry (test_differential.py) runs; make differential runs them all.
CI_FAMILIES = FAMILIES[:-3]

PLUGINS = ("PrioritySort", "SchedulingGates", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
           "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
           "PodTopologySpread", "InterPodAffinity", "DefaultPreemption", "NodeResourcesBalancedAllocation",
           "ImageLocality", "DefaultBinder", "DynamicResources", "AzureDiskLimits", "CinderLimits", "EBSLimits",
           "GCEPDLimits", "GangScheduling", "NodeDeclaredFeatures", "TopologyPlacementGenerator", "PodGroupPodsCount",
           "NoSuchPlugin")
POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit",
          "preBind", "bind", "postBind")
# The 1.36 placement extension points (an unknown field before), for the plugins family only: POINTS seeds the
# random mixes, which stay as they are.
PLACEMENT_POINTS = ("placementGenerate", "placementScore")
ARGS_PLUGINS = ("DefaultPreemption", "InterPodAffinity", "NodeAffinity", "NodeResourcesBalancedAllocation",
                "NodeResourcesFit", "PodTopologySpread", "VolumeBinding", "DynamicResources")


def dump(config: dict) -> str:
    body = dict(config)
    body.setdefault("apiVersion", "kubescheduler.config.k8s.io/v1")
    body.setdefault("kind", "KubeSchedulerConfiguration")
    return yaml.safe_dump(body, default_flow_style=False, sort_keys=False)


def _profile(plugins=None, plugin_config=None, name=None) -> dict:
    profile = {}
    if name is not None:
        profile["schedulerName"] = name
    if plugins is not None:
        profile["plugins"] = plugins
    if plugin_config is not None:
        profile["pluginConfig"] = plugin_config
    return profile


def _args(plugin: str, args) -> dict:
    return {"profiles": [_profile(plugin_config=[{"name": plugin, "args": args}])]}


# ---------------------------------------------------------------------------------------------------------------

def _files(family: str):
    for path in sorted(glob.glob(os.path.join(HERE, "corpus", family, "*"))):
        with open(path, encoding="utf-8") as handle:
            yield family, os.path.basename(path), handle.read()


def _upstream_tables():
    path = os.path.join(HERE, "corpus", "upstream_tables.json")
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as handle:
        for entry in json.load(handle):
            yield "upstream_tables", entry["name"], entry["text"]


# Every scalar field of the top level and its sub-structs, with a valid value of its type.
SCALARS = (
    (("parallelism",), 8), (("percentageOfNodesToScore",), 50), (("podInitialBackoffSeconds",), 2),
    (("podMaxBackoffSeconds",), 20), (("enableProfiling",), False), (("enableContentionProfiling",), False),
    (("delayCacheUntilActive",), True),
    (("leaderElection", "leaderElect"), False), (("leaderElection", "leaseDuration"), "20s"),
    (("leaderElection", "renewDeadline"), "12s"), (("leaderElection", "retryPeriod"), "3s"),
    (("leaderElection", "resourceLock"), "leases"), (("leaderElection", "resourceName"), "sched"),
    (("leaderElection", "resourceNamespace"), "ns"),
    (("clientConnection", "acceptContentTypes"), "application/json"),
    (("clientConnection", "contentType"), "application/json"), (("clientConnection", "qps"), 20),
    (("clientConnection", "burst"), 30),
)
WRONG = {"string": [1, True, [], {}], "int": ["1", True, 1.5, [], {}], "bool": ["true", 1, []],
         "float": ["1", True, {}]}
# The Go kind of a field, told by its valid value's Python type (qps, a float32 whose value is written 20, by name).
GO_KIND = {bool: "bool", int: "int", float: "float", str: "string"}


def _nest(path, value) -> dict:
    out = value
    for key in reversed(path):
        out = {key: out}
    return out


def _types():
    for path, good in SCALARS:
        kind = "float" if path[-1] == "qps" else GO_KIND[type(good)]
        yield "types", "%s=valid" % ".".join(path), dump(_nest(path, good))
        for bad in WRONG[kind]:
            yield "types", "%s=%s" % (".".join(path), json.dumps(bad)), dump(_nest(path, bad))
    for field, bad in (("profiles", {}), ("profiles", "x"), ("extenders", {}), ("leaderElection", []),
                       ("clientConnection", "x")):
        yield "types", "%s=%s" % (field, json.dumps(bad)), dump({field: bad})
    for field, bad in (("schedulerName", 1), ("percentageOfNodesToScore", "5"), ("plugins", []),
                       ("pluginConfig", {}), ("plugins", {"score": []}),
                       ("plugins", {"score": {"enabled": {}}}), ("plugins", {"score": {"enabled": [{"name": 1}]}}),
                       ("plugins", {"score": {"enabled": [{"name": "ImageLocality", "weight": "1"}]}}),
                       ("pluginConfig", [{"name": 1}]), ("pluginConfig", ["x"])):
        yield "types", "profile.%s=%s" % (field, json.dumps(bad)), dump({"profiles": [{field: bad}]})
    for plugin, args in (("DefaultPreemption", {"minCandidateNodesPercentage": "10"}),
                         ("InterPodAffinity", {"hardPodAffinityWeight": 1.5}),
                         ("InterPodAffinity", {"ignorePreferredTermsOfExistingPods": "yes"}),
                         ("NodeResourcesFit", {"ignoredResources": "a"}),
                         ("NodeResourcesFit", {"scoringStrategy": {"type": 1}}),
                         ("NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu", "weight": "2"}]}}),
                         ("VolumeBinding", {"bindTimeoutSeconds": "600"}),
                         ("PodTopologySpread", {"defaultConstraints": {}}),
                         ("NodeAffinity", {"addedAffinity": []}),
                         ("NodeResourcesBalancedAllocation", {"resources": [{"name": 5}]}),
                         ("DynamicResources", {"filterTimeout": 10}),
                         ("DynamicResources", {"filterTimeout": "ten"}),
                         ("DefaultPreemption", "not-an-object"), ("DefaultPreemption", []),
                         ("DefaultPreemption", {"kind": "InterPodAffinityArgs"}),
                         ("DefaultPreemption", {"apiVersion": "v1", "kind": "DefaultPreemptionArgs"})):
        yield "types", "args.%s=%s" % (plugin, json.dumps(args)), dump(_args(plugin, args))


def _ranges():
    for field, values in (("parallelism", (-1, 0, 1, 2 ** 31 - 1, 2 ** 31)),
                          ("percentageOfNodesToScore", (-1, 0, 100, 101)),
                          ("podInitialBackoffSeconds", (-1, 0, 1, 10, 11, 2 ** 63 - 1)),
                          ("podMaxBackoffSeconds", (0, 1, 9, 10, 2 ** 63))):
        for value in values:
            yield "ranges", "%s=%s" % (field, value), dump({field: value})
    for value in (-1, 0, 1, 2 ** 31 - 1, 2 ** 31):
        yield "ranges", "burst=%s" % value, dump({"clientConnection": {"burst": value}})
    for value in (-1, 0, 0.5, 1e3, 3.4e38, 3.5e38, 1e39):
        yield "ranges", "qps=%r" % value, dump({"clientConnection": {"qps": value}})
    for lease, renew, retry in (("15s", "10s", "2s"), ("10s", "10s", "2s"), ("15s", "10s", "9s"),
                                ("15s", "12s", "10s"), ("0s", "10s", "2s"), ("15s", "-1s", "2s"),
                                ("1h", "59m", "1s"), ("15s", "0s", "0s"), ("1.5s", "1s", "500ms"),
                                ("15s", "10s", "8333333333ns"), ("15s", "10s", "8333333334ns")):
        le = {"leaseDuration": lease, "renewDeadline": renew, "retryPeriod": retry}
        yield "ranges", "leader %s/%s/%s" % (lease, renew, retry), dump({"leaderElection": le})
        le2 = dict(le, leaderElect=False)
        yield "ranges", "leader off %s/%s/%s" % (lease, renew, retry), dump({"leaderElection": le2})
    for value in (-1, 0, 1, 100, 101):
        yield "ranges", "profile percentage=%s" % value, dump({"profiles": [{"percentageOfNodesToScore": value}]})
    for pct, absolute in ((0, 0), (-1, 100), (101, 100), (100, 0), (0, 1), (50, -1), (10, 2 ** 31 - 1)):
        yield "ranges", "preemption %s/%s" % (pct, absolute), dump(_args("DefaultPreemption", {
            "minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute}))
    for weight in (-1, 0, 1, 100, 101):
        yield "ranges", "hardPodAffinityWeight=%s" % weight, dump(_args("InterPodAffinity", {
            "hardPodAffinityWeight": weight}))
    for seconds in (-1, 0, 1, 2 ** 63 - 1):
        yield "ranges", "bindTimeoutSeconds=%s" % seconds, dump(_args("VolumeBinding", {
            "bindTimeoutSeconds": seconds}))
    for weight in (-1, 0, 1, 2, 100, 2 ** 31 - 1, 2 ** 31):
        yield "ranges", "score weight=%s" % weight, dump({"profiles": [_profile(plugins={
            "score": {"enabled": [{"name": "ImageLocality", "weight": weight}]}})]})
        yield "ranges", "multiPoint weight=%s" % weight, dump({"profiles": [_profile(plugins={
            "multiPoint": {"enabled": [{"name": "TaintToleration", "weight": weight}]}})]})
    big = 2 ** 31 - 1
    yield "ranges", "score weights overflow", dump({"profiles": [_profile(plugins={"score": {"enabled": [
        {"name": name, "weight": big} for name in ("ImageLocality", "TaintToleration", "NodeAffinity")]}})]})
    for weight in (-1, 0, 1, 2 ** 63 - 1):
        yield "ranges", "extender weight=%s" % weight, dump({"extenders": [{
            "urlPrefix": "http://127.0.0.1:1", "prioritizeVerb": "prioritize", "weight": weight}]})


def _unknown_fields():
    spots = (
        {"foo": 1}, {"leaderElection": {"foo": 1}}, {"clientConnection": {"foo": 1}},
        {"profiles": [{"foo": 1}]}, {"profiles": [{"plugins": {"foo": {}}}]},
        {"profiles": [{"plugins": {"score": {"foo": []}}}]},
        {"profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "foo": 1}]}}}]},
        {"profiles": [{"pluginConfig": [{"name": "ImageLocality", "foo": 1}]}]},
        {"extenders": [{"urlPrefix": "http://x", "foo": 1}]},
        {"extenders": [{"urlPrefix": "http://x", "tlsConfig": {"foo": 1}}]},
        {"extenders": [{"urlPrefix": "http://x", "managedResources": [{"name": "example.com/foo", "foo": 1}]}]},
        {"Parallelism": 3}, {"parallelism": 3, "PARALLELISM": 4}, {"debugging": {"enableProfiling": True}},
        {"profiles": [{"plugins": {"placementScore": {}}}]}, {"percentageOfPlacementsToScore": 5},
        {"foo": 1, "bar": 2, "profiles": [{"baz": 3}]},
        {"profiles": [{"plugins": {"MultiPoint": {}}}]},
    )
    for i, config in enumerate(spots):
        yield "unknown_fields", "spot%02d %s" % (i, json.dumps(config, sort_keys=True)[:60]), dump(config)
    for plugin in ARGS_PLUGINS:
        yield "unknown_fields", "args.%s.foo" % plugin, dump(_args(plugin, {"foo": 1}))
    for plugin, args in (("NodeResourcesFit", {"scoringStrategy": {"foo": 1}}),
                         ("NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu", "foo": 1}]}}),
                         ("PodTopologySpread", {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                                                        "whenUnsatisfiable": "DoNotSchedule",
                                                                        "foo": 1}], "defaultingType": "List"}),
                         ("NodeAffinity", {"addedAffinity": {"foo": 1}}),
                         ("ImageLocality", {"foo": 1}), ("NoSuchPlugin", {"foo": 1}),
                         ("DefaultPreemption", {"foo": 1, "bar": 2})):
        yield "unknown_fields", "args.%s %s" % (plugin, json.dumps(args, sort_keys=True)[:50]), dump(
            _args(plugin, args))


def _plugins():
    for plugin in PLUGINS:
        for point in POINTS + PLACEMENT_POINTS:
            yield "plugins", "%s enabled at %s" % (plugin, point), dump({"profiles": [_profile(plugins={
                point: {"enabled": [{"name": plugin}]}})]})
        yield "plugins", "%s disabled at filter" % plugin, dump({"profiles": [_profile(plugins={
            "filter": {"disabled": [{"name": plugin}]}})]})
        yield "plugins", "%s enabled at multiPoint" % plugin, dump({"profiles": [_profile(plugins={
            "multiPoint": {"enabled": [{"name": plugin}]}})]})
        yield "plugins", "%s disabled at multiPoint" % plugin, dump({"profiles": [_profile(plugins={
            "multiPoint": {"disabled": [{"name": plugin}]}})]})
        yield "plugins", "%s pluginConfig without args" % plugin, dump({"profiles": [_profile(plugin_config=[
            {"name": plugin}])]})
        yield "plugins", "%s pluginConfig empty args" % plugin, dump({"profiles": [_profile(plugin_config=[
            {"name": plugin, "args": {}}])]})


def _multipoint():
    cases = [
        ("disable all multiPoint", {"multiPoint": {"disabled": [{"name": "*"}]}}),
        ("disable all, keep sort and bind", {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [
            {"name": "PrioritySort"}, {"name": "DefaultBinder"}]}}),
        ("disable all scores", {"score": {"disabled": [{"name": "*"}]}}),
        ("disable all scores enable one", {"score": {"disabled": [{"name": "*"}], "enabled": [
            {"name": "ImageLocality", "weight": 3}]}}),
        ("multiPoint reorder", {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 7},
                                                           {"name": "TaintToleration"}]}}),
        ("multiPoint relisted twice", {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 2},
                                                                  {"name": "ImageLocality", "weight": 3}]}}),
        ("score relisted twice", {"score": {"enabled": [{"name": "ImageLocality"}, {"name": "ImageLocality"}]}}),
        ("filter enabled duplicates default", {"filter": {"enabled": [{"name": "NodeName"}]}}),
        ("score overrides multiPoint weight", {"score": {"enabled": [{"name": "TaintToleration", "weight": 9}]}}),
        ("disable filter keep score", {"filter": {"disabled": [{"name": "NodeAffinity"}]}}),
        ("disable at multiPoint re-enable at filter",
         {"multiPoint": {"disabled": [{"name": "NodeAffinity"}]}, "filter": {"enabled": [{"name": "NodeAffinity"}]}}),
        ("disable everything", {"multiPoint": {"disabled": [{"name": "*"}]}, "queueSort": {"disabled": [
            {"name": "*"}]}}),
        ("no bind", {"multiPoint": {"disabled": [{"name": "DefaultBinder"}]}}),
        ("two queue sorts", {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}),
        ("queue sort disabled", {"queueSort": {"disabled": [{"name": "*"}]}}),
        ("queue sort disabled and re-enabled", {"queueSort": {"disabled": [{"name": "*"}], "enabled": [
            {"name": "PrioritySort"}]}}),
        ("bind disabled via multiPoint but enabled at bind", {"multiPoint": {"disabled": [{"name": "DefaultBinder"}]},
                                                              "bind": {"enabled": [{"name": "DefaultBinder"}]}}),
        ("empty enabled lists", {"multiPoint": {"enabled": []}, "score": {"enabled": [], "disabled": []}}),
        ("null plugin sets", {"multiPoint": None, "score": None}),
        ("disabled name empty", {"score": {"disabled": [{"name": ""}]}}),
        ("enabled name empty", {"score": {"enabled": [{"name": ""}]}}),
        ("weight on filter", {"filter": {"enabled": [{"name": "NodeName", "weight": 5}]}}),
        ("multiPoint star disabled, preScore enabled", {"multiPoint": {"disabled": [{"name": "*"}]},
                                                        "preScore": {"enabled": [{"name": "TaintToleration"}]}}),
        ("volume binding everywhere", {"multiPoint": {"enabled": [{"name": "VolumeBinding"}]},
                                       "reserve": {"enabled": [{"name": "VolumeBinding"}]}}),
    ]
    for name, plugins in cases:
        yield "multipoint", name, dump({"profiles": [_profile(plugins=plugins)]})
    yield "multipoint", "two profiles, same name", dump({"profiles": [_profile(name="a"), _profile(name="a")]})
    yield "multipoint", "two profiles, no names", dump({"profiles": [{}, {}]})
    yield "multipoint", "two profiles", dump({"profiles": [_profile(name="a"), _profile(name="b", plugins={
        "score": {"disabled": [{"name": "*"}]}})]})
    yield "multipoint", "two profiles, different queue sort sets", dump({"profiles": [
        _profile(name="a"), _profile(name="b", plugins={"queueSort": {"disabled": [{"name": "*"}], "enabled": [
            {"name": "PrioritySort"}]}})]})
    yield "multipoint", "two profiles, one without queue sort", dump({"profiles": [
        _profile(name="a"), _profile(name="b", plugins={"queueSort": {"disabled": [{"name": "*"}]}})]})
    yield "multipoint", "empty profiles list", dump({"profiles": []})
    yield "multipoint", "profile empty name", dump({"profiles": [_profile(name="")]})
    yield "multipoint", "duplicate pluginConfig", dump({"profiles": [_profile(plugin_config=[
        {"name": "DefaultPreemption", "args": {}}, {"name": "DefaultPreemption", "args": {}}])]})
    yield "multipoint", "pluginConfig for disabled plugin", dump({"profiles": [_profile(
        plugins={"multiPoint": {"disabled": [{"name": "InterPodAffinity"}]}},
        plugin_config=[{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 5}}])]})
    rng = random.Random(SEED)
    in_tree = list(PLUGINS[:19])
    for n in range(40):
        plugins = {}
        for point in rng.sample(("multiPoint",) + POINTS, rng.randint(1, 3)):
            plugin_set = {}
            if rng.random() < 0.6:
                plugin_set["enabled"] = [dict({"name": name}, **({"weight": rng.randint(0, 5)} if rng.random() < 0.4
                                                                 else {}))
                                         for name in rng.sample(in_tree, rng.randint(1, 3))]
            if rng.random() < 0.5:
                plugin_set["disabled"] = [{"name": name} for name in rng.sample(in_tree + ["*"], rng.randint(1, 2))]
            plugins[point] = plugin_set
        yield "multipoint", "random%02d" % n, dump({"profiles": [_profile(plugins=plugins)]})


def _extenders():
    url = "http://127.0.0.1:1/ext"
    cases = [
        ("minimal", [{"urlPrefix": url}]),
        ("filter only", [{"urlPrefix": url, "filterVerb": "filter"}]),
        ("prioritize without weight", [{"urlPrefix": url, "prioritizeVerb": "prioritize"}]),
        ("prioritize weight", [{"urlPrefix": url, "prioritizeVerb": "prioritize", "weight": 5}]),
        ("weight without prioritize", [{"urlPrefix": url, "weight": 5}]),
        ("two binders", [{"urlPrefix": url, "bindVerb": "bind"}, {"urlPrefix": url, "bindVerb": "bind"}]),
        ("one binder", [{"urlPrefix": url, "bindVerb": "bind", "preemptVerb": "preempt"}]),
        ("https insecure", [{"urlPrefix": "https://127.0.0.1:1", "enableHTTPS": True, "tlsConfig": {
            "insecure": True}}]),
        ("https no tls", [{"urlPrefix": "https://127.0.0.1:1", "enableHTTPS": True}]),
        ("tls data", [{"urlPrefix": url, "tlsConfig": {"serverName": "x", "caData": "YWJj"}}]),
        ("tls bad base64", [{"urlPrefix": url, "tlsConfig": {"caData": "!!!"}}]),
        ("http timeout", [{"urlPrefix": url, "httpTimeout": "30s"}]),
        ("http timeout 0", [{"urlPrefix": url, "httpTimeout": "0s"}]),
        ("http timeout negative", [{"urlPrefix": url, "httpTimeout": "-5s"}]),
        ("http timeout 90m", [{"urlPrefix": url, "httpTimeout": "90m"}]),
        ("node cache, ignorable", [{"urlPrefix": url, "nodeCacheCapable": True, "ignorable": True}]),
        ("managed resource", [{"urlPrefix": url, "managedResources": [{"name": "example.com/foo"}]}]),
        ("managed resource ignored", [{"urlPrefix": url, "managedResources": [{"name": "example.com/foo",
                                                                               "ignoredByScheduler": True}]}]),
        ("managed resource native", [{"urlPrefix": url, "managedResources": [{"name": "cpu"}]}]),
        ("managed resource kubernetes.io", [{"urlPrefix": url, "managedResources": [
            {"name": "kubernetes.io/foo"}]}]),
        ("managed resource bad", [{"urlPrefix": url, "managedResources": [{"name": "example.com/-x"}]}]),
        ("managed resource empty", [{"urlPrefix": url, "managedResources": [{"name": ""}]}]),
        ("managed resource duplicate", [{"urlPrefix": url, "managedResources": [
            {"name": "example.com/foo"}, {"name": "example.com/foo"}]}]),
        ("managed resource duplicate across extenders", [
            {"urlPrefix": url, "managedResources": [{"name": "example.com/foo"}]},
            {"urlPrefix": url, "managedResources": [{"name": "example.com/foo"}]}]),
        ("empty urlPrefix", [{"urlPrefix": ""}]),
        ("no urlPrefix", [{"filterVerb": "filter"}]),
        ("bad url", [{"urlPrefix": "::not a url"}]),
        ("empty list", []),
        ("null entry", [None]),
    ]
    for name, extenders in cases:
        yield "extenders", name, dump({"extenders": extenders})
    # Extender managed resources against NodeResourcesFit's ignoredResources / ignoredResourceGroups.
    fit_cases = (
        ("fit ignores managed resource", {"ignoredResources": ["example.com/foo"]}, "example.com/foo", False),
        ("fit ignores managed resource ignoredByScheduler", {"ignoredResources": ["example.com/foo"]},
         "example.com/foo", True),
        ("fit ignores group of managed resource", {"ignoredResourceGroups": ["example.com"]}, "example.com/foo",
         True),
        ("fit ignores group, not ignored by scheduler", {"ignoredResourceGroups": ["example.com"]}, "example.com/foo",
         False),
        ("fit ignores other resource", {"ignoredResources": ["example.com/bar"]}, "example.com/foo", True),
        ("fit scoring extended resource managed", {"scoringStrategy": {"type": "MostAllocated", "resources": [
            {"name": "cpu", "weight": 1}, {"name": "example.com/foo", "weight": 2}]}}, "example.com/foo", True),
    )
    pem = ("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUeTb0\n-----END CERTIFICATE-----\n")
    import base64 as _b64
    pem64 = _b64.b64encode(pem.encode()).decode()
    other = _b64.b64encode(b"-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n").decode()
    for name, tls, https in (("insecure with caData", {"insecure": True, "caData": pem64}, False),
                             ("insecure with caData https", {"insecure": True, "caData": pem64}, True),
                             ("caData not a certificate block", {"caData": other}, False),
                             ("caData truncated certificate", {"caData": pem64}, True),
                             ("certData without keyData", {"certData": pem64}, False),
                             ("keyData without certData", {"keyData": other}, False),
                             ("cert and key garbage", {"certData": "YWJj", "keyData": "YWJj"}, False),
                             ("serverName only", {"serverName": "ext.example"}, True),
                             ("empty tlsConfig", {}, False), ("empty tlsConfig https", {}, True),
                             ("valid ca", {"caData": CA_PEM}, True), ("valid ca insecure", {"caData": CA_PEM, "insecure": True}, False),
                             ("valid cert and key", {"certData": CA_PEM, "keyData": KEY_PEM}, True),
                             ("valid cert, garbage key", {"certData": CA_PEM, "keyData": "YWJj"}, True),
                             ("valid ca then garbage", {"caData": CA_PEM[:-4] + "YWJj"}, False)):
        extender = {"urlPrefix": "https://127.0.0.1:1", "tlsConfig": tls}
        if https:
            extender["enableHTTPS"] = True
        yield "extenders", "tls " + name, dump({"extenders": [extender]})
    more = (
        ("ignored resources from two extenders", [
            {"urlPrefix": url, "managedResources": [{"name": "example.com/a", "ignoredByScheduler": True}]},
            {"urlPrefix": url, "ignorable": True, "managedResources": [
                {"name": "example.com/b", "ignoredByScheduler": True}, {"name": "example.com/c"}]}], None, None),
        ("ignored resource hides invalid fit ignoredResources", [
            {"urlPrefix": url, "managedResources": [{"name": "example.com/a", "ignoredByScheduler": True}]}],
         {"ignoredResources": ["-bad-"]}, None),
        ("ignored resource, fit disabled but configured", [
            {"urlPrefix": url, "managedResources": [{"name": "example.com/a", "ignoredByScheduler": True}]}],
         {"ignoredResources": ["example.com/z"]}, {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}),
        ("ignored resource, fit enabled only at score", [
            {"urlPrefix": url, "managedResources": [{"name": "example.com/a", "ignoredByScheduler": True}]}],
         None, {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]},
                "score": {"enabled": [{"name": "NodeResourcesFit"}]}}),
        ("not ignored resource, fit disabled", [
            {"urlPrefix": url, "managedResources": [{"name": "example.com/a"}]}],
         None, {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}),
        ("ignored resource, fit bad strategy", [
            {"urlPrefix": url, "managedResources": [{"name": "example.com/a", "ignoredByScheduler": True}]}],
         {"scoringStrategy": {"type": "Foo"}}, None),
        ("ignored resource, all disabled", [
            {"urlPrefix": url, "managedResources": [{"name": "example.com/a", "ignoredByScheduler": True}]}],
         None, {"multiPoint": {"disabled": [{"name": "*"}],
                               "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]}}),
    )
    for name, extenders, args, plugins in more:
        profile = {}
        if args is not None:
            profile["pluginConfig"] = [{"name": "NodeResourcesFit", "args": args}]
        if plugins is not None:
            profile["plugins"] = plugins
        yield "extenders", name, dump({"extenders": extenders, "profiles": [profile]})
    yield "extenders", "ignored resource, two profiles, second without fit", dump({
        "extenders": [{"urlPrefix": url, "managedResources": [{"name": "example.com/a", "ignoredByScheduler": True}]}],
        "profiles": [{"schedulerName": "a"}, {"schedulerName": "b", "plugins": {"multiPoint": {"disabled": [
            {"name": "NodeResourcesFit"}]}}}]})
    for name, extender in (("all verbs", {"urlPrefix": url, "filterVerb": "f", "preemptVerb": "p",
                                          "prioritizeVerb": "s", "weight": 3, "bindVerb": "b"}),
                           ("weight negative without prioritize", {"urlPrefix": url, "weight": -3}),
                           ("ignorable first", {"urlPrefix": url, "ignorable": True, "filterVerb": "f"}),
                           ("http timeout 1ns", {"urlPrefix": url, "httpTimeout": "1ns"}),
                           ("http timeout 1.5s", {"urlPrefix": url, "httpTimeout": "1.5s"}),
                           ("managed resource requests. prefix", {"urlPrefix": url, "managedResources": [
                               {"name": "requests.example.com/foo"}]}),
                           ("managed resource no domain", {"urlPrefix": url, "managedResources": [{"name": "foo"}]}),
                           ("managed resource hugepages", {"urlPrefix": url, "managedResources": [
                               {"name": "hugepages-2Mi"}]}),
                           ("managed resource long", {"urlPrefix": url, "managedResources": [
                               {"name": "example.com/" + "a" * 64}]})):
        yield "extenders", name, dump({"extenders": [extender]})
    for name, args, resource, ignored in fit_cases:
        managed = {"name": resource}
        if ignored:
            managed["ignoredByScheduler"] = True
        config = _args("NodeResourcesFit", args)
        config["extenders"] = [{"urlPrefix": url, "filterVerb": "filter", "managedResources": [managed]}]
        yield "extenders", name, dump(config)


def _syntax():
    yield "syntax", "empty file", ""
    yield "syntax", "only comments", "# nothing\n"
    yield "syntax", "header only", HEADER
    yield "syntax", "document start", "---\n" + HEADER
    yield "syntax", "document end marker", HEADER + "...\n"
    yield "syntax", "two documents, second differs", HEADER + "parallelism: 3\n---\n" + HEADER + "parallelism: 4\n"
    yield "syntax", "two documents, second invalid", HEADER + "---\n" + HEADER + "parallelism: -4\n"
    yield "syntax", "two documents, second unknown field", HEADER + "---\nfoo: 1\n"
    yield "syntax", "two documents, second garbage", HEADER + "---\n: : :\n"
    yield "syntax", "two documents, first empty", "---\n---\n" + HEADER
    yield "syntax", "two documents, first invalid", HEADER + "parallelism: 0\n---\n" + HEADER
    yield "syntax", "three documents", HEADER + "---\n" + HEADER + "---\n" + HEADER
    yield "syntax", "document with other kind after", HEADER + "---\napiVersion: v1\nkind: ConfigMap\n"
    yield "syntax", "two documents, second has duplicate key", HEADER + "---\na: 1\na: 2\n"
    yield "syntax", "json", '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}'
    yield "syntax", "json parallelism", ('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": '
                                         '"KubeSchedulerConfiguration", "parallelism": 4}')
    yield "syntax", "json float parallelism", ('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": '
                                               '"KubeSchedulerConfiguration", "parallelism": 4.0}')
    yield "syntax", "json exponent parallelism", ('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": '
                                                  '"KubeSchedulerConfiguration", "parallelism": 4e0}')
    yield "syntax", "json duplicate key", ('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": '
                                           '"KubeSchedulerConfiguration", "parallelism": 4, "parallelism": 5}')
    yield "syntax", "json trailing garbage", ('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": '
                                              '"KubeSchedulerConfiguration"} x')
    yield "syntax", "json two objects", ('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": '
                                         '"KubeSchedulerConfiguration"}\n{"parallelism": 3}')
    yield "syntax", "json leading whitespace", '\n  {"apiVersion": "kubescheduler.config.k8s.io/v1", ' \
                                               '"kind": "KubeSchedulerConfiguration"}'
    yield "syntax", "json qps exponent", ('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": '
                                          '"KubeSchedulerConfiguration", "clientConnection": {"qps": 1e2}}')
    yield "syntax", "flow style yaml", "{apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration}"
    yield "syntax", "list at top", "- a\n- b\n"
    yield "syntax", "scalar at top", "hello\n"
    yield "syntax", "missing kind", "apiVersion: kubescheduler.config.k8s.io/v1\n"
    yield "syntax", "missing apiVersion", "kind: KubeSchedulerConfiguration\n"
    yield "syntax", "v1beta3", "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n"
    yield "syntax", "wrong kind", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: Foo\n"
    yield "syntax", "duplicate key", HEADER + "parallelism: 3\nparallelism: 4\n"
    yield "syntax", "duplicate nested key", HEADER + "leaderElection:\n  leaderElect: true\n  leaderElect: false\n"
    yield "syntax", "tab indentation", HEADER + "leaderElection:\n\tleaderElect: true\n"
    yield "syntax", "anchor and alias", HEADER + "leaderElection: &le\n  leaderElect: false\n" \
                                                 "profiles:\n- schedulerName: a\n"
    yield "syntax", "merge key", HEADER + "x: &x {leaderElect: false}\nleaderElection:\n  <<: *x\n"
    yield "syntax", "merge key no extra", HEADER + "leaderElection:\n  <<: {leaderElect: false}\n"
    yield "syntax", "quoted number", HEADER + "parallelism: '4'\n"
    yield "syntax", "yes as bool", HEADER + "enableProfiling: yes\n"
    yield "syntax", "on as bool", HEADER + "enableProfiling: on\n"
    yield "syntax", "True as bool", HEADER + "enableProfiling: True\n"
    yield "syntax", "yes as string", HEADER + "profiles:\n- schedulerName: yes\n"
    yield "syntax", "null scheduler name", HEADER + "profiles:\n- schedulerName: null\n"
    yield "syntax", "tilde", HEADER + "parallelism: ~\n"
    yield "syntax", "bool key", HEADER + "true: 1\n"
    yield "syntax", "int key", HEADER + "1: 1\n"
    yield "syntax", "timestamp string", HEADER + "profiles:\n- schedulerName: 2001-12-14\n"
    yield "syntax", "binary tag", HEADER + "extenders:\n- urlPrefix: x\n  tlsConfig:\n    caData: !!binary YWJj\n"
    yield "syntax", "bom", "\ufeff" + HEADER
    yield "syntax", "crlf", HEADER.replace("\n", "\r\n") + "parallelism: 3\r\n"
    for text in ("1e1", "1E1", "1.0e1", "1e+1", "10.0", "1e2", "0x10", "0o10", "010", "1_0", "+10", "1.5e1",
                 "1e0", "2e9", "2.147483647e9", "2.147483648e9", "1e-1", "10.", ".5", "-0", "1e400"):
        yield "syntax", "parallelism: %s" % text, HEADER + "parallelism: %s\n" % text
    for text in ("5e1", "1e2", "1.0", "0.5", "1e-3", ".inf", "-.inf", ".nan", ".Inf", "3.4028235e38",
                 "3.4028236e38", "1e39", "-1e39", "1e400", "0x10", "16777217", "0.1", "1e-46"):
        yield "syntax", "qps: %s" % text, HEADER + "clientConnection:\n  qps: %s\n" % text
    for text in ("6e2", "1e3", "1.5e1", ".inf", "9.223372036854775807e18", "9223372036854775807",
                 "9223372036854775808", "1e19"):
        yield "syntax", "bindTimeoutSeconds: %s" % text, dump({}) + (
            "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args:\n      bindTimeoutSeconds: %s\n" % text)
    for text in ("1e1", "1e2", ".inf", "2e9"):
        yield "syntax", "podMaxBackoffSeconds: %s" % text, HEADER + "podMaxBackoffSeconds: %s\n" % text
        yield "syntax", "extender weight: %s" % text, HEADER + (
            "extenders:\n- urlPrefix: http://x\n  prioritizeVerb: p\n  weight: %s\n" % text)
        yield "syntax", "score weight: %s" % text, HEADER + (
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocality\n        weight: %s\n"
            % text)
    for text in ("1h", "1.5h", "90m", "1h30m", "1000ms", "1000000us", "1\u00b5s", "15", "15S", "", "0", "+15s",
                 "1e1s", ".5s", "5.s", "9223372036s", "2562047h", "2562048h"):
        yield "syntax", "leaseDuration: %r" % text, HEADER + "leaderElection:\n  leaseDuration: %s\n" % json.dumps(text)


def _more_syntax():
    json_head = '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"'
    for text in ('"parallelism": NaN', '"parallelism": Infinity', '"parallelism": 1e400', '"parallelism": -0',
                 '"parallelism": 4.5', '"parallelism": 1E1', '"clientConnection": {"qps": 1e400}',
                 '"clientConnection": {"qps": 3.5e38}', '"clientConnection": {"qps": 0.1}',
                 '"parallelism": "4"', '"parallelism": 4,', '"enableProfiling": 1', '"profiles": null',
                 '"profiles": [{"schedulerName": "a\\u00e9"}]', '"podMaxBackoffSeconds": 9223372036854775808',
                 '"profiles": [{"pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 1e3}}]}]',
                 # go-yaml's reader sees a JSON file first: a raw DEL is refused, a raw tab is the JSON parser's error
                 '"profiles": [{"schedulerName": "a\x7fb"}]', '"profiles": [{"schedulerName": "a\tb"}]',
                 '"Parallelism": 3', '"parallelism": 3, "Parallelism": 4', '"parallelism": 1.0', '"parallelism": 1E+1',
                 '"parallelism": 01', '"profiles": [null]', '"": 1', '"par\\u0061llelism": 3'):
        yield "syntax", "json %s" % text, json_head + ", " + text + "}"
    for literal in ("NaN", "Infinity", "1e400"):
        yield "syntax", "json args %s" % literal, json_head + (
            ', "profiles": [{"pluginConfig": [{"name": "Custom", "args": {"x": %s}}]}]}' % literal)
    yield "syntax", "json unknown fields order", json_head + ', "foo": 1, "baz": 2, "profiles": [{"zz": 1, "aa": 2}]}'
    yield "syntax", "json two type errors", json_head + ', "podMaxBackoffSeconds": "x", "parallelism": "y"}'
    yield "syntax", "yaml two type errors", HEADER + "podMaxBackoffSeconds: x\nparallelism: y\n"
    yield "syntax", "yaml type error after unknown", HEADER + "zzz: 1\nparallelism: y\naaa: 2\n"
    yield "syntax", "yaml unknown fields order", HEADER + "foo: 1\nprofiles:\n- zz: 1\n  aa: 2\nbaz: 3\n"
    for where in ("leaderElection:\n  retryPeriod: null\n", "leaderElection:\n  leaseDuration: ~\n",
                  "leaderElection:\n  leaderElect: false\n  renewDeadline: null\n",
                  "extenders:\n- urlPrefix: http://x\n  httpTimeout: null\n",
                  "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args:\n      filterTimeout: null\n"):
        yield "syntax", "null duration %s" % where.split(":")[-2].strip(), HEADER + where
    yield "syntax", "json null duration", json_head + ', "leaderElection": {"retryPeriod": null}}'
    yield "syntax", "json comment", json_head + "} // c"
    yield "syntax", "json then yaml document", json_head + "}\n---\nparallelism: 3\n"
    yield "syntax", "yaml directive", "%YAML 1.1\n---\n" + HEADER
    yield "syntax", "document start with content", "--- " + HEADER.replace("\n", "\n", 1)
    yield "syntax", "document end then garbage", HEADER + "...\n: : :\n"
    yield "syntax", "second document empty", HEADER + "---\n"
    yield "syntax", "second document is a list", HEADER + "---\n- a\n"
    yield "syntax", "first document a list", "- a\n---\n" + HEADER
    yield "syntax", "first document only a comment", "# c\n---\n" + HEADER
    yield "syntax", "alias across documents", HEADER + "leaderElection: &a {leaderElect: false}\n---\nx: *a\n"
    yield "syntax", "float key", HEADER + "1e1: x\n"
    yield "syntax", "float key nested", HEADER + "leaderElection:\n  1.5: x\n"
    yield "syntax", "null key", HEADER + "~: x\n"
    yield "syntax", "y key", HEADER + "y: x\n"
    for field, text in (("percentageOfNodesToScore", "5e1"), ("percentageOfNodesToScore", "1e3"),
                        ("podInitialBackoffSeconds", "1e0"), ("podInitialBackoffSeconds", "-1e0"),
                        ("parallelism", "-1e1"), ("parallelism", "0x7FFFFFFF"), ("parallelism", "0x80000000"),
                        ("parallelism", "+.5e1"), ("parallelism", "'1e1'"), ("parallelism", "1e1_0"),
                        ("parallelism", "1__0"), ("parallelism", "0b101"), ("parallelism", "-0b101"),
                        ("parallelism", "0B101"), ("parallelism", "0X10"), ("parallelism", "0O10"),
                        ("parallelism", "08"), ("parallelism", "1.e1"), ("parallelism", "1e01"),
                        ("parallelism", ".1e2"), ("parallelism", "Y"), ("parallelism", "NULL"),
                        ("enableProfiling", "Y"), ("enableProfiling", "n"), ("enableProfiling", "OFF"),
                        ("enableProfiling", "1"), ("delayCacheUntilActive", "y")):
        yield "syntax", "%s: %s" % (field, text), HEADER + "%s: %s\n" % (field, text)
    args = "profiles:\n- pluginConfig:\n  - name: %s\n    args:\n      %s: %s\n"
    for plugin, field, text in (("DefaultPreemption", "minCandidateNodesPercentage", "1e1"),
                                ("DefaultPreemption", "minCandidateNodesAbsolute", "1.5e2"),
                                ("DefaultPreemption", "minCandidateNodesPercentage", ".inf"),
                                ("InterPodAffinity", "hardPodAffinityWeight", "1e0"),
                                ("InterPodAffinity", "hardPodAffinityWeight", "1e3"),
                                ("InterPodAffinity", "ignorePreferredTermsOfExistingPods", "y"),
                                ("ImageLocality", "x", ".nan"), ("NoSuchPlugin", "x", ".inf"),
                                ("VolumeBinding", "bindTimeoutSeconds", "0x10"),
                                ("DynamicResources", "filterTimeout", "1e1")):
        yield "syntax", "args %s.%s: %s" % (plugin, field, text), HEADER + args % (plugin, field, text)
    yield "syntax", "shape exponent", HEADER + (
        "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
        "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
        "          shape: [{utilization: 0, score: 0}, {utilization: 1e2, score: 1e1}]\n")
    yield "syntax", "resource weight exponent", HEADER + (
        "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
        "        resources: [{name: cpu, weight: 1e0}, {name: memory, weight: 2.0}]\n")
    yield "syntax", "multiPoint weight exponent", HEADER + (
        "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: ImageLocality, weight: 5e0}]\n")
    yield "syntax", "burst exponent", HEADER + "clientConnection:\n  burst: 2e2\n"
    yield "syntax", "burst overflow exponent", HEADER + "clientConnection:\n  burst: 3e9\n"
    # go-yaml v2 lets an anchor be defined again (an alias takes the newest definition); PyYAML refuses it.
    yield "syntax", "anchor redefined", HEADER + (
        "parallelism: &x 4\npercentageOfNodesToScore: &x 20\npodInitialBackoffSeconds: *x\n")
    yield "syntax", "anchor redefined, alias before and after", HEADER + (
        "parallelism: &x 4\npodInitialBackoffSeconds: *x\npercentageOfNodesToScore: &x 20\npodMaxBackoffSeconds: *x\n")
    yield "syntax", "anchor redefined in a list", HEADER + "profiles:\n- &p {schedulerName: a}\n- &p {schedulerName: b}\n"
    yield "syntax", "anchor redefined, alias repeats a profile", HEADER + (
        "profiles:\n- &p {schedulerName: a}\n- &p {schedulerName: b}\n- *p\n")
    yield "syntax", "anchor contains itself", HEADER + "profiles: &a\n- *a\n"
    # Syntax errors in go-yaml v2's words and line numbers (1-based for scanner errors, libyaml's 0-based mark for
    # parser errors, none when that number is 0).
    for name, text in (("unclosed quote", "parallelism: 'x\n"), ("mapping in a plain value", "parallelism: a: b\n"),
                       ("key less indented", "profiles:\n  - schedulerName: a\n schedulerName: b\n"),
                       ("tab before a key", "x:\n\ty: 1\n"), ("undefined alias", "x: *nope\n"),
                       ("unclosed flow sequence", "profiles: [a, b\n"), ("unclosed flow mapping", "leaderElection: {a: 1\n"),
                       ("plain line in a block", "profiles:\n- a\n  - b\nx\n"), ("unknown escape", 'x: "\\q"\n'),
                       ("empty key", ": x\n"), ("text after a flow sequence", "x: [a]b\n"),
                       ("complex keys", "? a\n? b\n: c\nd\n"),
                       ("sequence under a mapping", "profiles:\n  - schedulerName: a\n    plugins:\n   foo: 1\n"),
                       ("plain value continued as a key", "a: b\n c: d\n")):
        yield "syntax", "syntax error: " + name, HEADER + text
    yield "syntax", "syntax error: tab on the first line", "\tapiVersion: v1\n"
    yield "syntax", "syntax error: mapping on the first line", "a: b: c\n"
    yield "syntax", "syntax error: sequence after a mapping", "- a\nb: c\n"
    yield "syntax", "syntax error: duplicate %YAML directive", "%YAML 1.1\n%YAML 1.1\n---\n" + HEADER


def _yaml():
    """What go-yaml v2 (decoding into interface{}) and sigs.k8s.io/yaml do that PyYAML alone does not: tags, typed
    and null map keys, escapes, directives, case-folded apiVersion/kind, merge keys."""
    args = HEADER + "profiles:\n- pluginConfig:\n  - name: X\n    args:\n"
    name = HEADER + "profiles:\n- schedulerName: %s\n"
    for label, text in (
            ("!!binary", "!!binary YWJj"), ("!!binary, not base64", "!!binary '!!'"), ("!!binary, not UTF-8", "!!binary /w=="),
            ("!!timestamp date", "!!timestamp 2024-01-01"), ("!!timestamp with zone", "!!timestamp 2024-01-01T10:00:00.5+02:00"),
            ("!!timestamp with space", "!!timestamp 2024-1-2 3:04:05"), ("!!timestamp, no date", "!!timestamp foo"),
            ("!!timestamp, bad month", "!!timestamp 2024-13-01"), ("custom tag", "!foo abc"), ("!!str number", "!!str 123"),
            ("!!int on a name", "!!int 5"), ("verbatim tag", "!<tag:example.com,2000:x> abc"), ("!!map on a scalar", "!!map abc"),
            ("escapes", '"a\\x41\\u00e9\\U0001F600\\_\\t"'), ("escape of a surrogate", '"\\ud800"'),
            ("escaped surrogate pair", '"\\ud83d\\ude00"'), ("single-quote escape", "'it''s'"), ("literal", "|-\n    abc"),
            ("folded", ">-\n    a\n    b"), ("number", "1e3"), ("octal", "0o17"), ("yes", "yes"), ("null", "~")):
        yield "yaml", "name " + label, name % text
    for label, text in (("!!int, not a number", "parallelism: !!int abc"), ("!!bool, not a bool", "enableProfiling: !!bool abc"),
                        ("!!null, not null", "parallelism: !!null abc"), ("!!null empty", "parallelism: !!null ''"),
                        ("!!float on an int field", "parallelism: !!float 3"), ("!!float, not a number", "parallelism: !!float x"),
                        ("!!int quoted", "parallelism: !!int '3'"), ("!!int of a float", "parallelism: !!int 1.5"),
                        ("!!bool quoted", "enableProfiling: !!bool 'yes'"), ("custom tag on an int field", "parallelism: !foo 3"),
                        ("!!timestamp on an int field", "parallelism: !!timestamp 2024-01-01"),
                        ("custom tag on a mapping", "leaderElection: !foo {leaderElect: false}"),
                        ("!!seq on a mapping", "leaderElection: !!seq {a: 1}"), ("!!str on a mapping", "leaderElection: !!str {a: 1}"),
                        ("custom tag on a list", "profiles: !foo\n- schedulerName: a"), ("!!set", "x: !!set {a, b}"),
                        ("null key", "null: 1"), ("~ key", "~: 1"), ("bool key", "true: 1"), ("int key", "1: 1"),
                        ("case-folded field", "Parallelism: 3"), ("case-folded field twice", "parallelism: 3\nParallelism: 4"),
                        ("merge list", "x: &x {leaderElect: false}\ny: &y {resourceName: z}\nleaderElection:\n  <<: [*x, *y]"),
                        ("merge then key", "x: &x {leaderElect: false, resourceName: a}\nleaderElection:\n  <<: *x\n"
                                           "  resourceName: b"),
                        ("key then merge", "x: &x {leaderElect: false, resourceName: a}\nleaderElection:\n  resourceName: b\n"
                                           "  <<: *x"),
                        ("merge of a scalar", "leaderElection:\n  <<: 1")):
        yield "yaml", label, HEADER + text + "\n"
    for label, body in (("null key", "~: 1"), ("null key, map value", "~: {a: 1}"), ("nested null key", "a:\n        ~: 1"),
                        ("null key in a list", "a:\n      - ~: 1"), ("null and ~ keys", "null: a\n      ~: b"),
                        ("1 and '1'", "1: a\n      '1': b"), ("1 and 01", "1: a\n      01: b"), ("y and true", "y: a\n      true: b"),
                        ("1 and 1.0", "1: a\n      1.0: b"), ("0x10 and 16", "0x10: a\n      16: b"), ("1e1 and 10", "1e1: a\n      10: b"),
                        ("1e1 and 10.0", "1e1: a\n      10.0: b"), ("true and 'true'", "true: a\n      'true': b"),
                        ("int keys", "1: a\n      2: b")):
        yield "yaml", "args keys " + label, args + "      " + body + "\n"
    for label, text in (("%YAML 1.2", "%YAML 1.2\n---\n" + HEADER), ("%YAML 1.1", "%YAML 1.1\n---\n" + HEADER),
                        ("%YAML 1.2 after a comment", "# c\n%YAML 1.2\n---\n" + HEADER),
                        ("unknown directive", "%FOO bar\n---\n" + HEADER), ("unknown directive on line 2", "# c\n%FOO\n---\n" + HEADER),
                        ("%TAG", "%TAG !e! tag:example.com,2000:\n---\n" + HEADER),
                        ("ApiVersion", HEADER.replace("apiVersion", "ApiVersion")), ("KIND", HEADER.replace("kind", "KIND")),
                        ("KIND and kind", HEADER + "KIND: Foo\n"),
                        ("JSON ApiVersion", '{"ApiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}'),
                        ("JSON apiVersion then ApiVersion", '{"apiVersion": "x", "ApiVersion": "kubescheduler.config.k8s.io/v1", '
                                                            '"kind": "KubeSchedulerConfiguration"}'),
                        ("JSON lone surrogate", '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
                                                ' "profiles": [{"schedulerName": "\\ud800"}]}'),
                        ("JSON surrogate pair", '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
                                                ' "profiles": [{"schedulerName": "\\ud83d\\ude00"}]}'),
                        ("BOM before a key", HEADER + "\ufeffparallelism: 3\n"), ("CR line ends", HEADER.replace("\n", "\r")),
                        ("NUL escape", HEADER + 'x: "a\\0b"\n')):
        yield "yaml", label, text


def _plugin_args():
    # Feature-gated fields: an empty list is not the same as an absent field.
    for shape in (None, [], [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
                  [{"utilization": 100, "score": 10}, {"utilization": 0, "score": 0}]):
        args = {"bindTimeoutSeconds": 300}
        if shape is not None:
            args["shape"] = shape
        yield "plugin_args", "VolumeBinding shape=%s" % json.dumps(shape), dump(_args("VolumeBinding", args))
    yield "plugin_args", "VolumeBinding shape null", dump({}) + (
        "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args:\n      shape: null\n")
    for args in ({}, {"filterTimeout": "0s"}, {"filterTimeout": "5s"}, {"filterTimeout": "-1s"},
                 {"filterTimeout": "1m"}, {"bindingTimeout": "10m"}, {"bindingTimeout": "500ms"},
                 {"bindingTimeout": "0s"}, {"filterTimeout": "10s", "bindingTimeout": "1s"}):
        yield "plugin_args", "DynamicResources %s" % json.dumps(args, sort_keys=True), dump(_args(
            "DynamicResources", args))
        cfg = _args("DynamicResources", args)
        cfg["profiles"][0]["plugins"] = {"multiPoint": {"enabled": [{"name": "DynamicResources"}]}}
        yield "plugin_args", "DynamicResources enabled %s" % json.dumps(args, sort_keys=True), dump(cfg)
    for field, empty in (("ignoredResources", []), ("ignoredResourceGroups", []), ("ignoredResources", None)):
        args = {field: empty}
        yield "plugin_args", "NodeResourcesFit %s=%s" % (field, json.dumps(empty)), dump(_args(
            "NodeResourcesFit", args))
    for args in ({"defaultConstraints": []}, {"defaultConstraints": [], "defaultingType": "List"},
                 {"defaultingType": "List"}, {"defaultingType": "System"}, {"defaultingType": "Foo"},
                 {"defaultingType": ""},
                 {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
                 {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
                  "defaultingType": "List"},
                 {"defaultConstraints": [{"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Foo",
                                          "labelSelector": {}}], "defaultingType": "List"},
                 {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                          "matchLabelKeys": []}], "defaultingType": "List"},
                 {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                          "minDomains": 2, "nodeAffinityPolicy": "Honor",
                                          "nodeTaintsPolicy": "Ignore", "matchLabelKeys": ["app"]}],
                  "defaultingType": "List"},
                 {"defaultConstraints": [
                     {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                     {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
                  "defaultingType": "List"}):
        yield "plugin_args", "PodTopologySpread %s" % json.dumps(args, sort_keys=True)[:80], dump(_args(
            "PodTopologySpread", args))
    for args in ({"resources": []}, {"resources": [{"name": "cpu", "weight": 1}]},
                 {"resources": [{"name": "cpu", "weight": 2}]}, {"resources": [{"name": "cpu"}]},
                 {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]},
                 {"resources": [{"name": "example.com/gpu", "weight": 1}]}):
        yield "plugin_args", "BalancedAllocation %s" % json.dumps(args, sort_keys=True), dump(_args(
            "NodeResourcesBalancedAllocation", args))
    req = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}
    for affinity in ({}, {"requiredDuringSchedulingIgnoredDuringExecution": req},
                     {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}},
                     {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}},
                     {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "zone", "operator": "Bad"}]}]}},
                     {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "zone", "operator": "Gt", "values": ["x"]}]}]}},
                     {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [
                         {"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]}},
                     {"preferredDuringSchedulingIgnoredDuringExecution": []},
                     {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {
                         "matchExpressions": [{"key": "zone", "operator": "In", "values": []}]}}]},
                     {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {
                         "matchExpressions": [{"key": "zone", "operator": "In", "values": []}]}}]}):
        yield "plugin_args", "NodeAffinity %s" % json.dumps(affinity, sort_keys=True)[:80], dump(_args(
            "NodeAffinity", {"addedAffinity": affinity}))
    for args in ({"ignorePreferredTermsOfExistingPods": True}, {"hardPodAffinityWeight": 0}):
        yield "plugin_args", "InterPodAffinity %s" % json.dumps(args, sort_keys=True), dump(_args(
            "InterPodAffinity", args))
    for plugin in ("ImageLocality", "PrioritySort", "TaintToleration"):
        yield "plugin_args", "%s args empty" % plugin, dump(_args(plugin, {}))
        yield "plugin_args", "%s args value" % plugin, dump(_args(plugin, {"x": 1}))
    yield "plugin_args", "args null", dump(_args("DefaultPreemption", None))
    yield "plugin_args", "args with own kind", dump(_args("DefaultPreemption", {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DefaultPreemptionArgs",
        "minCandidateNodesPercentage": 20}))
    yield "plugin_args", "args other apiVersion", dump(_args("DefaultPreemption", {
        "apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "DefaultPreemptionArgs"}))


def _fit_args():
    types = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio", "Foo", "", None)
    resources_options = (None, [], [{"name": "cpu", "weight": 1}], [{"name": "cpu", "weight": 0}],
                         [{"name": "cpu", "weight": 101}], [{"name": "cpu"}, {"name": "memory", "weight": 3}],
                         [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 2}],
                         [{"name": "example.com/gpu", "weight": 5}], [{"name": "", "weight": 1}])
    ratio_options = (None, {}, {"shape": []}, {"shape": [{"utilization": 0, "score": 0},
                                                         {"utilization": 100, "score": 10}]},
                     {"shape": [{"utilization": 50, "score": 11}]}, {"shape": [{"utilization": 101, "score": 5}]},
                     {"shape": [{"utilization": 50, "score": 5}, {"utilization": 40, "score": 5}]})
    for strategy_type in types:
        for resources in resources_options:
            strategy = {}
            if strategy_type is not None:
                strategy["type"] = strategy_type
            if resources is not None:
                strategy["resources"] = resources
            yield "fit_args", "type=%s resources=%s" % (strategy_type, json.dumps(resources)), dump(_args(
                "NodeResourcesFit", {"scoringStrategy": strategy}))
        for ratio in ratio_options:
            strategy = {"requestedToCapacityRatio": ratio} if ratio is not None else {}
            if strategy_type is not None:
                strategy["type"] = strategy_type
            yield "fit_args", "type=%s ratio=%s" % (strategy_type, json.dumps(ratio)), dump(_args(
                "NodeResourcesFit", {"scoringStrategy": strategy}))
    for args in ({}, {"scoringStrategy": None}, {"scoringStrategy": {}},
                 {"ignoredResources": ["example.com/foo"], "ignoredResourceGroups": ["example.com"]},
                 {"ignoredResources": ["-bad"]}, {"ignoredResourceGroups": ["a/b"]}, {"ignoredResourceGroups": [""]},
                 {"ignoredResources": ["cpu"]}, {"ignoredResources": ["a" * 64]}):
        yield "fit_args", "args %s" % json.dumps(args, sort_keys=True)[:80], dump(_args("NodeResourcesFit", args))
    for args in ({"ignoredResources": ["example.com/foo", "example.com/foo"]},
                 {"ignoredResources": ["Example.com/Foo"]}, {"ignoredResources": ["example.com/"]},
                 {"ignoredResources": ["a/b/c"]}, {"ignoredResources": [""]},
                 {"ignoredResourceGroups": ["example.com", "example.com"]},
                 {"ignoredResourceGroups": ["Example"]}, {"ignoredResourceGroups": ["-a"]},
                 {"ignoredResources": ["-bad"], "scoringStrategy": {"type": "Foo"}},
                 {"scoringStrategy": {"resources": [{"name": "Cpu", "weight": 1}]}},
                 {"scoringStrategy": {"resources": [{"name": "-x", "weight": 1}]}},
                 {"scoringStrategy": {"resources": [{"name": "a/b/c", "weight": 1}]}},
                 {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": -1}]}},
                 {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": [],
                                      "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10}]}}},
                 {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                      "requestedToCapacityRatio": {"shape": [{"utilization": -1, "score": -1}]}}},
                 {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": None}},
                 {"scoringStrategy": {"type": "Foo", "requestedToCapacityRatio": {"shape": []}}},
                 {"scoringStrategy": {"type": "Foo", "resources": [{"name": "cpu", "weight": 0}]}}):
        yield "fit_args", "more %s" % json.dumps(args, sort_keys=True)[:100], dump(_args("NodeResourcesFit", args))
    for version_case, plugins in (("fit only at filter", {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]},
                                                          "filter": {"enabled": [{"name": "NodeResourcesFit"}]}}),
                                  ("fit only at preScore", {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]},
                                                            "preScore": {"enabled": [{"name": "NodeResourcesFit"}]}}),
                                  ("fit at multiPoint with weight", {"multiPoint": {"enabled": [
                                      {"name": "NodeResourcesFit", "weight": 7}]}})):
        for strategy in ({"type": "MostAllocated"}, {"type": "RequestedToCapacityRatio"},
                         {"type": "Foo"}):
            cfg = _args("NodeResourcesFit", {"scoringStrategy": strategy})
            cfg["profiles"][0]["plugins"] = plugins
            yield "fit_args", "%s, %s" % (version_case, strategy["type"]), dump(cfg)
    # The same bad args with the plugin disabled (only the constructor checks Fit args) and in multiPoint only.
    bad = {"scoringStrategy": {"type": "Foo"}}
    for name, plugins in (("disabled", {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}),
                          ("filter disabled", {"filter": {"disabled": [{"name": "NodeResourcesFit"}]}}),
                          ("all disabled, re-enabled at score", {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [
                              {"name": "PrioritySort"}, {"name": "DefaultBinder"}]},
                              "score": {"enabled": [{"name": "NodeResourcesFit"}]}})):
        cfg = _args("NodeResourcesFit", bad)
        cfg["profiles"][0]["plugins"] = plugins
        yield "fit_args", "bad type, plugin %s" % name, dump(cfg)
    cfg = _args("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated"}})
    cfg["profiles"].append(_profile(name="b", plugin_config=[{"name": "NodeResourcesFit", "args": bad}]))
    cfg["profiles"][0]["schedulerName"] = "a"
    yield "fit_args", "second profile bad", dump(cfg)


# Seeded random mutations of valid configs: every leaf or container can be dropped, retyped, pushed to a boundary,
# duplicated, nulled or given an unknown sibling.
_BASES = (
    {"parallelism": 8, "percentageOfNodesToScore": 40, "podInitialBackoffSeconds": 2, "podMaxBackoffSeconds": 20,
     "leaderElection": {"leaderElect": True, "leaseDuration": "30s", "renewDeadline": "20s", "retryPeriod": "4s",
                        "resourceLock": "leases", "resourceName": "s", "resourceNamespace": "kube-system"},
     "clientConnection": {"qps": 30, "burst": 60, "contentType": "application/json"},
     "profiles": [{"schedulerName": "a", "percentageOfNodesToScore": 30,
                   "plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 4}]},
                               "score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}},
                   "pluginConfig": [{"name": "NodeResourcesFit", "args": {
                       "ignoredResources": ["example.com/x"],
                       "scoringStrategy": {"type": "MostAllocated", "resources": [
                           {"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]}}},
                       {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 20,
                                                              "minCandidateNodesAbsolute": 50}}]},
                  {"schedulerName": "b", "plugins": {"preScore": {"disabled": [{"name": "*"}]},
                                                     "score": {"disabled": [{"name": "*"}]}},
                   "pluginConfig": [{"name": "PodTopologySpread", "args": {
                       "defaultingType": "List", "defaultConstraints": [
                           {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]}}]}],
     "extenders": [{"urlPrefix": "http://127.0.0.1:1/x", "filterVerb": "filter", "prioritizeVerb": "prio",
                    "weight": 2, "httpTimeout": "3s", "managedResources": [{"name": "example.com/y"}]}]},
    {"profiles": [{"pluginConfig": [
        {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 5}},
        {"name": "NodeAffinity", "args": {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}},
        {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 300}},
        {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu", "weight": 1}]}},
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
            "type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 3}],
            "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10}, {"utilization": 100,
                                                                                     "score": 0}]}}}}]}]},
)


def _paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for key in node:
            yield from _paths(node[key], path + (key,))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _paths(item, path + (index,))


def _mutate(config, path, how, rng):
    import copy
    config = copy.deepcopy(config)
    parent = config
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    value = parent[key]
    if how == "drop":
        del parent[key]
    elif how == "null":
        parent[key] = None
    elif how == "retype":
        parent[key] = rng.choice(["x", 7, True, [], {}, 1.5])
    elif how == "boundary":
        parent[key] = rng.choice([0, -1, 1, 100, 101, 2 ** 31, -(2 ** 31) - 1, 10 ** 19, "0s", "-1s", ""])
    elif how == "duplicate" and isinstance(parent, list):
        parent.insert(key, copy.deepcopy(value))
    elif how == "unknown" and isinstance(value, dict):
        value[rng.choice(["foo", "Name", "weight", "args", "enabled"])] = 1
    elif how == "wrongtype":
        parent[key] = ({} if isinstance(value, list) else [] if isinstance(value, dict) else "true"
                       if isinstance(value, bool) else "x" if isinstance(value, (int, float)) else 7)
    elif how == "empty":
        parent[key] = [] if isinstance(value, list) else {} if isinstance(value, dict) else ""
    else:
        return None
    return config


def _mutations():
    rng = random.Random(SEED + 1)
    for b, base in enumerate(_BASES):
        paths = [p for p in _paths(base) if p]
        for n in range(150):
            path = rng.choice(paths)
            how = rng.choice(("drop", "null", "retype", "boundary", "duplicate", "unknown", "empty"))
            mutated = _mutate(base, path, how, rng)
            if mutated is None:
                continue
            name = "base%d %s %s" % (b, how, ".".join(str(p) for p in path))
            yield "mutations", name, dump(mutated)


def _docs_mutations():
    """The same mutations of every docs example (30 each): only in `make differential`, not in CI (time budget)."""
    rng = random.Random(SEED + 2)
    for _family, name, text in _files("docs"):
        try:
            base = yaml.safe_load(text.replace("@KUBECONFIG@", "/kubeconfig")) if not name.endswith(".json") \
                else json.loads(text)
        except ValueError:
            continue
        # The kubeconfig is a file on the host: the library cannot see whether a mutated path exists.
        paths = [p for p in _paths(base) if p and p[0] not in ("apiVersion", "kind") and p[-1] != "kubeconfig"]
        for _n in range(30):
            path = rng.choice(paths)
            how = rng.choice(("drop", "null", "retype", "boundary", "duplicate", "unknown", "empty"))
            mutated = _mutate(base, path, how, rng)
            if mutated is None:
                continue
            text = dump(mutated).replace("/kubeconfig", "@KUBECONFIG@")
            yield "docs_mutations", "%s %s %s" % (name, how, ".".join(str(p) for p in path)), text


_DRA_BASE = {"profiles": [{"pluginConfig": [
    {"name": "DynamicResources", "args": {"filterTimeout": "5s"}},
    {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2,
         "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore", "matchLabelKeys": ["app"]}]}},
    {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 30}}]}],
    "extenders": [{"urlPrefix": "https://127.0.0.1:1/x", "enableHTTPS": True, "tlsConfig": {"insecure": True},
                   "bindVerb": "bind", "ignorable": True, "nodeCacheCapable": True}]}


def _every_path():
    """null, an empty value and a wrong type at every path of the rich bases, without randomness
    (make differential only)."""
    rng = random.Random(SEED + 3)  # only used by _mutate for kinds that draw a value; null/empty draw none
    for b, base in enumerate(_BASES + (_DRA_BASE,)):
        for path in [p for p in _paths(base) if p]:
            for how in ("null", "empty", "wrongtype"):
                mutated = _mutate(base, path, how, rng)
                if mutated is not None:
                    yield "every_path", "base%d %s %s" % (b, how, ".".join(str(p) for p in path)), dump(mutated)


_ARGS_CHOICES = (
    ("DefaultPreemption", {"minCandidateNodesPercentage": 5}),
    ("DefaultPreemption", {"minCandidateNodesAbsolute": 0, "minCandidateNodesPercentage": 0}),
    ("InterPodAffinity", {"hardPodAffinityWeight": 50}), ("InterPodAffinity", {"hardPodAffinityWeight": 500}),
    ("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated"}}),
    ("NodeResourcesFit", {"scoringStrategy": {"type": "Bogus"}}),
    ("PodTopologySpread", {"defaultingType": "List"}), ("PodTopologySpread", {"defaultingType": "Bogus"}),
    ("VolumeBinding", {"bindTimeoutSeconds": 5}), ("PrioritySort", {}), ("NodeAffinity", {}),
    ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 1}]}),
)


def _profiles_mix():
    """Two or three profiles with seeded plugin sets and args (make differential only)."""
    rng = random.Random(SEED + 4)
    in_tree = list(PLUGINS[:19])
    for n in range(80):
        profiles = []
        for i in range(rng.randint(2, 3)):
            profile = {"schedulerName": rng.choice(["p%d" % i, "p%d" % i, "p0", ""])}
            if rng.random() < 0.7:
                plugins = {}
                for point in rng.sample(("multiPoint", "queueSort", "filter", "score", "bind", "preScore"),
                                        rng.randint(1, 2)):
                    plugin_set = {}
                    if rng.random() < 0.6:
                        plugin_set["enabled"] = [{"name": name} for name in rng.sample(in_tree, rng.randint(1, 2))]
                    if rng.random() < 0.5:
                        plugin_set["disabled"] = [{"name": rng.choice(in_tree + ["*"])}]
                    plugins[point] = plugin_set
                profile["plugins"] = plugins
            if rng.random() < 0.6:
                profile["pluginConfig"] = [{"name": name, "args": args}
                                           for name, args in rng.sample(_ARGS_CHOICES, rng.randint(1, 2))]
            if rng.random() < 0.2:
                profile["percentageOfNodesToScore"] = rng.choice([0, 50, 101])
            profiles.append(profile)
        yield "profiles_mix", "mix%02d" % n, dump({"profiles": profiles})


# The upgrade check's configs (test_upgrade_check_binaries.py): a minor's starts/refuses verdicts and effective
# plugins come from its binary or, without one, from its recorded answers of these texts.
UPGRADE_HEAD = HEADER + "clientConnection:\n  kubeconfig: @KUBECONFIG@\n"
UPGRADE_CONFIGS = {
    "defaults": UPGRADE_HEAD + "profiles:\n- schedulerName: default-scheduler\n",
    "removed volume-limit plugin": UPGRADE_HEAD + "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
                                                  "    filter:\n      enabled:\n      - name: EBSLimits\n",
    "two profiles, bin packing": UPGRADE_HEAD + "profiles:\n- schedulerName: default-scheduler\n- schedulerName: "
                                                "bin-packing\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                                                "      scoringStrategy:\n        type: MostAllocated\n",
}
UPGRADE_V1BETA3 = UPGRADE_HEAD.replace("/v1\n", "/v1beta3\n", 1) + (
    "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
    "      apiVersion: kubescheduler.config.k8s.io/v1beta3\n      kind: NodeResourcesFitArgs\n"
    "      scoringStrategy:\n        type: MostAllocated\n")


def upgrade_converted() -> str:
    """UPGRADE_V1BETA3 as the library converts it to v1 (a changed conversion is a case to record again)."""
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.conversion import \
        convert_to_v1  # pylint: disable=import-outside-toplevel
    from harness import KUBECONFIG, materialise  # pylint: disable=import-outside-toplevel
    # @KUBECONFIG@ is no YAML token: convert the file as kube-scheduler would read it, then name the path again.
    return convert_to_v1(materialise(UPGRADE_V1BETA3))["converted"].replace(KUBECONFIG, "@KUBECONFIG@")


def _upgrade_check():
    for name in sorted(UPGRADE_CONFIGS):
        yield "upgrade_check", name, UPGRADE_CONFIGS[name]
    yield "upgrade_check", "v1beta3 original", UPGRADE_V1BETA3
    yield "upgrade_check", "v1beta3 converted", upgrade_converted()


GENERATORS = {
    "upstream_tables": _upstream_tables,
    "docs": lambda: _files("docs"),
    "types": _types,
    "ranges": _ranges,
    "unknown_fields": _unknown_fields,
    "plugins": _plugins,
    "multipoint": _multipoint,
    "extenders": _extenders,
    "syntax": lambda: itertools.chain(_syntax(), _more_syntax()),
    "yaml": _yaml,
    "plugin_args": _plugin_args,
    "fit_args": _fit_args,
    "mutations": _mutations,
    "upgrade_check": _upgrade_check,
    "docs_mutations": _docs_mutations,
    "every_path": _every_path,
    "profiles_mix": _profiles_mix,
}


def cases(families=None):
    """Every (family, name, text) of the corpus, in a fixed order; duplicate texts within a family are dropped."""
    from harness import materialise  # pylint: disable=import-outside-toplevel
    for family in families or FAMILIES:
        seen = set()
        for fam, name, text in GENERATORS[family]():
            if text in seen:
                continue
            seen.add(text)
            yield fam, name, materialise(text)
