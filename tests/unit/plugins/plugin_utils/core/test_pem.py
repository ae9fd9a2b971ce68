# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PEM data as client-go reads an extender's caData, certData and keyData (plugin_utils/core/pem.py): Go's
encoding/pem blocks and x509.ParseCertificate. The configuration's answers on such data are compared with the real
kube-scheduler in tests/unit/plugins/plugin_utils/config/test_binary_observed.py."""

from __future__ import annotations

import datetime
import time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.core import pem


def _certificate() -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "extender-ca")])
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM))


def test_a_certificate_is_one_block_that_parses():
    ((kind, headers, der),) = pem.blocks(_certificate())
    assert (kind, headers) == ("CERTIFICATE", False)
    assert pem.parses_as_certificate(der)


def test_headers_bad_base64_and_a_block_without_its_end_line():
    data = (b"-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\nMIIB\n-----END CERTIFICATE-----\n"
            b"-----BEGIN KEY-----\n!!!\n-----END KEY-----\n-----BEGIN CERTIFICATE-----\nMIIB\n")
    assert pem.blocks(data) == [("CERTIFICATE", True, b"0\x82\x01"), ("KEY", False, None)]
    assert not pem.parses_as_certificate(b"0\x82\x01") and not pem.parses_as_certificate(None)
    assert pem.blocks(b"no armour at all") == []


def test_many_begin_lines_without_an_end_take_linear_time():
    started = time.perf_counter()
    assert pem.blocks(b"-----BEGIN CERTIFICATE-----\n" * 20000) == []
    assert time.perf_counter() - started < 5
