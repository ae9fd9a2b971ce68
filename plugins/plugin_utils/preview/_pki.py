# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The throwaway control plane's own credentials: a CA, the API server's serving certificate for loopback, one
client certificate in system:masters (the preview's kubeconfig and its own readiness probes) and the service-account
key pair, valid for a day; and a random bearer token for each of the two clients, which the preview's requests and
kube-scheduler (SCHEDULER_USER) carry (kube-apiserver verifies a client certificate's signature on every request, an ECDSA
verification that cost 15 % of its CPU in a run; a token is a lookup). All written with mode 0600 into the control
plane's private directory, never anywhere else."""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
except ImportError:  # an optional package of the controller: the preview names it before it starts (placement.missing)
    HAS_CRYPTOGRAPHY = False
else:
    HAS_CRYPTOGRAPHY = True


# kube-scheduler's own identity here: kube-scheduler's bootstrap role without Events (see _control_plane.py).
SCHEDULER_USER = "kubesched-preview-scheduler"
PREVIEW_USER = "kubesched-preview"


def _key():
    # P-256: the same trust as RSA-2048 for a one-hour, loopback-only CA, and generated in a millisecond.
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _name(common_name, organization=None):
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


def _write(directory: str, name: str, data: bytes) -> str:
    path = os.path.join(directory, name)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    return path


def write_pki(directory: str) -> dict:
    """Every file the API server and its clients need, by role: ca, serving_cert/key, client_cert/key, sa_key/pub."""
    now = datetime.datetime.now(datetime.timezone.utc)
    validity = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=1))

    def builder(subject, issuer, public_key):
        return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
                .serial_number(x509.random_serial_number())
                .not_valid_before(validity[0]).not_valid_after(validity[1]))

    ca_key = _key()
    ca_cert = (builder(_name("kubesched-preview-ca"), _name("kubesched-preview-ca"), ca_key.public_key())
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
               .sign(ca_key, hashes.SHA256()))

    def issue(common_name, organization=None, server=False):
        key = _key()
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        cert = (builder(_name(common_name, organization), ca_cert.subject, key.public_key())
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True)
                .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
                # Python 3.13's clients verify X.509 strictly (VERIFY_X509_STRICT): a certificate names its issuer's key.
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False))
        if server:
            cert = cert.add_extension(x509.SubjectAlternativeName([
                x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]), critical=False)
        return cert.sign(ca_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM), _pem_key(key)

    serving_cert, serving_key = issue("kube-apiserver", server=True)
    client_cert, client_key = issue(PREVIEW_USER, "system:masters")
    sa_key = _key()
    return {
        "ca": _write(directory, "ca.crt", ca_cert.public_bytes(serialization.Encoding.PEM)),
        "serving_cert": _write(directory, "apiserver.crt", serving_cert),
        "serving_key": _write(directory, "apiserver.key", serving_key),
        "client_cert": _write(directory, "client.crt", client_cert),
        "client_key": _write(directory, "client.key", client_key),
        "sa_key": _write(directory, "sa.key", _pem_key(sa_key)),
        "sa_pub": _write(directory, "sa.pub", sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)),
    }


def write_tokens(directory: str) -> dict:
    """kube-apiserver's --token-auth-file with a new random token for the preview (system:masters) and one for
    kube-scheduler (SCHEDULER_USER): {file, preview, scheduler}."""
    tokens = {"preview": secrets.token_hex(32), "scheduler": secrets.token_hex(32)}
    lines = ['%s,%s,%s,"system:masters"' % (tokens["preview"], PREVIEW_USER, PREVIEW_USER),
             "%s,%s,%s" % (tokens["scheduler"], SCHEDULER_USER, SCHEDULER_USER)]
    tokens["file"] = _write(directory, "tokens.csv", ("\n".join(lines) + "\n").encode())
    return tokens
