# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A container's resources as the API server validates them (core/v1 validation.ValidateContainerResourceRequirements
and resource.ParseQuantity), so the deployment role's variable is refused on the controller, by its name, instead of
the Deployment by the API server after the ServiceAccount, RBAC and ConfigMap were applied.

Checked: resource names (cpu, memory, ephemeral-storage, or an extended resource such as example.com/gpu), quantities
(a number with one of Kubernetes' suffixes, never negative), requests at most their limits, extended resources whole
numbers with equal request and limit. Stricter than the API server on purpose: no huge pages (a scheduler needs none,
and their page-size rules depend on the node) and no other kubernetes.io/ names. Pure Python: no Ansible imports.
"""

from __future__ import annotations

import decimal
import re

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.kinds import (
    InputError, label_key, shown, type_name)

# resource.ParseQuantity's format, without the forms that parse as zero ("+", ".") and with at most a three-digit
# exponent (the API server wraps larger ones to 32 bits).
_QUANTITY = re.compile(r"\+?(?P<number>[0-9]+(\.[0-9]*)?|\.[0-9]+)(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,3})?")
_MULTIPLIER = {"": 1, "n": decimal.Decimal("1e-9"), "u": decimal.Decimal("1e-6"), "m": decimal.Decimal("1e-3"),
               "k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18,
               "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}
_STANDARD = ("cpu", "memory", "ephemeral-storage")
_NANO = decimal.Decimal("1e-9")
_CONTEXT = decimal.Context(prec=1100, Emax=2000, Emin=-2000)
_FORMAT = "must be a quantity such as 100m, 128Mi or 2 (the API server parses nothing else)"


def parse_quantity(value):
    """The quantity's value as a Decimal, rounded up to a nano as the API server does, or None when it is not one.
    A number given in YAML is sent as JSON, which the API server parses as a quantity too."""
    if isinstance(value, bool):
        return None
    text = repr(value) if isinstance(value, float) else str(value) if isinstance(value, int) else value
    match = _QUANTITY.fullmatch(text) if isinstance(text, str) else None
    if not match:
        return None
    suffix = match.group("suffix") or ""
    number = decimal.Decimal(match.group("number"))
    if suffix in _MULTIPLIER:  # "E" and "Ei" are exa and exbi, "e3" and "E3" exponents
        amount = _CONTEXT.multiply(number, decimal.Decimal(_MULTIPLIER[suffix]))
    else:
        amount = number.scaleb(int(suffix[1:]), _CONTEXT)
    return amount.quantize(_NANO, rounding=decimal.ROUND_CEILING, context=_CONTEXT)


def _extended(resource):
    """An extended resource (helper.IsExtendedResourceName): a domain outside kubernetes.io, and a name that is still
    a qualified name behind quota's "requests." prefix."""
    if "/" not in resource or "kubernetes.io/" in resource or resource.startswith("requests."):
        return False
    try:
        label_key("requests." + resource, "")
    except InputError:
        return False
    return True


def _check_name(resource, where):
    label_key(resource, where + " key")
    if resource.startswith("hugepages-"):
        raise InputError("%s: Invalid value: %s: huge pages are not supported here (a scheduler needs none)"
                         % (where, shown(resource)))
    if resource not in _STANDARD and not _extended(resource):
        raise InputError("%s: Invalid value: %s: must be cpu, memory, ephemeral-storage or an extended resource "
                         "such as example.com/gpu (the API server accepts no other container resource)"
                         % (where, shown(resource)))


def container_resources(value, name):
    """A container's resources: requests and limits, each resource name to a quantity, as the API server accepts."""
    if not isinstance(value, dict):
        raise InputError("%s: must be a dict with requests and limits, got %s" % (name, type_name(value)))
    amounts = {}
    for part, items in value.items():
        if part not in ("requests", "limits"):
            raise InputError("%s: unknown field %s; a container's resources have requests and limits"
                             % (name, shown(part)))
        if not isinstance(items, dict):
            raise InputError("%s.%s: must be a dict of resource names to quantities, got %s"
                             % (name, part, type_name(items)))
        for resource, amount in items.items():
            where = "%s.%s.%s" % (name, part, resource)
            _check_name(resource, "%s.%s" % (name, part))
            parsed = parse_quantity(amount)
            if parsed is None:
                raise InputError("%s: Invalid value: %s: %s" % (where, shown(amount), _FORMAT))
            if "/" in resource and parsed != parsed.to_integral_value(rounding=decimal.ROUND_CEILING):
                raise InputError("%s: Invalid value: %s: an extended resource must be a whole number"
                                 % (where, shown(amount)))
            amounts[part, resource] = parsed
    for (part, resource), request in sorted(amounts.items()):
        if part != "requests":
            continue
        limit = amounts.get(("limits", resource))
        where = "%s.requests.%s" % (name, resource)
        if "/" in resource and limit is None:
            raise InputError("%s.limits: Required value: an extended resource such as %s needs a limit equal to its "
                             "request" % (name, resource))
        if "/" in resource and request != limit:
            raise InputError("%s: Invalid value: %s: must be equal to its limit %s (an extended resource cannot be "
                             "overcommitted)" % (where, shown(value["requests"][resource]),
                                                 shown(value["limits"][resource])))
        if limit is not None and request > limit:
            raise InputError("%s: Invalid value: %s: must be less than or equal to the %s limit of %s"
                             % (where, shown(value["requests"][resource]), resource,
                                shown(value["limits"][resource])))
    return value
