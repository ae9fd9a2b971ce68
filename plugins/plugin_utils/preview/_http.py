# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Raw JSON requests to an API server over one urllib3 pool, credentials from a kubernetes client Configuration.

The preview reads and writes tens of thousands of objects as plain dicts: the kubernetes client's models would
cost more than the scheduling, and its request API differs between its releases; its kubeconfig loader does not."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from urllib.parse import urlencode, urlsplit

try:
    import urllib3
except ImportError:  # an optional package of the controller: the preview names it before it starts (placement.missing)
    HAS_URLLIB3 = False
else:
    HAS_URLLIB3 = True


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
            buffer = b""
            for chunk in answer.stream(65536):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line:
                        yield line
        finally:
            answer.release_conn()


class LocalApi(Api):
    """The throwaway control plane's API server (https on loopback, its own CA, a bearer token): each thread sends
    its requests over a keep-alive connection of its own through http.client, without urllib3's pool around it,
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

    def _exchange(self, method: str, target: str, data, headers: dict, timeout: float) -> tuple:
        """(status, reason, body) over this thread's connection; one the server closed between two requests is
        replaced and the request sent once more on the new one."""
        connection = getattr(self.local, "connection", None)
        reused = connection is not None
        while True:
            if connection is None:
                connection = self.local.connection = http.client.HTTPSConnection(
                    *self.address, timeout=timeout, context=self.context)
            try:
                connection.request(method, target, data, headers)
                answer = connection.getresponse()
                return answer.status, answer.reason, answer.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ssl.SSLEOFError,
                    ssl.SSLZeroReturnError):
                connection.close()
                connection = self.local.connection = None
                if not reused:
                    raise
                reused = False


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
