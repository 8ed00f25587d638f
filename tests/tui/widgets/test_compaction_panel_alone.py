"""The compaction panel alone, in a tiny host app, fed stored events and summary nodes directly.

tests/tui/test_context_ui.py checks that a real /compact reaches the panel; here the panel is
handed exact records, so each section's words (before → after, cache figures, breakers, the
DAG tree) are checked against known numbers, including records a session rarely produces.
"""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult

from myrm_tui.store import event_kinds
from myrm_tui.store.records import EventRecord
from myrm_tui.tui.widgets.compaction_panel import CACHE_ROWS, CompactionPanel
from tests.tui.tui_pilot_helpers import screen_text

SIZE = (100, 60)  # tall enough that every section is on screen at once


class HostApp(App[None]):
    def compose(self) -> ComposeResult:
        yield CompactionPanel()

    @property
    def panel(self) -> CompactionPanel:
        return self.query_one(CompactionPanel)


def event(event_id: int, kind: str, **data: Any) -> EventRecord:
    return EventRecord(id=event_id, session_id="s1", kind=kind, data=data, created_at=1000.0 + event_id)


def node(handle: str, **fields: Any) -> dict[str, Any]:
    values = {
        "handle": handle,
        "depth": 0,
        "first_id": 1,
        "last_id": 10,
        "covered_count": 10,
        "tokens": 1500,
        "fallback": False,
        "model": "small-model",
        "status": "active",
        "children": (),
    }
    values.update(fields)
    return values


async def test_an_empty_session_says_so_in_every_section():
    app = HostApp()
    async with app.run_test(size=SIZE) as pilot:
        app.panel.show_events([])
        await pilot.pause()
        assert app.panel.section_text("timeline") == "no compactions yet"
        assert app.panel.section_text("cache") == "no model calls yet"
        assert app.panel.section_text("breakers") == "not reported by this engine yet"
        assert app.panel.section_text("dag") == "no summaries yet"


async def test_a_compaction_shows_its_tokens_before_and_after_and_what_it_saved():
    app = HostApp()
    async with app.run_test(size=SIZE) as pilot:
        app.panel.show_events(
            [
                # handed over newest first: the panel numbers them oldest first
                event(
                    7, event_kinds.COMPACTION, tier="summarize", trigger="manual", tokens_before=9000, tokens_after=2500
                ),
                event(3, event_kinds.COMPACTION, tier="light", trigger="auto", state="started", tokens_before=1),
                event(
                    2,
                    event_kinds.COMPACTION,
                    tier="light",
                    trigger="auto",
                    tokens_before=12_300,
                    tokens_after=4_500,
                    items=14,
                    ms=41.6,
                ),
            ]
        )
        await pilot.pause()
        assert app.panel.section_text("timeline").splitlines() == [
            "#1 light · auto · 42 ms",
            "   12.3k → 4.5k (−7.8k) · 14 msgs",
            "#2 summarize · manual",
            "   9.0k → 2.5k (−6.5k)",
        ]  # the "started" marker is not a compaction
        assert "12.3k → 4.5k (−7.8k) · 14 msgs" in screen_text(app)


async def test_cache_figures_breaks_and_breakers_come_from_the_reports():
    usage = [
        event(i, event_kinds.USAGE, prompt_tokens=1000, cached_read_tokens=900 if i > 1 else 0, cached_write_tokens=50)
        for i in range(1, CACHE_ROWS + 3)
    ]
    report = event(
        100,
        event_kinds.ASSEMBLE,
        cache_break={"position": 4, "previous_len": 9, "reason": "system prompt changed"},
        breakers={"summarize": "open", "light": "closed"},
    )
    app = HostApp()
    async with app.run_test(size=SIZE) as pilot:
        app.panel.show_events([*usage, report])
        await pilot.pause()
        cache = app.panel.section_text("cache").splitlines()
        calls = [line for line in cache if line.startswith("#")]
        assert len(calls) == CACHE_ROWS  # only the newest calls are listed…
        assert calls[-1] == f"#{CACHE_ROWS + 2} 1.0k prompt · 900 read (90%) · 50 write"  # …numbered as in the session
        assert "⚠ cache break at msg 4/9: system prompt changed" in cache
        assert app.panel.section_text("breakers").splitlines() == ["light: closed", "summarize: open"]


async def test_the_dag_nests_folded_children_under_the_node_that_folded_them():
    nodes = [
        node("S3", depth=1, first_id=1, last_id=40, covered_count=40, tokens=2200, children=("S1", "S2")),
        node("S1", status="folded", last_id=20, covered_count=20),
        node("S2", status="folded", first_id=21, last_id=40, covered_count=20, fallback=True),
        node("S4", first_id=41, last_id=50, status="prepared", model=None),
        node("S0", status="folded"),  # folded into nothing shown: not listed on its own
    ]
    app = HostApp()
    async with app.run_test(size=SIZE) as pilot:
        app.panel.show_summaries(nodes)
        await pilot.pause()
        assert app.panel.section_text("dag").splitlines() == [
            "S3 d1 · msg 1–40 (40 msgs) · 2.2k · small-model",
            "  S1 d0 · msg 1–20 (20 msgs) · 1.5k · small-model · folded",
            "  S2 d0 · msg 21–40 (20 msgs) · 1.5k · extractive · folded",
            "S4 d0 · msg 41–50 (10 msgs) · 1.5k · model · prepared",
        ]


async def test_stored_model_names_and_reasons_are_shown_as_data():
    hostile = "evil\x1b]0;pwned\x07\u202e"
    app = HostApp()
    async with app.run_test(size=SIZE) as pilot:
        app.panel.show_summaries([node("S1", model=hostile)])
        app.panel.show_events(
            [event(1, event_kinds.ASSEMBLE, cache_break={"reason": hostile}, breakers={hostile: "open"})]
        )
        await pilot.pause()
        for section in ("dag", "cache", "breakers"):
            text = app.panel.section_text(section)
            assert "\\x1b]0;pwned\\x07\\u202e" in text, section
            assert "\x1b" not in text and "\u202e" not in text, section
        assert "\x1b" not in screen_text(app)
