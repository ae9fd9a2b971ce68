# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plugin args rules of pkg/scheduler/apis/config/validation/validation_pluginargs.go.

Every function takes the defaulted args dict (v1 JSON names) and the path of ``args`` ("" when a plugin
constructor validates with a nil path) and returns a list of ConfigError in upstream order.
Label and selector rules come from apimachinery (util/validation IsQualifiedName, IsValidLabelValue,
labels.NewRequirement) and component-helpers/scheduling/corev1/nodeaffinity.
"""

from __future__ import annotations

import re

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import errors
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.durations import format_duration, parse_duration
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import since

_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_RE = re.compile("^" + _QUALIFIED_NAME_FMT + "$")
_QUALIFIED_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                       "alphanumeric character")
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_RE = re.compile("^" + _DNS1123_SUBDOMAIN_FMT + "$")
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                          "or '.', and must start and end with an alphanumeric character")
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_LABEL_VALUE_RE = re.compile("^" + _LABEL_VALUE_FMT + "$")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character")

SCORING_STRATEGY_TYPES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
MAX_CUSTOM_PRIORITY_SCORE = 10


def child(path: str, *names) -> str:
    for name in names:
        path = "%s.%s" % (path, name) if path else name
    return path


def index(path: str, i: int) -> str:
    return "%s[%d]" % (path, i)


def go_string_slice(values) -> errors.GoLiteral:
    """%#v of a []string."""
    if values is None:
        return errors.GoLiteral("[]string(nil)", "null")
    return errors.GoLiteral("[]string{%s}" % ", ".join(errors.go_quote(v) for v in values), errors.go_json(list(values)))


def go_duration(text) -> errors.GoLiteral:
    """%#v of a metav1.Duration."""
    nanos = parse_duration(text)
    return errors.GoLiteral("v1.Duration{Duration:%d}" % nanos, errors.go_json(format_duration(nanos)))


# -- apimachinery/pkg/util/validation ---------------------------------------------------------------------------

def _regex_error(msg: str, fmt: str, *examples) -> str:
    if not examples:
        return msg + " (regex used for validation is '" + fmt + "')"
    msg += " (e.g. "
    for i, example in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += "'" + example + "', "
    return msg + "regex used for validation is '" + fmt + "')"


def is_dns1123_subdomain(value: str) -> list:
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_qualified_name(value: str) -> list:
    errs = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + msg for msg in is_dns1123_subdomain(prefix))
    else:
        return [("a qualified name " + _regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name",
                                                    "123-abc")
                 + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME_RE.match(name):
        errs.append("name part " + _regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name",
                                                "123-abc"))
    return errs


def is_valid_label_value(value: str) -> list:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_VALUE_RE.match(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def validate_label_name(name: str, path: str) -> list:
    """metav1validation.ValidateLabelName."""
    return [errors.invalid(path, name, msg) for msg in is_qualified_name(name)]


# -- DefaultPreemption ------------------------------------------------------------------------------------------

def validate_default_preemption_args(path: str, args: dict) -> list:
    errs = []
    percentage_path, absolute_path = child(path, "minCandidateNodesPercentage"), child(path, "minCandidateNodesAbsolute")
    percentage = args.get("minCandidateNodesPercentage", 0)
    absolute = args.get("minCandidateNodesAbsolute", 0)
    if percentage < 0 or percentage > 100:
        errs.append(errors.invalid(percentage_path, percentage, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(errors.invalid(absolute_path, absolute, "not in valid range [0, inf)"))
    if percentage == 0 and absolute == 0:
        errs.append(errors.invalid(percentage_path, percentage,
                                   "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(errors.invalid(absolute_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
    return errors.dedupe(errs)


# -- InterPodAffinity -------------------------------------------------------------------------------------------

def validate_inter_pod_affinity_args(path: str, args: dict) -> list:
    weight = args.get("hardPodAffinityWeight", 0)
    if weight < 0 or weight > 100:
        return [errors.invalid(child(path, "hardPodAffinityWeight"), weight, "not in valid range [0, 100]")]
    return []


# -- PodTopologySpread ------------------------------------------------------------------------------------------

def validate_pod_topology_spread_args(path: str, args: dict) -> list:
    errs = []
    constraints = args.get("defaultConstraints") or []
    defaulting_type = args.get("defaultingType", "")
    type_path = child(path, "defaultingType")
    if defaulting_type not in ("System", "List"):
        errs.append(errors.not_supported(type_path, defaulting_type, ["System", "List"]))
    elif defaulting_type == "System" and constraints:
        errs.append(errors.invalid(type_path, defaulting_type, "when .defaultConstraints are not empty"))
    constraints_path = child(path, "defaultConstraints")
    for i, constraint in enumerate(constraints):
        p = index(constraints_path, i)
        max_skew = constraint.get("maxSkew", 0)
        if max_skew <= 0:
            errs.append(errors.invalid(child(p, "maxSkew"), max_skew, "not in valid range (0, inf)"))
        topology_key = constraint.get("topologyKey", "")
        if not topology_key:
            errs.append(errors.required(child(p, "topologyKey"), "can not be empty"))
        else:
            errs.extend(validate_label_name(topology_key, child(p, "topologyKey")))
        action = constraint.get("whenUnsatisfiable", "")
        if not action:
            errs.append(errors.required(child(p, "whenUnsatisfiable"), "can not be empty"))
        elif action not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(errors.not_supported(child(p, "whenUnsatisfiable"), action, ["DoNotSchedule", "ScheduleAnyway"]))
        if constraint.get("labelSelector") is not None:
            errs.append(errors.forbidden(child(p, "labelSelector"),
                                         "constraint must not define a selector, as they deduced for each pod"))
        for other in constraints[:i]:
            if (other.get("topologyKey", ""), other.get("whenUnsatisfiable", "")) == (topology_key, action):
                errs.append(errors.duplicate(p, "{%s, %s}" % (topology_key, action)))
                break
    return errors.dedupe(errs)


# -- NodeResourcesBalancedAllocation / NodeResourcesFit ---------------------------------------------------------

def _validate_function_shape(shape, path: str, minor=None) -> list:
    """validateFunctionShape; ``minor`` picks the sort message ("utilization values ..." up to 1.33)."""
    if not shape:
        return [errors.required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(errors.invalid(child(index(path, i), "utilization"), shape[i].get("utilization", 0),
                                       ("" if since("shape_sort_message_unprefixed", minor) else "utilization ")
                                       + "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        utilization, score = point.get("utilization", 0), point.get("score", 0)
        if utilization < 0 or utilization > 100:
            errs.append(errors.invalid(child(index(path, i), "utilization"), utilization, "not in valid range [0, 100]"))
        if score < 0 or score > MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(errors.invalid(child(index(path, i), "score"), score,
                                       "not in valid range [0, %d]" % MAX_CUSTOM_PRIORITY_SCORE))
    return errs


def _validate_resources(resources, path: str) -> list:
    errs = []
    for i, resource in enumerate(resources or []):
        weight = resource.get("weight", 0)
        if weight <= 0 or weight > 100:
            errs.append(errors.invalid(child(index(path, i), "weight"), weight,
                                       "resource weight of %s not in valid range (0, 100]" % resource.get("name", "")))
    return errs


def validate_balanced_allocation_args(path: str, args: dict) -> list:
    errs = []
    seen = set()
    for i, resource in enumerate(args.get("resources") or []):
        name = resource.get("name", "")
        p = index(child(path, "resources"), i)
        if name in seen:
            errs.append(errors.duplicate(child(p, "name"), name))
        else:
            seen.add(name)
        weight = resource.get("weight", 0)
        if weight != 1:
            errs.append(errors.invalid(child(p, "weight"), weight, "must be 1"))
    return errors.dedupe(errs)


def validate_node_resources_fit_args(path: str, args: dict, minor=None) -> list:
    errs = []
    for i, resource in enumerate(args.get("ignoredResources") or []):
        errs.extend(validate_label_name(resource, index(child(path, "ignoredResources"), i)))
    for i, group in enumerate(args.get("ignoredResourceGroups") or []):
        p = index(child(path, "ignoredResourceGroups"), i)
        if "/" in group:
            errs.append(errors.invalid(p, group, "resource group name can't contain '/'"))
        errs.extend(validate_label_name(group, p))
    strategy_path = child(path, "scoringStrategy")
    strategy = args.get("scoringStrategy")
    if strategy is not None:
        strategy_type = strategy.get("type", "")
        if strategy_type not in SCORING_STRATEGY_TYPES:
            errs.append(errors.not_supported(child(strategy_path, "type"), strategy_type, sorted(SCORING_STRATEGY_TYPES)))
        errs.extend(_validate_resources(strategy.get("resources"), child(strategy_path, "resources")))
        ratio = strategy.get("requestedToCapacityRatio")
        ratio_path = child(strategy_path, "requestedToCapacityRatio")
        if minor is not None and since("requested_to_capacity_ratio_by_type", minor):
            # kube-scheduler v1.36.3: requestedToCapacityRatio belongs to its type. Without it that type is Required
            # (1.30-1.35 panic), with another type (an unsupported one included) it is Forbidden and its shape is
            # not checked; the shape's errors name requestedToCapacityRatio.shape. (No minor: the older check.)
            if strategy_type == "RequestedToCapacityRatio":
                if ratio is None:
                    errs.append(errors.required(ratio_path, "must be specified when type is RequestedToCapacityRatio"))
                else:
                    errs.extend(_validate_function_shape(ratio.get("shape"), child(ratio_path, "shape"), minor))
            elif ratio is not None:
                errs.append(errors.forbidden(ratio_path, "must be nil when type is not RequestedToCapacityRatio"))
        elif ratio is not None:
            # Up to 1.35 upstream checks, whenever requestedToCapacityRatio is set (whatever the type), its shape
            # under the path scoringStrategy.shape; ours names requestedToCapacityRatio.shape.
            upstream = child(strategy_path, "shape")
            ours = child(strategy_path, "requestedToCapacityRatio", "shape")
            for err in _validate_function_shape(ratio.get("shape"), upstream, minor):
                errs.append(errors.ConfigError(ours + err.field[len(upstream):], err.type, err.message))
    return errors.dedupe(errs)


def fit_args_panic(path: str, args: dict):
    """The args that pass validation but make NewFit dereference a nil pointer (kube-scheduler 1.30-1.35 panic):
    type RequestedToCapacityRatio without requestedToCapacityRatio. An error instead of the panic, or None (1.36
    refuses them in validate_node_resources_fit_args)."""
    strategy = args.get("scoringStrategy") or {}
    if strategy.get("type") == "RequestedToCapacityRatio" and strategy.get("requestedToCapacityRatio") is None:
        return errors.required(child(path, "scoringStrategy", "requestedToCapacityRatio"),
                               "must be specified when type is RequestedToCapacityRatio (kube-scheduler panics "
                               "without it)")
    return None


# -- VolumeBinding ----------------------------------------------------------------------------------------------

def go_shape(shape) -> errors.GoLiteral:
    """%#v of the internal []config.UtilizationShapePoint."""
    return errors.GoLiteral("[]config.UtilizationShapePoint{%s}" % ", ".join(
        "config.UtilizationShapePoint{Utilization:%d, Score:%d}" % (p.get("utilization", 0), p.get("score", 0))
        for p in shape), errors.go_json([{"Utilization": p.get("utilization", 0), "Score": p.get("score", 0)}
                                         for p in shape]))


def validate_volume_binding_args(path: str, args: dict, capacity_scoring_gate: str, gate_enabled: bool,
                                 minor=None) -> list:
    """``capacity_scoring_gate``: VolumeCapacityPriority up to 1.32, StorageCapacityScoring from 1.33."""
    errs = []
    timeout = args.get("bindTimeoutSeconds", 0)
    if timeout < 0:
        errs.append(errors.invalid(child(path, "bindTimeoutSeconds"), timeout,
                                   "invalid BindTimeoutSeconds, should not be a negative value"))
    if gate_enabled:
        errs.extend(_validate_function_shape(args.get("shape"), child(path, "shape"), minor))
    elif args.get("shape") is not None:
        errs.append(errors.invalid(child(path, "shape"), go_shape(args["shape"]),
                                   "unexpected field `shape`, remove it or turn on the feature gate %s"
                                   % capacity_scoring_gate))
    return errors.dedupe(errs)


# -- NodeAffinity (nodeaffinity.NewNodeSelector / NewPreferredSchedulingTerms) ---------------------------------

_NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _is_empty_term(term: dict) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def _label_requirement(expr: dict, p: str) -> list:
    """labels.NewRequirement with field.WithPath(p)."""
    errs = []
    key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values")
    key_errs = is_qualified_name(key)
    if key_errs:
        errs.append(errors.invalid(child(p, "key"), key, "; ".join(key_errs)))
    values_path = child(p, "values")
    vals = values or []
    if op in ("In", "NotIn"):
        if not vals:
            errs.append(errors.invalid(values_path, go_string_slice(values),
                                       "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist"):
        if vals:
            errs.append(errors.invalid(values_path, go_string_slice(values),
                                       "values set must be empty for exists and does not exist"))
    else:
        if len(vals) != 1:
            errs.append(errors.invalid(values_path, go_string_slice(values),
                                       "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, value in enumerate(vals):
            # Past 19 significant digits it is outside int64 (and int() refuses 4301 digits with its own words).
            if (not re.match(r"^[+-]?[0-9]+$", value) or len(value.lstrip("+-").lstrip("0")) > 19
                    or not -2 ** 63 <= int(value) < 2 ** 63):
                errs.append(errors.invalid(index(values_path, i), value,
                                           "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, value in enumerate(vals):
        value_errs = is_valid_label_value(value)
        if value_errs:
            errs.append(errors.invalid("%s[%s]" % (index(values_path, i), key), value, "; ".join(value_errs)))
    return errors.dedupe(errs)


def _node_selector_term(term: dict, path: str) -> list:
    errs = []
    expressions = term.get("matchExpressions") or []
    for i, expr in enumerate(expressions):
        p = index(child(path, "matchExpressions"), i)
        if expr.get("operator", "") not in _NODE_SELECTOR_OPERATORS:
            errs.append(errors.not_supported(child(p, "operator"), expr.get("operator", ""), _NODE_SELECTOR_OPERATORS))
            continue
        errs.extend(_label_requirement(expr, p))
    for i, expr in enumerate(term.get("matchFields") or []):
        p = index(child(path, "matchFields"), i)
        if expr.get("operator", "") in ("In", "NotIn"):
            if len(expr.get("values") or []) != 1:
                errs.append(errors.invalid(child(p, "values"), go_string_slice(expr.get("values")),
                                           "must have one element"))
        else:
            errs.append(errors.not_supported(child(p, "operator"), expr.get("operator", ""), ["In", "NotIn"]))
    return errs


def validate_node_affinity_args(path: str, args: dict) -> list:
    affinity = args.get("addedAffinity")
    if affinity is None:
        return []
    errs = []
    base = child(path, "addedAffinity")
    selector = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if selector is not None:
        terms_path = child(base, "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
        for i, term in enumerate(selector.get("nodeSelectorTerms") or []):
            if not _is_empty_term(term):
                errs.extend(_node_selector_term(term, index(terms_path, i)))
    preferred_path = child(base, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        preference = term.get("preference") or {}
        if term.get("weight", 0) == 0 or _is_empty_term(preference):
            continue
        # NewPreferredSchedulingTerms passes path.Index(i), without "preference" (upstream test "invalid added
        # affinity" expects ...preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values).
        errs.extend(_node_selector_term(preference, index(preferred_path, i)))
    return errs


# -- DynamicResources (1.34+) -----------------------------------------------------------------------------------

def validate_dynamic_resources_args(path: str, args: dict, filter_timeout_gate: bool, binding_gates: bool) -> list:
    errs = []
    if filter_timeout_gate:
        if args.get("filterTimeout") is not None and parse_duration(args["filterTimeout"]) < 0:
            errs.append(errors.invalid(child(path, "filterTimeout"), go_duration(args["filterTimeout"]),
                                       "must be zero or positive"))
    elif args.get("filterTimeout") is not None:
        errs.append(errors.forbidden(child(path, "filterTimeout"), "DRASchedulingFilterTimeout feature gate is disabled"))
    if binding_gates:
        if "bindingTimeout" in args and parse_duration(args["bindingTimeout"]) < 10 ** 9:
            errs.append(errors.invalid(child(path, "bindingTimeout"), go_duration(args["bindingTimeout"]),
                                       "must be at least 1 second"))
    elif "bindingTimeout" in args:
        errs.append(errors.forbidden(child(path, "bindingTimeout"),
                                     "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"))
    return errors.dedupe(errs)
