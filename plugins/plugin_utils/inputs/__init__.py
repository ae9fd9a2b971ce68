# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one input model: every value an operator gives, checked by kind and refused with the name they wrote.

Public:
- kinds: the kinds (path, port, account, image, flag argument ...), InputError and the one "did you mean"
- action_errors: argument errors of the action plugins, naming the plugin as the user wrote it
- container_resources: a container's resources, checked as the API server checks them

Uses: core, module_utils.
"""
