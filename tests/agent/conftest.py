"""Shared fixtures for agent tests: a real Store in tmp_path, scripted models, a turn driver."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import myrm_tui  # noqa: F401  (offline env before litellm)
from myrm_tui.agent.tools.base import ToolContext
from myrm_tui.store import Store
from tests.agent.agent_helpers import settings_for


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture
def store(workspace: Path):
    s = Store.open(workspace)
    yield s
    s.close()


@pytest.fixture
def script(tmp_path: Path) -> Callable[..., str]:
    """Write a script file outside the workspace; returns the `scripted/<path>` model name."""
    counter = iter(range(1000))

    def make(*turns: dict[str, Any], **top: Any) -> str:
        path = tmp_path / f"script{next(counter)}.json"
        path.write_text(json.dumps({"turns": list(turns), **top}))
        return f"scripted/{path}"

    return make


@pytest.fixture
def ctx(workspace: Path, store) -> ToolContext:
    return ToolContext(workspace=workspace, settings=settings_for(), vault=store.vault)
