"""A model reply: streamed Markdown behind a flush buffer, reasoning folded away.

Deltas arrive far faster than Markdown can re-render (one append per token is O(tokens) layout
passes). They are buffered and written to Textual's MarkdownStream on a short timer that only
runs while the reply is streaming; the finished reply gets one full render so partial-block
parser state (half-open fences, tables) never survives into the final view.
"""

from __future__ import annotations

import asyncio

from markdown_it import MarkdownIt
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.events import Mount
from textual.timer import Timer
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from myrm_tui.agent.reply_figures import ReplyFigures
from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.constants import STREAM_FLUSH_INTERVAL_S, STREAM_SEGMENT_CHARS
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.reply_figures_text import figures_line
from myrm_tui.tui.widgets.stored_reply import StoredReply, palette_of


def _segment_cut(written: str, chunk: str) -> int | None:
    """Where in `chunk` to start a new Markdown segment: after the last blank line once the
    current segment is long enough, and only outside a code fence (a fence split across two
    widgets would render as two broken blocks). None: keep writing to the current one."""
    if len(written) + len(chunk) < STREAM_SEGMENT_CHARS:
        return None
    combined = written + chunk
    position = combined.rfind("\n\n")
    while position >= len(written):
        head = combined[: position + 2]
        fences = sum(1 for line in head.splitlines() if line.lstrip().startswith(("```", "~~~")))
        if fences % 2 == 0:
            return position + 2 - len(written)
        position = combined.rfind("\n\n", 0, position)
    return None


class StoredMarkdown(Markdown):
    """A finished reply's Markdown, built in `compose`, so its blocks mount with the widget.

    Why: Textual's Markdown parses in a thread after it mounts and mounts its blocks later, one
    reply at a time; each of those mounts relayouts the whole transcript again. Loading a batch of
    stored turns ("load earlier", resume) then costs one relayout per reply instead of one per
    batch. A stored reply is short enough to parse on the UI thread (~1 ms for 1,000 characters).
    `update` (a later re-render) is Markdown's own, unchanged.
    """

    def compose(self) -> ComposeResult:
        text = self._initial_markdown or ""
        self._initial_markdown = None
        self._theme = self.app.theme
        self._markdown = text
        parser = MarkdownIt("gfm-like") if self._parser_factory is None else self._parser_factory()
        yield from self._parse_markdown(parser.parse(text))
        lines = text.splitlines()
        self._last_parsed_line = len(lines) - (1 if lines and lines[-1] else 0)

    async def _on_mount(self, event: Mount) -> None:  # type: ignore[override]  # Markdown: async, Widget: not
        """`compose` built the blocks: the handlers further up the class tree are skipped (Textual
        calls one per class): Markdown's would parse and mount them again, and Widget's only shows
        scrollbars, which a Markdown has none of."""
        event.prevent_default()


class AssistantMessage(Vertical):
    DEFAULT_CSS = sibling_css(__file__)

    def __init__(
        self, text: str = "", reasoning: str = "", *, streaming: bool = False, figures: ReplyFigures | None = None
    ) -> None:
        super().__init__()
        self.figures: ReplyFigures | None = None
        self._figures_view = Static("", classes="figures")
        self._figures_view.display = False
        self.text = text
        self.reasoning = reasoning
        self.streaming = streaming
        self._pending: list[str] = []
        self._reasoning_dirty = False
        self._stream: MarkdownStream | None = None
        self._timer: Timer | None = None
        # A finished reply is one widget of pre-rendered lines (stored_reply.py: why); the live one
        # is Textual's Markdown, which can append while streaming.
        self._markdown: Markdown | StoredReply = (
            Markdown("", classes="reply") if streaming else StoredReply(for_terminal(text), classes="reply")
        )
        # A long streamed reply is split into several Markdown widgets at paragraph breaks
        # outside code fences, so each flush lays out only the live tail, not the whole reply.
        # Finished segments are frozen into one widget of lines each (`_freeze`).
        self._segments: list[Markdown | StoredReply] = [self._markdown]
        self._segment_texts: list[str] = [""]
        self._reasoning_view = Static(Content(for_terminal(reasoning)), classes="reasoning-text")
        self._reasoning_box = Collapsible(self._reasoning_view, title="thinking", collapsed=True, classes="reasoning")
        self._reasoning_box.display = bool(reasoning)
        if streaming and text:
            self._pending.append(text)
        if figures is not None:
            self.set_figures(figures)

    def compose(self) -> ComposeResult:
        if self.streaming or self.reasoning:  # a stored reply without reasoning: 4 widgets fewer
            yield self._reasoning_box
        yield self._markdown
        if self.streaming or self.figures is not None:  # a stored reply without figures: 1 widget fewer
            yield self._figures_view

    def set_figures(self, figures: ReplyFigures) -> None:
        """The quiet line under the reply: tokens, cached share, cost, time, speed (what is known)."""
        self.figures = figures
        line = figures_line(figures)
        self._figures_view.update(Content(line))
        self._figures_view.display = bool(line)
        if self.is_mounted and self._figures_view.parent is None:
            self.mount(self._figures_view)

    @property
    def figures_text(self) -> str:
        return figures_line(self.figures) if self.figures is not None else ""

    @property
    def markdown(self) -> Markdown | StoredReply:
        """What shows the reply's text: both kinds have `source`, the text drawn."""
        return self._markdown

    async def on_stored_reply_activated(self, event: StoredReply.Activated) -> None:
        """A click on a stored reply (or a frozen segment): the full Markdown widget takes its place
        (selection, links)."""
        event.stop()
        stored = event.reply
        if stored.parent is not self or not stored.is_mounted:
            return
        full = StoredMarkdown(stored.source, classes="reply")
        self._replace(stored, full)
        with self.app.batch_update():
            await self.mount(full, after=stored)
            await stored.remove()

    def _replace(self, old: Markdown | StoredReply, new: Markdown | StoredReply) -> None:
        if old in self._segments:
            self._segments[self._segments.index(old)] = new
        if self._markdown is old:
            self._markdown = new

    def on_mount(self) -> None:
        if self.streaming and (self._pending or self._reasoning_dirty):
            self._start_timer()

    # streaming -----------------------------------------------------------------------------

    def append_text(self, delta: str) -> None:
        if not delta:
            return
        self.text += delta
        self._pending.append(delta)
        self._start_timer()

    def append_reasoning(self, delta: str) -> None:
        if not delta:
            return
        self.reasoning += delta
        self._reasoning_dirty = True
        self._start_timer()

    def _start_timer(self) -> None:
        if self._timer is None and self.streaming and self.is_mounted:
            self._timer = self.set_interval(STREAM_FLUSH_INTERVAL_S, self.flush)

    async def flush(self) -> None:
        """Write what accumulated since the last flush (one Markdown append at most)."""
        if self._reasoning_dirty:
            self._reasoning_dirty = False
            self._reasoning_box.display = True
            self._reasoning_view.update(Content(for_terminal(self.reasoning)))
        if self._pending:
            chunk = "".join(self._pending)
            self._pending.clear()
            cut = _segment_cut(self._segment_texts[-1], chunk)
            if cut is not None:
                await self._write(chunk[:cut])
                await self._new_segment()
                chunk = chunk[cut:]
            if chunk:
                await self._write(chunk)

    async def _write(self, chunk: str) -> None:
        if self._stream is None:
            tail = self._segments[-1]
            assert isinstance(tail, Markdown)  # only finished segments are frozen
            self._stream = Markdown.get_stream(tail)
        self._segment_texts[-1] += chunk
        # Model text is data: control characters are drawn as escapes (terminal_text), chunk
        # by chunk; the raw text stays in self.text and the store.
        await self._stream.write(for_terminal(chunk))

    async def _new_segment(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        done = self._segments[-1]
        segment = Markdown("", classes="reply")
        await self.mount(segment, after=done)  # the figures line stays last
        self._segments.append(segment)
        self._segment_texts.append("")
        if isinstance(done, Markdown):
            self.run_worker(self._freeze(done, self._segment_texts[-2]), group="freeze")

    async def _freeze(self, done: Markdown, text: str) -> None:
        """A finished segment becomes one widget of pre-rendered lines (stored_reply.py: why), its
        lines rendered in a thread: every later frame of the stream then lays out the live tail and
        a few line widgets instead of every block the reply has had so far."""
        frozen = StoredReply(for_terminal(text), classes="reply")
        width = done.content_size.width
        if width > 0:  # not laid out yet: the lines are rendered on first paint instead
            await asyncio.to_thread(frozen.prepare, width, palette_of(self.app))
        if done not in self._segments or not done.is_mounted:
            return  # finish() replaced the segments meanwhile
        self._replace(done, frozen)
        with self.app.batch_update():
            await self.mount(frozen, after=done)
            await done.remove()

    async def finish(self, final_text: str | None = None) -> None:
        """End streaming: stop the timer, drain the stream, render the whole reply once.

        `final_text` is the stored reply; when given it wins over the accumulated deltas (they
        are the same unless the provider did not stream).
        """
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._pending.clear()
        if final_text is not None:
            self.text = final_text
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if self._reasoning_dirty or self.reasoning:
            self._reasoning_dirty = False
            self._reasoning_box.display = bool(self.reasoning)
            self._reasoning_view.update(Content(for_terminal(self.reasoning)))
        if len(self._segments) > 1 and "".join(self._segment_texts) == self.text:
            for segment, text in zip(self._segments, self._segment_texts, strict=True):
                if isinstance(segment, Markdown):  # a frozen one was rendered from its final text
                    await segment.update(for_terminal(text))
        else:
            head = self._segments[0]
            live = head if isinstance(head, Markdown) else Markdown("", classes="reply")
            if live is not head:
                await self.mount(live, before=head)
            for segment in self._segments:
                if segment is not live:
                    await segment.remove()
            self._segments, self._segment_texts, self._markdown = [live], [self.text], live
            await live.update(for_terminal(self.text))
        self.streaming = False  # only now is the final render in place

    def mark_interrupted(self) -> None:
        self.add_class("-interrupted")
