# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cost limits for configuration input, checked before anything is composed or expanded.

kube-scheduler's decoder (sigs.k8s.io/yaml on go-yaml v2) refuses a document whose aliases expand too much
("document contains excessive aliasing") and nesting deeper than 10000 levels. Pure-Python YAML and the recursive
walks of this library are far slower and shallower than Go, so the limits here are:

- the text is at most MAX_TEXT_BYTES (1 MiB, the size limit of the ConfigMap a scheduler config usually lives in);
- go-yaml v2's own alias rule, counted exactly as its decoder counts (every node decoded, every node decoded inside
  an alias), from the event stream, without expanding anything;
- at most MAX_NODES nodes with the aliases expanded, and at most MAX_DEPTH levels of nesting (no
  KubeSchedulerConfiguration needs more than a dozen).

``scan_text`` reads only the parser's events of the first document (libyaml's parser when PyYAML has it; PyYAML's
own when libyaml refuses the text), so the check costs a fraction of the real parse and stops at the first excess. ``check_structure`` does the same for data
that is already parsed (a mapping from a playbook), iteratively, so no input can reach a RecursionError.
Pure Python; PyYAML is imported only when text is scanned.
"""

from __future__ import annotations

import re

MAX_TEXT_BYTES = 1 << 20
MAX_DEPTH = 100
MAX_NODES = 50000

# go-yaml v2 decode.go: allowedAliasRatio
_ALIAS_RATIO_RANGE_LOW = 400000
_ALIAS_RATIO_RANGE_HIGH = 4000000
_PREFIX = "yaml: "  # as kube-scheduler words its alias and depth refusals
# A JSON string, or (group 1 unset) one that never closes, matched to the end: a search for closed strings only
# would scan to the end again from every quote after an unclosed one, though none of them can start a string (each
# is escaped in the unclosed one's reading).
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*(")?', re.DOTALL)
_JSON_STRUCTURE = re.compile(r"[\[\]{},]")
# What go-yaml's reader (and PyYAML's) accepts; anything else is "control characters are not allowed".
_NON_PRINTABLE = re.compile("[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")


def allowed_alias_ratio(decode_count: int) -> float:
    if decode_count <= _ALIAS_RATIO_RANGE_LOW:
        return 0.99
    if decode_count >= _ALIAS_RATIO_RANGE_HIGH:
        return 0.10
    return 0.99 - 0.89 * (float(decode_count - _ALIAS_RATIO_RANGE_LOW)
                          / (_ALIAS_RATIO_RANGE_HIGH - _ALIAS_RATIO_RANGE_LOW))


def excessive_aliasing(decode_count: int, alias_count: int) -> bool:
    """go-yaml v2's test, made on every node it decodes."""
    return (alias_count > 100 and decode_count > 1000
            and float(alias_count) / decode_count > allowed_alias_ratio(decode_count))


def _at(event) -> str:
    """yaml: line N: for YAML (where the parser is), json: for JSON text."""
    return "%sline %d: " % (_PREFIX, event.start_mark.line + 1) if event is not None else "json: "


def _too_deep(event=None) -> str:
    return ("%snesting deeper than %d levels: refused before parsing (no KubeSchedulerConfiguration needs more than "
            "a dozen levels; kube-scheduler itself stops at 10000)" % (_at(event), MAX_DEPTH))


def too_deep() -> str:
    """The refusal of nesting found while parsing rather than scanning."""
    return _too_deep()


def _too_many(event=None) -> str:
    return ("%smore than %d values with the aliases expanded: refused before expanding them (a hostile or "
            "generated document; a real KubeSchedulerConfiguration has a few hundred)" % (_at(event), MAX_NODES))


def _size_error(size: int) -> str:
    return ("the configuration text is %d bytes, more than the %d bytes (1 MiB) this collection reads; a "
            "KubeSchedulerConfiguration is usually a few KiB and a ConfigMap holds at most 1 MiB" % (size, MAX_TEXT_BYTES))


def scan_text(text: str):
    """The first limit the text exceeds, as a one-line message in kube-scheduler's decode-error style; or None."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_TEXT_BYTES:
        return _size_error(size)
    # go-yaml's reader sees every input first, JSON too (a JSON file goes through YAMLToJSON).
    if _NON_PRINTABLE.search(text):
        return _PREFIX + "control characters are not allowed"
    if text.lstrip().startswith("{"):
        return _scan_json(text)
    return _scan_yaml(text)


def _scan_json(text: str):
    """JSON has no aliases: nesting and the number of values follow from the brackets and commas outside strings."""
    depth = deepest = values = 0
    outside = _JSON_STRING.sub(lambda string: '""' if string.group(1) else string.group(0), text)
    for char in _JSON_STRUCTURE.findall(outside):
        if char in "[{":
            depth += 1
            values += 1
            deepest = max(deepest, depth)
        elif char == ",":
            values += 1
        else:
            depth -= 1
    if deepest > MAX_DEPTH:
        return _too_deep()
    if values > MAX_NODES:
        return _too_many()
    return None


def _scan_yaml(text: str):
    import yaml
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return _scan_events(yaml, fast, text)
        except yaml.YAMLError:
            # libyaml refuses some texts that PyYAML's own parser, which parse_text uses, accepts (a libyaml built
            # with a nesting limit stops at 1000 levels, before this scan reaches MAX_DEPTH): scan them again with
            # that parser, whose event stream is iterative, so that its recursive composer never sees them.
            pass
    try:
        return _scan_events(yaml, yaml.SafeLoader, text)
    except yaml.YAMLError:
        return None  # a syntax error: the parser proper reports it with kube-scheduler's words


def _scan_events(yaml, loader_class, text: str):
    loader = loader_class(text)
    # go-yaml counts the document node too; then one per node, and each node of an alias's expansion again.
    decodes, aliased = 1, 0
    open_nodes = []  # (anchor, decodes before the node)
    sizes = {}  # anchor -> nodes its value decodes to, aliases inside it expanded
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, (yaml.DocumentEndEvent, yaml.StreamEndEvent)):
                break  # sigs.k8s.io/yaml reads the first document only
            if isinstance(event, yaml.AliasEvent):
                size = sizes.get(event.anchor)
                if size is None:
                    if any(anchor == event.anchor for anchor, _unused in open_nodes):
                        return "%sanchor '%s' value contains itself" % (_PREFIX, event.anchor)
                    continue  # unknown anchor: the parser proper reports it
                decodes += 1 + size
                aliased += size
            elif isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent)):
                decodes += 1
                if isinstance(event, yaml.CollectionStartEvent):
                    open_nodes.append((event.anchor, decodes - 1))
                    if len(open_nodes) > MAX_DEPTH:
                        return _too_deep(event)
                elif event.anchor is not None:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.CollectionEndEvent) and open_nodes:
                anchor, before = open_nodes.pop()
                if anchor is not None:
                    sizes[anchor] = decodes - before
                continue
            else:
                continue
            if excessive_aliasing(decodes, aliased):
                return _PREFIX + "document contains excessive aliasing"
            if decodes > MAX_NODES:
                return _too_many(event)
    finally:
        loader.dispose()
    return None


def check_structure(value, field="config"):
    """The same depth and size limits for data already parsed; shared references count once per reference, as an
    alias expansion would. Returns a one-line message naming ``field`` (when given), or None."""
    message = _structure_problem(value)
    if message and field:
        return "%s: %s" % (field, message)
    return message


def _structure_problem(value):
    budget = MAX_NODES
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        budget -= 1
        if budget < 0:
            return ("more than %d values in all: refused before copying them (a real KubeSchedulerConfiguration "
                    "has a few hundred)" % MAX_NODES)
        if isinstance(item, dict):
            children = list(item.values()) + list(item.keys())
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            return "nested deeper than %d levels: refused (no KubeSchedulerConfiguration needs more than a dozen)" % (
                MAX_DEPTH)
        stack.extend((child, depth + 1) for child in children)
    return None
