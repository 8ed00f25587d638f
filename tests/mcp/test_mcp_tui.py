"""MCP in the full-screen app: the first screen never waits for a server, /mcp shows servers,
states, tools and errors and restarts a server, and quitting stops every server. Pilots for the
logic, tmux for the real terminal (the issue's smoke test: `/mcp` shows servers and tools)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

from myrm_tui.mcp.connection import FAILED, READY, STARTING
from myrm_tui.settings.sections.mcp_servers import McpServerConfig
from myrm_tui.settings.settings import Settings
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.chat.screen import ChatScreen
from myrm_tui.tui.screens.mcp import McpScreen
from tests.mcp.mcp_helpers import SIZE, connection_of, server_pids, stdio_config, toml_server, wait_gone, wait_until
from tests.tui.tui_pilot_helpers import screen_of

TMUX_TIMEOUT_S = 90.0


def app_with(workspace: Path, store, model: str, *configs: McpServerConfig) -> MyrmApp:
    settings = Settings().with_values(model=model, approval="ask", mcp_startup_timeout=60.0)
    settings = replace(settings, mcp_servers={c.name: c for c in configs})
    return MyrmApp(workspace, settings, store=store, watch_themes=False)


def detail(app: MyrmApp) -> str:
    return str(app.screen.query_one("#mcp-detail-text", Static).render())


async def test_the_first_screen_does_not_wait_for_a_starting_server(workspace, store, script, logs):
    app = app_with(workspace, store, script({"text": "x"}), stdio_config("slow", "--hang-at-start"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen), what="chat")
        await wait_until(pilot, lambda: connection_of(app.mcp, "slow").state == STARTING, what="start begins")
        await pilot.press("h", "i")
        assert screen_of(app, ChatScreen).prompt.text == "hi", "the prompt takes keys while a server is still starting"
        await pilot.press("ctrl+u")
        screen_of(app, ChatScreen).run_command("/mcp")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, McpScreen) and app.screen.query("#mcp-detail-text") and detail(app),
            what="/mcp",
        )
        rows = app.screen.query_one("#mcp-servers", OptionList)
        assert "starting" in str(rows.get_option_at_index(0).prompt)
        await wait_until(pilot, lambda: server_pids(logs / "mcp-slow.log"), what="the server process")
    (pid,) = server_pids(logs / "mcp-slow.log")
    assert wait_gone(pid), "quitting during a start that hangs leaves no process"


@pytest.mark.slow
async def test_mcp_screen_shows_servers_tools_errors_and_restarts(workspace, store, script, logs):
    gone = McpServerConfig("gone", "stdio", command="/nonexistent/mcp-server")
    app = app_with(workspace, store, script({"text": "x"}), gone, stdio_config("t"))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(
            pilot, lambda: [c.state for c in app.mcp.connections()] == [FAILED, READY], what="both starts to end"
        )
        screen_of(app, ChatScreen).run_command("/mcp")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, McpScreen) and app.screen.query("#mcp-detail-text") and detail(app),
            what="/mcp",
        )
        rows = app.screen.query_one("#mcp-servers", OptionList)
        assert [str(rows.get_option_at_index(i).prompt) for i in range(rows.option_count)] == [
            "✗ gone  failed",
            "● t  ready  10 tools",
        ]
        assert "last error command not found: /nonexistent/mcp-server" in detail(app)
        await pilot.press("down")
        await wait_until(pilot, lambda: detail(app).startswith("t\n"), what="t's detail")
        assert "mcp__t__echo" in detail(app) and "myrm-test-server 1.0" in detail(app)
        assert str(logs / "mcp-t.log") in detail(app)
        (first_pid,) = server_pids(logs / "mcp-t.log")
        await pilot.press("r")
        await wait_until(pilot, lambda: len(server_pids(logs / "mcp-t.log")) == 2, what="a new server process")
        await wait_until(pilot, lambda: connection_of(app.mcp, "t").state == READY, what="restart")
        assert wait_gone(first_pid), "the restarted server's old process is gone"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen), what="back to the chat")
    pids = server_pids(logs / "mcp-t.log")
    assert all(wait_gone(pid) for pid in pids), "quitting the app stops its servers"


async def test_no_servers_configured_says_how_to_add_one(workspace, store, script):
    app = app_with(workspace, store, script({"text": "x"}))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ChatScreen), what="chat")
        screen_of(app, ChatScreen).run_command("/mcp")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, McpScreen) and app.screen.query("#mcp-detail-text") and detail(app),
            what="/mcp",
        )
        assert "No MCP servers are configured" in detail(app) and "[mcp_servers.NAME]" in detail(app)


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def _wait_screen(name: str, *texts: str) -> str:
    deadline = time.monotonic() + TMUX_TIMEOUT_S
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux("capture-pane", "-p", "-t", name)
        if all(text in screen for text in texts):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{texts!r} never all appeared; the screen was:\n{screen}")


@pytest.mark.slow
def test_tmux_smoke_mcp_screen_in_a_real_terminal(tmp_path, logs):
    """`myrm` in tmux with the PyPI time server and the in-tests server: /mcp lists both, with tools."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text(
        toml_server(stdio_config("tests"))
        + toml_server(
            McpServerConfig(
                "time", "stdio", command=sys.executable, args=("-m", "mcp_server_time", "--local-timezone", "UTC")
            )
        )
    )
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "hello"}]}))
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    exit_file = tmp_path / "exit-code"
    variables = {
        "MYRM_CONFIG_DIR": str(config),
        "MYRM_LOG_DIR": str(logs),
        "TERM": "xterm-256color",
        "TEXTUAL_ANIMATIONS": "none",
        "ENABLE_MYRM_TEST_PROVIDERS": "1",  # the scripted/ models (tests/conftest.py)
    }
    exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in variables.items())
    command = (
        f"cd {shlex.quote(str(workspace))} && env {exports} {sys.executable} -m myrm_tui "
        f"--model scripted/{shlex.quote(str(script))}; echo $? > {shlex.quote(str(exit_file))}; sleep 30"
    )
    name = f"myrm-mcp-{uuid.uuid4().hex[:8]}"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", command], check=True)
    try:
        _wait_screen(name, "Message myrm")
        _tmux("send-keys", "-t", name, "-l", "/mcp")
        _wait_screen(name, "▊ /mcp ")  # the prompt has caught up with the typing
        time.sleep(1.0)  # and the command popup with the prompt (Enter must submit, not complete "/m")
        _tmux("send-keys", "-t", name, "Enter")
        # both servers started (in the background since the first paint), with their tools listed
        _wait_screen(name, "● time  ready  2 tools", "● tests  ready  10 tools", "mcp__tests__add_tool")
        _tmux("send-keys", "-t", name, "Down")
        screen = _wait_screen(name, "mcp__time__get_current_time")
        assert "mcp__time__convert_time" in screen
        _tmux("send-keys", "-t", name, "Escape")
        _tmux("send-keys", "-t", name, "C-q")
        deadline = time.monotonic() + TMUX_TIMEOUT_S
        while not exit_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert exit_file.read_text().strip() == "0"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)
    assert all(wait_gone(pid) for pid in server_pids(logs / "mcp-tests.log"))
