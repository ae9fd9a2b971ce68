"""Every regular expression in plugins/ runs in linear time on hostile text, as Go's RE2 does in kube-scheduler.

Python's re backtracks: a pattern whose parts overlap (``\\d+(?:_\\d+)*)?\\.?\\d*``, ``\\s*(?:- )*`` before text that may
start with spaces) tries every split of a long run, and a search retries a long failing match from every position.
A 120,000-digit defaultRequestsMultiplier once took role_inputs past a minute. The patterns are found in the
sources, not listed by hand: every module-level compiled pattern (also inside tables), every inline ``re.<method>``
with a literal pattern and every pattern a function builds (FUNCTION_BUILT), each run the way the code runs it (the
methods found beside it). A new pattern is checked without a change here; one whose use cannot be read from the
source must be named in USED_BY_HAND.

Hostile text is made from the pattern itself: the prefixes of strings it matches, each repeated, and single
characters, each followed by a character that ends the match. Each kind is timed at 1 KiB and 4 KiB; the slowest
and the fastest-growing are timed again at 16 KiB (a quadratic pattern is caught there, in well under a second),
and the worst then runs on 256 KiB and 1 MiB: at most a few seconds and a growth that stays linear (under 12x for 4x
the text, the shortest of two runs each). Every time is the CPU time of the run, which make test's other chains do
not stretch as they stretch the clock (a linear pattern once took 0.03 s at 256 KiB and 0.65 s at 1 MiB by the clock
there); an alarm on that CPU time stops a run that would take hours.
"""

from __future__ import annotations

import ast
import importlib
import random
import re
import signal
import time
import zlib
from contextlib import contextmanager
from pathlib import Path

import pytest

try:  # Python 3.11
    from re import _parser as sre_parse  # pylint: disable=no-name-in-module
except ImportError:  # pragma: no cover
    import sre_parse  # pylint: disable=deprecated-module

from ansible_collections.kubesched.schedulers.plugins.module_utils import _files

PLUGINS = Path(__file__).resolve().parents[3] / "plugins"
PACKAGE = "ansible_collections.kubesched.schedulers.plugins"
SEARCHING = ("search", "findall", "finditer", "sub", "subn", "split")
METHODS = ("match", "fullmatch") + SEARCHING

# Patterns whose method the source does not show next to them (a loop over a table): label -> methods.
USED_BY_HAND = {"plugin_utils/core/yaml_io._GO_YAML_PROBLEMS": ("match",)}
# Patterns a function compiles: label -> (the function's pattern for a typical argument, methods).
FUNCTION_BUILT = {"module_utils/_files.temp_pattern": (lambda: _files.temp_pattern(b"scheduler.yaml"), ("fullmatch",))}

SIZES = (1 << 10, 1 << 12)
GROWTH = 1 << 14
BIG, BIGGEST = 1 << 18, 1 << 20
CAP_SECONDS = 5.0
ENDINGS = ("", "\x00", "!", "\n", "x", '"', "-", " ", ":")


def _module(path):
    return importlib.import_module("%s.%s" % (PACKAGE, ".".join(path.relative_to(PLUGINS).with_suffix("").parts)))


def _label(path, name):
    return "%s.%s" % (path.relative_to(PLUGINS).with_suffix("").as_posix(), name)


def _flags(call):
    flags = 0
    for argument in list(call.args[2:]) + [keyword.value for keyword in call.keywords if keyword.arg == "flags"]:
        for node in ast.walk(argument):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
                flags |= getattr(re, node.attr)
    return flags


def _resolve(node, module):
    """The object an expression names (a name, or attributes of one), or None."""
    if isinstance(node, ast.Name):
        return vars(module).get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _resolve(node.value, module)
        return getattr(owner, node.attr, None) if owner is not None else None
    return None


def _patterns_in(value, seen=None):
    seen = set() if seen is None else seen
    if isinstance(value, re.Pattern):
        yield value
    elif isinstance(value, (tuple, list)) and id(value) not in seen:
        seen.add(id(value))
        for item in value:
            yield from _patterns_in(item, seen)
    elif isinstance(value, dict) and id(value) not in seen:
        seen.add(id(value))
        for item in value.values():
            yield from _patterns_in(item, seen)


def discover():
    """[(label, pattern, methods)] of every pattern in plugins/; [function-level re.compile calls not listed]."""
    owners, uses, inline, unlisted = {}, {}, [], []
    for path in sorted(PLUGINS.rglob("*.py")):
        module, tree = _module(path), ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign) else []
            for target in targets:
                if isinstance(target, ast.Name):
                    value = vars(module).get(target.id)
                    for index, pattern in enumerate(_patterns_in(value)):
                        name = target.id if isinstance(value, re.Pattern) else "%s[%d]" % (target.id, index)
                        owners.setdefault(id(pattern), (_label(path, name), pattern))
        for function in [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]:
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.func.attr == "compile":
                    if _label(path, function.name) not in FUNCTION_BUILT:
                        unlisted.append("%s (line %d)" % (_label(path, function.name), node.lineno))
        # A pattern handed to a function of the module (inputs._matching) is used as that function uses its parameter.
        parameters = {}
        for function in [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]:
            names = [argument.arg for argument in function.args.args]
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in METHODS \
                        and isinstance(node.func.value, ast.Name) and node.func.value.id in names:
                    parameters.setdefault((function.name, names.index(node.func.value.id)), set()).add(node.func.attr)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                for index, argument in enumerate(node.args):
                    target = _resolve(argument, module)
                    if isinstance(target, re.Pattern) and (node.func.id, index) in parameters:
                        uses.setdefault(id(target), set()).update(parameters[node.func.id, index])
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in METHODS):
                continue
            if isinstance(node.func.value, ast.Name) and node.func.value.id == "re":
                if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, (str, bytes)):
                    inline.append(("%s:%d" % (_label(path, "re." + node.func.attr), node.lineno),
                                   re.compile(node.args[0].value, _flags(node)), (node.func.attr,)))
                continue
            target = _resolve(node.func.value, module)
            if isinstance(target, re.Pattern):
                uses.setdefault(id(target), set()).add(node.func.attr)
    found = []
    for key, (label, pattern) in sorted(owners.items(), key=lambda item: item[1][0]):
        table = label.rsplit("[", 1)[0]
        methods = uses.get(key) or set(USED_BY_HAND.get(table, ()))
        found.append((label, pattern, tuple(sorted(methods))))
    found.extend(inline)
    for label, (build, methods) in sorted(FUNCTION_BUILT.items()):
        found.append((label, build(), methods))
    return found, unlisted


FOUND, UNLISTED = discover()


# --- hostile text made from the pattern ---------------------------------------------------------------------------

def _sample(items, groups, chooser, cuts=None):
    """A string the parsed pattern matches; ``cuts`` gets the length after each part of the top level."""
    out = []
    items = list(items)
    for index, (op, value) in enumerate(items):
        name = str(op)
        if name == "LITERAL":
            out.append(chr(value))
        elif name == "NOT_LITERAL":
            out.append("a" if value != ord("a") else "b")
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_member(value, chooser))
        elif name == "BRANCH":
            out.append(_sample(chooser.choice(value[1]), groups, chooser))
        elif name == "SUBPATTERN":
            text = _sample(value[-1], groups, chooser)
            groups[value[0]] = text
            out.append(text)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, item = value
            count = chooser.randint(low, min(max(low, 1) + 2, high))
            out.extend(_sample(item, groups, chooser) for _repeat in range(count))
        elif name == "GROUPREF":
            out.append(groups.get(value, ""))
        elif name == "ATOMIC_GROUP":
            out.append(_sample(value, groups, chooser))
        elif name == "GROUPREF_EXISTS":
            out.append(_sample(value[1], groups, chooser))
        if cuts is not None and not (name == "LITERAL" and index + 1 < len(items) and str(items[index + 1][0]) == "LITERAL"):
            cuts.append(len("".join(out)))  # after each part, a run of literal characters being one
    return "".join(out)


def _member(items, chooser):
    negate = any(str(op) == "NEGATE" for op, _value in items)
    chars = []
    for op, value in items:
        if str(op) == "LITERAL":
            chars.append(chr(value))
        elif str(op) == "RANGE":
            chars.append(chr(chooser.randint(*value)))
        elif str(op) == "CATEGORY":
            chars.append({"CATEGORY_DIGIT": "7", "CATEGORY_SPACE": " ", "CATEGORY_WORD": "w",
                          "CATEGORY_NOT_DIGIT": "d", "CATEGORY_NOT_SPACE": "s", "CATEGORY_NOT_WORD": "-"}.get(str(value), "a"))
    if negate:
        return next(char for char in "a0 -_.:\"'\\,x\n" if char not in chars)
    return chooser.choice(chars) if chars else "a"


def pumps(pattern):
    """The repeated units: prefixes of a few strings the pattern matches (cut after each of its top-level parts, and
    one character short of each: an escape that swallows the closing quote), and single characters."""
    source = pattern.pattern.decode("latin-1") if isinstance(pattern.pattern, bytes) else pattern.pattern
    units = set("09aAeEx._-+ \t\n\"'\\:#,{[/=%@*!~$}")
    try:
        parsed = sre_parse.parse(source, pattern.flags & ~re.DEBUG)
    except re.error:  # pragma: no cover
        parsed = []
    chooser = random.Random(zlib.crc32(source.encode("utf-8", "surrogatepass")))  # the same strings every run
    for _unused in range(6):
        cuts = []
        text = _sample(parsed, {}, chooser, cuts) if parsed else ""
        for cut in set(cuts + [cut - 1 for cut in cuts] + [len(text) - 1]):
            if 0 < cut <= len(text):
                units.add(text[:cut])
        units.update(text)
    return sorted(units)


def _text(unit, ending, size, as_bytes):
    text = unit * max(1, (size - len(ending)) // len(unit)) + ending
    return text.encode("latin-1", "replace") if as_bytes else text


class TooSlow(Exception):
    pass


@contextmanager
def alarm(seconds):
    def stop(_signum, _frame):
        raise TooSlow()
    previous = signal.signal(signal.SIGVTALRM, stop)
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)  # the CPU time this process spends, as the runs are timed
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)


def run_once(pattern, method, text):
    start = time.process_time()
    if method in SEARCHING:
        for _match in pattern.finditer(text):
            pass
    else:
        getattr(pattern, method)(text)
    return time.process_time() - start


def timed(pattern, method, text, seconds, runs=1):
    """The shortest CPU time of ``runs`` runs (cold caches and a shared core only ever add some), inf past
    ``seconds`` of CPU."""
    best = float("inf")
    for _run in range(runs):
        with alarm(seconds):
            try:
                best = min(best, run_once(pattern, method, text))
            except TooSlow:
                return float("inf")
    return best


# --- the tests ----------------------------------------------------------------------------------------------------

def test_the_sources_patterns_are_all_found():
    labels = [label for label, _pattern, _methods in FOUND]
    # What the plugins held when this test was written; fewer means the discovery broke, not that code went away.
    assert len(labels) >= 60, labels
    assert "plugin_utils/config/_strict_decode._QUANTITY" in labels and "module_utils/_secrets._INLINE" in labels
    assert not UNLISTED, "a function compiles a pattern this test does not run: add it to FUNCTION_BUILT: %s" % UNLISTED


def test_every_pattern_has_a_known_use():
    unused = [label for label, _pattern, methods in FOUND if not methods]
    assert not unused, "no call of these patterns was found beside them: name their methods in USED_BY_HAND: %s" % unused


@pytest.mark.parametrize("label, pattern, methods", FOUND, ids=[label for label, _pattern, _methods in FOUND])
def test_a_pattern_takes_linear_time_on_a_mebibyte_of_hostile_text(label, pattern, methods):
    as_bytes = isinstance(pattern.pattern, bytes)
    for method in sorted(set("finditer" if method in SEARCHING else method for method in methods)):
        kinds = []
        for unit in pumps(pattern):
            for ending in ENDINGS:
                small, large = (timed(pattern, method, _text(unit, ending, size, as_bytes), 2) for size in SIZES)
                kinds.append((large, large / max(small, 1e-6), unit, ending))
        candidates = sorted(kinds, reverse=True)[:3] + sorted(kinds, key=lambda kind: -kind[1])[:3]
        worst = None
        for large, _ratio, unit, ending in candidates:
            grown = timed(pattern, method, _text(unit, ending, GROWTH, as_bytes), CAP_SECONDS, runs=2)
            where = "%s.%s(%r * n + %r)" % (label, method, unit[:40], ending)
            # Linear growth is 4x from 4 KiB to 16 KiB; quadratic 16x.
            if grown >= 0.02 and grown / max(large, 1e-6) >= 12:  # measured once more before it counts
                large = timed(pattern, method, _text(unit, ending, SIZES[-1], as_bytes), CAP_SECONDS, runs=3)
                grown = timed(pattern, method, _text(unit, ending, GROWTH, as_bytes), CAP_SECONDS, runs=3)
            assert grown < 0.02 or grown / max(large, 1e-6) < 12, "%s: %.4f s at 4 KiB, %.4f s at 16 KiB" % (
                where, large, grown)
            if worst is None or grown > worst[0]:
                worst = (grown, unit, ending, where)
        _grown, unit, ending, where = worst
        big = timed(pattern, method, _text(unit, ending, BIG, as_bytes), CAP_SECONDS, runs=2)
        biggest = timed(pattern, method, _text(unit, ending, BIGGEST, as_bytes), CAP_SECONDS, runs=2)
        assert biggest < CAP_SECONDS, "%s: more than %s s on 1 MiB" % (where, CAP_SECONDS)
        if biggest >= 0.25 and biggest / max(big, 1e-6) >= 12:  # measured once more before it counts
            big = timed(pattern, method, _text(unit, ending, BIG, as_bytes), CAP_SECONDS, runs=3)
            biggest = timed(pattern, method, _text(unit, ending, BIGGEST, as_bytes), CAP_SECONDS, runs=3)
        # Linear is 4x from 256 KiB to 1 MiB, quadratic 16x; CPU time and the shortest of two runs keep a busy
        # machine's noise (seen by the clock: 10.8x at a load average of 10, 24x under make test) under the line.
        assert biggest < 0.25 or biggest / max(big, 1e-6) < 12, "%s: %.3f s at 256 KiB, %.3f s at 1 MiB" % (
            where, big, biggest)
