# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A host instance's command line (plugin_utils/render/command_line.py): the flags the collection sets, then the
operator's extra_flags in name order, each refused naming its field where kube-scheduler of the minor would refuse
or ignore it. tests/unit/plugins/plugin_utils/instances/test_model.py checks the same through the instance model."""

from __future__ import annotations

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.render.command_line import argv, serving_flags

INSTANCE = {"kubeconfig": "/etc/kubernetes/scheduler.conf", "bind_address": "127.0.0.1",
            "config_path": "/etc/kubernetes/schedulers/edge.yaml", "secure_port": 10261, "serving_cert": None}
WHERE = "kube_scheduler_instances[0]"


def test_the_collection_s_flags_come_first_then_the_extra_flags_sorted():
    words, problems = argv(INSTANCE, {"v": 2, "--permit-port-sharing": True}, WHERE, "1.35.4")
    assert problems == []
    assert words == ["--authentication-kubeconfig=/etc/kubernetes/scheduler.conf",
                     "--authorization-kubeconfig=/etc/kubernetes/scheduler.conf", "--bind-address=127.0.0.1",
                     "--config=/etc/kubernetes/schedulers/edge.yaml", "--secure-port=10261",
                     "--permit-port-sharing=true", "--v=2"]


def test_a_serving_certificate_adds_its_flags_and_owns_them():
    cert = {"cert": "/etc/kubernetes/pki/edge.crt", "key": "/etc/kubernetes/pki/edge.key"}
    words, problems = argv(dict(INSTANCE, serving_cert=cert), {"tls-cert-file": "/mine.crt"}, WHERE, "1.35.4")
    assert words[-2:] == serving_flags(cert) == ["--tls-cert-file=/etc/kubernetes/pki/edge.crt",
                                                 "--tls-private-key-file=/etc/kubernetes/pki/edge.key"]
    assert problems == ["kube_scheduler_instances[0].extra_flags.tls-cert-file: set by this collection from "
                        "serving_cert (a certificate signed by the cluster CA); do not pass it, or set serving_cert: "
                        "false to bring your own"]


def test_every_refused_flag_is_one_problem_naming_its_field():
    _words, problems = argv(INSTANCE, {"config": "/x", "no-such-flag": "1", "permit-port-sharing": "yes", "Bad_Name": 1,
                                       "v": None}, WHERE, "1.35.4")
    assert [problem.split(": ", 1)[0] for problem in problems] == [
        WHERE + ".extra_flags.Bad_Name", WHERE + ".extra_flags.config", WHERE + ".extra_flags.no-such-flag",
        WHERE + ".extra_flags.permit-port-sharing", WHERE + ".extra_flags.v"]
    assert problems[1].endswith("set by this collection from config_path; do not pass it")
    assert problems[2].endswith('unknown flag for kube-scheduler 1.35.4 (it would exit with "unknown flag: --no-such-flag")')
    assert problems[3].endswith("takes true or false, got 'yes'")
    assert problems[4].endswith("has no value (null): give a value, or remove the flag to get kube-scheduler's default")
