"""Fixtures for TUI pilots: a real store in a temp workspace and scripted-model settings."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.store import Store
from tests.tui.tui_pilot_helpers import record_notifications


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
def script(tmp_path: Path) -> Callable[..., str]:
    """Write a scripted-model script; returns the model name that plays it."""
    path = tmp_path / "script.json"

    def write(*turns: dict[str, Any]) -> str:
        path.write_text(json.dumps({"turns": list(turns)}), encoding="utf-8")
        return f"scripted/{path}"

    return write


@pytest.fixture(autouse=True)
def _private_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Saving settings or a theme from a pilot must never touch the real user's config."""
    config = tmp_path / "config"
    monkeypatch.setenv("MYRM_CONFIG_DIR", str(config))
    return config


@pytest.fixture(autouse=True)
def _notifications_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """`tui_pilot_helpers.notices(app)` reads this log of what every app was asked to show."""
    record_notifications(monkeypatch)


@pytest.fixture(scope="session", autouse=True)
def _llm_stack_imported() -> None:
    """The first turn in a process imports litellm: 9-21 s on a loaded 2-core box (measured under
    CI-like load), which landed inside the 30 s reply wait of whichever pilot ran first (seen:
    test_paint_first.py run alone). Pilot waits guard against hangs in the behaviour under test,
    so the one-off import is paid here. Lazy-import tests run in subprocesses, unaffected."""
    from myrm_tui.llm.litellm_module import load_litellm

    load_litellm()
