# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vocabulary every other folder speaks: Kubernetes versions, kube-scheduler's errors, Go's parsers, YAML.

Nothing here knows a KubeSchedulerConfiguration's fields, an instance or a role: only what they are all written in.

Public:
- versions: the minors this collection knows, how users may write them, and what changed in which (since)
- errors: the config library's error type, printed the way kube-scheduler prints it
- durations: Go's duration parser and formatter
- go_strconv: Go's strconv.ParseFloat, for plugin args a Go plugin parses with it
- messages: how a value the user gave appears in a message (shown, type_name)
- yaml_limits: cost limits for configuration input, checked before anything is composed
- yaml_io: the one strict loader (as kube-scheduler reads a file), the one dumper, the plain-type converter
- constants: the collection's facts more than one place needs (annotation keys, probe timings, directories)
- redaction: secret-bearing fields, kept out of results, diffs, warnings and errors
- pem: Go's encoding/pem and x509.ParseCertificate, as client-go reads PEM data

Uses: module_utils.
"""
