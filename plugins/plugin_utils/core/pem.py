# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Go's encoding/pem and x509.ParseCertificate, as client-go's TLS configuration reads PEM data (an extender's
caData, certData, keyData).

Pure Python: no Ansible imports (the cryptography package parses a certificate when it is there).
"""

from __future__ import annotations

import base64
import binascii
import re

_BEGIN = re.compile(r"-----BEGIN ([^-\n]*)-----\r?\n")


def _texts(text):
    """(type, body) of each block, as ``-----BEGIN (type)-----\\r?\\n(.*?)-----END \\1-----`` (DOTALL) finds them:
    a block ends at the first END line of its type. Where each type's END line is is remembered, so many BEGIN lines
    without an END are not each followed to the end of the text (the expression took quadratic time on them)."""
    ends, position = {}, 0
    while True:
        begin = _BEGIN.search(text, position)
        if begin is None:
            return
        kind, start = begin.group(1), begin.end()
        marker = "-----END %s-----" % kind
        searched, found = ends.get(kind, (None, None))
        if searched is None or searched > start or 0 <= found < start:
            searched, found = start, text.find(marker, start)
            ends[kind] = (searched, found)
        if found < 0:
            position = begin.start() + 1
            continue
        yield kind, text[start:found]
        position = found + len(marker)


def blocks(data: bytes) -> list:
    """encoding/pem blocks of ``data``: [(type, has_headers, der bytes or None)]."""
    found = []
    for kind, body in _texts(data.decode("latin-1")):
        headers = ":" in body.split("\n\n")[0] and "\n\n" in body
        try:
            der = base64.b64decode("".join(body.split("\n\n")[-1].split()), validate=True)
        except (binascii.Error, ValueError):
            der = None
        found.append((kind, headers, der))
    return found


def parses_as_certificate(der) -> bool:
    """x509.ParseCertificate, with the cryptography package when it is there (ansible-core needs it on the
    controller), else only the outer ASN.1 SEQUENCE is checked."""
    if not der or der[:1] != b"\x30":
        return False
    try:
        from cryptography import x509  # pylint: disable=import-outside-toplevel
    except ImportError:
        return True
    try:
        x509.load_der_x509_certificate(der)
    except ValueError:
        return False
    return True
