"""Fixtures for the MCP tests: logs in the test's folder, a workspace, the HTTP test server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from myrm_tui.store.store import Store
from tests.mcp.mcp_helpers import HttpServer, start_http_server

# The loopback OpenAI-compatible server of the fault tests (tests/faults/fake_openai_server.py):
# the request bodies it captures show the tools array exactly as sent.


@pytest.fixture(autouse=True)
def _logs_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Server stderr logs go to the test's own folder (and never to the developer's)."""
    logs = tmp_path / "logs"
    monkeypatch.setenv("MYRM_LOG_DIR", str(logs))
    return logs


@pytest.fixture
def logs(_logs_here: Path) -> Path:
    return _logs_here


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)  # stops workspace discovery here
    return root


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "user-config"
    folder.mkdir()
    return folder


@pytest.fixture
def store(workspace: Path) -> Iterator[Store]:
    opened = Store.open(workspace)
    yield opened
    opened.close()


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[HttpServer]:
    server = start_http_server(tmp_path / "http-server.log")
    yield server
    server.stop()


@pytest.fixture
def script(tmp_path: Path) -> Callable[..., str]:
    """Write a scripted-provider script; returns the model name `scripted/<path>`."""
    counter = iter(range(1000))

    def write(*turns: dict[str, Any], **top: Any) -> str:
        path = tmp_path / f"script-{next(counter)}.json"
        path.write_text(json.dumps({"turns": list(turns), **top}), encoding="utf-8")
        return f"scripted/{path}"

    return write
