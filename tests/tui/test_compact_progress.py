"""`/compact` in the TUI: a progress line while the summarizer model writes, and Esc cancels.

A resumed 80-turn chat-only session, a scripted main model, and a scripted lite model that
writes its summaries slowly (delay per streamed chunk), so the pilot can watch the progress line
and press Esc in the middle of a summary.
"""

from __future__ import annotations

import json

import pytest

from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.session.turn_runner import COMPACT_CANCELLED
from myrm_tui.tui.widgets.blocks.compaction_divider import CompactionDivider
from tests.tui.tui_pilot_helpers import SIZE, notices, scripted_settings, type_text, wait_until

ANSWER = ("Water the tomatoes early in the morning and mulch the beds against the heat. " * 5).strip()
SUMMARY = {
    "user_goal": "plan a vegetable garden",
    "active_task": "none",
    "completed_actions": [f"answered the garden question of week {n}" for n in range(12)],
    "key_findings": ["tomatoes want water early", "mulch keeps the beds cool"],
    "narrative": "Weekly garden advice, summarized by the lite model.",
}


def models(tmp_path, *, delay_ms: int) -> tuple[str, str]:
    main = tmp_path / "main.json"
    main.write_text(json.dumps({"turns": [{"text": "Happy gardening."}], "context_window": 32_000}))
    lite = tmp_path / "lite.json"
    lite.write_text(
        json.dumps(
            {
                "context_window": 10_000,  # ~6.7k-token chunks: several summaries
                "turns": [{"text": json.dumps(SUMMARY), "chunk_size": 40, "delay_ms": delay_ms}],
            }
        )
    )
    return f"scripted/{main}", f"scripted/{lite}"


def chat_session(store, model: str, turns: int = 80) -> str:
    session = store.create_session(model=model, title="garden").id
    for n in range(turns):
        for message in (
            {"role": "user", "content": f"Question {n}: what should I do in the garden?"},
            {"role": "assistant", "content": f"Week {n}. {ANSWER}"},
        ):
            store.append_message(session, message, count_message_tokens(message, model))
    return session


@pytest.mark.slow
async def test_compact_shows_progress_while_the_model_writes_and_summarizes_the_chat(workspace, store, tmp_path):
    main, lite = models(tmp_path, delay_ms=100)  # each summary shows long enough for a poll on a loaded box
    session = chat_session(store, main)
    app = MyrmApp(
        workspace, scripted_settings(main, lite_model=lite), session_id=session, store=store, watch_themes=False
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.chat_screen
        await wait_until(pilot, lambda: screen.ready.is_set() and screen.chat.model, what="model resolved")
        seen: list[str] = []
        await type_text(pilot, "/compact watering")
        await pilot.press("enter")

        def progress_shown() -> bool:
            seen.append(screen.status.plain())
            return "compacting: summary 2 of" in seen[-1]

        await wait_until(pilot, progress_shown, what="progress line")
        assert "cancels" in seen[-1] and screen.compacting
        await wait_until(pilot, lambda: not screen.compacting, what="compaction end")
        # The runner posts its end as a message; the notice comes when the screen handles it.
        await wait_until(pilot, lambda: any(n.startswith("Compacted") for n in notices(app)), what="notice")
        done = notices(app)[-1]
        assert done.startswith("Compacted: −") and "written by the model" in done, done
        await wait_until(pilot, lambda: screen.query(CompactionDivider), what="divider")
        nodes = store.summaries(session)
        assert nodes and all(not n["fallback"] for n in nodes if n["status"] == "active")
        assert {n["model"] for n in nodes if n["depth"] == 0} == {lite}
        assert "compacting" not in screen.status.plain()


async def test_esc_cancels_a_compaction_mid_summary_and_the_session_goes_on(workspace, store, tmp_path):
    main, lite = models(tmp_path, delay_ms=400)  # a summary takes seconds: time to press Esc
    session = chat_session(store, main)
    app = MyrmApp(
        workspace, scripted_settings(main, lite_model=lite), session_id=session, store=store, watch_themes=False
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = app.chat_screen
        await wait_until(pilot, lambda: screen.ready.is_set() and screen.chat.model, what="model resolved")
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: "compacting: summary 1 of" in screen.status.plain(), what="progress line")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.compacting, what="cancelled")
        await wait_until(pilot, lambda: COMPACT_CANCELLED in notices(app), what="notice")
        assert notices(app)[-1] == COMPACT_CANCELLED
        assert not [e for e in store.events(session, "compaction") if e.data.get("state") == "done"]
        assert not screen.query(CompactionDivider) and "compacting" not in screen.status.plain()
        ended = screen.turns_ended
        await type_text(pilot, "thanks")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.turns_ended > ended, what="turn after the cancel")
        rows = store.messages(session)
        assert rows[-2].message["content"] == "thanks" and rows[-1].role == "assistant"
