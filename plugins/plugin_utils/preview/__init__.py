# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a scheduler change does before it runs: the real kube-scheduler places a cluster's snapshot under each configuration.

The private modules: _control_plane (a throwaway etcd and kube-apiserver on loopback, removed whatever happens),
_pki (its own certificates), _load (the snapshot written into it).

Public:
- snapshot: the read-only snapshot of a cluster (list verbs only) and the ClusterRole it needs
- binaries: the etcd, kube-apiserver and kube-scheduler a preview runs, found and checked by component and minor
- placement: each configuration run by the real kube-scheduler over the snapshot, N times
- report: the runs' aggregates side by side, as a table and as a picture
- changes: the scheduler names a rollout's change moves, per cluster, as pairs of configurations to preview

Uses: core.
"""
