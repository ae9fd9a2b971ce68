# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The configuration as kube-scheduler of a minor loads it: strict decode, defaults, validation, the profiles' build.

The private modules mirror upstream file for file and name their Go sources: _strict_decode (kube-scheduler's
--config loader, cmd/kube-scheduler/app/options/configfile.go), _defaults (pkg/scheduler/apis/config/v1/defaults.go,
default_plugins.go), _validation and _validation_pluginargs (pkg/scheduler/apis/config/validation/validation.go,
validation_pluginargs.go), _framework_checks (pkg/scheduler/framework/runtime/framework.go), _plugin_registry (the
in-tree registry of each minor), _feature_gates (pkg/features/kube_features.go, and the gates each measured binary
knows); _plugin_names is this collection's own: strict plugin names, which kube-scheduler does not check.

Public:
- configuration: process(), kube-scheduler's --config pipeline, and its Result
- schema: the Go types of kubescheduler.config.k8s.io/v1 per minor (API_VERSION, KIND)
- conversion: a v1beta2 or v1beta3 file as v1
- hints: one short hint with the fix after kube-scheduler's own error line
- named_files: the files a configuration names, with their field paths
- kube_scheduler_flags: the command-line flags each minor accepts, and what --config does to them
- scheduler_plugins: kubernetes-sigs/scheduler-plugins releases as targets of the library
- extra_plugins: the one check of the shape of extra_plugins

Uses: core, inputs, module_utils.
"""
