# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The three binaries a preview runs, found and checked before anything starts: each must be the component it is
given as (its own --help names it) and, for kube-apiserver and kube-scheduler, of the minor previewed (its own
--version says it; kube-apiserver may be one minor newer, as the version skew policy allows)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import minor_of

COMPONENTS = ("etcd", "kube-apiserver", "kube-scheduler")
# Upstream's server release tarball (kubernetes-server-linux-amd64.tar.gz) unpacks its binaries here; etcd is not
# in it (kubeadm runs etcd from its image), so it comes from its own option or the PATH.
SERVER_TARBALL_BIN = os.path.join("kubernetes", "server", "bin")


def next_minor(minor: str) -> str:
    major, number = minor.split(".")
    return "%s.%d" % (major, int(number) + 1)


class BinaryError(Exception):
    """A binary is missing, not executable, another component or another minor."""


def _run(argv) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except OSError as exc:
        raise BinaryError("%s: cannot run it: %s" % (argv[0], exc)) from None
    except subprocess.TimeoutExpired:
        raise BinaryError("%s: %s did not answer within 60 s" % (argv[0], " ".join(argv[1:]))) from None
    return done.stdout + done.stderr


def _in_directory(directory: str, component: str):
    for folder in (directory, os.path.join(directory, SERVER_TARBALL_BIN), os.path.join(directory, "server", "bin")):
        candidate = os.path.join(folder, component)
        if os.path.isfile(candidate):
            return candidate
    return None


def resolve(paths: dict, directory: str | None) -> dict:
    """component -> path: a path given wins, then the directory (flat, or laid out as the server tarball), then,
    for etcd only, the PATH."""
    found = {}
    for component in COMPONENTS:
        path = paths.get(component)
        if not path and directory:
            path = _in_directory(os.path.expanduser(directory), component)
        if not path and component == "etcd":
            path = shutil.which("etcd")
        if not path:
            where = ("%s or %s/%s" % (directory, directory, SERVER_TARBALL_BIN)) if directory else "no directory given"
            raise BinaryError("%s: not found (%s); give its path or a directory laid out as upstream's server "
                              "release tarball (%s/%s)" % (component, where, SERVER_TARBALL_BIN, component))
        found[component] = os.path.abspath(os.path.expanduser(path))
    return found


def check(paths: dict, minor: str) -> dict:
    """component -> version, after refusing any binary that is not executable, is another component, or is of
    another minor than ``minor`` (etcd's own versions are not Kubernetes', and any etcd 3.4+ serves)."""
    versions = {}
    for component in COMPONENTS:
        path = paths[component]
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise BinaryError("%s: %s is not an executable file" % (component, path))
        if component == "etcd":
            text = _run([path, "--version"])
            match = re.search(r"etcd Version: (\d+\.\d+\.\d+)", text)
            if not match:
                raise BinaryError("etcd: %s is not etcd (its --version says %r)" % (path, text.strip()[:120]))
            versions[component] = match.group(1)
            continue
        # cobra's usage line names the command: "Usage:\n  kube-scheduler [flags]".
        usage = re.search(r"Usage:\s*\n\s*(\S+)", _run([path, "--help"]))
        named = usage.group(1) if usage else None
        if named != component:
            raise BinaryError("%s: %s is %s, not %s" % (component, path, named or "not a Kubernetes component",
                                                        component))
        match = re.search(r"Kubernetes v(\d+\.\d+\.\d+\S*)", _run([path, "--version"]))
        if not match:
            raise BinaryError("%s: %s does not say its version (--version)" % (component, path))
        found = ".".join(match.group(1).split(".")[:2])
        allowed = [minor_of(minor)]
        if component == "kube-apiserver":
            allowed.append(next_minor(allowed[0]))
        if found not in allowed:
            raise BinaryError("%s: %s is v%s, the preview is for Kubernetes %s; give the %s of %s"
                              % (component, path, match.group(1), minor, component, " or ".join(allowed)))
        versions[component] = match.group(1)
    return versions
