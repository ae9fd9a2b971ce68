# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared attribute docs of this collection's action plugins (they extend ansible.builtin's
action_common_attributes, which describes each attribute; this says how far each plugin supports it)."""

from __future__ import annotations


class ModuleDocFragment(object):  # pylint: disable=too-few-public-methods
    """An action plugin of this collection: it runs on POSIX, neither async nor bypass_host_loop, and only reads and
    checks unless its own docs say otherwise (scheduler_config and scheduler_rollout write, and say so).

    ansible-core merges a fragment's attributes into the plugin's one attribute at a time, the plugin's own keys
    winning (plugin_docs.merge_fragment), so a plugin that writes sets both ``support`` and ``details`` of
    check_mode and diff_mode itself: a key it leaves out would show this fragment's read-only words."""

    DOCUMENTATION = r"""
attributes:
  action:
    support: full
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
    details: Read-only; it runs the same in check mode.
  diff_mode:
    support: none
  platform:
    platforms: posix
"""
