"""A key typed while a reply streams reaches the screen before the reply's next rows do
(tui/input_priority.py): its screen update paints the prompt, not a layout of the transcript
behind a render thread that holds the GIL.

Order, not timing: the screen's updates are held (`App.batch_update`) while the key is handled and
more text arrives for the reply, so which of the two the screen gets first does not depend on how
fast this box is. Without the hold in `LiveReply` the reply renders and hands over its rows while
the key waits, and the screen takes them first.
"""

from __future__ import annotations

import asyncio

import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.strip import Strip

from myrm_tui.tui import input_priority as priority
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.input_priority import InputPriority
from myrm_tui.tui.widgets.blocks.live_markdown import Frame
from myrm_tui.tui.widgets.blocks.live_reply import LiveReply
from myrm_tui.tui.widgets.prompt import PromptArea
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, type_text, wait_until


class LoggedPrompt(PromptArea):
    def render_lines(self, crop: Region) -> list[Strip]:
        if self.text and isinstance(self.app, Streaming):
            self.app.seen.append("key painted")
        return super().render_lines(crop)


class LoggedReply(LiveReply):
    def _apply(self, frame: Frame) -> None:
        if frame.rows and isinstance(self.app, Streaming):
            self.app.seen.append("reply rows")
        super()._apply(frame)


class Streaming(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []
        self.priority = priority.InputPriority()  # as the chat screen does: one, shared

    def compose(self) -> ComposeResult:
        yield LoggedReply(input_priority=self.priority)
        yield LoggedPrompt(input_priority=self.priority)


async def test_a_key_typed_while_a_reply_streams_is_painted_before_the_replys_next_rows(monkeypatch) -> None:
    # the order is what is tested, not the bound: no frame may give up waiting while the screen is held
    monkeypatch.setattr(priority, "INPUT_HOLD_MAX_S", 60.0)
    app = Streaming()
    async with app.run_test(size=(80, 24)) as pilot:
        reply, prompt = app.query_one(LoggedReply), app.query_one(LoggedPrompt)
        prompt.focus()
        reply.append("The first paragraph of the reply.\n\n")
        await wait_until(pilot, lambda: "reply rows" in app.seen, what="the reply's first frame")
        await pilot.pause(0.2)  # its layout and any frame a resize asked for
        app.seen.clear()
        with app.batch_update():
            key = events.Key("x", "x")
            key.set_sender(app)
            app.post_message(key)  # as the terminal driver does
            while prompt.text != "x":
                await asyncio.sleep(0.005)
            reply.append("A second paragraph, streamed while the key waits for the screen.\n\n")
            await asyncio.sleep(0.3)  # ample for a render of one paragraph: the reply had its chance
        await wait_until(pilot, lambda: "second paragraph" in reply.source, what="the second paragraph")
        await wait_until(pilot, lambda: "reply rows" in app.seen, what="the reply's next rows")
        assert app.seen[0] == "key painted", app.seen
        assert app.priority.holds >= 1


async def test_a_key_that_is_never_painted_holds_a_frame_back_only_for_the_bound(monkeypatch) -> None:
    # a key another widget took, or one under a modal screen: the stream goes on after the bound
    monkeypatch.setattr(priority, "INPUT_HOLD_MAX_S", 0.01)
    gate = priority.InputPriority()
    gate.key_arrived()
    assert gate.pending
    await asyncio.wait_for(gate.yield_to_input(), 5.0)
    assert not gate.pending and gate.holds == 1
    await gate.yield_to_input()  # nothing pending: no hold
    assert gate.holds == 1


@pytest.mark.slow  # a MyrmApp and a turn: ~6 s on a loaded 2-core box
async def test_the_chats_streaming_reply_waits_on_the_keys_its_prompt_reports(
    workspace, store, script, monkeypatch
) -> None:
    # the chat screen owns the one gate: its prompt reports keys to it, each reply of a turn waits on it
    gates: list[InputPriority] = []
    append = LiveReply.append

    def seen(self: LiveReply, delta: str) -> None:
        gates.append(self.input_priority)
        append(self, delta)

    monkeypatch.setattr(LiveReply, "append", seen)
    app = MyrmApp(workspace, scripted_settings(script({"text": "Done."})), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.turns_ended == 1, what="the turn's end")
        assert gates, "no reply streamed"
        assert all(gate is screen.input_priority for gate in gates)
        assert screen.query_one(PromptArea).input_priority is screen.input_priority
