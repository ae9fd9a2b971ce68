# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the rollout engine keeps on a master for a later call (the record of a change, each backup's index), as
bytes: written with a format version and the sha256 of its canonical body, and read back checked.

A record is trusted only once it parsed as JSON, its version is one this collection reads, its checksum matches its
body and every field has the type and the form the engine relies on (the caller's ``check``). Anything else is one
error, RecordDamaged, naming the file, what is wrong with it and what the operator should do: the record is never
taken for "nothing held", and the engine never acts on part of it. Records of the version before checksums (no
``version`` field, no ``sha256``) are read as version 0 once their structure is checked.
Host code: stdlib only.
"""

from __future__ import annotations

import hashlib
import json

from ansible_collections.kubesched.schedulers.plugins.module_utils._rollout_errors import RolloutFailed

VERSION = 1
# The versions this collection reads: 0 (written before records carried a version and a checksum) and VERSION.
READS = (0, VERSION)
# A record names a few instances and files; anything much larger is not one the engine wrote.
MAX_BYTES = 4 << 20
_HEX = frozenset("0123456789abcdef")


class RecordDamaged(RolloutFailed):
    """A record on the master that cannot be trusted: ``path``, ``problem`` (what is wrong), ``advice`` (what to do)."""

    def __init__(self, path, problem, advice):
        super(RecordDamaged, self).__init__(
            "%s cannot be trusted: %s. Nothing was changed on this master. %s" % (path, problem, advice))
        self.path = path
        self.problem = problem
        self.advice = advice


class Wrong(ValueError):
    """A field of a record that is not what the engine wrote; the text names the field."""


def checksum(body):
    """The sha256 of the canonical JSON of ``body`` (its keys sorted, no spaces, ASCII), without its own checksum."""
    canonical = dict((key, value) for key, value in body.items() if key != "sha256")
    return hashlib.sha256(json.dumps(canonical, sort_keys=True, separators=(",", ":")).encode("ascii")).hexdigest()


def encode(body):
    """The bytes of a record of ``body`` (a mapping without ``version`` or ``sha256``): the current version and the
    checksum added, indented for the operator who reads it."""
    record = dict(body, version=VERSION)
    record["sha256"] = checksum(record)
    return json.dumps(record, indent=1, sort_keys=True).encode("ascii")


def read(path, check, advice):
    """The checked body of the record at ``path`` (its ``version`` and ``sha256`` taken out), or None when there is
    no file. ``check(body, version)`` raises Wrong for what the engine cannot rely on."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RecordDamaged(path, "it cannot be read (%s)" % (exc.strerror or exc), advice)
    return decode(data, path, check, advice)


def decode(data, path, check, advice):
    """``data`` (bytes) as a checked record body (see ``read``); RecordDamaged for anything else, never another
    error."""
    if len(data) > MAX_BYTES:
        raise RecordDamaged(path, "it is larger than %d bytes, which no record of this collection is" % MAX_BYTES,
                            advice)
    try:
        body = json.loads(data.decode("utf-8"), object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except RecursionError:
        raise RecordDamaged(path, "it is not JSON the engine wrote (nested too deep)", advice) from None
    except ValueError as exc:  # also UnicodeDecodeError, a duplicate key, NaN or Infinity, an integer too long
        raise RecordDamaged(path, "it is not JSON (%s): it was cut short or changed after it was written" % exc,
                            advice) from None
    version = 0
    if isinstance(body, dict) and ("version" in body or "sha256" in body):
        version = body.pop("version", None)
        if not isinstance(version, int) or isinstance(version, bool) or version not in READS:
            raise RecordDamaged(path, "its format version %s is not one this collection reads (%s): a newer version "
                                "of kubesched.schedulers wrote it, or it was changed" % (
                                    shown(version), " or ".join(str(v) for v in READS)), advice)
        recorded = body.pop("sha256", None)
        try:
            actual = checksum(dict(body, version=version))
        except (ValueError, RecursionError):
            actual = None
        if recorded != actual:
            raise RecordDamaged(path, "its checksum does not match its content (recorded %s, the content's is %s): it "
                                "was changed or damaged after it was written" % (shown(recorded), actual), advice)
    try:
        check(body, version)
    except Wrong as exc:
        raise RecordDamaged(path, "%s (format version %d)" % (exc, version), advice) from None
    except RecursionError:
        raise RecordDamaged(path, "it is not a record the engine wrote (nested too deep)", advice) from None
    return body


def _unique_keys(pairs):
    keys = [key for key, _value in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key is given twice")
    return dict(pairs)


def _no_constant(name):
    raise ValueError("%s is not a number" % name)


def shown(value, limit=80):
    try:
        text = json.dumps(value)
    except (ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= limit else text[:limit] + "..."


# --- the checks' vocabulary: each raises Wrong naming the field -----------------------------------------------------

def mapping(value, where, required, optional=()):
    """``value`` is a mapping with every key of ``required`` and no key outside ``required`` and ``optional``."""
    if not isinstance(value, dict):
        raise Wrong("%s: an object expected, got %s" % (where, shown(value)))
    missing = [key for key in required if key not in value]
    if missing:
        raise Wrong("%s: %s missing" % (where, ", ".join(missing)))
    unknown = sorted(key for key in value if key not in required and key not in optional)
    if unknown:
        raise Wrong("%s: %s is not a field of this record" % (where, ", ".join(shown(key) for key in unknown)))
    return value


def items(value, where):
    if not isinstance(value, list):
        raise Wrong("%s: a list expected, got %s" % (where, shown(value)))
    return [("%s[%d]" % (where, index), item) for index, item in enumerate(value)]


def text(value, where, empty=True):
    if not isinstance(value, str) or "\x00" in value or (not empty and not value):
        raise Wrong("%s: %s text expected, got %s" % (where, "some" if not empty else "a", shown(value)))
    return value


def absolute_path(value, where):
    if not isinstance(value, str) or not value.startswith("/") or "\x00" in value:
        raise Wrong("%s: an absolute path expected, got %s" % (where, shown(value)))
    return value


def file_name(value, where):
    """A name used as one directory of the state directory: no separator, not "." or ".."."""
    if not isinstance(value, str) or not value or "/" in value or "\x00" in value or value in (".", ".."):
        raise Wrong("%s: a name expected (no \"/\", not \".\" or \"..\"), got %s" % (where, shown(value)))
    return value


def integer(value, where, low, high, none=False):
    if none and value is None:
        return value
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise Wrong("%s: an integer from %d to %d%s expected, got %s" % (
            where, low, high, " or null" if none else "", shown(value)))
    return value


def boolean(value, where):
    if not isinstance(value, bool):
        raise Wrong("%s: true or false expected, got %s" % (where, shown(value)))
    return value


def digest(value, where, none=False):
    if none and value is None:
        return value
    if not isinstance(value, str) or len(value) != 64 or not set(value) <= _HEX:
        raise Wrong("%s: a sha256 (64 hex digits) expected, got %s" % (where, shown(value)))
    return value


def optional_text(value, where):
    return value if value is None else text(value, where)
