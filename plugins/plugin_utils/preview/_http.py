# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Raw JSON requests to an API server over one urllib3 pool, credentials from a kubernetes client Configuration.

The preview reads and writes tens of thousands of objects as plain dicts: the kubernetes client's models would
cost more than the scheduling, and its request API differs between its releases; its kubeconfig loader does not."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
from urllib.parse import urlencode, urlsplit

try:
    import urllib3
except ImportError:  # an optional package of the controller: the preview names it before it starts (placement.missing)
    HAS_URLLIB3 = False
else:
    HAS_URLLIB3 = True


# An answer of the object's metadata alone where the API server can give it, else the object (a Status is never
# transformed, so a refusal stays readable).
METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json"


class ApiError(Exception):
    def __init__(self, status, message):
        super().__init__("HTTP %s: %s" % (status, message))
        self.status = status
        self.message = message


class Api:
    """``Api(configuration)``: request(method, path, body, query) -> dict; lines(path, query) -> each line."""

    def __init__(self, configuration, pool: int = 32):
        self.configuration = configuration
        self.host = configuration.host.rstrip("/")
        verify = getattr(configuration, "verify_ssl", True)
        self.pool = urllib3.PoolManager(
            num_pools=2, maxsize=pool, block=True,
            cert_reqs="CERT_REQUIRED" if verify else "CERT_NONE",
            ca_certs=configuration.ssl_ca_cert if verify else None,
            cert_file=configuration.cert_file, key_file=configuration.key_file)

    def _headers(self, content_type=None) -> dict:
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        token = self.configuration.get_api_key_with_prefix("authorization") if hasattr(
            self.configuration, "get_api_key_with_prefix") else None
        if token:
            headers["Authorization"] = token
        return headers

    def _url(self, path: str, query=None) -> str:
        return self.host + path + ("?" + urlencode(query) if query else "")

    def request(self, method: str, path: str, body=None, query=None, content_type="application/json",
                timeout: float = 120):
        answer = self.pool.request(method, self._url(path, query),
                                   headers=self._headers(content_type if body is not None else None),
                                   body=json.dumps(body).encode() if body is not None else None,
                                   timeout=urllib3.Timeout(connect=10, read=timeout), retries=False)
        if answer.status >= 300:
            raise ApiError(answer.status, _message(answer.data, answer.reason))
        return json.loads(answer.data or b"{}")

    def lines(self, path: str, query=None):
        """A watch: the response's lines as they come; ``close`` it (the generator) to stop."""
        answer = self.pool.request("GET", self._url(path, query), headers=self._headers(), preload_content=False,
                                   timeout=urllib3.Timeout(connect=10, read=None), retries=False)
        try:
            if answer.status >= 300:
                raise ApiError(answer.status, _message(answer.read(), answer.reason))
            rest = b""
            for chunk in answer.stream(65536):
                # One split a chunk (splitting off a line at a time copied the rest of the chunk for each line).
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    if line:
                        yield line
        finally:
            answer.release_conn()


class LocalApi(Api):
    """The throwaway control plane's API server (https on loopback, its own CA, a bearer token): each thread sends
    its requests over a keep-alive connection of its own (_Connection), without urllib3's pool around it,
    which cost the preview as much CPU per created pod again (0.63 against 0.38 ms, measured). Watches go through
    the pool (Api.lines)."""

    def __init__(self, configuration, pool: int = 32):
        super().__init__(configuration, pool)
        parts = urlsplit(self.host)
        self.address = (parts.hostname, parts.port)
        self.context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
        self.local = threading.local()

    def request(self, method: str, path: str, body=None, query=None, content_type="application/json",
                timeout: float = 120):
        headers = self._headers(content_type if body is not None else None)
        data = json.dumps(body).encode() if body is not None else None
        status, reason, text = self._exchange(method, path + ("?" + urlencode(query) if query else ""), data, headers,
                                              timeout)
        if status >= 300:
            raise ApiError(status, _message(text, reason))
        return json.loads(text or b"{}")

    def send(self, method: str, path: str, data: bytes, content_type="application/json", timeout: float = 120):
        """A request whose body is already serialised (a body sent in every run is serialised once) and whose answer
        is not read: the API server sends the object's metadata alone (PartialObjectMetadata), which it encodes and
        this client reads in a fraction of the whole object's cost; a refusal still comes as a JSON Status."""
        headers = self._headers(content_type)
        headers["Accept"] = METADATA_ONLY
        status, reason, text = self._exchange(method, path, data, headers, timeout)
        if status >= 300:
            raise ApiError(status, _message(text, reason))

    def _exchange(self, method: str, target: str, data, headers: dict, timeout: float) -> tuple:
        """(status, reason, body) over this thread's connection; one the server closed between two requests is
        replaced and the request sent once more on the new one."""
        connection = getattr(self.local, "connection", None)
        if connection is not None and not connection.open:
            connection = None
        reused = connection is not None
        while True:
            if connection is None:
                connection = self.local.connection = _Connection(self.address, self.context, timeout)
            try:
                return connection.exchange(method, target, data, headers)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ssl.SSLEOFError,
                    ssl.SSLZeroReturnError):
                connection.close()
                connection = self.local.connection = None
                if not reused:
                    raise
                reused = False
            except BaseException:
                # Whatever is left of an answer read halfway would be taken for the next one's.
                connection.close()
                self.local.connection = None
                raise


class _Connection:
    """One kept-alive HTTPS connection speaking HTTP/1.1 as kube-apiserver answers it (a length or chunks), its
    answer's head read line by line: http.client parses every head with the email package's parser, which cost
    the preview a tenth of its own CPU. ``open`` is False once either side closed it."""

    LINE = 65537

    def __init__(self, address: tuple, context, timeout: float):
        self.host = "%s:%d" % address
        raw = socket.create_connection(address, timeout=timeout)
        try:
            self.socket = context.wrap_socket(raw, server_hostname=address[0])
        except BaseException:
            raw.close()
            raise
        self.reader = self.socket.makefile("rb")
        self.open = True

    def close(self) -> None:
        self.open = False
        self.reader.close()
        self.socket.close()

    def exchange(self, method: str, target: str, data, headers: dict) -> tuple:
        head = ["%s %s HTTP/1.1" % (method, target), "Host: " + self.host, "Content-Length: %d" % len(data or b"")]
        head.extend("%s: %s" % item for item in headers.items())
        self.socket.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (data or b""))
        line = self.reader.readline(self.LINE)
        if not line:
            raise http.client.RemoteDisconnected("the API server closed the connection")
        _version, status, reason = (line.decode("latin-1").rstrip("\r\n").split(" ", 2) + [""])[:3]
        status, length, chunked, keep = int(status), None, False, True
        while True:
            line = self.reader.readline(self.LINE)
            if line in (b"\r\n", b"\n", b""):
                break
            name, _colon, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding":
                chunked = value.endswith("chunked")
            elif name == "connection":
                keep = value != "close"
        if status in (204, 304) or status < 200:
            body = b""
        elif chunked:
            body = self._chunks()
        elif length is not None:
            body = self.reader.read(length)
            if len(body) != length:
                raise http.client.IncompleteRead(body, length - len(body))
        else:
            body, keep = self.reader.read(), False
        if not keep:
            self.close()
        return status, reason, body

    def _chunks(self) -> bytes:
        parts = []
        while True:
            size = int(self.reader.readline(self.LINE).split(b";")[0], 16)
            if not size:
                while self.reader.readline(self.LINE) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            part = self.reader.read(size)
            if len(part) != size:
                raise http.client.IncompleteRead(part, size - len(part))
            parts.append(part)
            self.reader.readline(self.LINE)


def _message(data, reason) -> str:
    try:
        return json.loads(data).get("message") or reason
    except (TypeError, ValueError, AttributeError):
        return str(reason)


def configuration_for(kubeconfig=None, context=None):
    """A kubernetes client Configuration from a kubeconfig path (None: the client's default, KUBECONFIG or
    ~/.kube/config) or a kubeconfig mapping."""
    from kubernetes import client, config  # pylint: disable=import-outside-toplevel
    configuration = client.Configuration()
    if isinstance(kubeconfig, dict):
        config.load_kube_config_from_dict(kubeconfig, context=context, client_configuration=configuration)
    else:
        config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)
    return configuration


def local_configuration(url: str, ca: str, token: str):
    """A Configuration that trusts ``ca`` alone and sends ``token`` as a bearer token (no client certificate)."""
    from kubernetes import client  # pylint: disable=import-outside-toplevel
    configuration = client.Configuration()
    configuration.host = url
    configuration.ssl_ca_cert = ca
    configuration.api_key = {"authorization": token}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    return configuration
