# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the playbook benchmarks (rollout_vs_naive.py, fleet.py) share: the environment their ansible-playbook runs
get (the shared test playbooks read the Molecule variables; the scheduler binary of its minor) and a command runner
that logs to a file and stops the benchmark on a failure."""

from __future__ import annotations

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def environment(state, scenario, connection_plugins):
    """(os.environ with the benchmark's variables, the kube-scheduler version of KUBE_SCHEDULER_BIN)."""
    version = subprocess.run([os.environ["KUBE_SCHEDULER_BIN"], "--version"], capture_output=True, text=True,
                             check=True).stdout.split("v", 1)[1].strip()
    minor = version.rsplit(".", 1)[0]
    extra = {
        "ANSIBLE_COLLECTIONS_PATH": os.environ.get("ANSIBLE_COLLECTIONS_PATH", os.path.join(REPO, ".build", "collections")),
        "CONTAINERS_CONF": os.environ.get("CONTAINERS_CONF", os.path.join(REPO, "tests", "hosts", "containers.conf")),
        "ANSIBLE_CONNECTION_PLUGINS": connection_plugins,
        "ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_RETRY_FILES_ENABLED": "False",
        "ANSIBLE_LOCAL_TEMP": os.path.join(state, "ansible-tmp"),
        "KUBE_SCHEDULER_BIN_" + minor.replace(".", "_"): os.environ["KUBE_SCHEDULER_BIN"],
        "MOLECULE_KUBE_MINOR": minor, "MOLECULE_SCENARIO_NAME": scenario, "MOLECULE_PROJECT_DIRECTORY": REPO,
        "MOLECULE_EPHEMERAL_DIRECTORY": state,
    }
    return dict(os.environ, **extra), version


def sh(argv, environ, log=None, check=True):
    with open(log or os.devnull, "w") as out:
        code = subprocess.run(argv, env=environ, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    if check and code != 0:
        sys.exit("failed (%d): %s%s" % (code, " ".join(argv), ("; see " + log) if log else ""))
    return code
