"""Raw requests and a watch against the real throwaway API server: the API server's own refusal, a watch's events."""
from __future__ import annotations

import json

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._control_plane import ControlPlane
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.preview._http import ApiError


def test_a_refusal_carries_the_api_servers_message_and_a_watch_yields_each_event(binaries, tmp_path):
    _minor, paths = binaries
    with ControlPlane(paths, parent=str(tmp_path)) as plane:
        api = plane.client()
        with pytest.raises(ApiError) as refused:
            api.request("GET", "/api/v1/namespaces/nowhere")
        assert refused.value.status == 404 and refused.value.message == 'namespaces "nowhere" not found'
        version = api.request("GET", "/api/v1/namespaces")["metadata"]["resourceVersion"]
        api.request("POST", "/api/v1/namespaces", {"metadata": {"name": "watched"}})
        events = api.lines("/api/v1/namespaces", {"watch": "true", "resourceVersion": version})
        first = json.loads(next(events))
        events.close()
        assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "watched")
