# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A rollout over the masters: the files each master should have, the apply order, the temporary standbys, the run.

Public:
- another_master_failed: why a master's pending change was not applied: another master failed its plan
- rollout_files: every file a master should have, per instance, for scheduler_rollout's host side
- rollout_order: which masters change in what order, and in which waves
- run_identity: which ansible-playbook run a call belongs to, the holder of the rollout locks
- temporary_standby: make before break, a standby for an instance whose lease has no other

Uses: config, core, module_utils, render.
"""
