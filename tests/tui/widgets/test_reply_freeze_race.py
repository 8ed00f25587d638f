"""A streaming reply renders its frames in a worker thread while the stream goes on; the end of the
reply (and the reply's removal) may come while a frame is still in that thread. The two must never
step on each other.

Seen by a user with the design before this one (finished segments frozen in a thread): a 6-part
reply ended, the next message went out a second later, and the app died with `MountError: Unable
to find relative location of Markdown(classes='reply') because it has no parent`: a freeze came
back from its thread while `finish` was removing the segments. The live reply now renders every
frame in one loop of its own and mounts nothing from it; `finish` waits for that loop to end
before it swaps the finished reply in. Here the interleaving is forced, not hoped for: the frames'
thread waits on a gate, and the gate opens while `finish` (or the removal) is under way.
"""

from __future__ import annotations

import asyncio
import threading
import time

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.live_markdown import LiveMarkdown
from myrm_tui.tui.widgets.blocks.live_reply import LiveReply
from myrm_tui.tui.widgets.blocks.stored_reply import StoredReply
from tests.tui.tui_pilot_helpers import WAIT_TIMEOUT_S, wait_until

SIZE = (100, 40)
# One paragraph of ~300 characters: six of them make a reply long enough to end as rows.
PARAGRAPH = " ".join(f"word{n}" for n in range(50)) + "\n\n"


class HostApp(App[None]):
    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="host")


def gate_frames(monkeypatch) -> tuple[threading.Event, threading.Event]:
    """Every frame's rendering thread waits for the returned gate (bounded: a hang fails); the
    second event is set once a frame is waiting at it."""
    gate, waiting = threading.Event(), threading.Event()
    advance = LiveMarkdown.advance

    def gated(self, text, width, *, final=False):
        waiting.set()
        gate.wait(WAIT_TIMEOUT_S)
        return advance(self, text, width, final=final)

    monkeypatch.setattr(LiveMarkdown, "advance", gated)
    return gate, waiting


async def stream_paragraphs(pilot, reply: AssistantMessage, count: int) -> None:
    for _ in range(count):
        reply.append_text(PARAGRAPH)
        await pilot.pause(0.06)  # about one frame interval: one paragraph per frame


async def test_finish_while_a_frame_is_in_its_thread_does_not_crash(monkeypatch):
    gate, waiting = gate_frames(monkeypatch)
    app = HostApp()
    async with app.run_test(size=SIZE) as pilot:
        reply = AssistantMessage(streaming=True)
        await app.query_one("#host", VerticalScroll).mount(reply)
        await stream_paragraphs(pilot, reply, 6)
        await wait_until(pilot, waiting.is_set, what="a frame in its thread")
        reply.append_text("The last words, not rendered yet.")
        final = reply.text
        reply.call_later(reply.finish, final)  # as the turn view ends a reply
        await asyncio.sleep(0.1)  # not pilot.pause: the reply's queue is busy in `finish`, waiting
        assert reply.streaming, "the end waits for the frame in the thread"
        gate.set()
        await wait_until(pilot, lambda: not reply.streaming, what="the end of the reply")
        await pilot.pause(0.1)
        assert app.is_running, "the app is still running"
        shown = reply.query_children(".reply")
        assert len(shown) == 1, "the reply is one widget again"
        assert isinstance(reply.markdown, StoredReply) and reply.markdown.source == final, (
            "the whole reply is shown, the last words too"
        )
        assert not reply.query(LiveReply), "the live rows gave way to the finished reply"
    # leaving run_test re-raises any exception the app died of


async def test_the_stored_text_wins_when_it_differs_from_what_streamed(monkeypatch):
    gate, waiting = gate_frames(monkeypatch)
    app = HostApp()
    async with app.run_test(size=SIZE) as pilot:
        reply = AssistantMessage(streaming=True)
        await app.query_one("#host", VerticalScroll).mount(reply)
        await stream_paragraphs(pilot, reply, 2)
        await wait_until(pilot, waiting.is_set, what="a frame in its thread")
        stored = "The stored reply, not what streamed.\n"
        reply.call_later(reply.finish, stored)
        gate.set()
        await wait_until(pilot, lambda: not reply.streaming, what="the end of the reply")
        assert reply.text == stored and reply.markdown.source == stored


async def test_a_reply_removed_while_a_frame_is_in_its_thread_does_not_crash(monkeypatch):
    """The transcript prunes old turns and the app may close mid-reply: a frame may still render."""
    gate, waiting = gate_frames(monkeypatch)
    app = HostApp()
    async with app.run_test(size=SIZE) as pilot:
        reply = AssistantMessage(streaming=True)
        await app.query_one("#host", VerticalScroll).mount(reply)
        await stream_paragraphs(pilot, reply, 3)
        await wait_until(pilot, waiting.is_set, what="a frame in its thread")
        await reply.remove()
        gate.set()
        deadline = time.monotonic() + WAIT_TIMEOUT_S
        while any(w.group == "live-reply" and not w.is_finished for w in app.workers):
            assert time.monotonic() < deadline, "the live reply's loop ended with it"
            await asyncio.sleep(0.01)
        await pilot.pause(0.1)
        assert app.is_running
        await reply.finish(reply.text)  # a late end of a removed reply is harmless too
        assert not reply.streaming
