# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of kubesched.schedulers.scheduler_config.

Validates and renders with the pure-Python library here, so a bad configuration fails before any host is
contacted and masters need nothing but Python. Only when ``dest`` is set does it run the module on the host, with
the rendered text as ``content``, to compare, diff and write it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleActionFail
from ansible.module_utils.basic import FILE_COMMON_ARGUMENTS
from ansible.plugins.action import ActionBase

from ansible_collections.kubesched.schedulers.plugins.module_utils._args import SCHEDULER_CONFIG_SPEC
from ansible_collections.kubesched.schedulers.plugins.module_utils._files import mode_problem
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.extra_plugins import check_extra_plugins
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.hints import with_hints
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.named_files import named_files
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.redaction import (
    SECRET_KEYS, redact, redact_message, redact_text, register_secrets, secret_values)
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.versions import health_paths, unquoted_number
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_io import parsed, parsed_or_none, plain
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core.yaml_limits import check_structure
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs import kinds
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.inputs.action_errors import NamesItsFqcn

MODULE = 'kubesched.schedulers.scheduler_config'
ARGS_FOR_THE_HOST = ('dest', 'backup', 'check_named_files') + tuple(FILE_COMMON_ARGUMENTS)


class ActionModule(NamesItsFqcn, ActionBase):

    TRANSFERS_FILES = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        number = unquoted_number(self._task.args.get('kubernetes_version'))
        if number:
            raise AnsibleActionFail(number)

        # type=dict would quietly parse JSON or k=v text and type=str would turn a mapping into Python repr text:
        # both are mistakes worth naming.
        if isinstance(self._task.args.get('config'), str):
            raise AnsibleActionFail('config must be a mapping in upstream field names, not text; '
                                    'pass YAML or JSON text as content instead')
        if isinstance(self._task.args.get('content'), (Mapping, list)):
            raise AnsibleActionFail('content must be the YAML or JSON text of the configuration; '
                                    'pass a mapping as config instead')
        # Shapes and costs first: nothing below (argument validation copies the arguments) may recurse into, copy
        # or expand an unbounded input.
        for name in ('config', 'extra_plugins'):
            too_costly = check_structure(self._task.args.get(name), name)
            if too_costly:
                raise AnsibleActionFail(too_costly)
        spec = dict(FILE_COMMON_ARGUMENTS, **SCHEDULER_CONFIG_SPEC)
        dummy, args = self.validate_argument_spec(
            argument_spec=spec,
            mutually_exclusive=[('content', 'config')],
            required_one_of=[('content', 'config')],
        )

        problems = check_extra_plugins(plain(args['extra_plugins']))
        if args['dest'] is not None:
            try:
                kinds.path(self._task.args.get('dest'), 'dest')
            except kinds.InputError as exc:
                problems.append(str(exc))
        problem = mode_problem(args.get('mode'))
        if problem:
            problems.append(problem)
        if problems:
            raise AnsibleActionFail('\n'.join(problems))
        config = plain(args['config'])
        secrets = secret_values(config)
        register_secrets(secrets)
        try:
            outcome = process(
                content=plain(args['content']),
                config=config,
                kubernetes_version=plain(args['kubernetes_version']),
                extra_plugins=plain(args['extra_plugins']),
                strict=args['strict'],
                feature_gates=plain(args['feature_gates']),
                scheduler_plugins_version=plain(args['scheduler_plugins_version']),
            )
        except ValueError as exc:
            raise AnsibleActionFail(redact_message(str(exc), secrets))
        if outcome.ok:
            secrets = sorted(set(secrets) | set(secret_values(parsed(outcome.rendered))), key=lambda v: (-len(v), v))
            register_secrets(secrets)

        errors = [dict(error, message=redact_message(error['message'], secrets, parsed)) for error in outcome.errors]
        result.update(changed=False, kubernetes_version=outcome.version, health_paths=health_paths(outcome.version), errors=errors)
        if outcome.warnings:
            result['warnings'] = [redact_message(warning, secrets) for warning in outcome.warnings]
        if not outcome.ok:
            source = 'config' if config is not None else 'content'
            shown = config if config is not None else parsed_or_none(args['content'])
            lines = with_hints(errors, shown, outcome.version, source, lambda error: error['message'],
                               outcome.plugin_names)
            # Line by line: an error line echoing the whole input is redacted as data, and a hint is its own line.
            result.update(failed=True, msg='\n'.join(redact_message(line, secrets, parsed) for line in lines))
            return result
        # Secret-bearing fields are redacted in what is shown; the checksum is of the real text.
        # A no_log task shows nothing of its result: it gets the real text, to hand on (the deployment role's
        # ConfigMap must carry the real key, not "<redacted>").
        redacted = redact_text(redact_message(outcome.rendered, secrets))
        shown = outcome.rendered if self._play_context.no_log else redacted
        result.update(
            rendered=shown,
            redacted=redacted != outcome.rendered,
            effective=redact(outcome.effective),
            checksum=outcome.checksum,
            profiles=list(outcome.profiles),
            plugins=outcome.plugins,
        )
        if outcome.scheduler_plugins is not None:
            result['scheduler_plugins'] = outcome.scheduler_plugins
        if not args['dest']:
            return result

        module_args = dict((name, args[name]) for name in ARGS_FOR_THE_HOST if name in args)
        module_args['content'] = outcome.rendered
        module_args['secret_values'] = secrets
        module_args['secret_keys'] = list(SECRET_KEYS)
        # The files the config names (kubeconfig, extender TLS files) exist only on the host: it checks them.
        module_args['named_files'] = named_files(outcome.effective) if args['check_named_files'] else []
        try:
            written = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
        finally:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        result['warnings'] = result.get('warnings', []) + written.pop('warnings', [])
        if not result['warnings']:
            del result['warnings']
        result.update(written)
        return result
