"""Raw requests and a watch against the real throwaway API server: the API server's own refusal, a watch's events."""
from __future__ import annotations

import contextlib
import json
import time

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._control_plane import ControlPlane
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._http import METADATA_ONLY, ApiError


@contextlib.contextmanager
def tls_server(pki, handler):
    """An HTTPS server on 127.0.0.1 with the preview's serving certificate, answering with ``handler`` on a thread of
    its own: its URL; shut down at the end."""
    import http.server  # pylint: disable=import-outside-toplevel
    import ssl  # pylint: disable=import-outside-toplevel
    import threading  # pylint: disable=import-outside-toplevel
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki["serving_cert"], pki["serving_key"])
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield "https://127.0.0.1:%d" % server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_a_refusal_carries_the_api_servers_message_and_a_watch_yields_each_event(binaries, tmp_path):
    _minor, paths = binaries
    with ControlPlane(paths, parent=str(tmp_path)) as plane:
        api = plane.client()
        with pytest.raises(ApiError) as refused:
            api.request("GET", "/api/v1/namespaces/nowhere")
        assert refused.value.status == 404 and refused.value.message == 'namespaces "nowhere" not found'
        version = api.request("GET", "/api/v1/namespaces")["metadata"]["resourceVersion"]
        for name in ("watched", "watched-too"):
            api.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
        events = api.lines("/api/v1/namespaces", {"watch": "true", "resourceVersion": version})
        first, second = json.loads(next(events)), json.loads(next(events))
        events.close()
        assert [(event["type"], event["object"]["metadata"]["name"]) for event in (first, second)] == [
            ("ADDED", "watched"), ("ADDED", "watched-too")]


def test_a_body_sent_serialised_is_created_answered_with_its_metadata_alone_and_refused_in_the_servers_words(
        binaries, tmp_path):
    """LocalApi.send (the pods a run creates): the API server creates the object from the bytes as given, answers
    with its metadata alone when asked (as its release does), and a refusal still carries its own message."""
    _minor, paths = binaries
    with ControlPlane(paths, parent=str(tmp_path)) as plane:
        api = plane.client()
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sent", "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "pause"}]}}
        body = json.dumps(pod).encode()
        assert api.send("POST", "/api/v1/namespaces/default/pods", body) is None
        assert api.request("GET", "/api/v1/namespaces/default/pods/sent")["spec"]["containers"][0]["image"] == "pause"
        with pytest.raises(ApiError) as refused:
            api.send("POST", "/api/v1/namespaces/default/pods", body)
        assert refused.value.status == 409 and refused.value.message == 'pods "sent" already exists'
        headers = dict(api._headers("application/json"), Accept=METADATA_ONLY)  # pylint: disable=protected-access
        status, _reason, text = api._exchange(  # pylint: disable=protected-access
            "POST", "/api/v1/namespaces/default/pods", json.dumps(dict(pod, metadata={
                "name": "answered", "namespace": "default"})).encode(), headers, 30)
        answer = json.loads(text)
        assert status == 201 and answer["kind"] == "PartialObjectMetadata" and "spec" not in answer
        assert answer["metadata"]["name"] == "answered"
        # An answer longer than the API server buffers comes in chunks, read whole on the same connection.
        status, _reason, text = api._exchange("GET", "/apis", None, api._headers(), 30)  # pylint: disable=protected-access
        assert status == 200 and len(text) > 2048 and len(json.loads(text)["groups"]) > 10
        assert api.request("GET", "/api/v1/namespaces/default/pods/answered")["metadata"]["name"] == "answered"


def test_the_control_planes_client_keeps_one_connection_per_thread_and_replaces_one_the_server_closed(tmp_path):
    """LocalApi against a local HTTPS server of the control plane's own certificates: a thread's requests share one
    kept-alive connection (a TLS handshake per request would cost the preview more than the request), and a
    connection the server closes between two requests is replaced, the request sent once more."""
    import http.server  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._http import (  # pylint: disable=import-outside-toplevel
        LocalApi, local_configuration)
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._pki import write_pki  # pylint: disable=import-outside-toplevel
    pki = write_pki(str(tmp_path))
    seen = {"connections": 0, "requests": [], "tokens": set()}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self):
            super().setup()
            seen["connections"] += 1

        def do_POST(self):  # pylint: disable=invalid-name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen["requests"].append(body["n"])
            seen["tokens"].add(self.headers["Authorization"])
            data = json.dumps({"n": body["n"]}).encode()
            self.send_response(201 if body["n"] != 4 else 409)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            # After the third request the server closes the connection, as an idle one may be closed.
            if body["n"] == 3:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            # After the fifth it closes the connection without saying so, as an idle one may be closed.
            if body["n"] == 5:
                self.close_connection = True

        def log_message(self, *_args):
            pass

    with tls_server(pki, Handler) as url:
        api = LocalApi(local_configuration(url, pki["ca"], "t0ken"))
        assert [api.request("POST", "/x", {"n": n})["n"] for n in (1, 2, 3)] == [1, 2, 3]
        assert seen["connections"] == 1
        with pytest.raises(ApiError) as refused:
            api.request("POST", "/x", {"n": 4})
        assert refused.value.status == 409
        assert api.request("POST", "/x", {"n": 5}) == {"n": 5}
        time.sleep(0.2)  # the server has closed the connection by now
        assert api.request("POST", "/x", {"n": 6}) == {"n": 6}
    assert seen["requests"] == [1, 2, 3, 4, 5, 6] and seen["connections"] == 3 and seen["tokens"] == {"Bearer t0ken"}


def test_an_answer_cut_short_by_the_timeout_is_not_read_as_the_next_ones(tmp_path):
    """A request that times out halfway through its answer closes its connection: the next request of the thread
    goes over a new one, never reading the rest of the old answer as its own."""
    import http.server  # pylint: disable=import-outside-toplevel
    import socket  # pylint: disable=import-outside-toplevel
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._http import (  # pylint: disable=import-outside-toplevel
        LocalApi, local_configuration)
    from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._pki import write_pki  # pylint: disable=import-outside-toplevel
    pki = write_pki(str(tmp_path))

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):  # pylint: disable=invalid-name
            number = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["n"]
            data = json.dumps({"n": number}).encode()
            self.send_response(201)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if number == 1:  # the head now, the body after the client's timeout
                self.wfile.flush()
                time.sleep(1)
            self.wfile.write(data)

        def log_message(self, *_args):
            pass

    with tls_server(pki, Handler) as url:
        api = LocalApi(local_configuration(url, pki["ca"], "t0ken"))
        with pytest.raises(socket.timeout):
            api.request("POST", "/x", {"n": 1}, timeout=0.3)
        time.sleep(1)  # the rest of the first answer has been sent by now
        assert api.request("POST", "/x", {"n": 2}) == {"n": 2}
