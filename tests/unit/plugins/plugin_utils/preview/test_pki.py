"""The throwaway control plane's certificates: a CA that signed a loopback serving certificate and a system:masters
client certificate, every file private to its owner, none overwritten."""
from __future__ import annotations

import os
import stat

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._pki import write_pki


def _cert(path):
    with open(path, "rb") as handle:
        return x509.load_pem_x509_certificate(handle.read())


def test_the_ca_signs_a_loopback_serving_cert_and_a_masters_client_cert(tmp_path):
    files = write_pki(str(tmp_path))
    ca = _cert(files["ca"])
    serving, client = _cert(files["serving_cert"]), _cert(files["client_cert"])
    for cert in (serving, client):
        cert.verify_directly_issued_by(ca)
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert ExtendedKeyUsageOID.SERVER_AUTH in serving.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert client.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == "system:masters"
    assert ExtendedKeyUsageOID.CLIENT_AUTH in client.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    for path in files.values():
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_no_file_is_written_over(tmp_path):
    (tmp_path / "ca.crt").write_text("someone else's")
    with pytest.raises(FileExistsError):
        write_pki(str(tmp_path))
    assert (tmp_path / "ca.crt").read_text() == "someone else's"
