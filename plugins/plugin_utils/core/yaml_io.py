# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""YAML in and out, once for the whole library.

In: the one strict loader, as kube-scheduler reads a config file (sigs.k8s.io/yaml over go-yaml v2: its own
plain-scalar typing, timestamps stay strings, only the first document, duplicate keys reported, JSON through
encoding/json), within the cost limits of yaml_limits. Every config input goes through parse_text, so
``schedulerName: 2024-01-01`` is the same string everywhere.
Out: the one canonical dumper, and the one converter to plain JSON types (keys as strings, as sigs.k8s.io/yaml makes
them). Pure Python: no Ansible imports.
"""

from __future__ import annotations

import base64
import datetime
import json
import math
import re
import struct
from collections.abc import Mapping

import yaml

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import errors
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import yaml_limits
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import since


class DecodeMessage(str):
    """An error message of parse_text that knows the field it is about."""

    def __new__(cls, message: str, field: str = ""):
        obj = str.__new__(cls, message)
        obj.field = field
        return obj


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
        digits = digits[2:] if base in (2, 16) or digits[1:2] in ("o", "O") else digits
        # No int64/uint64 needs more than 64 significant digits (base 2); Python's int() refuses more than 4300
        # decimal digits with a message of its own, so a longer literal is not an int (go-yaml: out of range).
        value = sign * int(digits, base) if len(digits.lstrip("0")) <= 64 else None
        # ParseInt (int64), else ParseUint (no sign, uint64)
        if value is not None and (-2 ** 63 <= value < 2 ** 63 or (plain[0] not in "+-" and 0 <= value < 2 ** 64)):
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

        def compose_node(self, parent, index):
            # go-yaml v2 lets an anchor be defined again: later aliases take the newest node (PyYAML refuses).
            event = self.peek_event()
            if not isinstance(event, yaml.AliasEvent) and event.anchor is not None:
                self.anchors.pop(event.anchor, None)
            return yaml.SafeLoader.compose_node(self, parent, index)

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


class _GoYamlError(Exception):
    """A value go-yaml v2 refuses while decoding (its failf), in its words."""


_STR_TAG = "tag:yaml.org,2002:str"
_RESOLVABLE = {"tag:yaml.org,2002:bool": "!!bool", "tag:yaml.org,2002:int": "!!int",
               "tag:yaml.org,2002:float": "!!float", "tag:yaml.org,2002:null": "!!null",
               "tag:yaml.org,2002:timestamp": "!!timestamp"}
# time.Parse with go-yaml v2's allowedTimestampFormats: 2006-1-2T15:4:5.999999999Z07:00 (also "t"),
# "2006-1-2 15:4:5.999999999" and "2006-1-2".
_GO_TIMESTAMP = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?"
                           r"(?:Z|[+-]\d{2}:\d{2}))|(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?))?")


def _short_tag(value) -> str:
    if value is None:
        return "!!null"
    for kind, tag in ((bool, "!!bool"), (int, "!!int"), (float, "!!float")):
        if isinstance(value, kind):
            return tag
    return "!!timestamp" if go_timestamp(value) else "!!str"


def go_timestamp(text: str) -> bool:
    """Whether go-yaml v2's parseTimestamp accepts the text."""
    match = _GO_TIMESTAMP.fullmatch(text)
    if not match:
        return False
    year, month, day = (int(part) for part in match.group(1, 2, 3))
    clock = [int(part) for part in (match.group(4, 5, 6) if match.group(4) else match.group(7, 8, 9)) if part]
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return not clock or (clock[0] < 24 and clock[1] < 60 and clock[2] < 60)


def _go_tags(node, done: set) -> None:
    """Give every node the tag go-yaml v2 decodes it by (into interface{}), or raise its error: collections are
    maps and lists whatever their tag; a scalar tagged !!bool, !!int, !!float or !!null must resolve to that
    type (an int is also a float); !!timestamp must be a timestamp and stays the text; !!binary is base64, decoded
    to a string; !!str and every other tag (custom or not) give the text."""
    if id(node) in done:
        return
    done.add(id(node))
    if isinstance(node, yaml.MappingNode):
        node.tag = "tag:yaml.org,2002:map"
        for key, value in node.value:
            _go_tags(key, done)
            _go_tags(value, done)
        return
    if isinstance(node, yaml.SequenceNode):
        node.tag = "tag:yaml.org,2002:seq"
        for item in node.value:
            _go_tags(item, done)
        return
    if node.style == '"' and _SURROGATE.search(node.value):
        # libyaml refuses a \\u escape of a surrogate (PyYAML makes it a lone surrogate character).
        raise yaml.scanner.ScannerError(None, None, "found invalid Unicode character escape code", node.start_mark)
    # Implicit tags are resolved already (Loader.resolve): plain numbers have ours, quoted scalars !!str.
    tag = node.tag
    if tag in (_STR_TAG, _GO_INT_TAG, _GO_FLOAT_TAG, "tag:yaml.org,2002:merge"):
        return
    if tag == "tag:yaml.org,2002:binary":
        try:
            decoded = base64.b64decode("".join(node.value.split("\n")).replace("\r", ""), validate=True)
        except ValueError:
            raise _GoYamlError("!!binary value contains invalid base64 data") from None
        node.tag, node.value = _STR_TAG, decoded.decode("utf-8", "replace")
        return
    if tag in _RESOLVABLE:
        value = go_yaml_scalar(node.value)
        wanted = _RESOLVABLE[tag]
        ok = (wanted == "!!timestamp" and go_timestamp(node.value)) or (
            wanted != "!!timestamp" and _short_tag(value) == wanted
            or (wanted == "!!float" and _short_tag(value) == "!!int"))
        if not ok:
            raise _GoYamlError("cannot decode %s `%s` as a %s" % (_short_tag(value), node.value, wanted))
        if wanted == "!!timestamp":
            node.tag = _STR_TAG
        elif wanted == "!!float":
            node.tag = _GO_FLOAT_TAG
            if isinstance(value, int):
                node.value = repr(float(value))
        else:
            node.tag = {"!!bool": "tag:yaml.org,2002:bool", "!!int": _GO_INT_TAG,
                        "!!null": "tag:yaml.org,2002:null"}[wanted]
        return
    node.tag = _STR_TAG


def _go_key(node):
    """A mapping key as go-yaml v2 decodes it, as (type, value), so that 1 and 1.0 or 1 and "1" differ."""
    if node.tag == _STR_TAG:
        return ("str", node.value)
    value = go_yaml_scalar(node.value)
    if node.tag == _GO_FLOAT_TAG:
        value = float(value)
    return (type(value).__name__, value)


def _null_key(data):
    """(value,) of the first null map key in document order, or None."""
    if isinstance(data, dict):
        for key, value in data.items():
            found = (value,) if key is None else _null_key(value)
            if found is not None:
                return found
    elif isinstance(data, list):
        for item in data:
            found = _null_key(item)
            if found is not None:
                return found
    return None


def go_sharp_v(value) -> str:
    """fmt's %#v of what go-yaml v2 decodes into interface{}: "s", 1, 1.5, true, <nil>, and
    map[interface {}]interface {}{...} (keys sorted) or []interface {}{...}."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return errors.go_quote(value)
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda item: go_sharp_v(item[0]))
        return "map[interface {}]interface {}{%s}" % ", ".join(
            "%s:%s" % (go_sharp_v(k), go_sharp_v(v)) for k, v in items)
    if isinstance(value, list):
        return "[]interface {}{%s}" % ", ".join(go_sharp_v(item) for item in value)
    return str(value)


def _yaml_duplicates(node, out: list, path: str = "") -> None:
    """go-yaml's "key already set in map" messages, each a DecodeMessage naming the duplicated field."""
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key, value in node.value:
            child = path
            if isinstance(key, yaml.ScalarNode):
                child = "%s.%s" % (path, key.value) if path else key.value
                # go-yaml v2 compares the decoded keys: 1 and 01 are one key, 1 and "1" two.
                typed = _go_key(key)
                if typed in seen:
                    # go-yaml v2: fmt.Sprintf("line %d: key %#v already set in map", line+1, key)
                    out.append(DecodeMessage("line %d: key %s already set in map" % (
                        key.start_mark.line + 1, go_sharp_v(typed[1])), child))
                seen.add(typed)
            _yaml_duplicates(value, out, child)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _yaml_duplicates(item, out, "%s[%d]" % (path, index))


def plain(value):
    """The one plain-type converter: exactly str, int, float, bool, None, dict and list, keys as sigs.k8s.io/yaml
    makes them (strings: true, false, null, 1, float keys the Go way). It is the YAML -> JSON step of parse_text,
    and what the action plugins apply to ansible-core 2.19's tagged str/int/dict/list subclasses and lazy containers.
    """
    if isinstance(value, Mapping):
        return dict((_json_key(plain(key)), plain(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    for json_type in (bool, str, int, float):  # bool first: it is an int
        if isinstance(value, json_type):
            return json_type(value)
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


# PyYAML's words for a syntax error where libyaml's (which go-yaml v2 ports) differ, by (context, problem).
_GO_YAML_PROBLEMS = (
    (None, re.compile(r"found character .* that cannot start any token"), "found character that cannot start any token"),
    (None, re.compile(r"mapping values are not allowed here"), "mapping values are not allowed in this context"),
    (None, re.compile(r"found unknown escape character"), "found unknown escape character"),
    (None, re.compile(r"found duplicate YAML directive"), "found duplicate %YAML directive"),
    ("while parsing a block mapping", re.compile(r"expected <block end>"), "did not find expected key"),
    ("while parsing a block collection", re.compile(r"expected <block end>"), "did not find expected '-' indicator"),
    ("while parsing a flow sequence", re.compile(r"expected ',' or ']'"), "did not find expected ',' or ']'"),
    ("while parsing a flow mapping", re.compile(r"expected ',' or '}'"), "did not find expected ',' or '}'"),
)
_UNDEFINED_ALIAS = re.compile(r"found undefined alias '(.*)'")


def go_yaml_syntax_error(exc) -> str:
    """A YAML syntax error as kube-scheduler prints it (go-yaml v2's parser.fail()): no JSON-conversion prefix;
    the line is 1-based for scanner errors and libyaml's 0-based mark for parser errors, and left out when that
    number is 0; an unknown alias names no line."""
    problem = getattr(exc, "problem", None) or str(exc)
    alias = _UNDEFINED_ALIAS.fullmatch(problem)
    if alias:
        return "yaml: unknown anchor '%s' referenced" % alias.group(1)
    for context, pattern, words in _GO_YAML_PROBLEMS:
        if (context is None or getattr(exc, "context", None) == context) and pattern.match(problem):
            problem = words
            break
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = 0
    if mark is not None and mark.line != 0:
        line = mark.line + (1 if isinstance(exc, yaml.scanner.ScannerError) else 0)
    return "yaml: %s%s" % ("line %d: " % line if line else "", problem)


_DIRECTIVE = re.compile(r"%([^\s#]*)[ \t]*([^\s#]*)")


def _unsupported_directive(text: str):
    """go-yaml v2 (libyaml) knows %YAML 1.1 and %TAG only; PyYAML also takes %YAML 1.2 and skips unknown
    directives. Directives stand at the start of a line before the document's first "---"."""
    for number, line in enumerate(text.splitlines()):
        if line.startswith("---") or line.startswith("..."):
            return None
        match = _DIRECTIVE.match(line)
        if not match:
            if line.strip() and not line.lstrip().startswith("#"):
                return None  # the document started without "---": no directives
            continue
        name, value = match.groups()
        if name == "YAML" and value != "1.1":
            # A parser error: libyaml's 0-based line, none on the first line.
            return "yaml: %sfound incompatible YAML document" % ("line %d: " % number if number else "")
        if name not in ("YAML", "TAG"):
            # A scanner error: 1-based, none on the first line.
            return "yaml: %sfound unknown directive name" % ("line %d: " % (number + 1) if number else "")
    return None


def parse_text(text: str, minor: int = None):
    """Return (data, strict_messages, error_message). JSON input goes through the JSON path, as upstream.
    ``minor`` (30 for 1.30) picks the words of a message that changed between releases; None means the newest.

    Like sigs.k8s.io/yaml (go-yaml v2 Unmarshal), only the first YAML document is read: what follows the
    next ``---`` is never parsed.
    """
    # Size, nesting and alias expansion are checked on the events alone, before anything is composed.
    too_costly = yaml_limits.scan_text(text)
    if too_costly:
        return None, [], too_costly
    if text.lstrip().startswith("{"):
        return _parse_json(text)
    directive = _unsupported_directive(text)
    if directive:
        return None, [], directive
    loader = _yaml_loader()(text)
    try:
        node = loader.get_node() if loader.check_node() else None
        if node is not None:
            _go_tags(node, set())
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        return None, [], go_yaml_syntax_error(exc)
    except _GoYamlError as exc:
        return None, [], "yaml: %s" % exc
    except RecursionError:
        # scan_text refuses deep nesting first; this keeps any text the scan let through from becoming a traceback.
        return None, [], yaml_limits.too_deep()
    finally:
        loader.dispose()
    null_key = _null_key(data)
    if null_key is not None:
        # sigs.k8s.io/yaml's convertToJSONableObject; its first letter went lower-case in the 1.31 vendoring.
        return None, [], "%snsupported map key of type: %%!s(<nil>), key: <nil>, value: %s" % (
            "u" if since("yaml_map_key_error_lower_case", minor) else "U", go_sharp_v(null_key[0]))
    duplicates = []
    if node is not None:
        _yaml_duplicates(node, duplicates)
    strict = []
    if duplicates:
        strict.append(DecodeMessage("yaml: unmarshal errors:\n  " + "\n  ".join(duplicates), duplicates[0].field))
    data = plain(data)
    bad = _non_finite(data)
    if bad is not None:
        return None, [], DecodeMessage("json: unsupported value: %s" % _go_float_name(_lookup(data, bad)), bad)
    return data, strict, None


def parsed(text):
    """The data of YAML or JSON ``text``; ValueError when it does not parse (redaction.redact_message's ``parse``,
    which turns the decoder's echo of the whole input back into data to redact)."""
    data, _strict, error = parse_text(text)
    if error:
        raise ValueError("not parseable")
    return data


def parsed_or_none(text):
    """The data of ``text``, or None when it is not text or does not parse (to find secrets in it, or hints)."""
    if not isinstance(text, str):
        return None
    data, _strict, error = parse_text(plain(text))
    return data if not error else None


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
        raise ValueError("invalid character %s looking for beginning of value" % errors.go_quote(name[:1]).replace('"', "'"))

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_constant=constant, parse_int=_json_int,
                          parse_float=_json_float)
    except ValueError as exc:
        return None, [], "couldn't get version/kind; json parse error: %s" % exc
    return _replace_surrogates(data), [DecodeMessage('duplicate field "%s"' % key, key) for key in duplicates], None


class JsonNumber(float):
    """A JSON number no Go numeric type holds (more digits than Python's int() reads, or beyond float64): its value
    is infinite, so every numeric field refuses it, and it prints as its literal, as encoding/json's "cannot
    unmarshal number <literal> into Go struct field ..." does."""

    def __new__(cls, literal):
        number = super().__new__(cls, float("-inf") if literal.startswith("-") else float("inf"))
        number.literal = literal
        return number

    def __getnewargs__(self):
        # copy.deepcopy (configuration.process copies the decoded config) rebuilds it from the literal, not the float.
        return (self.literal,)

    def __repr__(self):
        return self.literal

    __str__ = __repr__


# Dumped as the float it is (an infinity), as before the literal was kept: args of an out-of-tree plugin may hold one.
yaml.SafeDumper.add_representer(JsonNumber, lambda dumper, value: dumper.represent_float(float(value)))


def _json_int(literal):
    # More than 20 significant digits is outside int64 and uint64 anyway; int() would refuse 4301 and more.
    return int(literal) if len(literal.lstrip("-")) <= 4000 else JsonNumber(literal)


def _json_float(literal):
    number = float(literal)
    return JsonNumber(literal) if math.isinf(number) else number


_SURROGATE = re.compile("[\ud800-\udfff]")


def _replace_surrogates(data):
    """encoding/json turns a \\uXXXX escape of a lone surrogate into U+FFFD (a valid pair is one character)."""
    if isinstance(data, str):
        return _SURROGATE.sub("\ufffd", data)
    if isinstance(data, dict):
        return dict((_replace_surrogates(key), _replace_surrogates(value)) for key, value in data.items())
    if isinstance(data, list):
        return [_replace_surrogates(item) for item in data]
    return data


def dump_yaml(data) -> str:
    """The one canonical dumper: sorted keys, block style, no line folding, plain YAML types only (safe_dump, so
    no Python-specific tags; strings such as "yes" or "1.0" come out quoted). The same data always gives the same
    bytes, so the text can be compared, checksummed and written idempotently."""
    return yaml.safe_dump(data, default_flow_style=False, sort_keys=True, allow_unicode=True,
                          indent=2, width=1 << 30, explicit_start=False)
