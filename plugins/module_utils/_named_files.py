# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Files a KubeSchedulerConfiguration names, which kube-scheduler opens at start-up: only the host can see them.

Host code: stdlib only.
"""

from __future__ import annotations

import os


def missing_named_files(named_files, will_exist=frozenset()):
    """One line per file that is neither a readable regular file on this host nor written by this run.

    ``named_files``: [{"field": "extenders[0].tlsConfig.certFile", "path": "/etc/..."}], as the controller found
    them in the config (plugins/plugin_utils/config/named_files.py).
    """
    problems = []
    for entry in named_files or []:
        field, path = entry.get("field"), entry.get("path")
        if not path:
            continue
        if not os.path.isabs(path):
            problems.append('%s: Invalid value: "%s": kube-scheduler resolves a relative path against its working '
                            'directory; give an absolute path' % (field, path))
        elif path in will_exist:
            continue
        elif not os.path.isfile(path):
            problems.append('%s: Invalid value: "%s": no such file on this host (kube-scheduler opens it at start-up '
                            'and would exit)' % (field, path))
        elif not os.access(path, os.R_OK):
            problems.append('%s: Invalid value: "%s": not readable' % (field, path))
    return problems
