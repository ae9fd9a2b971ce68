# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files a config names: found on the controller with their field paths, checked on the host."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.module_utils._named_files import missing_named_files
from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.named_files import named_files


def test_the_kubeconfig_and_extender_tls_files_with_their_fields_inline_data_is_not_a_file():
    config = {"clientConnection": {"kubeconfig": "/etc/kubernetes/scheduler.conf"}, "extenders": [
        {"urlPrefix": "https://a", "tlsConfig": {"certData": "Zm9v", "keyFile": "/etc/ext/key.pem"}},
        {"urlPrefix": "https://b", "tlsConfig": {"certFile": "/etc/ext/b.crt", "keyFile": "", "caFile": "/etc/ext/ca.crt"}},
        {"urlPrefix": "http://c"}]}
    assert named_files(config) == [
        {"field": "clientConnection.kubeconfig", "path": "/etc/kubernetes/scheduler.conf"},
        {"field": "extenders[0].tlsConfig.keyFile", "path": "/etc/ext/key.pem"},
        {"field": "extenders[1].tlsConfig.certFile", "path": "/etc/ext/b.crt"},
        {"field": "extenders[1].tlsConfig.caFile", "path": "/etc/ext/ca.crt"}]
    assert named_files({"clientConnection": {"kubeconfig": ""}}) == []


def test_missing_relative_and_to_be_written_files(tmp_path):
    there = tmp_path / "there.pem"
    there.write_text("x")
    entries = [{"field": "a", "path": str(there)}, {"field": "b", "path": str(tmp_path / "missing.pem")},
               {"field": "c", "path": "relative.pem"}, {"field": "d", "path": str(tmp_path / "written.conf")}]
    problems = missing_named_files(entries, frozenset([str(tmp_path / "written.conf")]))
    assert problems == [
        'b: Invalid value: "%s": no such file on this host (kube-scheduler opens it at start-up and would exit)'
        % (tmp_path / "missing.pem"),
        'c: Invalid value: "relative.pem": kube-scheduler resolves a relative path against its working directory; '
        'give an absolute path']
