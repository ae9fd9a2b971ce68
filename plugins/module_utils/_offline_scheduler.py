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
PREFLIGHT_DIR there; the real kubeconfig may point at a live API server). Host code: stdlib only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile

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


class Workspace(object):
    """A private directory with the new config, the offline kubeconfig and room for the effective config."""

    def __init__(self, config_text):
        self.path = tempfile.mkdtemp(prefix="kubesched-preflight-")
        self._config_text = config_text

    def __enter__(self):
        os.chmod(self.path, 0o700)
        return self

    def __exit__(self, *exc_info):
        shutil.rmtree(self.path, ignore_errors=True)

    def write(self, seen_as):
        """Write the files for a kube-scheduler that sees this directory as ``seen_as``; returns the argv tail."""
        text = self._config_text.replace(PREFLIGHT_DIR + "/", seen_as.rstrip("/") + "/")
        for name, content in (("config.yaml", text), ("kubeconfig", OFFLINE_KUBECONFIG)):
            with open(os.path.join(self.path, name), "w") as handle:
                handle.write(content)
        return ["--config", seen_as + "/config.yaml", "--write-config-to", seen_as + "/effective.yaml",
                "--secure-port", "0", "--master", UNREACHABLE_SERVER]


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


def refusal(rc, stdout, stderr):
    """kube-scheduler's own words for a refusal, or None when it accepted: the error of "command failed" (config,
    feature gates, plugins), else cobra's "Error: ..." line (flags; the usage text around it is dropped), else the
    last line it printed."""
    if rc == 0:
        return None
    text = "\n".join(part for part in (stderr, stdout) if part)
    found = _COMMAND_FAILED.search(text)
    if found:
        try:
            return json.loads(found.group(1))
        except ValueError:
            return found.group(1)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line[len("Error: "):] for line in lines if line.startswith("Error: ")]
    if errors:
        return errors[-1]
    return lines[-1] if lines else "exit status %s and no output" % rc
