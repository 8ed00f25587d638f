"""Ring, compact now, compaction panel and divider, health screen — through the real agent."""

from __future__ import annotations

import re

import pytest
from textual.widgets import Static

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.screens.health import HealthScreen
from myrm_tui.tui.widgets.blocks.compaction_divider import CompactionDivider
from myrm_tui.tui.widgets.context_ring import ForkHint
from tests.tui.tui_pilot_helpers import (
    SIZE,
    notices,
    screen_of,
    scripted_settings,
    send,
    type_text,
    wait_until,
    write_script,
)

BIG = "\n".join(f"line {i}: " + "lorem ipsum dolor sit amet " * 3 for i in range(120))


async def test_ring_shows_last_request_and_turns_amber_then_red(workspace, store, tmp_path):
    # window 8000, max_output 4096 → prompt limit 8000 − 4000 − 256 = 3744; usage drives the ring
    model = write_script(
        tmp_path,
        [
            {"text": "one", "usage": {"prompt_tokens": 1000, "completion_tokens": 5}},
            {"text": "two", "usage": {"prompt_tokens": 3000, "completion_tokens": 5, "cached_read_tokens": 1500}},
            {"text": "three", "usage": {"prompt_tokens": 3500, "completion_tokens": 5}},
        ],
        window=8000,
    )
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.chat_screen
        assert screen.ring.label().endswith("--% ●") and screen.ring.level == "unknown"
        assert "no request yet" in str(screen.ring.tooltip)
        await send(pilot, app, "first")
        assert screen.ring.level == "ok" and "27%" in screen.ring.label()
        assert not screen.query_one(ForkHint).display
        await send(pilot, app, "second")
        # the last request, not the running total (4,000 tokens would be 107%)
        assert "80%" in screen.ring.label() and screen.ring.level == "warn"
        assert screen.ring.has_class("-warn")
        assert screen.query_one(ForkHint).display  # the fork call to action
        assert any("fork" in n.lower() for n in notices(app))
        tooltip = str(screen.ring.tooltip)
        assert "3,000 / 3,744 tokens (80%), last request" in tooltip
        assert "window 8,000" in tooltip and "fixed prefix (system + tools)" in tooltip
        assert "Auto-compact: light 50% · full 70% · emergency 90%" in tooltip
        assert "Session spend: 4,010 tokens over 2 calls" in tooltip
        await send(pilot, app, "third")
        assert "93%" in screen.ring.label() and screen.ring.level == "crit"


async def _session_with_big_reads(pilot, app) -> None:
    for i in range(3):
        await send(pilot, app, f"read {i}")


def big_read_turns() -> list[dict]:
    turns: list[dict] = []
    for i in range(3):
        turns.append({"tool_calls": [{"id": f"c{i}", "name": "file_read", "arguments": {"path": "big.txt"}}]})
        turns.append({"text": f"read it {i}"})
    return turns


@pytest.mark.slow
async def test_compact_key_runs_the_engine_and_marks_the_transcript(workspace, store, tmp_path):
    (workspace / "big.txt").write_text(BIG)
    model = write_script(tmp_path, big_read_turns(), window=32000)
    app = MyrmApp(workspace, scripted_settings(model, approval="yolo"), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.chat_screen
        await pilot.press("ctrl+l")
        assert "send a message first" in notices(app)[-1]
        await _session_with_big_reads(pilot, app)
        before = screen.context.reading.used
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: screen.query(CompactionDivider), what="divider")
        (divider,) = screen.query(CompactionDivider)
        assert re.match(r"compacted \d+ messages?, −[\d,]+ tokens", divider.summary), divider.summary
        (done,) = [e for e in store.events(app.chat.session_id, "compaction") if e.data["state"] == "done"]
        assert done.data["trigger"] == "manual"
        assert screen.context.reading.used == done.data["tokens_after"] < before  # the ring followed
        assert not screen.panel.display
        await pilot.click(divider)  # the divider opens the panel
        await wait_until(pilot, lambda: screen.panel.display, what="panel")
        timeline = screen.panel.section_text("timeline")
        assert f"{done.data['tokens_after']:,}"[:1] in timeline and "summarize · manual" in timeline
        assert f"· {done.data['items']} msgs" in timeline
        assert "S1" in screen.panel.section_text("dag")  # the old turns stand as summary nodes
        assert "#1 " in screen.panel.section_text("cache") and " prompt · " in screen.panel.section_text("cache")
        assert screen.panel.section_text("breakers") == "all stages closed"
        await pilot.press("ctrl+b")
        assert not screen.panel.display


async def test_ring_click_and_compact_command_reach_the_agent(workspace, store, script):
    model = script({"text": "hello"})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.chat_screen
        await send(pilot, app, "hi")
        agent = app.chat.current_agent
        assert agent is not None
        calls = []

        async def observe(focus=None, progress=None):  # observe the real call path
            calls.append(focus)

        agent.compact_now = observe  # type: ignore[method-assign]  # the ring's call, observed
        await pilot.click("#ring")
        await wait_until(pilot, lambda: calls and not screen.compacting, what="compact")
        assert calls == [None]
        assert "Nothing to compact" in notices(app)[-1]
        await type_text(pilot, "/compact tests/")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(calls) == 2 and not screen.compacting, what="focused compact")
        assert calls[-1] == "tests/"


@pytest.mark.slow
async def test_health_screen_lists_the_session_metrics(workspace, store, tmp_path):
    (workspace / "big.txt").write_text(BIG)
    model = write_script(tmp_path, big_read_turns(), window=32000)
    app = MyrmApp(workspace, scripted_settings(model, approval="yolo"), store=store, watch_themes=False)
    async with app.run_test(size=(140, 50)) as pilot:
        await _session_with_big_reads(pilot, app)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: app.chat_screen.query(CompactionDivider), what="compaction")
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, HealthScreen) and app.screen.report, what="report")
        health = screen_of(app, HealthScreen)
        report = health.report
        assert report is not None
        assert len(report.metrics) >= 20
        assert report.value("compactions") == "1" and report.value("manual compactions") == "1"
        assert report.value("tool calls") == "3" and report.value("user turns") == "3"
        assert report.value("model calls") == "6"
        assert len(report.prompt_series) == 6
        body = str(health.query_one("#card-session > .card-body", Static).content)
        assert "tool calls: 3" in body and "vault size" in body
        await pilot.press("escape")
        assert app.screen is app.chat_screen
