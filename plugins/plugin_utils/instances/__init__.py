# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scheduler instances of a master and the roles' variables, resolved and checked on the controller.

Public:
- model: the instance model (resolve, needs_node_facts), built on the private instance spec (_instance_spec)
- role_variables: every variable of every role, its kind, and the checks between variables (check_role)
- serving: where an instance serves /metrics and health, and with which certificate

Uses: config, core, inputs, render.
"""
