"""SVG snapshots of a reply while it streams (rows drawn by tui/widgets/blocks/live_reply.py) and once it is
finished (the same rows, handed to a StoredReply): headings, prose with inline code, a list, a
highlighted fence, a table, and a control character shown as its escape.

Deterministic: the text is appended at once and the picture is taken once a frame drew all of it.
Update after an intended visual change with `pytest tests/tui/test_live_reply_snapshots.py
--snapshot-update` and review the SVGs.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.live_reply import LiveReply
from myrm_tui.tui.widgets.blocks.stored_reply import StoredReply
from tests.tui.tui_pilot_helpers import wait_until

SIZE = (90, 44)
REPLY = (
    "## Step 1: tidy `module.py`\n\nThe function `load` reads the file **twice**; caching the parsed "
    "result keeps the second call cheap. The log held \x1b[2J, shown as text.\n\n"
    "- keep the public name `load`\n- move parsing into `_parse`\n\n"
    "```python\ndef load(path):\n    text = path.read_text()\n    return _parse(text)\n```\n\n"
    "| case | before | after |\n|---|---|---|\n| cold | 12 ms | 3 ms |\n| warm | 5 ms | 1 ms |\n\n"
    "All 12 tests pass now, and the second call costs a tenth of the first one, as the table shows.\n"
)


class HostApp(App[None]):
    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="host")


async def _streaming(pilot) -> AssistantMessage:
    reply = AssistantMessage(streaming=True)
    await pilot.app.query_one("#host", VerticalScroll).mount(reply)
    reply.append_text(REPLY)
    live = reply.markdown
    assert isinstance(live, LiveReply)
    await wait_until(pilot, lambda: live.source == reply.text.replace("\x1b", "\\x1b"), what="a frame drew it all")
    await pilot.pause(0.1)
    return reply


def test_a_streaming_reply(snap_compare):
    async def run_before(pilot) -> None:
        reply = await _streaming(pilot)
        assert reply.streaming

    assert snap_compare(HostApp(), terminal_size=SIZE, run_before=run_before)


def test_a_finished_long_reply(snap_compare):
    async def run_before(pilot) -> None:
        reply = await _streaming(pilot)
        reply.append_text("\n" + "More words to read after the table. " * 30 + "\n")  # past FINISHED_MARKDOWN_CHARS
        await reply.finish()
        assert isinstance(reply.markdown, StoredReply)
        await pilot.pause(0.1)

    assert snap_compare(HostApp(), terminal_size=SIZE, run_before=run_before)
