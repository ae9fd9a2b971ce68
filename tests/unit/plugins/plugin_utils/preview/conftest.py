"""The real binaries the preview's tests run (tests/controlplane/preview_binaries.py)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[5] / "tests" / "controlplane"))
from preview_binaries import real_binaries  # noqa: E402  pylint: disable=wrong-import-position


@pytest.fixture(scope="session")
def binaries():
    minor, found = real_binaries()
    if minor is None:
        pytest.skip("no real binaries: " + found)
    return minor, found
