"""A long reply streamed through the real app repaints the transcript's scroll bar only when its
thumb moves on screen: once the reply is many windows tall the thumb is one cell at the bottom, and
frames that grow the reply leave the bar as it is (widgets/steady_scrollbar.py). Counts, not timings.
"""

from __future__ import annotations

from rich.console import RenderableType
from textual.scrollbar import ScrollBar

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.transcript import Transcript
from tests.tui.tui_pilot_helpers import scripted_settings, type_text, wait_until

# A short terminal: the thumb reaches its one-cell minimum once the transcript is a few windows tall.
SMALL = (80, 14)
# How many windows tall the transcript must be before a repaint would show nothing new.
TALL = 10


def reply_text() -> str:
    return "".join(
        f"## Step {i}\n\nThe function `load_{i}` reads the file twice.\n\n- keep `load_{i}`\n- move parsing\n\n"
        for i in range(40)
    )


async def test_a_growing_reply_leaves_a_settled_scroll_bar_alone(workspace, store, script, monkeypatch):
    painted: list[tuple[int, int]] = []  # (virtual height, window) of each paint of the transcript's bar
    render = ScrollBar.render

    def counted(self: ScrollBar) -> RenderableType:
        if isinstance(self.parent, Transcript) and self.vertical:
            painted.append((self.window_virtual_size, self.window_size))
        return render(self)

    monkeypatch.setattr(ScrollBar, "render", counted)
    model = script({"text": reply_text(), "chunk_size": 40, "delay_ms": 30})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SMALL) as pilot:
        screen = app.chat_screen
        transcript = screen.query_one(Transcript)
        await type_text(pilot, "explain")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.query(AssistantMessage), what="reply widget")
        reply = screen.query_one(AssistantMessage)
        heights: set[int] = set()  # transcript heights seen while tall and streaming
        while reply.streaming:
            window = transcript.scrollable_content_region.height
            if transcript.virtual_size.height >= TALL * window:
                heights.add(transcript.virtual_size.height)
            await pilot.pause(0.02)
        await wait_until(pilot, lambda: not screen.turn_running, what="turn end")

    tall = [(virtual, window) for virtual, window in painted if window and virtual >= TALL * window]
    assert len(heights) >= 5, f"the reply grew over several frames once tall ({sorted(heights)})"
    assert len(tall) <= 2, f"the settled scroll bar was painted {len(tall)} times while the reply grew"
