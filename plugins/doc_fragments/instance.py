# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared option docs: the resolved scheduler instance that filters of the static_pod mode take as input."""

from __future__ import annotations


class ModuleDocFragment(object):  # pylint: disable=too-few-public-methods
    """The C(_input) of a filter over one resolved instance of kubesched.schedulers.scheduler_instances."""

    DOCUMENTATION = r"""
options:
  _input:
    description:
      - One resolved scheduler instance, an element of the C(instances) that the
        M(kubesched.schedulers.scheduler_instances) action returns (state C(present)).
      - The fields used are C(name), C(flags) (the full kube-scheduler command line flags, C(--config) among them),
        C(config_path), C(kubeconfig), C(bind_address), C(secure_port) and C(image).
    type: dict
    required: true
"""

    KUBERNETES_VERSION = r"""
options:
  kubernetes_version:
    description:
      - Kubernetes release of the kube-scheduler, such as V(1.34.2) or V(1.34); only the minor matters.
      - Supported minors are 1.30 to 1.37, and 1.38 as a preview (measured on kube-scheduler v1.38.0-beta.0, a
        pre-release; every use of it warns so).
    type: str
    required: true
"""
