"""module_utils/rollout/kube_api.py: a kubeconfig's token as an HTTP request can carry it, never shown in an error."""
from __future__ import annotations

import pytest

from ansible_collections.kubesched.schedulers.plugins.module_utils.rollout.kube_api import Connection, KubeconfigError

TOKEN = "kube-api-test-token-0123456789"
KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}
  name: c
users:
- name: u
  user: %s
contexts:
- context: {cluster: c, user: u}
  name: c
current-context: c
"""


def connect(user, base_dir="/"):
    return Connection.from_kubeconfig(KUBECONFIG % user, str(base_dir))


@pytest.mark.parametrize("bad", ["\n", "\r\n", "\x00", "\x7f", " \n "])
def test_an_inline_token_no_header_can_carry_is_refused_without_showing_it(bad):
    with pytest.raises(KubeconfigError) as raised:
        connect('{token: "%s%s"}' % (TOKEN, bad.encode("unicode_escape").decode("ascii")))
    assert "line break or another control character" in str(raised.value)
    assert TOKEN not in str(raised.value) and TOKEN not in repr(raised.value)


def test_a_token_file_is_trimmed_as_client_go_trims_it(tmp_path):
    (tmp_path / "token").write_text(TOKEN + "\n")
    with connect("{tokenFile: token}", tmp_path) as api:
        assert api._headers["Authorization"] == "Bearer " + TOKEN


def test_a_plain_token_is_sent_as_it_is():
    with connect("{token: %s}" % TOKEN) as api:
        assert api._headers["Authorization"] == "Bearer " + TOKEN
