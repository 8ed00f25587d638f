"""The quiet figures line under each reply (live and reopened) and the live status figures."""

from __future__ import annotations

import re
from pathlib import Path

from myrm_tui.agent.reply_figures import ReplyFigures
from myrm_tui.settings import Settings
from myrm_tui.store import event_kinds
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.figures.reply_figures_text import StreamMeter, figures_line
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, type_text, wait_until

USAGE = {"prompt_tokens": 1200, "completion_tokens": 340, "cached_read_tokens": 744}
# "1.2k in · 340 out · 62% cached · <time> · <speed> tok/s": no price for a scripted model
LIVE_LINE = re.compile(r"^1\.2k in · 340 out · 62% cached · \d+(\.\d)? (ms|s) · \d+ tok/s$")


async def _send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


def _idle(app) -> bool:
    return not app.chat_screen.turn_running


async def _final_reply(pilot, app) -> AssistantMessage:
    await wait_until(pilot, lambda: _idle(app) and app.chat_screen.query(AssistantMessage), what="reply")
    reply = app.chat_screen.query(AssistantMessage).last()
    await wait_until(pilot, lambda: not reply.streaming, what="final render")
    return reply


def _shown_line(reply: AssistantMessage) -> str:
    view = reply.query_one(".figures")
    assert view.display
    return str(view.render())


async def test_a_live_reply_gets_its_figures_line_and_a_reopened_session_shows_the_same(workspace, store, script):
    model = script({"text": "Two plus two is four.", "usage": USAGE})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "2+2?")
        reply = await _final_reply(pilot, app)
        live = _shown_line(reply)
        assert LIVE_LINE.match(live), live
        assert "$" not in live  # no price known: left out, never "$0"
        session_id = app.chat.session_id
    # reopened: the line comes from the stored record, not from the live stream
    reopened = MyrmApp(workspace, scripted_settings(model), store=store, session_id=session_id)
    async with reopened.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: reopened.chat_screen.query(AssistantMessage), what="history")
        [old] = reopened.chat_screen.query(AssistantMessage)
        assert _shown_line(old) == live


async def test_a_reply_without_stored_figures_shows_no_line(workspace, store):
    sid = store.create_session("scripted/none", "old").id
    store.append_message(sid, {"role": "user", "content": "hi"}, 1)
    store.append_message(sid, {"role": "assistant", "content": "hello"}, 1)
    app = MyrmApp(workspace, Settings().with_values(model="scripted/none"), store=store, session_id=sid)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.query(AssistantMessage), what="history")
        [reply] = app.chat_screen.query(AssistantMessage)
        # a stored reply without figures does not even mount the (hidden) line
        assert not any(line.display for line in reply.query(".figures")) and reply.figures_text == ""


async def test_the_status_line_counts_time_and_speed_while_a_reply_streams(workspace, store, script):
    text = "a slow reply that streams in many small pieces " * 3
    model = script({"text": text, "chunk_size": 3, "delay_ms": 60, "usage": USAGE})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "go")
        live = re.compile(r"● streaming \d+(\.\d)? (ms|s) · ~\d+ tok/s")
        await wait_until(pilot, lambda: live.search(app.chat_screen.status.plain()), what="live speed")
        await _final_reply(pilot, app)
        await wait_until(pilot, lambda: "streaming" not in app.chat_screen.status.plain(), what="meter stopped")


def test_meter_reads_thinking_then_streaming_speed():
    now = [10.0]
    meter = StreamMeter(started=10.0, clock=lambda: now[0])
    now[0] = 12.5
    assert meter.text() == "thinking 2.5 s"
    meter.add("x" * 40)  # first output at 12.5 s
    now[0] = 14.5  # 40 chars ≈ 10 tokens over 2 s of decoding
    assert meter.text() == "streaming 4.5 s · ~5 tok/s"


def test_figures_line_names_only_what_is_known():
    full = ReplyFigures(
        prompt_tokens=6_300,
        completion_tokens=412,
        cached_read_tokens=6_000,
        cost=0.0041,
        elapsed_s=3.2,
        first_token_s=0.4,
    )
    assert figures_line(full) == "6.3k in · 412 out · 95% cached · $0.0041 · 3.2 s · 147 tok/s"
    assert figures_line(ReplyFigures(elapsed_s=0.8)) == "800 ms"  # a provider without usage


# ------------------------------------------------------------------------------ snapshot

SNAP_SIZE = (100, 24)
MODEL = "anthropic/claude-sonnet-4-5"
FIXED_WORKSPACE = Path("/home/user/project")
FIXED_SESSION = "f16e5000-0000-4000-8000-000000000000"
REPLY = (
    "`parse()` dropped the last line because it split on `\\n` and discarded the tail.\n\n"
    "```python\ndef parse(text):\n    return text.splitlines()\n```\n\nAll 12 tests pass now."
)


def _seed_reply_with_figures(store) -> str:
    sid = store.create_session(MODEL, "fix the parser").id
    store.append_message(sid, {"role": "user", "content": "Why does parse() lose the last line?"}, 9)
    record = store.append_message(sid, {"role": "assistant", "content": REPLY}, 40)
    figures = ReplyFigures(
        message_id=record.id,
        model=MODEL,
        prompt_tokens=6_300,
        completion_tokens=412,
        cached_read_tokens=6_000,
        cost=0.0041,
        elapsed_s=3.2,
        first_token_s=0.4,
    )
    store.append_event(sid, event_kinds.REPLY_FIGURES, figures.as_data())
    return sid


def test_snapshot_reply_with_figures(snap_compare, workspace, store):
    sid = _seed_reply_with_figures(store)
    settings = Settings().with_values(model=MODEL, animations=False)
    app = MyrmApp(
        workspace,
        settings,
        session_id=sid,
        store=store,
        watch_themes=False,
        config_path=Path("/home/user/.config/myrm/config.toml"),
    )

    async def settle(pilot) -> None:
        screen = pilot.app.chat_screen
        await wait_until(pilot, lambda: screen.ready.is_set(), what="warm-up")
        screen.status.set(workspace=FIXED_WORKSPACE, session_id=FIXED_SESSION)
        screen.prompt.cursor_blink = False
        for reply in screen.query(AssistantMessage):

            def rendered(r: AssistantMessage = reply) -> bool:
                return r.markdown.source == r.text

            await wait_until(pilot, rendered, what="markdown")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SNAP_SIZE, run_before=settle)
