# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's constants (plugins/plugin_utils/core/constants.py) for the roles' templates and tasks."""

from __future__ import annotations

DOCUMENTATION = r"""
---
name: constants
author: kubesched maintainers (@kubesched)
version_added: 1.0.0
short_description: Internal - the facts this collection defines once, for its roles
description:
  - B(Internal.) The roles of this collection read the annotation keys they write, kubeadm's probe timings and the
    default directories from here, so each is defined once (in C(plugins/plugin_utils/core/constants.py)); not a public
    interface.
options:
  _terms:
    description: Names of constants.
    type: list
    elements: str
    required: true
    choices: [annotations, legacy_annotations, probe_timings, temp_file_mark, config_dir, state_dir, state_subdirs,
              pod_config_dir, metrics_token_secret_suffix, newest_minor]
"""

EXAMPLES = r"""
- name: The annotation key of a static pod's checksum
  ansible.builtin.debug:
    msg: "{{ lookup('kubesched.schedulers.constants', 'annotations')['checksum'] }}"
"""

RETURN = r"""
_raw:
  description: The value of each named constant.
  type: list
  elements: raw
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.constants import FOR_ROLES


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        unknown = [term for term in terms if term not in FOR_ROLES]
        if unknown:
            raise AnsibleLookupError("kubesched.schedulers.constants: unknown %s; known are %s"
                                     % (", ".join(map(str, unknown)), ", ".join(sorted(FOR_ROLES))))
        return [FOR_ROLES[term] for term in terms]
