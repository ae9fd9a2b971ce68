# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a running cluster says: its scheduler leases, what the schedulers did, who may read their /metrics, rollback points, the rollout Lease.

Public:
- lease_audit: every scheduler lease the cluster holds, against what the inventory expects
- scheduler_activity: the schedulers' counters while the verify role ran, per profile
- metrics_access: the objects and scrape configs that let Prometheus read /metrics
- rollback_point: the deployment role's rollback point, kept in the cluster until its rollout is ready
- rollout_lease: one rollout at a time in a cluster, the Lease a rollout run holds
- verify_plan: what the verify role decides from what it read (targets, verdicts, report rows)

Uses: core.
"""
