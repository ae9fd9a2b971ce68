# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Before a cluster upgrade: would each configuration start on the target minors, and what would change.

Public:
- upgrade_check: one configuration against the target minors (check_upgrade)
- upgrade_scan: every configuration a cluster holds, and the flags of its static pods (scan, table)

Uses: config, core.
"""
