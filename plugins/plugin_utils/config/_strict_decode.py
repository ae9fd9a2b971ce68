# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Strict decoding of a KubeSchedulerConfiguration, as kube-scheduler's ``--config`` loader does it.

Upstream: cmd/kube-scheduler/app/options/configfile.go (loadConfig: scheme.Codecs.UniversalDecoder, strict),
apimachinery's json serializer (YAML -> JSON, then sigs.k8s.io/json UnmarshalStrict; in strict mode the YAML is
also passed through sigs.k8s.io/yaml.YAMLToJSONStrict to catch duplicate keys) and
staging/src/k8s.io/kube-scheduler/config/v1/types.go (DecodeNestedObjects: pluginConfig args decoded as
``<Plugin>Args`` when that kind is registered, strictly too).

What kube-scheduler reports:
- unknown fields and duplicate keys are strict errors: all of them are collected;
- a wrong type is a plain json error: decoding stops there and only the first one is reported.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config import schema
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import errors
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.durations import parse_duration
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import ARGS_SCHEME_LINE, of_release, since
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import float32

SCHEME = "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme/scheme.go:30"
STRICT = "strict decoding error: "
_MIGRATION_HINT = {
    "v1beta1": "v1beta1 was removed in Kubernetes 1.26",
    "v1beta2": "v1beta2 was removed in Kubernetes 1.28",
    "v1beta3": "v1beta3 was removed in Kubernetes 1.29",
}
_MAX = {"int32": 2 ** 31 - 1, "int64": 2 ** 63 - 1}


class DecodeResult(object):
    def __init__(self, config=None, errors=None):
        self.config = config
        self.errors = errors or []


class _TypeError(Exception):
    """The first json type error aborts decoding, like encoding/json's saved error."""

    def __init__(self, error: errors.ConfigError):
        Exception.__init__(self, error.message)
        self.error = error


# ---------------------------------------------------------------------------------------------------------------
# Typed, strict walk of the data against the schema.

def _json_kind(value) -> str:
    """The Value of a json.UnmarshalTypeError."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class _Walker(object):
    def __init__(self, from_json: bool, minor=None):
        self.from_json = from_json
        self.minor = minor
        self.unknown = []
        # A map's path (with [key]) -> how an unknown field's message names it (with .key).
        self.shown = {}

    def unknown_field(self, path):
        """How the strict decoder names an unknown field: encoding/json's error context joins a map key with a dot
        (measured on scheduler-plugins 0.34.7: unknown field "NodePowerModel.node-1.k3"); a list index stays [i]."""
        for prefix in sorted(self.shown, key=len, reverse=True):
            if path.startswith(prefix):
                return self.shown[prefix] + path[len(prefix):]
        return path

    def items(self, mapping: dict):
        """Keys in the order the JSON decoder meets them: a YAML file reaches it through a Go map marshalled with
        sorted keys (so unknown fields and the first type error follow that order), JSON text in its own order."""
        return list(mapping.items()) if self.from_json else sorted(mapping.items(), key=lambda item: item[0])

    def type_error(self, value_desc, struct, stack, go_type):
        if struct is None:
            msg = "json: cannot unmarshal %s into Go value of type %s" % (value_desc, go_type)
        else:
            fields = list(stack)
            if (self.minor is not None and since("type_error_names_debugging_configuration", self.minor)
                    and struct.name == "KubeSchedulerConfiguration"
                    and fields in (["enableProfiling"], ["enableContentionProfiling"])):
                # v1.35.4 names the embedded struct these fields come from (the nested args walker has no minor).
                fields = ["DebuggingConfiguration"] + fields
            msg = "json: cannot unmarshal %s into Go struct field %s.%s of type %s" % (
                value_desc, struct.name, ".".join(fields), go_type)
        return msg

    def walk(self, node, value, path, struct, stack):
        """Return the decoded value; ``path`` is the strict field path, ``stack`` json's FieldStack."""
        if value is None:
            if isinstance(node, schema.Scalar) and node.kind == "duration" and not node.nullable:
                # encoding/json hands null to metav1.Duration.UnmarshalJSON, which parses "" as a duration.
                raise _TypeError(errors.ConfigError(path, errors.TYPE_MISMATCH, 'time: invalid duration ""'))
            return None
        if isinstance(node, schema.Struct):
            if not isinstance(value, dict):
                raise _TypeError(errors.ConfigError(path, errors.TYPE_MISMATCH, self.type_error(
                    _json_kind(value), struct, stack, node.go_type)))
            out = {}
            for key, item in self.items(value):
                child_path = "%s.%s" % (path, key) if path else key
                if key not in node.fields:
                    self.unknown.append(child_path)
                    continue
                decoded = self.walk(node.fields[key], item, child_path, node, stack + [key])
                if decoded is not None:
                    out[key] = decoded
            return out
        if isinstance(node, schema.List):
            if not isinstance(value, list):
                raise _TypeError(errors.ConfigError(path, errors.TYPE_MISMATCH, self.type_error(
                    _json_kind(value), struct, stack, node.go_type)))
            out = []
            for index, item in enumerate(value):
                decoded = self.walk(node.item, item, "%s[%d]" % (path, index), struct, stack)
                out.append(_zero(node.item) if decoded is None else decoded)
            return out
        if isinstance(node, schema.Map):
            if not isinstance(value, dict):
                raise _TypeError(errors.ConfigError(path, errors.TYPE_MISMATCH, self.type_error(
                    _json_kind(value), struct, stack, node.go_type)))
            out = {}
            for k, v in self.items(value):
                self.shown["%s[%s]" % (path, k)] = "%s.%s" % (self.unknown_field(path), k)
                out[k] = self.walk(node.value, v, "%s[%s]" % (path, k), struct, stack)
            return out
        if isinstance(node, schema.Raw):
            return value
        return self.scalar(node, value, path, struct, stack)

    def scalar(self, node, value, path, struct, stack):
        kind = node.kind
        mismatch = None
        if kind == "string":
            if not isinstance(value, str):
                mismatch = _json_kind(value)
        elif kind == "bool":
            if not isinstance(value, bool):
                mismatch = _json_kind(value)
        elif kind in ("int32", "int64"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                mismatch = _json_kind(value)
            else:
                number = value
                if isinstance(value, float):
                    # YAML floats reach JSON as Go's FormatFloat 'g'; a JSON text keeps its literal.
                    number = int(value) if (value.is_integer() and not self.from_json and abs(value) < 2 ** 63) \
                        else None
                if number is None or abs(number + (1 if number < 0 else 0)) > _MAX[kind]:
                    mismatch = "number %s" % (_go_number(value),)
                else:
                    return number
        elif kind == "float32":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                mismatch = _json_kind(value)
            elif float32(value) is None:
                # strconv.ParseFloat(s, 32) fails with ErrRange when the number rounds to a float32 infinity.
                mismatch = "number %s" % (_go_number(value),)
        elif kind == "float64":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                mismatch = _json_kind(value)
        elif kind == "quantity":
            # resource.Quantity.UnmarshalJSON takes a string or a number (scheduler-plugins' defaultRequests) and
            # parses its text; its canonical form is not modelled: a plain number is written back as its text.
            text = value if isinstance(value, str) else "true" if value is True else "false" if value is False \
                else _go_number(value) if isinstance(value, (int, float)) else None
            if text is None:
                mismatch = _json_kind(value)
            elif not _QUANTITY.fullmatch(text):
                raise _TypeError(errors.ConfigError(path, errors.TYPE_MISMATCH, "quantities must match the regular expression "
                                                    "'%s'" % QUANTITY_PATTERN))
            else:
                return text
        elif kind == "duration":
            # metav1.Duration.UnmarshalJSON: json.Unmarshal into a string, then time.ParseDuration.
            if not isinstance(value, str):
                # The nested json.Unmarshal's error gets the outer field's context (v1.30.12-v1.35.4 print
                # "Go struct field LeaderElectionConfiguration.leaderElection.leaseDuration of type string").
                raise _TypeError(errors.ConfigError(path, errors.TYPE_MISMATCH, self.type_error(
                    _json_kind(value), struct, stack, "string")))
            try:
                parse_duration(value)
            except ValueError as exc:
                raise _TypeError(errors.ConfigError(path, errors.TYPE_MISMATCH, str(exc)))
        elif kind == "bytes":
            if not isinstance(value, str):
                mismatch = _json_kind(value)
            else:
                try:
                    base64.b64decode(value, validate=True)
                except (binascii.Error, ValueError):
                    raise _TypeError(errors.ConfigError(path, errors.TYPE_MISMATCH, "illegal base64 data at input byte 0"))
        if mismatch is not None:
            detail = self.type_error(mismatch, struct, stack, node.go_type)
            raise _TypeError(errors.ConfigError(path, errors.TYPE_MISMATCH, detail))
        return value


# k8s.io/apimachinery resource.splitREString: the first check of resource.ParseQuantity, which its error quotes.
QUANTITY_PATTERN = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
# The same texts (fullmatch), in linear time: upstream's second group may start with digits the first could take,
# and Python's backtracking tries every split of a long run of digits (RE2, in Go, does not backtrack). Digits
# without a suffix or a sign before them belong to the first part, so the second starts with one of those.
_QUANTITY = re.compile(r"[+-]?[0-9.]+(?:[eEinumkKMGTP]+[-+]?[0-9]*|[-+][0-9]*)?")


def _go_number(value) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return "%d" % value if value != 0 else "0"
    return repr(value)


def _zero(node):
    if isinstance(node, schema.Struct) or isinstance(node, schema.Map):
        return {}
    if isinstance(node, schema.List):
        return []
    if isinstance(node, schema.Scalar):
        return {"string": "", "bool": False, "duration": "0s", "bytes": ""}.get(node.kind, 0)
    return None


# ---------------------------------------------------------------------------------------------------------------

def _not_registered(api_version: str, kind: str) -> errors.ConfigError:
    message = 'no kind %s is registered for version %s in scheme %s' % (
        errors.go_quote(kind), errors.go_quote(api_version), errors.go_quote(SCHEME))
    group, _slash, version = api_version.rpartition("/")
    if group == schema.GROUP and version in _MIGRATION_HINT:
        message += " (%s: set apiVersion: %s and convert the file, see " \
                   "https://kubernetes.io/docs/reference/scheduling/config/#scheduler-configuration-migrations)" % (
                       _MIGRATION_HINT[version], schema.API_VERSION)
    return errors.ConfigError("apiVersion", errors.NOT_REGISTERED, message)


def _type_meta(data: dict, from_json: bool):
    """apiVersion and kind as the version/kind probe reads them: encoding/json matches keys case-insensitively
    ("ApiVersion" counts; strict decoding then refuses it as an unknown field), and the last matching key wins, in
    the JSON's order (a YAML file becomes JSON with sorted keys)."""
    found = {}
    for key in (data if from_json else sorted(data)):
        folded = key.casefold() if isinstance(key, str) else None
        for field in ("apiVersion", "kind"):
            if folded == field.casefold():
                found[field] = data[key]
    return found.get("apiVersion"), found.get("kind")


def decode(data, version: str, extension_points: tuple, strict_messages=None, original_text=None,
           from_json=False, args_kinds=None, extra_args_types=None) -> DecodeResult:
    """Decode JSON-like ``data`` (already parsed) as a v1 KubeSchedulerConfiguration of ``version``.

    ``args_kinds``: the args kinds registered in that version (kind -> plugin); None means every kind of the schema.
    ``extra_args_types``: kind -> Struct of args kinds an out-of-tree build adds to the scheme (scheduler-plugins).
    """
    strict = [errors.ConfigError(getattr(msg, "field", ""), errors.DUPLICATE_KEY, STRICT + msg) for msg in (strict_messages or [])]
    if data is None and original_text is not None:
        # An empty (first) document is JSON null: no apiVersion/kind to read, so the kind is missing.
        return DecodeResult(errors=[errors.ConfigError("kind", errors.DECODE, "Object 'Kind' is missing in '%s'" % original_text)])
    if not isinstance(data, dict):
        return DecodeResult(errors=[errors.ConfigError("", errors.DECODE, (
            "couldn't get version/kind; json parse error: json: cannot unmarshal %s into Go value of type "
            "struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
            "Kind string \"json:\\\"kind,omitempty\\\"\" }") % _json_kind(data))])
    shown = original_text if original_text is not None else json.dumps(data, sort_keys=True)
    api_version, kind = _type_meta(data, from_json)
    for field, value in (("apiVersion", api_version), ("kind", kind)):
        if value is not None and not isinstance(value, str):
            return DecodeResult(errors=[errors.ConfigError(field, errors.DECODE, (
                "couldn't get version/kind; json parse error: json: cannot unmarshal %s into Go struct field "
                ".%s of type string") % (_json_kind(value), field))])
    if not kind:
        return DecodeResult(errors=[errors.ConfigError("kind", errors.DECODE, "Object 'Kind' is missing in '%s'" % shown)])
    if not api_version:
        return DecodeResult(errors=[errors.ConfigError("apiVersion", errors.DECODE,
                                                       "Object 'apiVersion' is missing in '%s'" % shown)])
    if api_version != schema.API_VERSION or kind != schema.KIND:
        return DecodeResult(errors=[_not_registered(api_version, kind)])

    walker = _Walker(from_json, int(version.split(".")[1]))
    try:
        config = walker.walk(schema.configuration_type(version, tuple(extension_points)), data, "", None, [])
    except _TypeError as exc:
        return DecodeResult(errors=[exc.error])
    strict.extend(errors.ConfigError(path, errors.UNKNOWN_FIELD,
                                     STRICT + 'unknown field "%s"' % walker.unknown_field(path))
                  for path in walker.unknown)

    registered = dict(schema.plugin_args_types(version), **(extra_args_types or {}))
    if args_kinds is not None:
        registered = dict((k, v) for k, v in registered.items() if k in args_kinds)
    for i, profile in enumerate(config.get("profiles", [])):
        for j, plugin_config in enumerate(profile.get("pluginConfig", [])):
            result = _decode_args(plugin_config, registered, from_json, "profiles[%d].pluginConfig[%d]" % (i, j),
                                  version, set(extra_args_types or ()))
            if isinstance(result, errors.ConfigError):
                return DecodeResult(errors=[result])
            strict.extend(result)
    if strict:
        return DecodeResult(errors=strict)
    return DecodeResult(config=config)


def _args_scheme(version: str) -> str:
    """Where the nested args decoder's scheme was created, as kube-scheduler names it (seen in v1.30.12-v1.35.4)."""
    return "pkg/runtime/scheme.go:%d" % of_release(ARGS_SCHEME_LINE, version)


def _decode_args(plugin_config: dict, registered: dict, from_json: bool, where: str, version=None, extra_kinds=()):
    """PluginConfig.decodeNestedObjects: a list of strict errors, or the one fatal error."""
    name = plugin_config.get("name", "")
    node = registered.get(name + "Args")
    if node is None:
        return []
    args = plugin_config.get("args")
    if args is None:
        args = {}
    prefix = "decoding .%s: " % where
    inner = "decoding args for plugin %s: " % name
    walker = _Walker(from_json)
    if isinstance(args, dict) and version is not None:
        # The args' own apiVersion/kind (defaulted from <Plugin>Args of v1 when empty) must be registered in
        # the scheme the nested decoder uses.
        api_version, kind = args.get("apiVersion") or schema.API_VERSION, args.get("kind") or name + "Args"
        if api_version != schema.API_VERSION or kind not in set(schema.plugin_args_types(version)) | set(extra_kinds) | {schema.KIND}:
            field = ".args.apiVersion" if api_version != schema.API_VERSION else ".args.kind"
            return errors.ConfigError(where + field, errors.NOT_REGISTERED, "%s%sno kind %s is registered for version %s in "
                                      "scheme %s" % (prefix, inner, errors.go_quote(kind), errors.go_quote(api_version),
                                                     errors.go_quote(_args_scheme(version))))
    if not isinstance(args, dict):
        # The nested decoder first reads apiVersion/kind from the raw args.
        return errors.ConfigError(where + ".args", errors.DECODE, prefix + inner + (
            "couldn't get version/kind; json parse error: json: cannot unmarshal %s into Go value of type "
            "struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
            "Kind string \"json:\\\"kind,omitempty\\\"\" }") % _json_kind(args))
    if isinstance(args, dict) and args.get("kind") not in (None, "", name + "Args"):
        return errors.ConfigError(where + ".args.kind", errors.DECODE, "%sargs for plugin %s were not of type %s, got %s" % (
            prefix, name, name + "Args." + schema.GROUP, "%s.%s" % (args["kind"], schema.GROUP)))
    try:
        plugin_config["args"] = walker.walk(node, args, "", None, [])
    except _TypeError as exc:
        return errors.ConfigError(_join(where + ".args", exc.error.field), errors.TYPE_MISMATCH,
                                  prefix + inner + exc.error.message)
    return [errors.ConfigError(_join(where + ".args", path), errors.UNKNOWN_FIELD, STRICT + prefix + STRICT + inner + STRICT
                               + 'unknown field "%s"' % walker.unknown_field(path)) for path in walker.unknown]


def _join(base: str, path: str) -> str:
    if not path:
        return base
    return base + ("" if path.startswith("[") else ".") + path
