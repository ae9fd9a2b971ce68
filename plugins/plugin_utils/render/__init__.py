# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a scheduler runs as, rendered: a host instance's unit or static pod manifest, an in-cluster one's objects.

Public:
- command_line: a host instance's kube-scheduler flags, the collection's and the operator's extra_flags checked
- systemd_unit: the hardened unit, one pure function as kubeadm has one per component
- static_pod_manifest: the static pod manifest at parity with kubeadm's
- deployment_objects: every object the deployment role applies for one in-cluster scheduler, in order

Uses: config, core, inputs.
"""
