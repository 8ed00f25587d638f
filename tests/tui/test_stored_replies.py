"""Stored replies are one widget of pre-rendered lines (widgets/stored_reply.py): they must show
the same text as the Markdown widget, keep the view in place when "load earlier" mounts a batch
above it, arrive pre-rendered for the page-up, and turn into the full Markdown widget on a click."""

from __future__ import annotations

import re
from collections.abc import Iterable

from textual.app import App, ComposeResult
from textual.widget import Widget
from textual.widgets import Markdown

from myrm_tui.tui.app import MyrmApp
from myrm_tui.tui.constants import LOAD_EARLIER_TURNS, RESUME_RENDERED_REPLIES, TURN_WINDOW
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.stored_reply import StoredReply
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from myrm_tui.tui.widgets.transcript import LoadEarlier
from tests.tui.tui_pilot_helpers import SIZE, scripted_settings, wait_until

SAMPLES = [
    "The failing test was `test_parse`.\n\n```python\ndef parse(text):\n    return text.splitlines()\n```\n\nDone.",
    "# Title\n\nSome **bold** and *italic* words, a [link](https://example.com).\n\n"
    "## Part\n\n- one\n- two\n  - nested\n",
    "1. first\n2. second\n\n> quoted line\n\n---\n\n### Small heading\n\nlast paragraph",
    "| case | before | after |\n|---|---|---|\n| cold | 12 ms | 3 ms |\n| warm | 5 ms | 1 ms |\n",
]


def stored_replies(markdowns: Iterable[Widget]) -> list[StoredReply]:
    """Replies' markdown widgets, each a StoredReply (the kind that renders its lines ahead)."""
    replies = list(markdowns)
    stored = [r for r in replies if isinstance(r, StoredReply)]
    assert len(stored) == len(replies), replies
    return stored


def reply_text(index: int) -> str:
    """~15 rows of reply: tall enough that a batch of them pushes the view."""
    return f"## Answer {index}\n\n" + "\n\n".join(f"Paragraph {index}.{p}: some words here." for p in range(6))


def seed(store, model: str, turns: int) -> str:
    session = store.create_session(model, "long")
    for i in range(turns):
        store.append_message(session.id, {"role": "user", "content": f"question {i}"}, 3)
        store.append_message(session.id, {"role": "assistant", "content": reply_text(i)}, 30)
    return session.id


def words(text: str) -> list[str]:
    """The words a reader sees, in order: glyphs (bullets, rules, table borders) and the
    punctuation around list numbers differ between the two renderers."""
    return re.findall(r"[A-Za-z_][A-Za-z0-9_]+", text)


def drawn(rows: list[str], widget) -> str:
    region = widget.region
    return "\n".join(rows[y][region.x : region.right] for y in range(region.y, region.bottom))


class OneAboveTheOther(App[None]):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield AssistantMessage(self.text)
        yield Markdown(self.text)


async def test_stored_reply_shows_the_words_the_markdown_widget_shows():
    for sample in SAMPLES:
        app = OneAboveTheOther(sample)
        async with app.run_test(size=(90, 100)) as pilot:
            await pilot.pause(0.2)
            stored = app.query_one(StoredReply)
            full = app.query_one(Markdown)
            assert stored.size.width > 40
            update = app.screen._compositor.render_full_update()  # what the terminal would show
            rows = ["".join(segment.text for segment in row) for row in update.strips]

            assert words(drawn(rows, stored)) == words(drawn(rows, full)), sample


async def test_load_earlier_keeps_the_view_in_place_and_mounts_prerendered_replies(workspace, store, script):
    model = script({"text": "unused"})
    total = TURN_WINDOW + 3 * LOAD_EARLIER_TURNS
    sid = seed(store, model, total)
    app = MyrmApp(workspace, scripted_settings(model), session_id=sid, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        transcript = screen.transcript
        for loaded in range(1, 4):
            await wait_until(pilot, lambda: transcript._next is not None, what="next batch built")
            assert transcript._next is not None
            ready = stored_replies(w.markdown for w in transcript._next.widgets if isinstance(w, AssistantMessage))

            def rendered(r: list[StoredReply] = ready) -> bool:
                return all(x._lines for x in r)

            await wait_until(pilot, rendered, what="next batch rendered")
            transcript.scroll_to(y=transcript.size.height, animate=False)
            await pilot.pause(0.1)
            anchor = screen.query(UserMessage)[0]  # the oldest mounted turn, one page below the top
            y_before = anchor.region.y
            transcript.scroll_page_up(animate=False)

            def batch_mounted(n: int = loaded) -> bool:
                return len(screen.query(UserMessage)) == TURN_WINDOW + n * LOAD_EARLIER_TURNS

            await wait_until(pilot, batch_mounted, what=f"batch {loaded}")
            await pilot.pause(0.1)
            # the page-up moved the view up by one page, and the batch above did not move it further
            assert anchor.region.y == y_before + transcript.size.height
            assert transcript.scroll_y > 0
            for reply in ready:  # mounted with the lines rendered ahead, at the width they got
                assert list(reply._lines) == [reply.content_size.width]
        assert [u.text for u in screen.query(UserMessage)][0] == "question 0"
        assert not screen.query(LoadEarlier)


async def test_click_swaps_in_the_full_markdown_widget(workspace, store, script):
    model = script({"text": "unused"})
    sid = seed(store, model, 2)
    app = MyrmApp(workspace, scripted_settings(model), session_id=sid, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        await wait_until(pilot, screen.ready.is_set, what="warm-up")  # nothing moves the reply after it
        await pilot.pause(0.2)
        message = screen.query(AssistantMessage).last()
        stored = message.markdown
        assert isinstance(stored, StoredReply)
        height = message.region.height
        await pilot.click(stored, offset=(2, 1))
        await wait_until(pilot, lambda: isinstance(message.markdown, Markdown), what="swap")
        await wait_until(pilot, lambda: not stored.is_attached, what="stored view removed")
        assert message.markdown.source == stored.source == reply_text(1)
        await pilot.pause(0.1)
        assert abs(message.region.height - height) <= 2  # the same reply, near enough the same rows


async def test_resume_renders_older_replies_after_the_first_paint_at_their_true_height(workspace, store, script):
    model = script({"text": "unused"})
    sid = seed(store, model, RESUME_RENDERED_REPLIES + 6)
    app = MyrmApp(workspace, scripted_settings(model), session_id=sid, store=store, watch_themes=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.chat_screen
        replies = stored_replies(m.markdown for m in screen.query(AssistantMessage))
        assert all(isinstance(r, StoredReply) for r in replies)
        await wait_until(pilot, lambda: all(r._lines for r in replies), what="older replies rendered")
        await pilot.pause(0.2)
        for reply in replies:  # laid out at the rendered height, not the estimate
            assert reply.size.height == len(reply._lines[reply.size.width])
        assert screen.transcript.following  # the view stayed at the newest reply
