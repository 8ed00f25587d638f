"""The full collection a turn holds back (tui/session/turn_runner.py) waits for a pause in typing:
it blocks the loop for 0.2-0.4 s, and a key typed during it waits for it (docs/tui-benchmarks.md).

Driven by the runner's own timer callback, not by the clock: the test says when the last key was.
"""

from __future__ import annotations

import gc
import time
from types import SimpleNamespace

import pytest

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.session import turn_runner
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, type_text, wait_until


@pytest.mark.slow  # a MyrmApp and a turn: ~6 s on a loaded 2-core box
async def test_the_after_turn_collection_waits_while_the_user_types(workspace, store, script, monkeypatch) -> None:
    collections: list[object] = []

    def counted(*args: object) -> int:
        collections.append(args)
        return gc.collect(*args)  # type: ignore[arg-type]

    # the runner's gc, with its full passes counted (the interpreter's own passes are not affected)
    monkeypatch.setattr(turn_runner, "gc", SimpleNamespace(**{**vars(gc), "collect": counted}))
    monkeypatch.setattr(turn_runner, "IDLE_COLLECT_DELAY_S", 600.0)  # the test calls the timer's callback
    app = MyrmApp(workspace, scripted_settings(script({"text": "Done."})), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.runner._idle_collect is not None, what="the turn's end")
        runner = screen.runner
        await type_text(pilot, "next")  # the user starts the next message
        runner._collect_after_turn()  # the held-back pass comes due
        assert collections == []
        assert runner._idle_collect is not None  # asked again, for after the pause
        screen.input_priority.last_key = time.monotonic() - 60  # a pause in typing
        runner._collect_after_turn()
        assert len(collections) == 1
