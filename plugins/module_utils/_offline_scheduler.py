# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The master's own kube-scheduler, run offline against a new config and its flags before anything running is touched.

``kube-scheduler --config CFG --write-config-to OUT --secure-port 0 --master https://127.0.0.1:1`` decodes the config
strictly, defaults and validates it, parses every flag (the feature gates of that very build included), builds every
profile's plugins and extenders, writes the effective config and exits 0, or exits 1 with its error
(cmd/kube-scheduler/app/server.go: Setup, then WriteConfigTo). It contacts no API server: ``--secure-port 0`` skips
the delegated authentication and authorization lookups, ``--master`` overrides the kubeconfig's server, and the
config's ``clientConnection.kubeconfig`` names an offline kubeconfig in the run's own directory (the controller puts
PREFLIGHT_DIR there; the real kubeconfig may point at a live API server).

What came back is one of three things, told apart by kube-scheduler's own marks and never by an exit code alone
(ctr exits 1 for its own errors too, and /bin/true exits 0): accepted (exit 0 and the effective configuration written
where --write-config-to said), refused (exit 1 and an error in one of the two shapes k8s.io/component-base/cli's Run
prints), or no answer of kube-scheduler's (what ran did not start, or is not kube-scheduler): the tool's own words
then, never presented as a refusal. Host code: stdlib only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile

from ansible_collections.kubesched.schedulers.plugins.module_utils._files import writing

# Where the run's directory is seen by kube-scheduler: the mount point inside a container; on the host the controller's
# config names it and the directory's real path replaces it.
PREFLIGHT_DIR = "/kubesched-preflight"
PREFLIGHT_KUBECONFIG = PREFLIGHT_DIR + "/kubeconfig"
UNREACHABLE_SERVER = "https://127.0.0.1:1"
OFFLINE_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: offline
  cluster:
    server: %s
contexts:
- name: offline
  context:
    cluster: offline
    user: offline
current-context: offline
users:
- name: offline
  user: {}
""" % UNREACHABLE_SERVER

_COMMAND_FAILED = re.compile(r'"command failed" err=("(?:[^"\\]|\\.)*")')
# kube-scheduler's effective configuration, as --write-config-to writes it (a YAML document of this kind).
_EFFECTIVE_KIND = re.compile(r"^kind: KubeSchedulerConfiguration$", re.MULTILINE)
# How many of the last lines of a tool's output a problem quotes.
_QUOTED_LINES = 3

ACCEPTED = "accepted"
REFUSED = "refused"
NOT_KUBE_SCHEDULER = "not kube-scheduler"
NOT_RUN = "not run"
OTHER_RELEASE = "other release"

# What tells a kube-scheduler from the other components of its release, which print the same --version ("Kubernetes
# v1.35.4") and parse flags the same way, so that their "unknown flag: --config" looks like a refusal: cobra's usage
# line names the command, and every scheduler built on kube-scheduler's app.NewSchedulerCommand names itself
# kube-scheduler (scheduler-plugins' too). Measured on the 1.35.4 binaries: kube-controller-manager, kube-apiserver,
# kube-proxy and kubelet each name themselves there.
_USAGE = re.compile(r"^Usage:[ \t]*\n[ \t]+(\S+)", re.MULTILINE)
_RELEASE = re.compile(r"^Kubernetes v([0-9]+)\.([0-9]+)\.[0-9]+\S*$")


class Workspace(object):
    """A private directory with the new config, the offline kubeconfig and room for the effective config. Any failure
    to write them raises WriteFailed (module_utils/_files.py), naming the path and the master."""

    def __init__(self, config_text):
        self.path = None
        self._config_text = config_text

    def __enter__(self):
        with writing(tempfile.gettempdir(), action="make a directory in", purpose="the preflight's files"):
            self.path = tempfile.mkdtemp(prefix="kubesched-preflight-")
        os.chmod(self.path, 0o700)
        return self

    def __exit__(self, *exc_info):
        if self.path:
            shutil.rmtree(self.path, ignore_errors=True)

    def write(self, seen_as):
        """Write the files for a kube-scheduler that sees this directory as ``seen_as``; returns the argv tail."""
        text = self._config_text.replace(PREFLIGHT_DIR + "/", seen_as.rstrip("/") + "/")
        for name, content in (("config.yaml", text), ("kubeconfig", OFFLINE_KUBECONFIG)):
            path = os.path.join(self.path, name)
            with writing(path, purpose="the preflight's %s" % name), open(path, "w") as handle:
                handle.write(content)
        return ["--config", seen_as + "/config.yaml", "--write-config-to", seen_as + "/effective.yaml",
                "--secure-port", "0", "--master", UNREACHABLE_SERVER]

    def effective(self):
        """What the run wrote to --write-config-to (None: nothing)."""
        try:
            with open(os.path.join(self.path, "effective.yaml")) as handle:
                return handle.read()
        except (OSError, UnicodeDecodeError):
            return None


def offline_flags(flags):
    """The instance's flags without its --config (the run names the new config itself); the run's own flags come last,
    so they win over the instance's --secure-port."""
    kept, skip = [], False
    for flag in flags:
        if skip:
            skip = False
        elif flag == "--config":
            skip = True
        elif not flag.startswith("--config="):
            kept.append(flag)
    return kept


def answer(rc, stdout, stderr, effective):
    """What a run said: (ACCEPTED, None), (REFUSED, kube-scheduler's own words), (NOT_KUBE_SCHEDULER, why) when what
    ran exited 0 without kube-scheduler's answer, or (NOT_RUN, the last lines the tool printed and its exit status).

    Accepted: exit 0 with the effective configuration written (``effective``: the text of --write-config-to's file),
    which only a kube-scheduler that decoded, defaulted and validated the config writes. Refused: exit 1 with the error
    of "command failed" (config, feature gates, plugins; logged once logging is set up) or cobra's "Error: ..." line
    (flags, before it; the usage text around it is dropped): the two shapes k8s.io/component-base/cli's Run prints.
    Anything else is no answer of kube-scheduler's: a runtime that could not start the container (podman's exit 125 to
    127, ctr's "ctr: ..." with exit 1), a binary that is not kube-scheduler."""
    text = "\n".join(part for part in (stderr, stdout) if part)
    if rc == 0:
        if effective is not None and _EFFECTIVE_KIND.search(effective):
            return ACCEPTED, None
        return NOT_KUBE_SCHEDULER, ("it exited 0 without writing the effective configuration that --write-config-to "
                                    "asks for (kube-scheduler writes it, then exits)")
    if rc == 1:
        found = _COMMAND_FAILED.search(text)
        if found:
            try:
                return REFUSED, json.loads(found.group(1))
            except ValueError:
                return REFUSED, found.group(1)
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        errors = [line[len("Error: "):] for line in lines if line.startswith("Error: ")]
        if errors:
            return REFUSED, errors[-1]
    return NOT_RUN, last_words(rc, text)


def identify(run, binary, version):
    """Whether the host binary ``binary`` is a kube-scheduler of ``version``'s minor, asked before its answer counts:
    None when it is, else (NOT_RUN, its last words) when it could not say, (NOT_KUBE_SCHEDULER, why) when its
    --version is not a Kubernetes release or its --help names another command, (OTHER_RELEASE, why) when it is of
    another minor. ``run``: argv -> (rc, stdout, stderr); an OSError (it cannot be started) is the caller's to word.
    Two runs of about 50 ms each, before the preflight's own."""
    rc, stdout, stderr = run([binary, "--version"])
    if rc != 0:
        return NOT_RUN, "--version failed: " + last_words(rc, "\n".join(part for part in (stderr, stdout) if part))
    said = ((stdout or stderr or "").strip().splitlines() or [""])[0].strip()
    found = _RELEASE.match(said)
    if not found:
        return NOT_KUBE_SCHEDULER, ("its --version says %r, not a Kubernetes release (kube-scheduler says \"Kubernetes "
                                    "v<release>\")" % said[:80] if said else "its --version printed nothing")
    minor = ".".join(version.split(".")[:2]) if version else None
    if minor and "%s.%s" % found.groups() != minor:
        return OTHER_RELEASE, "its --version says %r, not a release of %s" % (said, minor)
    rc, stdout, stderr = run([binary, "--help"])
    usage = _USAGE.search("\n".join(part for part in (stdout, stderr) if part))
    if not usage:
        return NOT_KUBE_SCHEDULER, "its --help names no command (%s)" % last_words(rc, stdout + stderr)
    if usage.group(1) != "kube-scheduler":
        return NOT_KUBE_SCHEDULER, "its --help says it is %s (\"Usage: %s [flags]\"), not kube-scheduler" % (
            usage.group(1), usage.group(1))
    return None


def last_words(rc, text):
    """The last lines a tool printed and its exit status, for a problem."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return "%s (exit status %s)" % (" | ".join(lines[-_QUOTED_LINES:]), rc) if lines else "exit status %s and no output" % rc
