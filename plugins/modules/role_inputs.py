# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# This file holds the documentation only: the work is done by the action plugin of the same name, on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: role_inputs
short_description: Check every variable of a role of this collection on the controller (internal)
version_added: 1.0.0
description:
  - Internal to the roles of this collection, which run it first; not meant for playbooks.
  - Reads the role's variables (templated) and refuses, before any host is touched and with the variable's own name
    in each line, every value that would reach a file, a path, a unit, a command line, a manifest or an in-cluster
    object in a form that is unsafe or that Linux, systemd, the kubelet or the API server would refuse later -
    control characters, empty values (an empty AWX survey field), paths that are not absolute and normalised (no
    C(.), C(..) or C(//)), directories that coincide or nest, ports outside 1-65535, uid 0 next to C(runAsNonRoot),
    Kubernetes names, labels and schedulerNames that the API server would refuse, a PodDisruptionBudget
    C(maxUnavailable) that is neither a number nor a percentage, and versions (a YAML number such as C(1.30), read
    as C(1.3), is named as such).
  - Converts every boolean variable once, by one rule - V(true) or V(false), or as text V(true), V(false), V(yes)
    or V(no) in any case with nothing around it - and returns the converted values (RV(booleans)), which the role
    uses from then on. A padded (V("yes ")) or other spelling (V(y), V(on), V(1)) is refused naming the variable,
    the value and the accepted spellings - ansible-core's argument specs and its C(bool) filter read those
    differently from each other.
  - Reports a C(kube_scheduler_*) variable that no role knows but that is close to one that does (a typo such as
    C(kube_scheduler_instance)) with the name it most likely meant. Names far from every known one are left alone
    (other roles, such as kubespray's, have C(kube_scheduler_*) variables of their own).
extends_documentation_fragment:
  - action_common_attributes
  - action_common_attributes.flow
  - kubesched.schedulers.attributes
options:
  role:
    description: The role whose variables are checked.
    type: str
    required: true
    choices: [deployment, static_pod, systemd, verify]
  all_hosts:
    description:
      - Check the variables of every host of the play too (C(ansible_play_hosts_all)), each as it would be checked on
        its own, the host's name in each line - so the task runs once for all masters (C(run_once)). What the play
        and the role give is the same for every host; what the inventory gives one host (host_vars, its groups'
        vars) is read from C(hostvars). A host with the same values as the one the task runs for is not checked twice.
    type: bool
    default: false
author:
  - kubesched maintainers (@kubesched)
"""

EXAMPLES = r"""
- name: Check the variables of the systemd role
  kubesched.schedulers.role_inputs:
    role: systemd
"""

RETURN = r"""
version:
  description: The role's Kubernetes release, normalised (V(v1.35.4) and V(1.35.4) both give V(1.35.4)); null when the role has none.
  returned: success
  type: str
  sample: 1.35.4
booleans:
  description:
    - The role's boolean variables (and those that also take V(auto)) as converted by the one rule of the input
      model - V(true) or V(false), or as text V(true), V(false), V(yes) or V(no) in any case with nothing around it;
      anything else was refused, naming the variable, its value and these spellings.
    - The role renders and decides with these values, never with a second conversion (C(| bool)) of the variable.
  returned: success
  type: dict
  sample: {"kube_scheduler_deployment_profiling": false, "kube_scheduler_deployment_pod_monitor": "auto"}
hosts:
  description: With O(all_hosts), the same for every host of the play, by inventory name (the task runs once).
  returned: success
  type: dict
  sample: {"master-1": {"kube_scheduler_profiling": false}}
errors:
  description: One line per problem, each naming the variable.
  returned: failure
  type: list
  elements: str
"""
