"""Fixtures for the scheduler_config module tests: a collections path where this checkout is kubesched.schedulers.

TEMPORARY: while plugins/module_utils/configuration.py (engineer "decode+validation") is not committed yet, the
tree is built in a temp dir with _temporary_configuration_shim.py standing in for it, and the in-process import
sees the shim too. Once the real file exists, both use it and the shim is dead: delete it then.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
LIBRARY = REPO / "plugins" / "module_utils" / "configuration.py"
SHIM = Path(__file__).with_name("_temporary_configuration_shim.py")
CONFIGURATION_MODULE = "ansible_collections.kubesched.schedulers.plugins.module_utils.configuration"


def _link_tree_with_shim(root: Path) -> Path:
    collection = root / "ansible_collections" / "kubesched" / "schedulers"
    utils = collection / "plugins" / "module_utils"
    utils.mkdir(parents=True)
    for entry in REPO.iterdir():
        if entry.name not in ("plugins", ".venv", ".build", ".git"):
            (collection / entry.name).symlink_to(entry)
    for entry in (REPO / "plugins").iterdir():
        if entry.name != "module_utils":
            (collection / "plugins" / entry.name).symlink_to(entry)
    for entry in (REPO / "plugins" / "module_utils").iterdir():
        (utils / entry.name).symlink_to(entry)
    (utils / "configuration.py").symlink_to(SHIM)
    return root


if not LIBRARY.exists() and CONFIGURATION_MODULE not in sys.modules:
    _spec = importlib.util.spec_from_file_location(CONFIGURATION_MODULE, SHIM)
    sys.modules[CONFIGURATION_MODULE] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules[CONFIGURATION_MODULE])


@pytest.fixture(scope="session")
def collections_path(tmp_path_factory) -> str:
    if LIBRARY.exists():
        return os.environ.get("ANSIBLE_COLLECTIONS_PATH", str(REPO / ".build" / "collections"))
    return str(_link_tree_with_shim(tmp_path_factory.mktemp("collections")))
