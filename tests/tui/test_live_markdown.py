"""The rows of a streamed reply (tui/widgets/blocks/live_markdown.py): the finished reply is drawn exactly as the
whole text would be, however the text arrived, and a frame's work does not grow with the reply.

The work is counted in characters parsed and rendered (a count, not a timing): a frame that went
back to parsing or rendering the whole reply would parse its length every frame.
"""

from __future__ import annotations

import random

import pytest

from myrm_tui.tui.constants import LIVE_BLOCK_CHARS, LIVE_FENCE_CHARS
from myrm_tui.tui.widgets.blocks.live_markdown import LiveMarkdown
from myrm_tui.tui.widgets.blocks.stored_reply import render_reply, reply_palette

PALETTE = reply_palette({"background": "#101010", "warning": "#ffaa00", "primary": "#0088ff"})
WIDTH = 96


def section(i: int) -> str:
    return (
        f"## Step {i}: tidy `module_{i}.py`\n\nThe function `load_{i}` reads the file **twice**.\n\n"
        f"- keep `load_{i}`\n- move parsing into `_parse_{i}`\n\n"
        f"```python\ndef load_{i}(path):\n    return path.read_text()\n```\n\n"
        f"| case | before | after |\n|---|---|---|\n| cold | {i + 12} ms | {i + 3} ms |\n\n"
    )


EDGES = (
    "\n\n# Title\n\npara one\nstill\n\n```python\ndef f():\n    return '''x\n\ny'''\n```\n\n- a\n- b\n\n"
    "  more b\n\n1. one\n2. two\n\n> quote\nlazy\n\n---\n\nafter the rule\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "Setext\n===\n\n<div>\nhtml\n</div>\n\n~~~\ntilde\n~~~~\n\n````\n```\nnested\n```\n````\n\n"
    "![image](x.png) text\n\nend **bold** and `code`\n"
)
LONG_FENCE = "Intro.\n\n```python\n" + "".join(f"x_{i} = {i} * 2  # note {i}\n" for i in range(600)) + "```\n\nAfter.\n"
OPEN_FENCE = "Intro.\n\n```python\n" + "".join(f"x_{i} = {i}\n" for i in range(700))
LONG_LINE = "Start " + " ".join(f"word{i}" for i in range(5000)) + ".\n\nNext paragraph.\n"
LONG_LIST = "".join(f"{i + 1}. item {i} with a few words\n" for i in range(600)) + "\nDone.\n"
ONE_WORD = "x" * 9000 + "\n"
DOCUMENTS = {
    "sections": "".join(section(i) for i in range(12)),
    "edges": EDGES,
    "long fence": LONG_FENCE,
    "open fence": OPEN_FENCE,
    "long line": LONG_LINE,
    "long list": LONG_LIST,
    "one long word": ONE_WORD,
}


def plain(rows) -> list[str]:
    return ["".join(segment.text for segment in row) for row in rows]


def stream(text: str, chunks: list[int], width: int = WIDTH):
    """Feed `text` in `chunks` (cycled) like the widget does; returns the renderer, the rows as the
    widget would hold them after the final frame, and each frame's (new chars, parsed, rendered, keep,
    rows before)."""
    live = LiveMarkdown(PALETTE)
    rows: list = []
    frames = []
    position = index = 0
    while position < len(text):
        size = chunks[index % len(chunks)]
        index += 1
        piece = text[position : position + size]
        position += size
        parsed, rendered, before = live.parsed_chars, live.rendered_chars, len(rows)
        frame = live.advance(piece, width)
        frames.append((len(piece), live.parsed_chars - parsed, live.rendered_chars - rendered, frame.keep, before))
        del rows[frame.keep :]
        rows.extend(frame.rows)
        assert plain(rows) == plain(live.rows())
    frame = live.advance("", width, final=True)
    del rows[frame.keep :]
    rows.extend(frame.rows)
    return live, rows, frames


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_a_streamed_reply_ends_drawn_as_its_whole_text(name):
    text = DOCUMENTS[name]
    whole = render_reply(text, WIDTH, PALETTE)
    for seed in range(2 if len(text) < 8_000 else 1):
        sizes = random.Random(seed).choices([1, 7, 60, 300, 900] if len(text) < 8_000 else [60, 300, 900], k=50)
        _, rows, _ = stream(text, sizes)
        assert plain(rows) == plain(whole), f"{name}, chunking {seed}"
        assert rows == whole  # the styles too, segment for segment


def test_a_new_width_renders_every_row_for_it():
    text = DOCUMENTS["sections"] + LONG_LINE
    live = LiveMarkdown(PALETTE)
    live.advance(text[:3000], 80)
    frame = live.advance(text[3000:], 50)
    assert frame.keep == 0
    live.advance("", 50, final=True)
    assert plain(live.rows()) == plain(render_reply(text, 50, PALETTE))


@pytest.mark.parametrize("name", ["sections", "long fence", "open fence", "long line", "long list"])
def test_a_frame_parses_and_renders_the_live_block_not_the_reply(name):
    """Each frame's work stays under a bound set by the live block and the new text, however long
    the reply already is; the rows kept from the frame before are all but the live block's."""
    text = DOCUMENTS[name] * (5 if name == "sections" else 1)
    chunk = 300
    _, rows, frames = stream(text, [chunk])
    assert len(rows) > 400  # a frame that re-sent them all would be caught below
    bound = 3 * (LIVE_BLOCK_CHARS + chunk)
    # The frame that finishes a block drawn in pieces renders it once whole and sends its rows
    # again: one such frame per long block (these documents have at most one).
    heavy = [f for f in frames if f[1] > bound or f[2] > bound]
    assert len(heavy) <= 1, f"{len(heavy)} frames parsed or rendered more than {bound} characters"
    # the live block's rows are sent again each frame: up to LIVE_BLOCK_CHARS of short code lines
    resent = [f for f in frames if f[3] < f[4] - LIVE_BLOCK_CHARS // 8]
    assert len(resent) <= 1, f"{len(resent)} frames sent again rows of blocks finished before"
    late = frames[len(frames) // 2 :]
    assert sum(f[1] for f in late) <= 3 * sum(f[0] for f in late) + len(late) * 2 * LIVE_BLOCK_CHARS


def test_finished_blocks_are_parsed_once():
    """Over a whole reply of many small blocks, each character is parsed a bounded number of times
    (the live block again each frame; a finished block once more to be rendered at most)."""
    text = "".join(section(i) for i in range(60))  # 300 blocks
    live, _, frames = stream(text, [200])
    assert live.blocks >= 290
    assert live.parsed_chars <= 6 * len(text)
    assert live.rendered_chars <= 6 * len(text)


def test_a_live_code_fence_is_rendered_in_short_pieces():
    """Code costs ~30 times more per character to render than prose (Pygments), and the thread that
    renders holds the GIL the UI's frames need: a frame renders a few hundred characters of a long
    fence, not the LIVE_BLOCK_CHARS a paragraph may take (one frame renders it whole, at its end)."""
    chunk = 100
    _, rows, frames = stream(LONG_FENCE, [chunk])
    bound = 2 * (LIVE_FENCE_CHARS + chunk)
    assert bound < LIVE_BLOCK_CHARS
    heavy = [f for f in frames if f[2] > bound]
    assert len(heavy) <= 1, f"{len(heavy)} frames rendered more than {bound} characters of the fence"
    assert plain(rows) == plain(render_reply(LONG_FENCE, WIDTH, PALETTE))
