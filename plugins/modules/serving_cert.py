#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: serving_cert
short_description: A kube-scheduler serving certificate signed by the cluster CA, issued again only when needed
description:
  - Issues the serving certificate of one kube-scheduler instance (C(--tls-cert-file), C(--tls-private-key-file)),
    signed by the cluster CA, with the SANs given; the C(kubesched.schedulers.systemd) and
    C(kubesched.schedulers.static_pod) roles call it for every instance with a serving certificate.
  - Idempotent. A new key and certificate are written only when one of them is missing, the certificate is not
    signed by the CA (the CA changed), its SANs differ, its key does not match, or it expires within O(renew_days).
    kube-scheduler reloads both files when they change, so a renewal needs no restart.
  - Uses the C(openssl) command of the host (kubeadm masters have it); ECDSA P-256 keys, C(serverAuth) only.
  - No key is ever returned or shown; the CA key given as O(ca_key_content) is written to a private temp directory
    for the run only. Supports check mode (reports whether, and why, it would issue).
options:
  cert_path:
    description: Where the certificate goes.
    type: path
    required: true
  key_path:
    description: Where its private key goes (mode 0600).
    type: path
    required: true
  ca_cert:
    description: The cluster CA certificate on the host.
    type: path
    default: /etc/kubernetes/pki/ca.crt
  ca_key:
    description: The cluster CA key on the host.
    type: path
    default: /etc/kubernetes/pki/ca.key
  ca_cert_content:
    description: The CA certificate as PEM text, instead of O(ca_cert); give it with O(ca_key_content).
    type: str
  ca_key_content:
    description: The CA key as PEM text, instead of O(ca_key); written to a private temp directory for the run only.
    type: str
  ip_sans:
    description: IP address SANs.
    type: list
    elements: str
    default: []
  dns_sans:
    description: DNS name SANs.
    type: list
    elements: str
    default: []
  common_name:
    description: The subject's CN.
    type: str
    required: true
  owner:
    description: Owner of both files (the process that reads the key).
    type: str
    default: root
  group:
    description: Group of both files.
    type: str
    default: root
  days:
    description: Validity of a new certificate in days.
    type: int
    default: 365
  renew_days:
    description: Issue again when it expires within this many days.
    type: int
    default: 30
  openssl:
    description: The openssl command.
    type: str
    default: openssl
version_added: 1.0.0
author:
  - kubesched maintainers (@kubesched)
"""

EXAMPLES = r"""
- name: Serving certificate of the instance batch-scheduler, from kubeadm's cluster CA
  kubesched.schedulers.serving_cert:
    cert_path: /etc/kubernetes/pki/schedulers/batch-scheduler.crt
    key_path: /etc/kubernetes/pki/schedulers/batch-scheduler.key
    common_name: batch-scheduler
    ip_sans: [10.0.0.11, 127.0.0.1]
    dns_sans: [master-1, master-1.example.com, localhost]
"""

RETURN = r"""
reason:
  description: Why a certificate was (or in check mode would be) issued; null when the one on the host is right.
  returned: always
  type: str
certificate:
  description: Subject, issuer, not_after, serial and sha256_fingerprint of the certificate now on the host (none in check mode before the first one).
  returned: always
  type: dict
"""

import os

from ansible_collections.kubesched.schedulers.plugins.module_utils._module import CollectionModule
from ansible_collections.kubesched.schedulers.plugins.module_utils._files import WriteFailed, account_problem, writing
from ansible_collections.kubesched.schedulers.plugins.module_utils._serving_cert import (
    CaMaterial, CertError, Issuer, describe, issue, normalised_sans, why_reissue)


def _ids(module):
    import grp
    import pwd
    problems = [problem for problem in (account_problem("owner", module.params["owner"]),
                                        account_problem("group", module.params["group"])) if problem]
    if problems and module.check_mode:
        return None  # a Check job plans before the role creates the service user
    if problems:
        module.fail_json(msg="; ".join(problems))
    owner, group = module.params["owner"], module.params["group"]
    uid = int(owner) if owner.isdigit() else pwd.getpwnam(owner).pw_uid
    gid = int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
    return uid, gid


def main():
    module = CollectionModule(
        'kubesched.schedulers.serving_cert',
        argument_spec=dict(
            cert_path=dict(type="path", required=True),
            key_path=dict(type="path", required=True, no_log=False),
            ca_cert=dict(type="path", default="/etc/kubernetes/pki/ca.crt"),
            ca_key=dict(type="path", default="/etc/kubernetes/pki/ca.key", no_log=False),
            ca_cert_content=dict(type="str"),
            ca_key_content=dict(type="str", no_log=True),
            ip_sans=dict(type="list", elements="str", default=[]),
            dns_sans=dict(type="list", elements="str", default=[]),
            common_name=dict(type="str", required=True),
            owner=dict(type="str", default="root"),
            group=dict(type="str", default="root"),
            days=dict(type="int", default=365),
            renew_days=dict(type="int", default=30),
            openssl=dict(type="str", default="openssl"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    openssl = module.get_bin_path(params["openssl"], required=True)
    issuer = Issuer(module, openssl)
    paths = {"cert": params["cert_path"], "key": params["key_path"]}
    try:
        wanted = normalised_sans(params["ip_sans"], params["dns_sans"])
    except ValueError as exc:
        module.fail_json(msg="ip_sans: %s" % exc)
    ids = _ids(module)
    try:
        with CaMaterial(params["ca_cert"], params["ca_key"], params["ca_cert_content"], params["ca_key_content"]) as ca:
            reason = why_reissue(issuer, paths, ca["cert"], wanted, params["renew_days"])
            if reason and not module.check_mode:
                for directory in set(os.path.dirname(path) for path in paths.values()):
                    if not os.path.isdir(directory):
                        with writing(directory, action="make"):
                            os.makedirs(directory, 0o755)
                issue(issuer, paths, ca, wanted, params["common_name"], params["days"], ids)
            elif not reason and ids is not None:
                reason = _attributes(paths, ids)
                if reason and not module.check_mode:
                    for path in paths.values():
                        with writing(path, purpose="its owner"):
                            os.chown(path, *ids)
    except CertError as exc:
        module.fail_json(msg="%s: %s" % (params["cert_path"], exc))
    except WriteFailed as exc:
        # The key and the certificate are each written whole or not at all; the message names the path, the master
        # and the file system.
        module.fail_json(msg=str(exc))
    certificate = describe(issuer, paths["cert"]) if os.path.exists(paths["cert"]) else None
    module.exit_json(changed=bool(reason), reason=reason, certificate=certificate)


def _attributes(paths, ids):
    """An owner change alone (the service user changed) is fixed in place, without a new key."""
    for path in paths.values():
        status = os.stat(path)
        if (status.st_uid, status.st_gid) != ids:
            return "%s is not owned by %d:%d" % (path, ids[0], ids[1])
    return None


if __name__ == "__main__":
    main()
