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
import math
import re
import struct

from ansible_collections.kubesched.schedulers.plugins.plugin_utils import errors as E
from ansible_collections.kubesched.schedulers.plugins.plugin_utils import schema as S
from ansible_collections.kubesched.schedulers.plugins.plugin_utils import yaml_limits

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


class DecodeMessage(str):
    """An error message of parse_text that knows the field it is about."""

    def __new__(cls, message: str, field: str = ""):
        obj = str.__new__(cls, message)
        obj.field = field
        return obj


class _TypeError(Exception):
    """The first json type error aborts decoding, like encoding/json's saved error."""

    def __init__(self, error: E.ConfigError):
        Exception.__init__(self, error.message)
        self.error = error


# ---------------------------------------------------------------------------------------------------------------
# Go durations (time.ParseDuration), used by metav1.Duration.UnmarshalJSON.

_UNITS = {"ns": 1, "us": 10 ** 3, "\u00b5s": 10 ** 3, "\u03bcs": 10 ** 3, "ms": 10 ** 6, "s": 10 ** 9,
          "m": 60 * 10 ** 9, "h": 3600 * 10 ** 9}
_DIGITS = "0123456789"


def parse_duration(text: str) -> int:
    """time.ParseDuration (Go's algorithm, overflow rules included): nanoseconds, or ValueError with Go's message."""
    orig = text
    invalid = ValueError("time: invalid duration " + E.go_quote(orig))
    neg = False
    if text[:1] in ("-", "+"):
        neg = text[0] == "-"
        text = text[1:]
    if text == "0":
        return 0
    if text == "":
        raise invalid
    total = 0
    while text:
        if not (text[0] == "." or text[0] in _DIGITS):
            raise invalid
        # leadingInt
        value, pos = 0, 0
        while pos < len(text) and text[pos] in _DIGITS:
            if value > (1 << 63) // 10:
                raise invalid
            value = value * 10 + int(text[pos])
            if value > 1 << 63:
                raise invalid
            pos += 1
        pre = pos > 0
        text = text[pos:]
        # leadingFraction: digits past overflow are dropped, the fraction is applied in float64
        fraction, scale, post = 0, 1.0, False
        if text[:1] == ".":
            text = text[1:]
            pos, overflow = 0, False
            while pos < len(text) and text[pos] in _DIGITS:
                if not overflow:
                    if fraction > (1 << 63) // 10:
                        overflow = True
                    else:
                        candidate = fraction * 10 + int(text[pos])
                        if candidate > 1 << 63:
                            overflow = True
                        else:
                            fraction, scale = candidate, scale * 10
                pos += 1
            post = pos > 0
            text = text[pos:]
        if not pre and not post:
            raise invalid
        pos = 0
        while pos < len(text) and text[pos] != "." and text[pos] not in _DIGITS:
            pos += 1
        if pos == 0:
            raise ValueError("time: missing unit in duration " + E.go_quote(orig))
        unit_name, text = text[:pos], text[pos:]
        if unit_name not in _UNITS:
            raise ValueError("time: unknown unit %s in duration %s" % (E.go_quote(unit_name), E.go_quote(orig)))
        unit = _UNITS[unit_name]
        if value > (1 << 63) // unit:
            raise invalid
        value *= unit
        if fraction > 0:
            value += int(float(fraction) * (float(unit) / scale))
            if value > 1 << 63:
                raise invalid
        total += value
        if total > 1 << 63:
            raise invalid
    if neg:
        return -total
    if total > (1 << 63) - 1:
        raise invalid
    return total


# ---------------------------------------------------------------------------------------------------------------
# Text -> JSON-like data, with the duplicate keys YAMLToJSONStrict / UnmarshalStrict would report.

# go-yaml v2 (sigs.k8s.io/yaml) resolve.go: how a plain scalar is typed. Unlike PyYAML's YAML 1.1 rules,
# "1e3" and "1.5e1" are floats, "0o10" and "0x1F" ints (strconv.ParseInt base 0, underscores dropped),
# "y"/"n" booleans, and a float out of float64 range ("1e400") stays a string.
_GO_BOOL = dict([(w, True) for w in ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")]
                + [(w, False) for w in ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")])
_GO_NULL = ("", "~", "null", "Null", "NULL")
_GO_SPECIAL_FLOAT = dict([(w, float("nan")) for w in (".nan", ".NaN", ".NAN")]
                         + [(s + w, float("inf")) for s in ("", "+") for w in (".inf", ".Inf", ".INF")]
                         + [("-" + w, float("-inf")) for w in (".inf", ".Inf", ".INF")])
_GO_INT_RE = re.compile(r"^[-+]?(?:0[bB][01]+|0[oO][0-7]+|0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$")
_GO_FLOAT_RE = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_GO_INT_TAG = "tag:kubesched.schedulers,go-yaml:int"
_GO_FLOAT_TAG = "tag:kubesched.schedulers,go-yaml:float"


def go_yaml_scalar(text: str):
    """The value go-yaml v2 gives a plain scalar: bool, None, int, float or the string itself."""
    if text in _GO_BOOL:
        return _GO_BOOL[text]
    if text in _GO_NULL:
        return None
    if text in _GO_SPECIAL_FLOAT:
        return _GO_SPECIAL_FLOAT[text]
    if text[:1] == ".":
        return _go_float(text, text)
    if text[:1] not in "+-0123456789" or text == "":
        return text
    plain = text.replace("_", "")
    if _GO_INT_RE.match(plain):
        sign = -1 if plain[0] == "-" else 1
        digits = plain.lstrip("+-")
        base = {"b": 2, "o": 8, "x": 16}.get(digits[1:2].lower(), 8 if len(digits) > 1 and digits[0] == "0" else 10)
        value = sign * int(digits[2:] if base in (2, 16) or digits[1:2] in ("o", "O") else digits, base)
        # ParseInt (int64), else ParseUint (no sign, uint64)
        if -2 ** 63 <= value < 2 ** 63 or (plain[0] not in "+-" and 0 <= value < 2 ** 64):
            return value
    if _GO_FLOAT_RE.match(plain):
        return _go_float(plain, text)
    return text


def _go_float(plain: str, text: str):
    try:
        value = float(plain)
    except ValueError:
        return text
    if value in (float("inf"), float("-inf")):
        return text  # strconv.ParseFloat: value out of range, so not a float
    return value


def _yaml_loader():
    import yaml

    class Loader(yaml.SafeLoader):
        """go-yaml v2 as sigs.k8s.io/yaml uses it: its own plain-scalar typing, timestamps stay strings."""

        def resolve(self, kind, value, implicit):
            if kind is yaml.ScalarNode and implicit[0] and value != "<<":
                typed = go_yaml_scalar(value)
                if typed is None:
                    return "tag:yaml.org,2002:null"
                if isinstance(typed, bool):
                    return "tag:yaml.org,2002:bool"
                if isinstance(typed, int):
                    return _GO_INT_TAG
                if isinstance(typed, float):
                    return _GO_FLOAT_TAG
                return "tag:yaml.org,2002:str"
            return yaml.SafeLoader.resolve(self, kind, value, implicit)

        def construct_yaml_bool(self, node):
            if node.value in _GO_BOOL:
                return _GO_BOOL[node.value]
            return yaml.SafeLoader.construct_yaml_bool(self, node)

        def construct_go_scalar(self, node):
            return go_yaml_scalar(node.value)

    Loader.add_constructor("tag:yaml.org,2002:bool", Loader.construct_yaml_bool)
    Loader.add_constructor(_GO_INT_TAG, Loader.construct_go_scalar)
    Loader.add_constructor(_GO_FLOAT_TAG, Loader.construct_go_scalar)
    return Loader


def _yaml_duplicates(node, out: list, path: str = "") -> None:
    """go-yaml's "key already set in map" messages, each a DecodeMessage naming the duplicated field."""
    import yaml
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key, value in node.value:
            child = path
            if isinstance(key, yaml.ScalarNode):
                child = "%s.%s" % (path, key.value) if path else key.value
                if key.value in seen:
                    # go-yaml v2: fmt.Sprintf("line %d: key %#v already set in map", line+1, key)
                    out.append(DecodeMessage("line %d: key %s already set in map" % (
                        key.start_mark.line + 1, E.go_quote(key.value)), child))
                seen.add(key.value)
            _yaml_duplicates(value, out, child)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _yaml_duplicates(item, out, "%s[%d]" % (path, index))


def _jsonable(value):
    """sigs.k8s.io/yaml's YAML -> JSON conversion: keys become strings, integral floats stay numbers."""
    if isinstance(value, dict):
        return dict((_json_key(k), _jsonable(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _json_key(key) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, float):
        return _go_float_key(key)
    return str(key)


def _go_float_key(value: float) -> str:
    """sigs.k8s.io/yaml's float map key: strconv.FormatFloat(v, 'g', -1, 32), infinities and NaN as YAML spells them."""
    if math.isnan(value):
        return ".nan"
    single = float32(value)
    if single is None or math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if single == 0:
        return "0"
    for precision in range(1, 10):
        text = "%.*e" % (precision - 1, single)
        if float32(float(text)) == single:
            break
    mantissa, exponent = text.split("e")
    exponent = int(exponent)
    digits = mantissa.replace("-", "").replace(".", "").rstrip("0") or "0"
    sign = "-" if single < 0 else ""
    if exponent < -4 or exponent >= 6:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return "%s%se%s%02d" % (sign, body, "-" if exponent < 0 else "+", abs(exponent))
    return "%s%.*f" % (sign, max(len(digits) - exponent - 1, 0), abs(single))


def _non_finite(value, path=""):
    """The path of the first NaN or infinity: json.Marshal refuses them when sigs.k8s.io/yaml converts to JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return path
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = (("[%d]" % i, v) for i, v in enumerate(value))
    else:
        return None
    for key, item in items:
        child = path + key if key.startswith("[") else (path + "." + key if path else key)
        found = _non_finite(item, child)
        if found is not None:
            return found
    return None


def _go_float_name(value: float) -> str:
    return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")


def parse_text(text: str):
    """Return (data, strict_messages, error_message). JSON input goes through the JSON path, as upstream.

    Like sigs.k8s.io/yaml (go-yaml v2 Unmarshal), only the first YAML document is read: what follows the
    next ``---`` is never parsed.
    """
    # Size, nesting and alias expansion are checked on the events alone, before anything is composed.
    too_costly = yaml_limits.scan_text(text)
    if too_costly:
        return None, [], too_costly
    if text.lstrip().startswith("{"):
        return _parse_json(text)
    import yaml
    loader = _yaml_loader()(text)
    try:
        node = loader.get_node() if loader.check_node() else None
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = " line %d:" % (mark.line + 1) if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        return None, [], "error converting YAML to JSON: yaml:%s %s" % (line, problem)
    except ValueError as exc:
        return None, [], "error converting YAML to JSON: yaml: %s" % exc
    finally:
        loader.dispose()
    duplicates = []
    if node is not None:
        _yaml_duplicates(node, duplicates)
    strict = []
    if duplicates:
        strict.append(DecodeMessage("yaml: unmarshal errors:\n  " + "\n  ".join(duplicates), duplicates[0].field))
    data = _jsonable(data)
    bad = _non_finite(data)
    if bad is not None:
        return None, [], DecodeMessage("json: unsupported value: %s" % _go_float_name(_lookup(data, bad)), bad)
    return data, strict, None


def _lookup(data, path: str):
    for part in re.findall(r"\[(\d+)\]|([^.\[\]]+)", path):
        data = data[int(part[0])] if part[0] else data[part[1]]
    return data


def _parse_json(text: str):
    duplicates = []

    def pairs(items):
        out = {}
        for key, value in items:
            if key in out:
                duplicates.append(key)
            out[key] = value
        return out

    def constant(name):
        # Go's encoding/json has no NaN or Infinity literals.
        raise ValueError("invalid character %s looking for beginning of value" % E.go_quote(name[:1]).replace('"', "'"))

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except ValueError as exc:
        return None, [], "couldn't get version/kind; json parse error: %s" % exc
    return data, [DecodeMessage('duplicate field "%s"' % key, key) for key in duplicates], None


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

    def items(self, mapping: dict):
        """Keys in the order the JSON decoder meets them: a YAML file reaches it through a Go map marshalled with
        sorted keys (so unknown fields and the first type error follow that order), JSON text in its own order."""
        return list(mapping.items()) if self.from_json else sorted(mapping.items(), key=lambda item: item[0])

    def type_error(self, value_desc, struct, stack, go_type):
        if struct is None:
            msg = "json: cannot unmarshal %s into Go value of type %s" % (value_desc, go_type)
        else:
            fields = list(stack)
            if (self.minor or 0) >= 35 and struct.name == "KubeSchedulerConfiguration" and fields in (
                    ["enableProfiling"], ["enableContentionProfiling"]):
                # v1.35.4 names the embedded struct these fields come from.
                fields = ["DebuggingConfiguration"] + fields
            msg = "json: cannot unmarshal %s into Go struct field %s.%s of type %s" % (
                value_desc, struct.name, ".".join(fields), go_type)
        return msg

    def walk(self, node, value, path, struct, stack):
        """Return the decoded value; ``path`` is the strict field path, ``stack`` json's FieldStack."""
        if value is None:
            if isinstance(node, S.Scalar) and node.kind == "duration" and not node.nullable:
                # encoding/json hands null to metav1.Duration.UnmarshalJSON, which parses "" as a duration.
                raise _TypeError(E.ConfigError(path, E.TYPE_MISMATCH, 'time: invalid duration ""'))
            return None
        if isinstance(node, S.Struct):
            if not isinstance(value, dict):
                raise _TypeError(E.ConfigError(path, E.TYPE_MISMATCH, self.type_error(
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
        if isinstance(node, S.List):
            if not isinstance(value, list):
                raise _TypeError(E.ConfigError(path, E.TYPE_MISMATCH, self.type_error(
                    _json_kind(value), struct, stack, node.go_type)))
            out = []
            for index, item in enumerate(value):
                decoded = self.walk(node.item, item, "%s[%d]" % (path, index), struct, stack)
                out.append(_zero(node.item) if decoded is None else decoded)
            return out
        if isinstance(node, S.Map):
            if not isinstance(value, dict):
                raise _TypeError(E.ConfigError(path, E.TYPE_MISMATCH, self.type_error(
                    _json_kind(value), struct, stack, node.go_type)))
            return dict((k, self.walk(node.value, v, "%s[%s]" % (path, k), struct, stack)) for k, v in self.items(value))
        if isinstance(node, S.Raw):
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
        elif kind == "duration":
            # metav1.Duration.UnmarshalJSON: json.Unmarshal into a string, then time.ParseDuration.
            if not isinstance(value, str):
                # The nested json.Unmarshal's error gets the outer field's context (v1.30.12-v1.35.4 print
                # "Go struct field LeaderElectionConfiguration.leaderElection.leaseDuration of type string").
                raise _TypeError(E.ConfigError(path, E.TYPE_MISMATCH, self.type_error(
                    _json_kind(value), struct, stack, "string")))
            try:
                parse_duration(value)
            except ValueError as exc:
                raise _TypeError(E.ConfigError(path, E.TYPE_MISMATCH, str(exc)))
        elif kind == "bytes":
            if not isinstance(value, str):
                mismatch = _json_kind(value)
            else:
                try:
                    base64.b64decode(value, validate=True)
                except (binascii.Error, ValueError):
                    raise _TypeError(E.ConfigError(path, E.TYPE_MISMATCH, "illegal base64 data at input byte 0"))
        if mismatch is not None:
            detail = self.type_error(mismatch, struct, stack, node.go_type)
            raise _TypeError(E.ConfigError(path, E.TYPE_MISMATCH, detail))
        return value


_FLOAT32_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
_FLOAT32_INF_FROM = 2.0 ** 128 - 2.0 ** 103  # round-to-nearest-even sends this and above to +Inf


def float32(value):
    """The float32 nearest to ``value`` (as a Python float), or None when it rounds to a float32 infinity."""
    try:
        number = float(value)
    except OverflowError:
        return None
    if abs(number) >= _FLOAT32_INF_FROM:
        return None
    if abs(number) > _FLOAT32_MAX:
        return math.copysign(_FLOAT32_MAX, number)
    return struct.unpack("<f", struct.pack("<f", number))[0]


def _go_number(value) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return "%d" % value if value != 0 else "0"
    return repr(value)


def _zero(node):
    if isinstance(node, S.Struct) or isinstance(node, S.Map):
        return {}
    if isinstance(node, S.List):
        return []
    if isinstance(node, S.Scalar):
        return {"string": "", "bool": False, "duration": "0s", "bytes": ""}.get(node.kind, 0)
    return None


# ---------------------------------------------------------------------------------------------------------------

def _not_registered(api_version: str, kind: str) -> E.ConfigError:
    message = 'no kind %s is registered for version %s in scheme %s' % (
        E.go_quote(kind), E.go_quote(api_version), E.go_quote(SCHEME))
    group, _slash, version = api_version.rpartition("/")
    if group == S.GROUP and version in _MIGRATION_HINT:
        message += " (%s: set apiVersion: %s and convert the file, see " \
                   "https://kubernetes.io/docs/reference/scheduling/config/#scheduler-configuration-migrations)" % (
                       _MIGRATION_HINT[version], S.API_VERSION)
    return E.ConfigError("apiVersion", E.NOT_REGISTERED, message)


def decode(data, version: str, extension_points: tuple, strict_messages=None, original_text=None,
           from_json=False, args_kinds=None) -> DecodeResult:
    """Decode JSON-like ``data`` (already parsed) as a v1 KubeSchedulerConfiguration of ``version``.

    ``args_kinds``: the args kinds registered in that version (kind -> plugin); None means every kind of the schema.
    """
    strict = [E.ConfigError(getattr(msg, "field", ""), E.DUPLICATE_KEY, STRICT + msg) for msg in (strict_messages or [])]
    if data is None and original_text is not None:
        # An empty (first) document is JSON null: no apiVersion/kind to read, so the kind is missing.
        return DecodeResult(errors=[E.ConfigError("kind", E.DECODE, "Object 'Kind' is missing in '%s'" % original_text)])
    if not isinstance(data, dict):
        return DecodeResult(errors=[E.ConfigError("", E.DECODE, (
            "couldn't get version/kind; json parse error: json: cannot unmarshal %s into Go value of type "
            "struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
            "Kind string \"json:\\\"kind,omitempty\\\"\" }") % _json_kind(data))])
    shown = original_text if original_text is not None else json.dumps(data, sort_keys=True)
    api_version, kind = data.get("apiVersion"), data.get("kind")
    for field, value in (("apiVersion", api_version), ("kind", kind)):
        if value is not None and not isinstance(value, str):
            return DecodeResult(errors=[E.ConfigError(field, E.DECODE, (
                "couldn't get version/kind; json parse error: json: cannot unmarshal %s into Go struct field "
                ".%s of type string") % (_json_kind(value), field))])
    if not kind:
        return DecodeResult(errors=[E.ConfigError("kind", E.DECODE, "Object 'Kind' is missing in '%s'" % shown)])
    if not api_version:
        return DecodeResult(errors=[E.ConfigError("apiVersion", E.DECODE,
                                                  "Object 'apiVersion' is missing in '%s'" % shown)])
    if api_version != S.API_VERSION or kind != S.KIND:
        return DecodeResult(errors=[_not_registered(api_version, kind)])

    walker = _Walker(from_json, int(version.split(".")[1]))
    try:
        config = walker.walk(S.configuration_type(version, tuple(extension_points)), data, "", None, [])
    except _TypeError as exc:
        return DecodeResult(errors=[exc.error])
    strict.extend(E.ConfigError(path, E.UNKNOWN_FIELD, STRICT + 'unknown field "%s"' % path)
                  for path in walker.unknown)

    registered = S.plugin_args_types(version)
    if args_kinds is not None:
        registered = dict((k, v) for k, v in registered.items() if k in args_kinds)
    for i, profile in enumerate(config.get("profiles", [])):
        for j, plugin_config in enumerate(profile.get("pluginConfig", [])):
            result = _decode_args(plugin_config, registered, from_json, "profiles[%d].pluginConfig[%d]" % (i, j),
                                  version)
            if isinstance(result, E.ConfigError):
                return DecodeResult(errors=[result])
            strict.extend(result)
    if strict:
        return DecodeResult(errors=strict)
    return DecodeResult(config=config)


def _args_scheme(version: str) -> str:
    """Where the nested args decoder's scheme was created, as kube-scheduler names it (seen in v1.30.12-v1.35.4)."""
    minor = int(version.split(".")[1])
    return "pkg/runtime/scheme.go:%d" % (100 if minor <= 32 else 110 if minor <= 34 else 111)


def _decode_args(plugin_config: dict, registered: dict, from_json: bool, where: str, version=None):
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
        api_version, kind = args.get("apiVersion") or S.API_VERSION, args.get("kind") or name + "Args"
        if api_version != S.API_VERSION or kind not in set(S.plugin_args_types(version)) | {S.KIND}:
            field = ".args.apiVersion" if api_version != S.API_VERSION else ".args.kind"
            return E.ConfigError(where + field, E.NOT_REGISTERED, "%s%sno kind %s is registered for version %s in "
                                 "scheme %s" % (prefix, inner, E.go_quote(kind), E.go_quote(api_version),
                                                E.go_quote(_args_scheme(version))))
    if not isinstance(args, dict):
        # The nested decoder first reads apiVersion/kind from the raw args.
        return E.ConfigError(where + ".args", E.DECODE, prefix + inner + (
            "couldn't get version/kind; json parse error: json: cannot unmarshal %s into Go value of type "
            "struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
            "Kind string \"json:\\\"kind,omitempty\\\"\" }") % _json_kind(args))
    if isinstance(args, dict) and args.get("kind") not in (None, "", name + "Args"):
        return E.ConfigError(where + ".args.kind", E.DECODE, "%sargs for plugin %s were not of type %s, got %s" % (
            prefix, name, name + "Args." + S.GROUP, "%s.%s" % (args["kind"], S.GROUP)))
    try:
        plugin_config["args"] = walker.walk(node, args, "", None, [])
    except _TypeError as exc:
        return E.ConfigError(_join(where + ".args", exc.error.field), E.TYPE_MISMATCH,
                             prefix + inner + exc.error.message)
    return [E.ConfigError(_join(where + ".args", path), E.UNKNOWN_FIELD, STRICT + prefix + STRICT + inner + STRICT
                          + 'unknown field "%s"' % path) for path in walker.unknown]


def _join(base: str, path: str) -> str:
    if not path:
        return base
    return base + ("" if path.startswith("[") else ".") + path
