# -*- coding: utf-8 -*-
# Copyright: kubesched.schedulers contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers for the config library tests: run a YAML body through process() and read the errors."""

from __future__ import annotations

import textwrap

import pytest

from ansible_collections.kubesched.schedulers.plugins.plugin_utils.config.configuration import process

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def _run(body="", version=None, **kwargs):
    return process(content=HEADER + textwrap.dedent(body), kubernetes_version=version, **kwargs)


def _messages(result):
    return [error["message"] for error in result.errors]


def _fields(result):
    return [error["field"] for error in result.errors]


@pytest.fixture
def run():
    """run(body, version=None, extra_plugins=None) -> Result for HEADER + the dedented YAML body."""
    return _run


@pytest.fixture
def messages():
    return _messages


@pytest.fixture
def fields():
    return _fields
