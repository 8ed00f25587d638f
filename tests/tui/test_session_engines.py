"""Leaving a session in the TUI closes and drops its runtime, which owns the context engine.

Why it matters: a session's engine lives in its SessionRuntime (agent/session_runtime.py), so agent
rebuilds keep the incremental state; leaving the session must drop the runtime, or every session
opened once in a long TUI run would keep its rendered history in memory until exit.
"""

from __future__ import annotations

import gc
import weakref

import pytest

from myrm_tui.tui.app import MyrmApp
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, type_text, wait_until


async def _send(pilot, app, text: str) -> None:
    ended = app.chat_screen.turns_ended
    await type_text(pilot, text)
    await pilot.press("enter")
    await wait_until(pilot, lambda: app.chat_screen.turns_ended > ended, what="turn end")


@pytest.mark.slow
async def test_clear_releases_the_left_sessions_engine_and_resume_rebuilds_it(workspace, store, script):
    model = script({"text": "first answer"}, {"text": "second answer"}, {"text": "third answer"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, app, "hello")
        left = app.chat.session_id
        runtime = app.chat.runtime
        assert app.chat.current_agent is not None  # no local name: it would keep the engine alive
        engine = app.chat.current_agent.engine
        assert runtime is not None and runtime.engine is engine
        await _send(pilot, app, "again")  # a turn in the same session keeps its engine
        assert app.chat.current_agent is not None and app.chat.current_agent.engine is engine
        gone = weakref.ref(engine)
        del engine, runtime

        await type_text(pilot, "/clear")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.chat.session_id != left, what="new session")
        # The left session's close worker (background commands, end hooks) finishes, then nothing
        # holds its engine: not the app, not a frozen generation (tui/session/turn_runner.py).
        for _ in range(50):
            gc.collect()
            if gone() is None:
                break
            await pilot.pause(0.1)
        assert gone() is None  # released with the session, not kept for the process

        # Coming back uses an engine rebuilt from the store, and the session goes on.
        app.open_session(left)
        await wait_until(pilot, lambda: app.chat.session_id == left, what="resumed")
        await _send(pilot, app, "third")
        agent, runtime = app.chat.current_agent, app.chat.runtime
        assert agent is not None and runtime is not None and agent.engine is runtime.engine
        assert [m.message.get("content") for m in store.messages(left) if m.role == "assistant"] == [
            "first answer",
            "second answer",
            "third answer",
        ]
