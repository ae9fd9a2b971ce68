# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A kube-scheduler serving certificate signed by the cluster CA, with the ``openssl`` command of the master.

openssl rather than a Python library: kubeadm masters and this collection's test hosts have the command, not
python3-cryptography. A certificate is (re)issued only when it is missing, not signed by the given CA (the CA
changed), its SANs differ from the wanted ones, its key does not match, or it expires within ``renew_days``; else
nothing is written. The key is written first, then the certificate, each atomically (kube-scheduler reloads both
files when they change: k8s.io/apiserver dynamiccertificates, so a renewal needs no restart). No key, of the CA or
the certificate, ever leaves this module; a CA key given as content lives in a private temp directory for the run.
Host code: stdlib only.
"""

from __future__ import annotations

import ipaddress
import os
import re
import secrets
import shutil
import tempfile

from ansible_collections.kubesched.schedulers.plugins.module_utils._files import read_bytes, write_atomically, writing

# The indentation is whitespace other than a newline: with \s, every line start would scan the blank lines after it.
_SAN_LINE = re.compile(r"^[^\S\n]*X509v3 Subject Alternative Name:.*\n\s*(.+)$", re.MULTILINE)


class CertError(Exception):
    """One problem, worded for the operator."""


class Issuer(object):
    """Runs openssl through an AnsibleModule's run_command (so its output is never shown raw)."""

    def __init__(self, module, openssl):
        self.module = module
        self.openssl = openssl

    def run(self, args, data=None, check=True):
        rc, out, err = self.module.run_command([self.openssl] + args, data=data, binary_data=data is not None)
        if check and rc != 0:
            raise CertError("openssl %s failed: %s" % (args[0], (err or out).strip().splitlines()[-1:] or rc))
        return rc, out, err


def normalised_sans(ip_sans, dns_sans):
    ips = sorted(set(str(ipaddress.ip_address(value)) for value in ip_sans))
    return ips, sorted(set(value.lower() for value in dns_sans))


def current_sans(issuer, cert_path):
    """(ips, names) of the certificate's subjectAltName, normalised like normalised_sans."""
    _rc, out, _err = issuer.run(["x509", "-noout", "-in", cert_path, "-ext", "subjectAltName"])
    found = _SAN_LINE.search(out)
    ips, names = [], []
    for entry in (found.group(1).split(",") if found else []):
        kind, _sep, value = entry.strip().partition(":")
        if kind == "IP Address":
            ips.append(value)
        elif kind == "DNS":
            names.append(value)
    return normalised_sans(ips, names)


def why_reissue(issuer, paths, ca_cert, wanted_sans, renew_days):
    """The reason to issue a new certificate, or None when the one on the host is right."""
    if not os.path.exists(paths["cert"]) or not os.path.exists(paths["key"]):
        return "the certificate or its key is missing"
    rc, _out, _err = issuer.run(["verify", "-partial_chain", "-purpose", "sslserver", "-CAfile", ca_cert,
                                 paths["cert"]], check=False)
    if rc != 0:
        return "it is not signed by the cluster CA %s (the CA changed) or is no longer valid" % ca_cert
    rc, _out, _err = issuer.run(["x509", "-noout", "-in", paths["cert"], "-checkend", str(renew_days * 86400)],
                                check=False)
    if rc != 0:
        return "it expires within %d days" % renew_days
    try:
        have = current_sans(issuer, paths["cert"])
    except CertError:
        return "its SANs cannot be read"
    if have != wanted_sans:
        return "its SANs differ: %s, wanted %s" % (_shown(have), _shown(wanted_sans))
    _rc, cert_key, _err = issuer.run(["x509", "-noout", "-pubkey", "-in", paths["cert"]])
    rc, key_pub, _err = issuer.run(["pkey", "-pubout", "-in", paths["key"]], check=False)
    if rc != 0 or key_pub.strip() != cert_key.strip():
        return "its key does not match the certificate"
    return None


def issue(issuer, paths, ca, wanted_sans, common_name, days, ids):
    """Write a new key and certificate (ECDSA P-256, serverAuth) signed by ``ca`` ({"cert", "key"} paths)."""
    with writing(tempfile.gettempdir(), action="make a directory in", purpose="openssl's work"):
        work = tempfile.mkdtemp(prefix="kubesched-serving-")
    try:
        os.chmod(work, 0o700)
        key, csr, cert, ext = (os.path.join(work, name) for name in ("key.pem", "req.csr", "cert.pem", "ext.cnf"))
        ips, names = wanted_sans
        with writing(ext), open(ext, "w") as handle:
            handle.write("[v3]\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                         "extendedKeyUsage=serverAuth\nsubjectAltName=%s\n"
                         % ",".join(["DNS:%s" % name for name in names] + ["IP:%s" % ip for ip in ips]))
        issuer.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
        issuer.run(["req", "-new", "-key", key, "-subj", "/CN=%s" % common_name, "-out", csr])
        issuer.run(["x509", "-req", "-in", csr, "-CA", ca["cert"], "-CAkey", ca["key"], "-sha256", "-days", str(days),
                    "-set_serial", "0x%s" % secrets.token_hex(16), "-extfile", ext, "-extensions", "v3", "-out", cert])
        write_atomically(paths["key"], read_bytes(key), ids=ids, mode=0o600)
        write_atomically(paths["cert"], read_bytes(cert), ids=ids, mode=0o644)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def describe(issuer, cert_path):
    """What may be shown of a certificate: its subject, issuer, validity, serial and SHA-256 fingerprint."""
    _rc, out, _err = issuer.run(["x509", "-noout", "-in", cert_path, "-subject", "-issuer", "-enddate", "-serial",
                                 "-fingerprint", "-sha256", "-nameopt", "RFC2253"])
    facts = {}
    for line in out.splitlines():
        key, _sep, value = line.partition("=")
        facts[key.strip().lower().replace(" ", "_")] = value.strip()
    return {"subject": facts.get("subject"), "issuer": facts.get("issuer"), "not_after": facts.get("notafter"),
            "serial": facts.get("serial"), "sha256_fingerprint": facts.get("sha256_fingerprint")}


class CaMaterial(object):
    """The CA as two paths: the given ones, or a private temp directory with the given content (removed on exit)."""

    def __init__(self, cert_path, key_path, cert_content, key_content):
        self.given = (cert_path, key_path, cert_content, key_content)
        self.work = None

    def __enter__(self):
        cert_path, key_path, cert_content, key_content = self.given
        if cert_content is None and key_content is None:
            for option, path in (("ca_cert", cert_path), ("ca_key", key_path)):
                if not os.path.isfile(path):
                    raise CertError("%s: %s does not exist on this master: give the cluster CA's certificate and key "
                                    "(kube_scheduler_serving_ca_cert/_key, or their _content), or set serving_cert: "
                                    "false on the instance" % (option, path))
            return {"cert": cert_path, "key": key_path}
        if cert_content is None or key_content is None:
            raise CertError("ca_cert_content and ca_key_content: give both or neither")
        with writing(tempfile.gettempdir(), action="make a directory in", purpose="the CA given as content"):
            self.work = tempfile.mkdtemp(prefix="kubesched-ca-")
        paths = {"cert": os.path.join(self.work, "ca.crt"), "key": os.path.join(self.work, "ca.key")}
        try:
            os.chmod(self.work, 0o700)
            for name, content in (("cert", cert_content), ("key", key_content)):
                with writing(paths[name]):
                    fd = os.open(paths[name], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    with os.fdopen(fd, "w") as handle:
                        handle.write(content)
        except BaseException:
            self.__exit__()  # no half-written CA key is left behind: __exit__ does not run after a failed __enter__
            raise
        return paths

    def __exit__(self, *exc_info):
        if self.work:
            shutil.rmtree(self.work, ignore_errors=True)


def _shown(sans):
    ips, names = sans
    return ", ".join(["IP:%s" % ip for ip in ips] + ["DNS:%s" % name for name in names]) or "(none)"
