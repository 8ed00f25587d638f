"""The status bar says when bash is not in its default sandbox (off, or bwrap unusable)."""

from __future__ import annotations

from myrm_tui.tui.app import MyrmApp
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, wait_until


async def _status_after_start(workspace, store, script, **values) -> str:
    app = MyrmApp(workspace, scripted_settings(script({"text": "hi"}), **values), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await wait_until(pilot, lambda: screen.ready.is_set() and app.chat.model, what="model resolved")
        await pilot.pause(0.1)
        return screen.status.plain()


async def test_sandbox_off_is_shown_in_the_status_bar(workspace, store, script):
    assert "sandbox off" in await _status_after_start(workspace, store, script, sandbox="off")


async def test_the_default_sandbox_adds_nothing_to_the_status_bar(workspace, store, script):
    status = await _status_after_start(workspace, store, script)
    assert not any(badge in status for badge in ("sandbox off", "no sandbox", "sandbox read-only")), status


async def test_read_only_is_shown(workspace, store, script):
    assert "sandbox read-only" in await _status_after_start(workspace, store, script, sandbox="read-only")
