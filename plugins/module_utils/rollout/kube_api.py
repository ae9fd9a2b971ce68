# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API server as a kubeconfig's identity sees it from a master.

The master's own view (its kubeconfig names the server it reaches, often the local kube-apiserver of a kubeadm
master), not the controller's.

Reads a kubeconfig (JSON, PyYAML when the master has it, else the block-YAML subset kubectl and kubeadm write),
builds a TLS context from its CA and client certificate or token, and sends one JSON request. Host code: stdlib
only (PyYAML optional).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import ssl
import tempfile

try:
    from http.client import HTTPException, HTTPSConnection
    from urllib.parse import urlsplit
except ImportError:  # pragma: no cover - Python 2 is not supported on the masters
    HTTPException = HTTPSConnection = urlsplit = None

try:
    import yaml as _yaml
except ImportError:
    _yaml = None

TIMEOUT = 10


class KubeconfigError(Exception):
    """The kubeconfig cannot be used from here (unreadable, a form this reader does not take, an exec plugin)."""


class Unreachable(Exception):
    """No answer from the API server the kubeconfig names (refused, timed out, TLS failed)."""


class ApiError(Exception):
    """The API server answered with an error status."""

    def __init__(self, status, message):
        super().__init__("HTTP %s: %s" % (status, message))
        self.status = status


# --- kubeconfig ---------------------------------------------------------------------------------------------------

_KEY = re.compile(r"""^("[^"]*"|'[^']*'|[^\s#'"][^:#]*?)\s*:(\s+|$)""")


def _scalar(text):
    text = text.strip()
    if text.startswith('"'):
        return json.loads(text)
    if text.startswith("'"):
        return text[1:-1].replace("''", "'")
    if text in ("", "~", "null"):
        return None
    if text in ("{}", "[]"):
        return {} if text == "{}" else []
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if text[0] in "|>&*!{[":
        raise KubeconfigError("a YAML form this reader does not take (%r); install PyYAML on the master" % text[:20])
    return text


class _BlockReader(object):
    """The block YAML of a kubeconfig: mappings, sequences (also unindented under their key, as kubectl writes
    them) and one-line scalars."""

    def __init__(self, text):
        self.lines = [(len(line) - len(line.lstrip(" ")), line.strip()) for line in text.splitlines()
                      if line.strip() and not line.strip().startswith("#") and line.strip() != "---"]
        self.at = 0

    def read(self):
        return self._block(self.lines[0][0]) if self.lines else None

    def _block(self, indent):
        return self._sequence(indent) if self._item(self.at, indent) else self._mapping(indent)

    def _item(self, at, indent):
        return at < len(self.lines) and self.lines[at][0] == indent and (
            self.lines[at][1] == "-" or self.lines[at][1].startswith("- "))

    def _sequence(self, indent):
        out = []
        while self._item(self.at, indent):
            rest = self.lines[self.at][1][1:].strip()
            if not rest:
                self.at += 1
                nested = self.at < len(self.lines) and self.lines[self.at][0] > indent
                out.append(self._block(self.lines[self.at][0]) if nested else None)
            elif _KEY.match(rest):
                self.lines[self.at] = (indent + 2, rest)  # "- key: value": a mapping that starts on the dash's line
                out.append(self._mapping(indent + 2))
            else:
                self.at += 1
                out.append(_scalar(rest))
        return out

    def _mapping(self, indent):
        out = {}
        while self.at < len(self.lines) and self.lines[self.at][0] == indent and not self._item(self.at, indent):
            text = self.lines[self.at][1]
            found = _KEY.match(text)
            if not found:
                raise KubeconfigError("line %r is not a key: value" % text[:40])
            key, value = _scalar(found.group(1)), text[found.end():]
            self.at += 1
            if value.strip():
                out[key] = _scalar(value)
            elif self.at < len(self.lines) and (self.lines[self.at][0] > indent or self._item(self.at, indent)):
                out[key] = self._block(self.lines[self.at][0])
            else:
                out[key] = None
        return out


def parse_kubeconfig(text):
    text = text.strip()
    if text.startswith("{"):
        return json.loads(text)
    if _yaml is not None:
        return _yaml.safe_load(text)
    return _BlockReader(text).read()


def _named(items, name, what):
    for item in items or []:
        if isinstance(item, dict) and item.get("name") == name:
            return item.get(what) or {}
    raise KubeconfigError("%s %r is not in the kubeconfig" % (what, name))


class Connection(object):
    """The server, TLS context and headers of a kubeconfig's current context; ``close()`` removes the temporary
    key files (``with Connection.from_kubeconfig(...) as api``)."""

    def __init__(self, server, context, headers, cleanup):
        self.server = server
        self._context = context
        self._headers = headers
        self._cleanup = cleanup

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def close(self):
        if self._cleanup:
            shutil.rmtree(self._cleanup, ignore_errors=True)
            self._cleanup = None

    @classmethod
    def from_kubeconfig(cls, text, base_dir):
        """``text``: the kubeconfig; ``base_dir``: where its relative file names are relative to."""
        try:
            config = parse_kubeconfig(text)
        except (ValueError, KubeconfigError) as exc:
            raise KubeconfigError("not readable as a kubeconfig: %s" % exc)
        except Exception as exc:  # PyYAML's errors, without importing its types
            raise KubeconfigError("not readable as a kubeconfig: %s" % str(exc).splitlines()[0])
        if not isinstance(config, dict):
            raise KubeconfigError("not a kubeconfig (no mapping at the top)")
        context = _named(config.get("contexts"), config.get("current-context"), "context")
        cluster = _named(config.get("clusters"), context.get("cluster"), "cluster")
        user = _named(config.get("users"), context.get("user"), "user")
        if user.get("exec") or user.get("auth-provider"):
            raise KubeconfigError("its user runs an exec or auth-provider plugin, which this check does not run")
        server = cluster.get("server")
        if not isinstance(server, str) or not server.startswith("https://"):
            raise KubeconfigError("cluster server %r is not an https:// URL" % (server,))
        work = tempfile.mkdtemp(prefix="kubesched-api-")
        os.chmod(work, 0o700)
        try:
            tls = ssl.create_default_context()
            if cluster.get("insecure-skip-tls-verify"):
                tls.check_hostname = False
                tls.verify_mode = ssl.CERT_NONE
            elif cluster.get("certificate-authority-data"):
                tls.load_verify_locations(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode("ascii"))
            elif cluster.get("certificate-authority"):
                tls.load_verify_locations(cafile=_path(cluster["certificate-authority"], base_dir))
            cert = _material(user, "client-certificate", base_dir, work)
            key = _material(user, "client-key", base_dir, work)
            if cert and key:
                tls.load_cert_chain(cert, key)
            headers = {"Content-Type": "application/json", "Accept": "application/json"}
            token = user.get("token")
            if not token and user.get("tokenFile"):
                with open(_path(user["tokenFile"], base_dir)) as handle:
                    token = handle.read().strip()
            if token:
                headers["Authorization"] = "Bearer " + _header_safe_token(token)
        except KubeconfigError:
            shutil.rmtree(work, ignore_errors=True)
            raise
        except (OSError, ssl.SSLError, ValueError, TypeError) as exc:
            shutil.rmtree(work, ignore_errors=True)
            raise KubeconfigError("its TLS material cannot be loaded: %s" % exc)
        return cls(server.rstrip("/"), tls, headers, work)

    def request(self, method, path, body=None):
        """The decoded JSON answer; Unreachable when nothing answers, ApiError for an error status."""
        url = urlsplit(self.server)
        connection = HTTPSConnection(url.hostname, url.port or 443, timeout=TIMEOUT, context=self._context)
        try:
            connection.request(method, (url.path or "") + path,
                               body=json.dumps(body) if body is not None else None, headers=self._headers)
            answer = connection.getresponse()
            data = answer.read()
        except (OSError, HTTPException, ssl.SSLError) as exc:
            raise Unreachable("%s: %s" % (self.server, exc))
        except ValueError:
            # http.client refuses a header value it cannot send, quoting the value: a token must never be shown.
            raise Unreachable("%s: the request could not be sent (a header value HTTP cannot carry)" % self.server)
        finally:
            connection.close()
        try:
            decoded = json.loads(data.decode("utf-8")) if data else {}
        except ValueError:
            decoded = {"message": data[:200].decode("utf-8", "replace")}
        if answer.status >= 400:
            raise ApiError(answer.status, decoded.get("message") if isinstance(decoded, dict) else str(decoded))
        return decoded


# What an HTTP header value may hold (RFC 9110 field-value: visible characters, space and tab). Go's net/http, which
# kube-scheduler's client uses, refuses any other byte, as http.client does here.
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")


def _header_safe_token(token):
    """The token as a header may carry it; KubeconfigError (which never quotes it) for a token a request cannot
    carry, most often one pasted with a trailing newline. A tokenFile's content is trimmed (client-go's
    strings.TrimSpace), an inline token is not: client-go sends it as it is, and the API server is never reached."""
    if not isinstance(token, str):
        raise KubeconfigError("its user's token is not text")
    if not _HEADER_VALUE.fullmatch(token):
        where = next(index for index, char in enumerate(token) if not _HEADER_VALUE.fullmatch(char))
        raise KubeconfigError(
            "its user's token has a line break or another control character (character %d of %d), which no HTTP "
            "request can carry, so kube-scheduler could not use it either; remove it from the kubeconfig (a trailing "
            "newline is the usual cause)" % (where + 1, len(token)))
    return token


def _path(name, base_dir):
    return name if os.path.isabs(name) else os.path.join(base_dir, name)


def _material(user, what, base_dir, work):
    """A client certificate or key as a file ssl can load: the named file, or the embedded data written to the
    private directory."""
    if user.get(what + "-data"):
        path = os.path.join(work, what)
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
            handle.write(base64.b64decode(user[what + "-data"]))
        return path
    if user.get(what):
        return _path(user[what], base_dir)
    return None
