"""Fixtures for the store tests: a real store on disk in a fresh workspace folder."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest

from myrm_tui.store import Store

HERE = Path(__file__).parent
PROJECT_ROOT = HERE.parent.parent
KILL_WRITER = HERE / "kill_writer.py"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def store(workspace: Path):
    opened = Store.open(workspace)
    yield opened
    opened.close()


@pytest.fixture
def kill_writer() -> ModuleType:
    """The kill -9 writer script, imported by path (works whatever pytest's import mode), so a
    test can compute exactly what the child wrote at each index."""
    spec = importlib.util.spec_from_file_location("_store_tests_kill_writer", KILL_WRITER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def child_env() -> dict[str, str]:
    """Environment for child Pythons that must import this checkout of myrm_tui."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
    return env
