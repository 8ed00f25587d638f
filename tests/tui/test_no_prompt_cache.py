"""A model whose registry entry has no prompt cache gets no cache figures or cache warnings.

Seen: "0 read (0%)" on every call and "cache break" warnings in the compaction panel for a model
that has no cache to break. The model here is declared without one (`[models."NAME"]
supports_prompt_caching = false`, the registry's field); the same model with a cache is the
control.
"""

from __future__ import annotations

import dataclasses

import pytest

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.health import HealthScreen
from myrm_tui.tui.widgets.compaction_panel import NO_PROMPT_CACHE
from tests.tui.tui_pilot_helpers import SIZE, screen_of, scripted_settings, send, wait_until


@pytest.mark.parametrize("cached", [False, True], ids=["no-cache", "cache"])
async def test_cache_rows_only_for_a_model_with_a_prompt_cache(workspace, store, script, cached):
    model = script({"text": "One."}, {"text": "Two."})
    # what a `[models."NAME"]` table in the config becomes (Settings.models)
    settings = dataclasses.replace(scripted_settings(model), models={model: {"supports_prompt_caching": cached}})
    app = MyrmApp(workspace, settings, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await send(pilot, app, "first")
        await send(pilot, app, "second")
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: screen.panel.display, what="panel")
        cache = screen.panel.section_text("cache")
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, HealthScreen) and app.screen.report, what="F3")
        report = screen_of(app, HealthScreen).report
        assert report is not None
        names = [m.name for m in report.card("cache")]
        if cached:
            assert "#1 " in cache and " read" in cache
            assert "cache hit rate" in names and "cache breaks" in names
        else:
            assert cache == NO_PROMPT_CACHE
            assert names == ["prompt cache"] and report.value("prompt cache") == "none"
