# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one input model: every value that reaches a file, a path, a unit, a command line, a manifest or an
in-cluster object is checked here, by kind, and refused with the name the user wrote (a role variable, a module
option, a filter argument).

A kind is a function ``(value, name) -> normalised value`` that raises InputError. The roles' variables are listed
in instances/role_variables.py with their kind; the role_inputs action checks them all on the controller before any
host is touched, the action plugins check their own options with the same kinds, and instances/model.py uses them
for instance fields. Pure Python: no Ansible imports.
"""

from __future__ import annotations

import re

# The one "did you mean" of the collection: the host's option check and the controller's suggestions alike.
from ansible_collections.kubesched.schedulers.plugins.module_utils._args import closest  # noqa: F401 pylint: disable=unused-import
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.messages import shown, type_name
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import UnsupportedVersion, normalise

# C0 and C1 control characters, DEL, and the Unicode line and paragraph separators: none of them belongs in a
# value that reaches a unit file, a command line, a path or a manifest (quoting escapes \ " % $, not newlines).
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Linux refuses one argv word longer than MAX_ARG_STRLEN (32 pages, 131072 bytes with its NUL) with E2BIG, so a
# longer flag makes the unit or the container fail to start.
MAX_ARG_BYTES = 131071
PATH_MAX = 4095
NAME_MAX = 255
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_ACCOUNT = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
_IMAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@-]{0,511}")
_URL = re.compile(r"https?://[^\s]+")
_CHECKSUM = re.compile(r"sha256:[0-9a-fA-F]{64}")
_PERCENT = re.compile(r"[0-9]{1,3}%")


class InputError(ValueError):
    """One refused value, worded for the operator with the name they wrote."""


def field_key(key):
    """A key as part of a field path: as it is when it is printable, else quoted with escapes."""
    return key if isinstance(key, str) and key and not CONTROL.search(key) and len(key) <= 80 else shown(key)


def _invalid(name, value, detail):
    return InputError("%s: Invalid value: %s: %s" % (name, shown(value), detail))


def _text(value, name, what):
    if not isinstance(value, str):
        raise InputError("%s: must be %s, got %s" % (name, what, type_name(value)))
    if not value.strip():
        raise InputError("%s: Required value: must not be empty (an empty survey field?): give %s" % (name, what))
    if CONTROL.search(value):
        raise _invalid(name, value, "must not contain control characters such as newlines (it is written into a "
                                    "unit, a command line, a path or a manifest)")
    return value


# --- kinds -----------------------------------------------------------------------------------------------------

def path(value, name):
    """An absolute, normalised path: no '.' or '..' component and no '//' (two spellings of one path would pass
    every comparison; a hostPath with '..' is refused by the API server), within PATH_MAX; a trailing '/' is
    dropped. The root directory itself is refused: every path here names a file or a directory of this role."""
    _text(value, name, "an absolute path such as /etc/kubernetes/schedulers")
    if not value.startswith("/"):
        raise _invalid(name, value, "must be an absolute path (starting with /)")
    trimmed = value.rstrip("/")
    if not trimmed:
        raise _invalid(name, value, "must not be the root directory /")
    parts = trimmed.split("/")[1:]
    if any(part in ("", ".", "..") for part in parts):
        raise _invalid(name, value, "must be a normalised path, without '.', '..' or '//' (write %s)"
                       % _normalised(trimmed))
    if len(trimmed.encode("utf-8")) > PATH_MAX or any(len(part.encode("utf-8")) > NAME_MAX for part in parts):
        raise _invalid(name, value, "too long for a Linux path (%d bytes in all, %d per name)" % (PATH_MAX, NAME_MAX))
    return trimmed


def _normalised(text):
    out = []
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if out:
                out.pop()
            continue
        out.append(part)
    return "/" + "/".join(out)


def _matching(pattern, described, must, limit=None):
    """A kind of text: ``described`` names it when the value is not text at all, ``must`` when it does not match
    ``pattern`` (or is longer than ``limit``)."""
    def check(value, name):
        _text(value, name, described)
        if (limit is not None and len(value) > limit) or not pattern.fullmatch(value):
            raise _invalid(name, value, "must be " + must)
        return value
    return check


account = _matching(_ACCOUNT, "a system account name such as kube-scheduler",
                    "a system account name (lower-case letters, digits, '_' and '-', starting with a letter or '_', "
                    "at most 32 characters)")


def integer(low, high, what="a number"):
    def check(value, name):
        if isinstance(value, bool) or isinstance(value, float):
            raise InputError("%s: must be a whole number, got %s %s" % (name, type_name(value), shown(value)))
        if isinstance(value, str):
            # Surveys and -e key=value give text: plain decimal digits only ("1e3", "0x10", " 5" are not numbers here).
            if not re.fullmatch(r"-?[0-9]{1,19}", value):
                raise _invalid(name, value, "must be a whole number written with digits only")
            value = int(value)
        if not isinstance(value, int):
            raise InputError("%s: must be %s, got %s" % (name, what, type_name(value)))
        if not low <= value <= high:
            raise _invalid(name, value, "must be %s between %d and %d" % (what, low, high))
        return value
    return check


port = integer(1, 65535, "a port number")


# The one rule for a boolean input: YAML's true or false, or one of these words as text (a survey, -e key=value),
# in any case and nothing around it. Each word means the same to ansible-core's bool filter and to its argument
# specs; a word they read differently ("y" is true to one and false to the other) or a padded one ("yes " is true to
# the argument spec and false to | bool) is refused, so no later reading can disagree with this one.
BOOLEAN_WORDS = {"true": True, "yes": True, "false": False, "no": False}
BOOLEAN_SPELLINGS = "true or false (as text also yes or no, in any case, with nothing around it)"


def boolean(value, name):
    """A boolean, or the text a survey or -e key=value gives for one (BOOLEAN_WORDS)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in BOOLEAN_WORDS:
        return BOOLEAN_WORDS[value.lower()]
    raise InputError("%s: Invalid value: %s: must be %s" % (name, shown(value), BOOLEAN_SPELLINGS))


def auto_or_boolean(value, name):
    """"auto" (decided from what the cluster has), or a boolean as boolean() takes it."""
    if isinstance(value, str) and value.lower() == "auto":
        return "auto"
    try:
        return boolean(value, name)
    except InputError:
        raise InputError("%s: Invalid value: %s: must be auto or %s" % (name, shown(value), BOOLEAN_SPELLINGS)) from None


def version(value, name):
    try:
        return normalise(value, name, full=True)
    except UnsupportedVersion as exc:
        raise InputError(str(exc)) from None


def is_dns_label(value):
    """Whether ``value`` is a DNS-1123 label (dns_label's rule, for a check that words its own message)."""
    return isinstance(value, str) and len(value) <= 63 and bool(_DNS1123_LABEL.fullmatch(value))


dns_label = _matching(_DNS1123_LABEL, "a DNS-1123 label such as kube-scheduler",
                      "a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or "
                      "digit, at most 63 characters)", 63)
dns_subdomain = _matching(_DNS1123_SUBDOMAIN, "a DNS-1123 subdomain such as my-scheduler",
                          "a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most 253 characters)", 253)


def object_label(value, name):
    """A name that is also a label value (app.kubernetes.io/instance): a DNS-1123 subdomain of at most 63."""
    dns_subdomain(value, name)
    if len(value) > 63:
        raise _invalid(name, value, "must be at most 63 characters: it is also written as a label value")
    return value


def scheduler_name(value, name):
    """A profile's schedulerName as the roles use it. kube-scheduler reports every binding as an Event whose
    reportingController is the schedulerName and whose reportingInstance is the schedulerName, '-' and the host
    name; the API server accepts those only for a qualified name, and a reportingInstance of at most 128 characters
    (so 63 here, next to a Linux host name of up to 64). With another name the scheduler's Scheduled events are
    refused, so nobody sees why a pod went where it went and the verify role cannot prove the scheduler works. A
    comma is never part of one, so the verify role's annotation cannot split a name into another scheduler's."""
    if not isinstance(value, str) or len(value) > 63 or not _qualified(value):
        raise _invalid(name, value, "kube-scheduler reports its bindings as events whose reportingController is the "
                                    "schedulerName, which the API server accepts only as a qualified name of at most "
                                    "63 characters (letters, digits, '-', '_' and '.', optionally behind a DNS "
                                    "prefix and '/'), so its events would be refused")
    return value


def _qualified(value):
    prefix, slash, key = value.rpartition("/")
    if slash and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(prefix)):
        return False
    return len(key) <= 63 and bool(_QUALIFIED_NAME.fullmatch(key))


def label_value(value, name):
    if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
        raise _invalid(name, value, "must be a label value (at most 63 letters, digits, '-', '_' or '.', starting "
                                    "and ending with a letter or digit)")
    return value


def label_key(value, name):
    if not isinstance(value, str) or not value:
        raise InputError("%s: must be a label key such as node-role.kubernetes.io/control-plane, got %s"
                         % (name, shown(value)))
    if not _qualified(value):
        raise _invalid(name, value, "must be a label key: an optional DNS subdomain prefix and '/', then at most "
                                    "63 letters, digits, '-', '_' or '.'")
    return value


def labels(value, name):
    if not isinstance(value, dict):
        raise InputError("%s: must be a dict of label keys to values, got %s" % (name, type_name(value)))
    for key, item in value.items():
        label_key(key, "%s key" % name)
        label_value(item, "%s[%s]" % (name, shown(key)))
    return value


image = _matching(_IMAGE, "an image reference such as registry.k8s.io/kube-scheduler:v1.35.4",
                  "an image reference such as registry.k8s.io/kube-scheduler:v1.35.4 (letters, digits and . _ / : @ -, "
                  "no spaces)")


def url(value, name):
    _text(value, name, "an http(s) URL")
    if not _URL.fullmatch(value):
        raise _invalid(name, value, "must be an http:// or https:// URL without spaces")
    return value


def checksum(value, name):
    if value is None or value == "":
        return ""
    if not isinstance(value, str) or not _CHECKSUM.fullmatch(value):
        raise _invalid(name, value, 'must be "sha256:<64 hex digits>" or empty')
    return value.lower()


def int_or_percent(value, name):
    """A PodDisruptionBudget's maxUnavailable: a whole number or "N%" (the API server parses "1e3" as neither)."""
    if isinstance(value, str) and _PERCENT.fullmatch(value.strip()) and int(value.strip()[:-1]) <= 100:
        return value.strip()
    try:
        return integer(0, 2 ** 31 - 1)(value, name)
    except InputError:
        raise _invalid(name, value, 'must be a whole number such as 1 or a percentage such as "50%"') from None


def run_as_user(value, name):
    """The pod runs with runAsNonRoot: true, so the kubelet refuses uid 0 (and the API server any uid < 0)."""
    if value is not None and not isinstance(value, bool) and str(value).strip() == "0":
        raise _invalid(name, value, "uid 0 is root: the pod runs with runAsNonRoot: true, so the kubelet would "
                                    "refuse to start it; give a non-root uid such as 65532")
    return integer(1, 2 ** 31 - 1, "a user id")(value, name)


def one_of(*choices):
    def check(value, name):
        if value not in choices:
            raise InputError("%s: Unsupported value: %s: supported values: %s"
                             % (name, shown(value), ", ".join('"%s"' % choice for choice in choices)))
        return value
    return check


def optional(kind, empty=None):
    """The kind, or empty/null for "not set" (kubernetes.core's kubeconfig and context, a node name); ``empty``, when
    given, is what "not set" becomes."""
    def check(value, name):
        if value is None or value == "":
            return value if empty is None else empty
        return kind(value, name)
    return check


# A path or a release, or "" for "not set" (null too).
optional_path = optional(path, empty="")
optional_version = optional(version, empty="")


def text(value, name):
    """Free text that is written somewhere (a mirror's name, a context): no control characters."""
    return _text(value, name, "a value")


_PEM = re.compile(r"(?:-----BEGIN [A-Z0-9 ]{1,64}-----\r?\n(?:[A-Za-z0-9+/=]{1,76}\r?\n|[A-Za-z-]{1,64}: [ -~]{0,200}\r?\n"
                  r"|\r?\n)*-----END [A-Z0-9 ]{1,64}-----(?:\r?\n)*)+")


def pem(value, name):
    """PEM text (a CA certificate or key, possibly a secret): only armour, base64 lines and headers, so it can
    carry nothing but itself; it reaches a module argument, never a unit or a command line. Never shown."""
    if not isinstance(value, str):
        raise InputError("%s: must be PEM text, got %s" % (name, type_name(value)))
    if not _PEM.fullmatch(value.lstrip()):
        raise InputError("%s: must be PEM text (-----BEGIN ...----- base64 lines -----END ...-----); the value is not "
                         "shown" % name)
    return value


_BEARER = re.compile(r"[A-Za-z0-9._~+/=-]{1,16384}")


def bearer_token(value, name):
    """A bearer token (RFC 6750's token68: a ServiceAccount's JWT, a static token): a secret, never shown; it
    goes into an Authorization header, so nothing but its own characters."""
    if not isinstance(value, str):
        raise InputError("%s: must be a bearer token, got %s" % (name, type_name(value)))
    if not _BEARER.fullmatch(value):
        raise InputError("%s: must be a bearer token (letters, digits and -._~+/=, as a ServiceAccount token); the "
                         "value is not shown" % name)
    return value


def path_or_dict(value, name):
    """kubernetes.core's kubeconfig: a path (on the controller, so relative is allowed) or the kubeconfig as a dict."""
    return value if isinstance(value, dict) else _text(value, name, "a kubeconfig path or dict")


def of_type(expected, what):
    def check(value, name):
        if not isinstance(value, expected) or isinstance(value, bool) is not (expected is bool):
            raise InputError("%s: must be %s, got %s" % (name, what, type_name(value)))
        return value
    return check


any_dict = of_type(dict, "a dict")
any_list = of_type(list, "a list")


def list_of_at_most(limit, why):
    """A list of at most ``limit`` items (``why`` says what the limit protects)."""
    def check(value, name):
        any_list(value, name)
        if len(value) > limit:
            raise InputError("%s: Too many: %d items, but at most %d are allowed: %s" % (name, len(value), limit, why))
        return value
    return check


_TOLERATION_KEYS = ("key", "operator", "value", "effect", "tolerationSeconds")
_PRIORITY_CLASS_KEYS = ("name", "value", "global_default", "description", "preemption_policy")


def _dicts(value, name, things, fields, known, which="known fields are"):
    """(field path, item) of a list of dicts whose keys are among ``known``; refused, naming the field, otherwise."""
    if not isinstance(value, list):
        raise InputError("%s: must be a list of %s, got %s" % (name, things, type_name(value)))
    for index, item in enumerate(value):
        where = "%s[%d]" % (name, index)
        if not isinstance(item, dict):
            raise InputError("%s: must be a dict with %s, got %s" % (where, fields, type_name(item)))
        unknown = sorted(str(key) for key in item if key not in known)
        if unknown:
            raise InputError("%s: unknown fields %s; %s %s" % (where, ", ".join(unknown), which, ", ".join(known)))
        yield where, item


def tolerations(value, name):
    """Pod tolerations as the API server validates them (core/v1 validation.ValidateTolerations)."""
    for where, item in _dicts(value, name, "tolerations", "key, operator, value, effect", _TOLERATION_KEYS,
                              "a toleration has"):
        operator = item.get("operator", "Equal")
        one_of("Equal", "Exists")(operator, where + ".operator")
        if item.get("key") not in (None, ""):
            label_key(item["key"], where + ".key")
        elif operator != "Exists":
            raise InputError("%s.operator: Invalid value: %s: an empty key needs operator Exists" % (where, shown(operator)))
        if operator == "Exists" and item.get("value") not in (None, ""):
            raise InputError("%s.value: Invalid value: %s: must be empty when operator is Exists"
                             % (where, shown(item["value"])))
        if item.get("value") not in (None, ""):
            label_value(item["value"], where + ".value")
        effect = item.get("effect", "")
        one_of("", "NoSchedule", "PreferNoSchedule", "NoExecute")(effect, where + ".effect")
        if item.get("tolerationSeconds") is not None:
            integer(-2 ** 63, 2 ** 63 - 1, "a number of seconds")(item["tolerationSeconds"], where + ".tolerationSeconds")
            if effect != "NoExecute":
                raise InputError("%s.effect: Invalid value: %s: tolerationSeconds needs effect NoExecute"
                                 % (where, shown(effect)))
    return value


def priority_classes(value, name):
    """PriorityClasses: a name the API server accepts (not system-), a value up to one billion."""
    for where, item in _dicts(value, name, "priority classes", "name and value", _PRIORITY_CLASS_KEYS):
        dns_subdomain(item.get("name"), where + ".name")
        if item["name"].startswith("system-"):
            raise _invalid(where + ".name", item["name"], "the system- prefix is reserved for the built-in classes")
        integer(-2 ** 31, 10 ** 9, "a priority")(item.get("value"), where + ".value")
        if "global_default" in item:
            boolean(item["global_default"], where + ".global_default")
        if "preemption_policy" in item:
            one_of("PreemptLowerPriority", "Never")(item["preemption_policy"], where + ".preemption_policy")
    defaults = [item["name"] for item in value if "global_default" in item and boolean(item["global_default"], "")]
    if len(defaults) > 1:
        raise InputError("%s: Invalid value: global_default is true for %s: the API server allows one default "
                         "PriorityClass in the cluster; set it on one of them at most" % (name, ", ".join(defaults)))
    return value


def _namespaced(example):
    """An object as "namespace/name", such as ``example``."""
    def check(value, name):
        if not isinstance(value, str) or value.count("/") != 1:
            raise _invalid(name, value, 'must be "namespace/name", such as %s' % example)
        namespace, object_name = value.split("/")
        dns_label(namespace, name + " (namespace)")
        dns_subdomain(object_name, name + " (name)")
        return value
    return check


# The verify role's lease, empty for none; a ServiceAccount (the metrics reader).
lease_reference = optional(_namespaced("kube-system/my-scheduler"), empty="")
service_account_reference = _namespaced("monitoring/prometheus")


def verify_targets(value, name):
    """The verify role's schedulers: a scheduler name, or a dict with name and an optional lease. Each name becomes
    a test pod's spec.schedulerName and part of an annotation, so it must be one the API server accepts there."""
    if not isinstance(value, list):
        raise InputError("%s: must be a list of scheduler names, got %s" % (name, type_name(value)))
    for index, item in enumerate(value):
        where = "%s[%d]" % (name, index)
        if isinstance(item, dict):
            unknown = sorted(str(key) for key in item if key not in ("name", "lease"))
            if unknown:
                raise InputError("%s: unknown fields %s; a scheduler to verify has name and lease"
                                 % (where, ", ".join(unknown)))
            scheduler_name(item.get("name"), where + ".name")
            lease_reference(item.get("lease"), where + ".lease")
        else:
            scheduler_name(item, where)
    return value


def flag_argument(flag, name):
    """One command-line word: refused when Linux would refuse it (E2BIG)."""
    size = len(flag.encode("utf-8", "surrogatepass"))
    if size > MAX_ARG_BYTES:
        raise InputError("%s: Too long: %d bytes, but Linux accepts at most %d bytes in one command-line argument; "
                         "put large settings into the config instead" % (name, size, MAX_ARG_BYTES))
    return flag


# --- names and collisions --------------------------------------------------------------------------------------

def edit_distance(left, right, limit):
    """Levenshtein distance, or limit + 1 as soon as it must exceed ``limit``."""
    if abs(len(left) - len(right)) > limit:
        return limit + 1
    previous = list(range(len(right) + 1))
    for i, char in enumerate(left, 1):
        current = [i]
        for j, other in enumerate(right, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def unknown_variables(names, known, prefix="kube_scheduler_"):
    """Variables with our prefix that no role knows and that are a typo of one that does (at most two edits, one
    for short names): one line each.

    Other names are left alone: kubespray and other roles have kube_scheduler_* variables of their own
    (kube_scheduler_node_selector is not a typo of kube_scheduler_verify_node_selector). A near miss is an error,
    since the role would silently use the default instead. Not closest's similarity ratio, which only suggests
    among names already refused: beside the long shared prefix it calls kubespray's kube_scheduler_bind_address a
    typo of kube_scheduler_node_address (at every cutoff up to 0.92), so inventories that pass would fail."""
    problems = []
    for name in sorted(names):
        if not isinstance(name, str) or not name.startswith(prefix) or name in known:
            continue
        limit = 1 if len(name) - len(prefix) < 8 else 2
        scored = sorted((edit_distance(name, other, limit), other) for other in known)
        match = scored[0][1] if scored and scored[0][0] <= limit else None
        if match:
            problems.append("%s: unknown variable; did you mean %s? (this collection does not read %s, so %s keeps "
                            "its default)" % (name, match, name, match))
    return problems


def inside(child, parent):
    """Whether normalised path ``child`` is ``parent`` or below it."""
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def separate_directories(directories):
    """Directories (name -> normalised path) that must neither coincide nor nest: one line per clash."""
    problems = []
    items = sorted((name, value) for name, value in directories.items() if value)
    for index, (name, value) in enumerate(items):
        for other, other_value in items[index + 1:]:
            if inside(value, other_value) or inside(other_value, value):
                problems.append("%s: Invalid value: %s: %s %s, which is %s; give each its own directory (files of "
                                "one would be read or replaced as files of the other)"
                                % (name, shown(value), "is" if value == other_value else "overlaps", other,
                                   shown(other_value)))
    return problems


def check_all(values, kinds):
    """Check ``values`` (name -> raw value) by ``kinds`` (name -> kind): (normalised, problems)."""
    normalised, problems = {}, []
    for name in sorted(kinds):
        if name not in values:
            continue
        try:
            normalised[name] = kinds[name](values[name], name)
        except InputError as exc:
            problems.append(str(exc))
    return normalised, problems


def fqcn_message(message, load_name, fqcn):
    """ansible-core's "Unsupported parameters for (<Python path>) module" with the name the user wrote."""
    return message.replace("(%s)" % load_name, "(%s)" % fqcn) if load_name else message
