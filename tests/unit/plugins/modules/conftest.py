"""Fixtures for the scheduler_config module tests."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="session")
def collections_path() -> str:
    """Where this checkout resolves as kubesched.schedulers: set by the Makefile, else its default location."""
    return os.environ.get("ANSIBLE_COLLECTIONS_PATH", str(REPO / ".build" / "collections"))
