"""Background commands in the TUI: `/jobs` lists what the model started with `background: true`,
`/jobs stop HANDLE` ends one, and leaving the session ends the rest (their output kept)."""

from __future__ import annotations

import os

import pytest

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.dialogs import TextScreen
from tests.tui.tui_pilot_helpers import SIZE, notices, screen_text, scripted_settings, send, type_text, wait_until


def _background(call_id: str, command: str) -> dict:
    return {"tool_calls": [{"id": call_id, "name": "bash", "arguments": {"command": command, "background": True}}]}


MARK = "myrm-jobs-ui-test-7f3a"


def _running_with(marker: str) -> bool:
    """Whether any process's command line holds `marker` (the test's own shell loop)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read():
                        return True
            except OSError:
                continue
    return False


@pytest.mark.slow
async def test_jobs_lists_stops_and_leaving_the_session_ends_them(workspace, store, script):
    model = script(
        _background("b1", f"while true; do echo tick {MARK}; sleep 0.1; done"),
        _background("b2", "sleep 300"),
        {"text": "both started"},
    )
    settings = scripted_settings(model, approval="yolo", sandbox="off")
    app = MyrmApp(workspace, settings, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "start two watchers")
        agent = app.chat.current_agent
        assert agent is not None
        assert [info.handle for info in agent.background.running()] == ["bg-1", "bg-2"]

        await type_text(pilot, "/jobs")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TextScreen), what="jobs screen")
        await wait_until(pilot, lambda: "bg-2" in screen_text(app), what="jobs table")
        text = screen_text(app)
        assert "bg-1" in text and "bg-2" in text and "running" in text and "sleep 300" in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, TextScreen), what="jobs screen closed")

        await type_text(pilot, "/jobs stop bg-2")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Stopped bg-2." in notices(app), what="stopped notice")
        assert [info.handle for info in agent.background.running()] == ["bg-1"]
        [stopped] = [info for info in agent.background.listing() if info.handle == "bg-2"]
        assert stopped.stopped == "bash_kill"

        await type_text(pilot, "/jobs stop bg-9")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("No running background command bg-9" in n for n in notices(app)))

        assert _running_with(MARK)
        app.open_session(None)  # a new session: the old one's background commands end
        await wait_until(pilot, lambda: not agent.background.running(), what="background commands stopped")
        [ended] = [info for info in agent.background.listing() if info.handle == "bg-1"]
        assert ended.stopped == "session closed" and ended.bytes > 0
        await wait_until(pilot, lambda: not _running_with(MARK), what="process gone")
