"""The context ring alone, in a tiny host app: the reading it is handed is the reading it shows.

The chat-screen tests (tests/tui/test_context_ui.py) drive the ring through real model calls;
here each health level is set directly, so the percentage, the one level class and the words
on screen are checked for readings a scripted session would take many turns to reach.
"""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult

from myrm_tui.tui.figures.context_source import ContextState, Thresholds
from myrm_tui.tui.figures.metrics import ContextReading, Spend
from myrm_tui.tui.widgets.context_ring import ContextRing
from tests.tui.tui_pilot_helpers import screen_text

LEVELS = ("ok", "warn", "crit", "unknown")


class HostApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.compact_requests = 0

    def compose(self) -> ComposeResult:
        yield ContextRing(id="ring")

    @property
    def ring(self) -> ContextRing:
        return self.query_one(ContextRing)

    def on_context_ring_compact_requested(self, _message: ContextRing.CompactRequested) -> None:
        self.compact_requests += 1


def state(used: int | None, limit: int | None = 4000, **reading: Any) -> ContextState:
    return ContextState(reading=ContextReading(used=used, limit=limit, source="usage", **reading))


def level_classes(ring: ContextRing) -> list[str]:
    return [level for level in LEVELS if ring.has_class(f"-{level}")]


async def test_each_reading_shows_its_percentage_and_exactly_one_level_class():
    app = HostApp()
    async with app.run_test() as pilot:
        cases = [
            (None, "--%", "unknown"),
            (40, "1%", "ok"),
            (2000, "50%", "ok"),
            (2979, "74%", "ok"),
            (2999, "75%", "warn"),  # the level follows the shown percentage: "75%" is never green
            (3000, "75%", "warn"),  # amber from 75 %
            (3599, "90%", "crit"),
            (3400, "85%", "warn"),
            (3600, "90%", "crit"),  # red from 90 %
            (5000, "125%", "crit"),  # over the limit: the real figure, not a clamped 100 %
        ]
        for used, percent, level in cases:
            app.ring.show(state(used))
            await pilot.pause()
            assert app.ring.label().endswith(f" {percent} ●"), (used, app.ring.label())
            assert app.ring.level == level
            assert level_classes(app.ring) == [level], (used, level_classes(app.ring))
            assert f"{percent} ●" in screen_text(app)


async def test_a_reading_without_a_limit_is_unknown_not_zero():
    app = HostApp()
    async with app.run_test() as pilot:
        app.ring.show(state(1200, limit=None))
        await pilot.pause()
        assert app.ring.label().endswith("--% ●") and level_classes(app.ring) == ["unknown"]


async def test_a_state_handed_over_before_mount_is_shown_once_mounted():
    ring = ContextRing(id="ring")
    ring.show(state(3700))

    class Early(App[None]):
        def compose(self) -> ComposeResult:
            yield ring

    app = Early()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert "92% ●" in screen_text(app) and level_classes(ring) == ["crit"]


async def test_the_tooltip_carries_the_budget_ladder_and_spend():
    app = HostApp()
    async with app.run_test() as pilot:
        app.ring.compact_key = "ctrl+k"
        app.ring.show(
            ContextState(
                reading=ContextReading(
                    used=3000,
                    limit=4000,
                    window=8000,
                    output_reserve=3744,
                    safety_margin=256,
                    fixed_tokens=900,
                    history_tokens=2100,
                    tier="light",
                    source="usage",
                ),
                spend=Spend(calls=2, prompt_tokens=5000, completion_tokens=300, cost=0.0123),
                thresholds=Thresholds(light=0.7, full=0.85, emergency=0.95),
            )
        )
        await pilot.pause()
        tooltip = str(app.ring.tooltip)
        assert "Context: 3,000 / 4,000 tokens (75%), last request" in tooltip
        assert "window 8,000 · output reserve 3,744 · margin 256" in tooltip
        assert "fixed prefix (system + tools): 900" in tooltip and "history: 2,100" in tooltip
        assert "Auto-compact: light 70% · full 85% · emergency 95%" in tooltip
        assert "Engine tier: light" in tooltip
        assert "Session spend: 5,300 tokens over 2 calls · $0.0123" in tooltip
        assert tooltip.endswith("Click or ctrl+k: compact now")


async def test_a_click_asks_for_a_compaction():
    app = HostApp()
    async with app.run_test() as pilot:
        app.ring.show(state(3800))
        await pilot.pause()
        await pilot.click("#ring")
        await pilot.pause()
        assert app.compact_requests == 1
