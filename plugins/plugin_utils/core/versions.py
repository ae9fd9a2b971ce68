# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes versions this collection knows, and how users may write them.

Pure Python: no Ansible imports, so it can be unit-tested and reused on its own.
"""

from __future__ import annotations

import re

# Released minor versions whose kube-scheduler behaviour is modelled, each measured on a release of it, oldest first.
RELEASED_MINORS = ("1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37")
# Minors accepted before they ship, each modelled on the pre-release of its kube-scheduler named here: every use of
# one is warned about (preview_warning) until `make new-minor VERSION=<minor>.0` measures the release and the minor
# moves to RELEASED_MINORS.
PREVIEW_MINORS = {"1.38": "1.38.0-beta.0"}
# Every minor the collection accepts, oldest first.
SUPPORTED_MINORS = RELEASED_MINORS + tuple(sorted(PREVIEW_MINORS, key=lambda minor: int(minor.split(".")[1])))
# The newest released minor: what a missing version means, never a preview.
NEWEST_MINOR = RELEASED_MINORS[-1]

# A release is major.minor.patch, with a leading "v" or not; a pre-release carries upstream's suffix (-alpha.N,
# -beta.N, -rc.N: the tag, the image tag and the binary's --version all say v1.38.0-rc.0), a minor alone none.
_VERSION_RE = re.compile(r"^v?(?P<major>\d+)\.(?P<minor>\d+)"
                         r"(?:\.(?P<patch>\d+)(?:-(?P<pre>(?:alpha|beta|rc)\.\d+))?)?$", re.ASCII)
_FORMS = "1.35, 1.35.4, v1.35.4 or a pre-release such as 1.38.0-rc.0"


class UnsupportedVersion(ValueError):
    """Raised for a version string that is malformed or outside SUPPORTED_MINORS."""


def _outside(minor: str) -> str:
    """Why a minor outside SUPPORTED_MINORS is refused, and what to do: a newer one is not measured yet (each minor is
    measured on its own kube-scheduler before the collection accepts it), an older one is no longer validated."""
    number = tuple(int(part) for part in minor.split("."))
    newest = SUPPORTED_MINORS[-1]
    if number > tuple(int(part) for part in newest.split(".")):
        known = "the newest minor this collection knows"
        if newest in PREVIEW_MINORS:
            known += " (a preview; %s is the newest released one)" % NEWEST_MINOR
        return ("%s is newer than %s, %s: use a kubesched.schedulers release that supports %s (a config validated as "
                "%s may still fail on %s, whose kube-scheduler has other defaults, plugins and feature gates)"
                % (minor, newest, known, minor, newest, minor))
    return "%s is older than %s, the oldest minor this collection validates" % (minor, SUPPORTED_MINORS[0])


def _supported_list() -> str:
    """The accepted minors as an error lists them, previews marked."""
    return ", ".join(minor + (" (preview)" if minor in PREVIEW_MINORS else "") for minor in SUPPORTED_MINORS)


def _written(number) -> str:
    """What the user most likely typed for a number YAML read as a float: 1.3 was 1.30 (minors have two digits)."""
    text = repr(number)
    whole, _dot, fraction = text.partition(".")
    return "%s.%s0" % (whole, fraction) if len(fraction) == 1 else text


def normalise(value, variable="kubernetes_version", full=False) -> str:
    """The one version rule of every role, module and filter: "1.35.4" and "v1.35.4" alike give "1.35.4", a
    pre-release "v1.38.0-rc.0" gives "1.38.0-rc.0" (validated as its minor; preview_warning says so), a minor
    "1.35" when ``full`` is false; a YAML number, nothing, or a version outside SUPPORTED_MINORS is refused with
    UnsupportedVersion naming ``variable``. Nothing defaults: a version that skews from the cluster is worse than
    none."""
    if isinstance(value, bool) or value is None or (isinstance(value, str) and not value.strip()):
        raise UnsupportedVersion(
            "%s: Required value: give the Kubernetes release the cluster runs, such as \"1.35.4\" "
            "(`kubectl version` or `kubeadm version -o short` on a master)" % variable)
    if isinstance(value, float):
        raise UnsupportedVersion(
            "%s: YAML read %s as the number %r, not a version: quote it, %s: \"%s\" (or give the full release, "
            "such as \"%s.4\")" % (variable, _written(value), value, variable, _written(value), _written(value)))
    if not isinstance(value, str):
        raise UnsupportedVersion("%s: Invalid value: %r: must be a version string such as \"1.35.4\"" % (variable, value))
    match = _VERSION_RE.match(value.strip())
    if not match:
        raise UnsupportedVersion("%s: Invalid value: %r: not a version like %s" % (variable, value, _FORMS))
    minor = "%d.%d" % (int(match.group("major")), int(match.group("minor")))
    if minor not in SUPPORTED_MINORS:
        raise UnsupportedVersion("%s: Unsupported value: %r: %s; supported minor versions are %s"
                                 % (variable, value, _outside(minor), _supported_list()))
    if match.group("patch") is None:
        if full:
            raise UnsupportedVersion(
                "%s: Invalid value: %r: a minor names no release (no binary, no image): give the full release the "
                "cluster runs, such as \"%s.4\"" % (variable, value, minor))
        return minor
    return _release(match)


def unquoted_number(value, variable="kubernetes_version") -> str | None:
    """For an action plugin, before its argument validation turns YAML's number 1.3 into the text "1.3" (and loses
    what went wrong): why ``value`` is refused when YAML read it as a number (an unquoted 1.30), naming
    ``variable``; None for anything else, which the argument spec and normalise judge."""
    if isinstance(value, (float, int)) and not isinstance(value, bool):
        try:
            normalise(value, variable)
        except UnsupportedVersion as exc:
            return str(exc)
    return None


def _release(match) -> str:
    """"1.NN.P", or "1.NN.P-rc.N" for a pre-release: its suffix is part of the name of its binary and image."""
    release = "%d.%d.%d" % (int(match.group("major")), int(match.group("minor")), int(match.group("patch")))
    return release + ("-" + match.group("pre") if match.group("pre") else "")


def minor_of(version: str | None) -> str:
    """Return "1.NN" for "1.NN", "1.NN.P", "v1.NN.P" or a pre-release "1.NN.P-rc.N" (the minor it is validated as);
    the newest supported minor for None or ""."""
    if version is None or str(version).strip() == "":
        return NEWEST_MINOR
    match = _VERSION_RE.match(str(version).strip())
    if not match:
        raise UnsupportedVersion(
            "kubernetes_version %r is not a version like %s" % (version, _FORMS))
    minor = "%d.%d" % (int(match.group("major")), int(match.group("minor")))
    if minor not in SUPPORTED_MINORS:
        raise UnsupportedVersion(
            "kubernetes_version %s is not supported: %s; supported minor versions are %s"
            % (version, _outside(minor), _supported_list()))
    return minor


def preview_warning(version: str | None) -> str | None:
    """The warning every use of a preview minor or of a pre-release carries (the minor it is validated as, what that
    minor was measured on, and that it will be measured again), or None for a release of a released minor."""
    minor = minor_of(version)
    pre = prerelease(version)
    if minor in PREVIEW_MINORS:
        measured = ("its facts were measured on kube-scheduler v%s, a pre-release; re-measured when %s.0 ships "
                    "(make new-minor VERSION=%s.0)" % (PREVIEW_MINORS[minor], minor, minor))
        if pre:
            return "Kubernetes %s is a pre-release: validated as %s, a preview: %s" % (pre, minor, measured)
        return "Kubernetes %s is a preview: %s" % (minor, measured)
    if pre:
        return ("Kubernetes %s is a pre-release: validated as %s, whose facts were measured on its releases; its "
                "kube-scheduler may still differ from them" % (pre, minor))
    return None


def prerelease(version: str | None) -> str | None:
    """The release "1.38.0-rc.0" when ``version`` names a pre-release ("v1.38.0-rc.0" too), else None."""
    match = _VERSION_RE.match(str(version or "").strip())
    return _release(match) if match and match.group("pre") else None


def minor_number(version: str | None) -> int:
    """The minor number (30 for "1.30.2"). A behaviour that changed in some release is asked with ``since`` (a fact
    of CHANGED_IN), never by comparing this number with a literal minor."""
    return int(minor_of(version).split(".")[1])


def full_version(version: str) -> str:
    """Return "1.NN.P" for "1.NN.P" or "v1.NN.P" ("1.NN.P-rc.N" for a pre-release); a release download and an
    image tag need the patch level."""
    match = _VERSION_RE.match(str(version).strip())
    if not match or match.group("patch") is None:
        raise UnsupportedVersion("%r is not a full release version like 1.34.2 or 1.38.0-rc.0" % (version,))
    minor_of(version)
    return _release(match)


def health_paths(version: str) -> dict:
    """kube-scheduler's HTTPS health endpoints: /livez and /readyz from 1.31 (the probes kubeadm writes move to them
    in 1.32), /healthz before."""
    newer = since("kube_scheduler_livez_readyz", version)
    return {"liveness": "/livez" if newer else "/healthz", "readiness": "/readyz" if newer else "/healthz"}


# The release in which upstream changed a behaviour this collection copies, keyed by what changed: code
# asks since(fact, version) rather than comparing minors, so the facts about releases stay in this one table and a
# new minor that changes one is an entry here, not a branch in the code. Each says where upstream changed it.
CHANGED_IN = {
    # kube-scheduler's HTTPS health endpoints the collection probes are /livez and /readyz (/healthz before):
    # health_paths.
    "kube_scheduler_livez_readyz": "1.31",
    # --feature-gates is a ColonSeparatedMultimapStringString: a "kube:" component prefix (or none) is taken, and
    # a refused gate is reported in its own words. In 1.30 it is featureGate.Set: plain name=value pairs, and the
    # flag parser (cobra) reports a refusal with the whole value quoted, `invalid argument "<value>" for
    # "--feature-gates" flag: ...` (feature_gates._pairs and parse).
    "feature_gates_flag_by_component": "1.31",
    # sigs.k8s.io/yaml's convertToJSONableObject says "unsupported map key ..." (was "Unsupported") from its 1.31
    # vendoring (yaml_io.parse_text).
    "yaml_map_key_error_lower_case": "1.31",
    # invalidPluginsByVersion lists the in-tree volume-limit plugins for v1 (empty in 1.30): kube-scheduler v1.31.8
    # refuses them in enabled lists and pluginConfig (validation.removed_plugins).
    "volume_limit_plugins_invalid": "1.31",
    # kubeadm.k8s.io/v1beta4 (extraArgs a list of {name, value}) is kubeadm's ClusterConfiguration; v1beta3 (extraArgs
    # a map) in kubeadm 1.30 (filter kubeadm_scheduler_patch).
    "kubeadm_config_v1beta4": "1.31",
    # kubeadm 1.32 (kubernetes#126945) moved its probes from /healthz to /livez and added readiness on /readyz
    # (static_pod_manifest.kubeadm_probes).
    "kubeadm_probes_livez_readyz": "1.32",
    # kubeadm names the probes' port: ports [{containerPort, name: probe-port, protocol: TCP}] and every probe says
    # port: probe-port; before, the probes carry the number and there are no ports (static_pod_manifest).
    "kubeadm_named_probe_port": "1.34",
    # apimachinery's ErrorBody prints a value that is neither simple nor a fmt.Stringer with json.Marshal rather
    # than %#v ("5ns", not v1.Duration{Duration:5}): errors.GoLiteral.json, errors.for_minor.
    "field_error_value_as_json": "1.34",
    # ValidateLeaderElectionConfiguration says "must be greater than `RenewDeadline`" (v1.34.7 on; "LeaseDuration
    # must be greater than RenewDeadline" before).
    "lease_duration_message_backquoted": "1.34",
    # The queue sort check says "must be the same for all profiles" ("queueSort must be ..." up to v1.33.3, as the
    # binaries print it; v1.34.7 without).
    "queue_sort_message_unprefixed": "1.34",
    # validateFunctionShape says "values must be sorted in increasing order" ("utilization values ..." up to 1.33).
    "shape_sort_message_unprefixed": "1.34",
    # A type error of enableProfiling or enableContentionProfiling names the embedded struct they come from:
    # KubeSchedulerConfiguration.DebuggingConfiguration.enableProfiling (seen on v1.35.4; strict_decode).
    "type_error_names_debugging_configuration": "1.35",
    # kube-scheduler v1.36.3: NodeResourcesFit's requestedToCapacityRatio belongs to its type, Required with
    # RequestedToCapacityRatio (1.30-1.35 panic without it) and Forbidden with any other (validation_pluginargs).
    "requested_to_capacity_ratio_by_type": "1.36",
}

# A fact with more than two values: the value from each release on (keyed by the release it changed in), read with
# of_release. Where the nested args decoder's scheme was created, as kube-scheduler names it in "no kind ... is
# registered ... in scheme" (pkg/runtime/scheme.go:<line>; seen in v1.30.12-v1.35.4).
ARGS_SCHEME_LINE = {"1.30": 100, "1.33": 110, "1.35": 111}


def _minor(version) -> int:
    """The minor number of a version string, or ``version`` itself when it is one (34) already."""
    return version if isinstance(version, int) else minor_number(version)


def since(fact: str, version) -> bool:
    """Whether Kubernetes ``version`` behaves as upstream does from release CHANGED_IN[fact] on. ``version``: a
    version string as minor_of takes it (None or "": the newest released minor), or a minor number such as 34."""
    return _minor(version) >= minor_number(CHANGED_IN[fact])


def of_release(table: dict, version):
    """The value of a per-release ``table`` (such as ARGS_SCHEME_LINE: {release it holds from: value}) that holds
    for ``version`` (as ``since`` takes it)."""
    minor = _minor(version)
    return table[max((release for release in table if minor_number(release) <= minor), key=minor_number)]
