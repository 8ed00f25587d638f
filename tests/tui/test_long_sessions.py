"""Long sessions stay fast: a window of mounted turns, earlier ones loaded on demand; and the
streaming regression for code fences split at awkward chunk boundaries."""

from __future__ import annotations

from textual.widgets.markdown import MarkdownFence

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.constants import LOAD_EARLIER_TURNS, TURN_WINDOW
from myrm_tui.tui.transcript.history import AssistantItem, HistoryItem, UserItem, turn_after, turns_of
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from myrm_tui.tui.widgets.transcript import LoadEarlier
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, send, wait_until


def seed_turns(store, model: str, count: int) -> str:
    session = store.create_session(model, "long")
    for i in range(count):
        store.append_message(session.id, {"role": "user", "content": f"question {i}"}, 3)
        store.append_message(session.id, {"role": "assistant", "content": f"answer {i}"}, 3)
    return session.id


def test_turn_grouping():
    items: list[HistoryItem] = [AssistantItem("orphan"), UserItem("a"), AssistantItem("x"), UserItem("b")]
    assert [len(t) for t in turns_of(items)] == [1, 2, 1]
    assert turn_after([1.0, 2.0, 3.0], 2.5) == 2 and turn_after([], 1.0) == 0


async def test_resume_mounts_a_window_and_loads_earlier_turns(workspace, store, script):
    model = script({"text": "unused"})
    total = TURN_WINDOW + LOAD_EARLIER_TURNS + 5
    sid = seed_turns(store, model, total)
    app = MyrmApp(workspace, scripted_settings(model), session_id=sid, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        users = [u.text for u in screen.query(UserMessage)]
        assert len(users) == TURN_WINDOW and users[-1] == f"question {total - 1}"
        bar = screen.query_one(LoadEarlier)
        assert bar.hidden_turns == total - TURN_WINDOW
        assert len(screen.query(AssistantMessage)) == TURN_WINDOW
        screen.transcript.scroll_home(animate=False)  # reaching the top loads a batch
        await wait_until(
            pilot, lambda: len(screen.query(UserMessage)) == TURN_WINDOW + LOAD_EARLIER_TURNS, what="first batch"
        )
        assert screen.query_one(LoadEarlier).hidden_turns == 5
        screen.query_one(LoadEarlier).post_message(LoadEarlier.Pressed())  # what a click sends
        await wait_until(pilot, lambda: not screen.query(LoadEarlier), what="all loaded")
        users = [u.text for u in screen.query(UserMessage)]
        assert users == [f"question {i}" for i in range(total)]  # in order, none twice


async def test_live_session_prunes_back_to_the_window(workspace, store, script, monkeypatch):
    import myrm_tui.tui.widgets.transcript as transcript_module

    # a small window so the test needs a few turns, not sixty
    monkeypatch.setattr(transcript_module, "TURN_WINDOW", 3)
    monkeypatch.setattr(transcript_module, "TURN_WINDOW_HIGH", 4)
    model = script(*[{"text": f"live {i}"} for i in range(6)])
    sid = seed_turns(store, model, 2)
    app = MyrmApp(workspace, scripted_settings(model), session_id=sid, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        assert screen.hidden_turns == 0 and not screen.query(LoadEarlier)
        for i in range(2):
            await send(pilot, app, f"new {i}")
        assert len(screen.mounted_turns()) == 4  # at the high-water mark: kept
        await send(pilot, app, "new 2")
        await wait_until(pilot, lambda: len(screen.mounted_turns()) == 3, what="pruned")
        assert [u.text for u in screen.mounted_turns()] == ["new 0", "new 1", "new 2"]
        assert screen.query_one(LoadEarlier).hidden_turns == 2
        assert [r.text for r in screen.query(AssistantMessage)] == ["live 2", "live 3", "live 4"]
        screen.query_one(LoadEarlier).post_message(LoadEarlier.Pressed())
        await wait_until(pilot, lambda: not screen.query(LoadEarlier), what="reloaded")
        assert [u.text for u in screen.query(UserMessage)] == ["question 0", "question 1", "new 0", "new 1", "new 2"]


FENCE_REPLY = "Run this:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\nand then `add(1, 2)`.\n"


async def test_streamed_code_fence_split_at_awkward_boundaries(workspace, store, script):
    # chunk_size 3 splits the opening fence ("``" | "`py"), the language tag and the closing fence
    model = script({"text": FENCE_REPLY, "chunk_size": 3, "delay_ms": 5})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, app, "show code")
        reply = app.chat_screen.query_one(AssistantMessage)
        await wait_until(pilot, lambda: not reply.streaming, what="final render")
        fences = list(reply.markdown.query(MarkdownFence))
        assert len(fences) == 1
        assert fences[0].code == "def add(a, b):\n    return a + b" and fences[0].lexer == "python"
        assert reply.markdown.source == FENCE_REPLY
