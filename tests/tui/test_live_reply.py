"""A reply while it streams (tui/widgets/blocks/live_reply.py) and what it becomes at its end, driven the
way the user drives it: the chat screen running `Agent.turn` with a scripted model.

What each test guards: the rows shown mid-stream and at the end are those of the reply's whole
text (made safe for the terminal: control characters as visible escapes, CR LF as a newline even
when a frame boundary splits the pair); an interrupted reply keeps what streamed; a new width
renders every row for it; the reasoning box, folded, costs nothing and, unfolded, follows the
stream; a click on a finished reply still opens the full Markdown widget.
"""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Collapsible, Markdown

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.constants import FINISHED_MARKDOWN_CHARS
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.live_reply import LiveReply
from myrm_tui.tui.widgets.blocks.stored_reply import StoredReply, palette_of, render_reply
from tests.escape_attacks import ATTACKS, inert
from tests.tui.tui_pilot_helpers import SIZE, screen_text, scripted_settings, type_text, wait_until

PAYLOAD = "".join(ATTACKS.values())
OSC52 = "\\x1b]52;c;"  # how the clipboard write must look on screen


def section(i: int) -> str:
    return (
        f"## Step {i}: tidy `module_{i}.py`\r\n\r\nThe function `load_{i}` reads the file **twice**.\r\n\r\n"
        f"- keep `load_{i}`\n- move parsing into `_parse_{i}`\n\n"
        f"```python\ndef load_{i}(path):\n    return path.read_text()\n```\n\n"
        f"| case | before | after |\n|---|---|---|\n| cold | {i + 12} ms | {i + 3} ms |\n\n"
    )


def plain(rows) -> list[str]:
    return ["".join(segment.text for segment in row) for row in rows]


def finished_rows(reply: AssistantMessage) -> list[str]:
    stored = reply.markdown
    assert isinstance(stored, StoredReply)
    width = stored.content_size.width
    return plain(stored._render_for(width))


def whole_rows(app: App, text: str, width: int) -> list[str]:
    return plain(render_reply(for_terminal(text), width, palette_of(app)))


async def send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


@pytest.mark.slow
async def test_a_long_reply_shows_escapes_while_it_streams_and_ends_as_its_whole_text(workspace, store, script):
    text = "".join(section(i) for i in range(4)) + f"The notes say {PAYLOAD} done.\n\n" + section(4) + section(5)
    assert len(text) > FINISHED_MARKDOWN_CHARS  # ends as rows, not as the Markdown widget
    # Slow enough that the reply is still streaming when the pilot first looks, even on a loaded box.
    model = script({"text": text, "chunk_size": 7, "delay_ms": 12})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await send(pilot, "explain")
        await wait_until(pilot, lambda: screen.query(AssistantMessage), what="reply widget")
        reply = screen.query_one(AssistantMessage)
        live = reply.markdown
        assert isinstance(live, LiveReply) or not reply.streaming
        await wait_until(pilot, lambda: OSC52 in live.source or not reply.streaming, what="the payload streamed")
        await pilot.pause(0.1)
        if reply.streaming:  # mid-stream, the screen holds the escapes, never the bytes
            shown = screen_text(app)
            assert inert(shown), [c for c in shown if not inert(c)][:10]
        await wait_until(pilot, lambda: not screen.turn_running and not reply.streaming, what="end of the reply")
        await pilot.pause(0.1)
        assert reply.text == text  # the store's text, byte for byte
        assert isinstance(reply.markdown, StoredReply) and reply.markdown.source == for_terminal(text)
        assert "\\r" not in reply.markdown.source  # CR LF is a line end, not a visible \r
        # the rows the stream built are the rows of the whole text: nothing lost or doubled
        assert finished_rows(reply) == whole_rows(app, text, reply.markdown.content_size.width)
        assert any(OSC52 in row for row in finished_rows(reply))
        assert inert(screen_text(app))

        stored = reply.markdown  # a click opens the full Markdown widget, as on a stored reply
        await pilot.click(stored, offset=(2, stored.region.height - 3))  # its end is on screen
        await wait_until(pilot, lambda: isinstance(reply.markdown, Markdown), what="the Markdown widget")
        assert reply.markdown.source == for_terminal(text)
        await wait_until(pilot, lambda: not stored.is_attached, what="the rows removed")


async def test_an_interrupted_reply_keeps_what_streamed(workspace, store, script):
    text = "".join(section(i) for i in range(40))
    model = script({"text": text, "chunk_size": 40, "delay_ms": 10})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await send(pilot, "explain")
        await wait_until(pilot, lambda: screen.query(AssistantMessage), what="reply widget")
        reply = screen.query_one(AssistantMessage)
        await wait_until(pilot, lambda: len(reply.text) > 2 * FINISHED_MARKDOWN_CHARS, what="a long part streamed")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.turn_running and not reply.streaming, what="interrupt")
        await pilot.pause(0.1)
        assert reply.has_class("-interrupted")
        seen = reply.text
        assert 2 * FINISHED_MARKDOWN_CHARS < len(seen) < len(text) and text.startswith(seen)
        assert not reply.query(LiveReply), "the live rows gave way to the finished reply"
        assert isinstance(reply.markdown, StoredReply) and reply.markdown.source == for_terminal(seen)
        assert finished_rows(reply) == whole_rows(app, seen, reply.markdown.content_size.width)
        assert not [w for w in app.workers if w.group == "live-reply" and not w.is_finished]


async def test_reasoning_folded_is_not_drawn_and_unfolded_follows_the_stream(workspace, store, script):
    reasoning = " ".join(f"thought{n}" for n in range(120))
    model = script({"reasoning": reasoning, "text": "The answer is 4.", "chunk_size": 12, "delay_ms": 25})
    app = MyrmApp(workspace, scripted_settings(model), store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await send(pilot, "think")
        await wait_until(pilot, lambda: screen.query(AssistantMessage), what="reply widget")
        reply = screen.query_one(AssistantMessage)
        box = reply.query_one(".reasoning", Collapsible)
        view = reply._reasoning_view
        await wait_until(pilot, lambda: box.display and len(reply.reasoning) > 200, what="reasoning streaming")
        assert box.collapsed and str(view.content) == "", "folded, the reasoning is not laid out"
        box.collapsed = False
        await wait_until(pilot, lambda: len(str(view.content)) > 200, what="the unfolded reasoning")
        first = str(view.content)
        assert reasoning.startswith(first)
        await wait_until(pilot, lambda: not reply.streaming, what="end of the reply")
        assert str(view.content) == reasoning and len(reasoning) > len(first)
        assert reply.markdown.source == "The answer is 4."


class HostApp(App[None]):
    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="host")


async def test_a_cr_lf_split_between_frames_is_one_line_end():
    app = HostApp()
    async with app.run_test(size=(100, 30)) as pilot:
        reply = AssistantMessage(streaming=True)
        await app.query_one("#host", VerticalScroll).mount(reply)
        live = reply.markdown
        assert isinstance(live, LiveReply)
        reply.append_text("line one\r")
        await wait_until(pilot, lambda: live.frames >= 1 and live.source == "line one", what="a frame")
        await pilot.pause(0.15)  # a few more frames: the held CR is not shown as "\r" meanwhile
        assert live.source == "line one"
        reply.append_text("\nline two, a lone \r here")
        await wait_until(pilot, lambda: "line two" in live.source, what="the next frame")
        expected = "line one\nline two, a lone " + for_terminal("\r") + " here"
        assert live.source == expected
        await reply.finish()
        assert reply.markdown.source == expected


async def test_a_new_width_mid_stream_renders_every_row_for_it():
    app = HostApp()
    paragraph = " ".join(f"word{n}" for n in range(60)) + "\n\n"
    async with app.run_test(size=(100, 30)) as pilot:
        reply = AssistantMessage(streaming=True)
        await app.query_one("#host", VerticalScroll).mount(reply)
        live = reply.markdown
        assert isinstance(live, LiveReply)
        for _ in range(4):
            reply.append_text(paragraph)
            await pilot.pause(0.06)
        await wait_until(pilot, lambda: live.source == reply.text, what="the paragraphs shown")
        await pilot.resize_terminal(70, 30)
        # the rows follow the new width at once, with no new text to render (the model paused)
        await wait_until(pilot, lambda: live._width == live.content_size.width < 90, what="rows for the new width")
        assert plain(live._rows) == whole_rows(app, reply.text, live._width)
        for _ in range(3):
            reply.append_text(paragraph)
            await pilot.pause(0.06)
        await wait_until(pilot, lambda: live.source == reply.text, what="the paragraphs shown")
        await pilot.pause(0.1)
        width = live.content_size.width
        assert width < 90
        assert plain(live._rows) == whole_rows(app, reply.text, width)
        await reply.finish()
        assert finished_rows(reply) == whole_rows(app, reply.text, reply.markdown.content_size.width)
