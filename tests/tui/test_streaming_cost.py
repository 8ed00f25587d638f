"""A long reply streamed through the real app (scripted model, `Agent.turn` as the chat drives it)
costs the same per chunk at its end as at its start: nothing is mounted into the reply per chunk,
a frame parses and renders the block still growing (not the reply so far), and the rows of the
finished blocks stay as they were. Counts, not timings: a streaming path that went back to
re-rendering the whole reply per chunk, or to mounting widgets per block, fails here on any box.
"""

from __future__ import annotations

import pytest

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.constants import LIVE_BLOCK_CHARS
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.live_markdown import LiveMarkdown
from myrm_tui.tui.widgets.blocks.stored_reply import StoredReply
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, type_text, wait_until

# 60 sections of 5 top-level blocks (heading, prose, list, fence, table): a 300-block reply.
SECTIONS = 60


def long_reply() -> str:
    return "".join(
        f"## Step {i}: tidy `module_{i}.py`\n\nThe function `load_{i}` reads the file **twice**; "
        f"caching the parsed result keeps the second call cheap.\n\n"
        f"- keep `load_{i}`\n- move parsing into `_parse_{i}`\n\n"
        f"```python\ndef load_{i}(path):\n    return _parse_{i}(path.read_text())\n```\n\n"
        f"| case | before | after |\n|---|---|---|\n| cold | {i + 12} ms | {i + 3} ms |\n\n"
        for i in range(SECTIONS)
    )


@pytest.mark.slow
async def test_a_300_block_reply_costs_the_same_per_chunk_at_its_end(workspace, store, script, monkeypatch):
    reply_text = long_reply()
    # (new chars, parsed, rendered, rows kept, rows before) of each frame at the width of the one before
    frames: list[tuple[int, int, int, int, int]] = []
    widths: list[int] = []
    advance = LiveMarkdown.advance

    def counted(self, text, width, *, final=False):
        parsed, rendered, before = self.parsed_chars, self.rendered_chars, len(self.rows())
        frame = advance(self, text, width, final=final)
        if widths and widths[-1] == width:  # a new width (the scrollbar came) renders it all, once
            frames.append((len(text), self.parsed_chars - parsed, self.rendered_chars - rendered, frame.keep, before))
        widths.append(width)
        return frame

    monkeypatch.setattr(LiveMarkdown, "advance", counted)
    # 3,000 characters a second: a frame renders what arrived since the one before, so on a box
    # too loaded to render 6,000 a second the frames grew until only two or three were left
    model = script({"text": reply_text, "chunk_size": 120, "delay_ms": 40})
    app = MyrmApp(workspace, scripted_settings(model), store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await type_text(pilot, "explain")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.query(AssistantMessage), what="reply widget")
        reply = screen.query_one(AssistantMessage)
        live = reply.markdown
        mounted: set[int] = set()
        grew = 0  # widgets that appeared inside the reply while it streamed
        while reply.streaming and reply.markdown is live:  # not the finished reply `finish` mounts
            inside = {id(widget) for widget in reply.walk_children()}
            if mounted:
                grew += len(inside - mounted)
            mounted |= inside
            await pilot.pause(0.02)
        # The turn can end while `finish` still mounts the finished reply (CI, under load, saw
        # the live rows still there): `streaming` goes false once the final render is in place.
        await wait_until(pilot, lambda: not screen.turn_running and not reply.streaming, what="turn end")
        assert reply.text == reply_text
        assert isinstance(reply.markdown, StoredReply) and reply.markdown.source == reply_text
        assert live not in reply.children, "the live rows gave way to the finished reply"

    assert grew == 0, f"{grew} widgets were mounted inside the reply while it streamed"
    assert len(frames) >= 5, "the reply streamed over several frames"
    assert len(set(widths)) <= 2
    for new, parsed, rendered, kept, before in frames[:-1]:
        # the live block (under LIVE_BLOCK_CHARS here) and the new text, each at most a few times
        bound = 3 * (LIVE_BLOCK_CHARS + new)
        assert parsed <= bound and rendered <= bound, f"a frame parsed {parsed} and rendered {rendered} characters"
        assert kept >= before - 60, "a frame drew again rows of blocks that had finished"
    total_rows = frames[-1][4]
    assert total_rows > 500, "long enough that re-rendering it all would break the bounds above"
