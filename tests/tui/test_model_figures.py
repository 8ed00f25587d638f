"""The ring and F3 measure the last prompt against the session's *current* model's window.

What a careful new user saw: after a model switch F3 still showed the old model's 1.00M window
while an 8k model was active, and a fork kept the figures of the model its parent last used.
The tokens of the last prompt are what they were; the window they are a share of is the one the
next request will have.
"""

from __future__ import annotations

import json
from pathlib import Path

from myrm_tui.context.window.budget import budget_for
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.health import HealthScreen
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, send, wait_until

BIG, SMALL = 1_000_000, 32_768


def model_with_window(tmp_path: Path, name: str, window: int) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"turns": [{"text": "Hello there."}] * 3, "context_window": window}))
    return f"scripted/{path}"


def expected_limit(settings, window: int) -> int:
    # scripted models may be asked for at most min(8192, window) output tokens (llm/models/registry.py)
    return budget_for(window, min(int(settings.max_output_tokens), 8192, window)).prompt_limit


async def open_health(pilot, app: MyrmApp) -> HealthScreen:
    await pilot.press("f3")
    await wait_until(pilot, lambda: isinstance(app.screen, HealthScreen) and app.screen.report, what="F3")
    health = app.screen
    assert isinstance(health, HealthScreen) and health.report is not None
    return health


async def test_after_a_model_switch_the_ring_and_f3_show_the_new_window(workspace, store, tmp_path):
    big, small = model_with_window(tmp_path, "big", BIG), model_with_window(tmp_path, "small", SMALL)
    settings = scripted_settings(big)
    app = MyrmApp(workspace, settings, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await send(pilot, app, "hi")
        before = screen.context.reading
        assert before.window == BIG and before.used
        screen.run_command("/model", small)  # what /model NAME does
        await wait_until(pilot, lambda: screen.context.reading.window == SMALL, what="the ring to follow the model")
        after = screen.context.reading
        assert after.used == before.used, "the last prompt's tokens are what they were"
        assert after.limit == expected_limit(settings, SMALL)
        assert after.percent is not None and after.percent > (before.percent or 0)
        health = await open_health(pilot, app)
        assert health.report is not None
        assert health.report.value("model window") == "32.8k"
        assert f"/ {after.limit / 1000:.1f}k tokens" in next(
            m.detail for m in health.report.metrics if m.name == "window used (last request)"
        )


async def test_a_fork_on_another_model_shows_its_own_window(workspace, store, tmp_path):
    big, small = model_with_window(tmp_path, "big", BIG), model_with_window(tmp_path, "small", SMALL)
    first = MyrmApp(workspace, scripted_settings(big), store=store, watch_themes=False)
    async with first.run_test(size=SIZE) as pilot:
        await send(pilot, first, "hi")
        parent = first.chat.session_id
    assert parent is not None
    child = store.fork(parent, title="fork").id
    settings = scripted_settings(small)  # the fork talks to another model than its parent did
    app = MyrmApp(workspace, settings, session_id=child, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await wait_until(pilot, lambda: screen.ready.is_set(), what="warm-up")
        await wait_until(pilot, lambda: screen.context.reading.window == SMALL, what="the fork's model's window")
        reading = screen.context.reading
        assert reading.source == "parent" and reading.used
        assert reading.limit == expected_limit(settings, SMALL)
        health = await open_health(pilot, app)
        assert health.report is not None
        assert health.report.value("model window") == "32.8k"
