"""A model reply: streamed as rows of Markdown, reasoning folded away.

While it streams the text is drawn by a `LiveReply` (widgets/live_reply.py): deltas join a list,
and a frame at a fixed rate renders only the block still growing, in a worker thread, so neither
the chunks nor the keys wait on rendering and a frame costs the same however long the reply is.
At the end the reply becomes what a stored reply is: rows (the live ones, handed on, not rendered
again), or Textual's Markdown widget when it is short (FINISHED_MARKDOWN_CHARS).
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.events import Mount
from textual.timer import Timer
from textual.widgets import Collapsible, Markdown, Static

from myrm_tui.agent.reply_figures import ReplyFigures
from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.constants import FINISHED_MARKDOWN_CHARS, STREAM_FLUSH_INTERVAL_S
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.figures.reply_figures_text import figures_line
from myrm_tui.tui.input_priority import InputPriority
from myrm_tui.tui.widgets.blocks.live_reply import LiveReply
from myrm_tui.tui.widgets.blocks.stored_reply import StoredReply, palette_of
from myrm_tui.tui.widgets.one_pass_layout import OnePassLayout


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


class AssistantMessage(OnePassLayout, Vertical):
    DEFAULT_CSS = sibling_css(__file__)
    # No border, padding or background of its own (assistant_message.tcss): blank rows under its
    # children, not styled cell by cell; a streaming reply resizes it every frame.
    BLANK = True

    def __init__(
        self,
        text: str = "",
        reasoning: str = "",
        *,
        streaming: bool = False,
        figures: ReplyFigures | None = None,
        input_priority: InputPriority | None = None,
    ) -> None:
        super().__init__()
        self.figures: ReplyFigures | None = None
        self._figures_view = Static("", classes="figures")
        self._figures_view.display = False
        # the text as deltas: joined when read, not copied whole for every delta
        self._parts: list[str] = [text] if text else []
        self._reasoning_parts: list[str] = [reasoning] if reasoning else []
        self.streaming = streaming
        self._reasoning_dirty = False
        self._reasoning_timer: Timer | None = None
        # A finished reply is one widget of pre-rendered lines (stored_reply.py: why); the live one
        # is rows rendered as they arrive (live_reply.py).
        self._live: LiveReply | None = LiveReply(classes="reply", input_priority=input_priority) if streaming else None
        self._markdown: Markdown | StoredReply | LiveReply = (
            self._live if self._live is not None else StoredReply(for_terminal(text), classes="reply")
        )
        self._reasoning_view = Static(Content(for_terminal(reasoning)), classes="reasoning-text")
        self._reasoning_box = Collapsible(self._reasoning_view, title="thinking", collapsed=True, classes="reasoning")
        self._reasoning_box.display = bool(reasoning)
        if self._live is not None and text:
            self._live.append(text)
        if figures is not None:
            self.set_figures(figures)

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @text.setter
    def text(self, value: str) -> None:
        self._parts = [value] if value else []

    @property
    def reasoning(self) -> str:
        if len(self._reasoning_parts) > 1:
            self._reasoning_parts[:] = ["".join(self._reasoning_parts)]
        return self._reasoning_parts[0] if self._reasoning_parts else ""

    def compose(self) -> ComposeResult:
        if self.streaming or self._reasoning_parts:  # a stored reply without reasoning: 4 widgets fewer
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
    def markdown(self) -> Markdown | StoredReply | LiveReply:
        """What shows the reply's text: each kind has `source`, the text drawn."""
        return self._markdown

    async def on_stored_reply_activated(self, event: StoredReply.Activated) -> None:
        """A click on a stored reply: the full Markdown widget takes its place (selection, links)."""
        event.stop()
        stored = event.reply
        if stored is not self._markdown or not stored.is_mounted:
            return
        full = StoredMarkdown(stored.source, classes="reply")
        self._markdown = full
        with self.app.batch_update():
            await self.mount(full, after=stored)
            await stored.remove()

    # streaming -----------------------------------------------------------------------------

    def append_text(self, delta: str) -> None:
        if not delta:
            return
        self._parts.append(delta)
        if self._live is not None:
            self._live.append(delta)

    def append_reasoning(self, delta: str) -> None:
        if not delta:
            return
        self._reasoning_parts.append(delta)
        self._reasoning_dirty = True
        if self._reasoning_timer is None and self.streaming and self.is_mounted:
            self._reasoning_timer = self.set_interval(STREAM_FLUSH_INTERVAL_S, self._show_reasoning)

    def on_mount(self) -> None:
        if self._reasoning_dirty and self.streaming:
            self._reasoning_timer = self.set_interval(STREAM_FLUSH_INTERVAL_S, self._show_reasoning)

    def _show_reasoning(self) -> None:
        """The timer's tick: the box appears; its text is drawn only while it is open (folded, a
        long reasoning would be re-laid out every frame for nothing)."""
        if not self._reasoning_dirty:
            return
        self._reasoning_box.display = True
        if not self._reasoning_box.collapsed:
            self._reasoning_dirty = False
            self._reasoning_view.update(Content(for_terminal(self.reasoning)))

    def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        if event.collapsible is self._reasoning_box and self._reasoning_dirty:
            self._reasoning_dirty = False
            self._reasoning_view.update(Content(for_terminal(self.reasoning)))

    async def finish(self, final_text: str | None = None) -> None:
        """End streaming: the live rows are finished and the reply becomes a finished reply.

        `final_text` is the stored reply; when given it wins over the accumulated deltas (they
        are the same unless the provider did not stream).
        """
        if self._reasoning_timer is not None:
            self._reasoning_timer.stop()
            self._reasoning_timer = None
        replacement = None
        if final_text is not None and final_text != self.text:
            replacement = self.text = final_text
        if self._reasoning_dirty or self._reasoning_parts:
            self._reasoning_dirty = False
            self._reasoning_box.display = bool(self._reasoning_parts)
            self._reasoning_view.update(Content(for_terminal(self.reasoning)))
        live, self._live = self._live, None
        if live is not None:
            rendered = await live.close(replacement)
            text = for_terminal(self.text)
            done: Markdown | StoredReply
            if len(text) <= FINISHED_MARKDOWN_CHARS:
                done = StoredMarkdown(text, classes="reply")
            else:
                done = StoredReply(text, classes="reply")
                if rendered is not None:
                    done.adopt(*rendered, palette_of(self.app))
            if live.parent is self and self.is_attached:
                self._markdown = done
                with self.app.batch_update():
                    await self.mount(done, after=live)
                    await live.remove()
        self.streaming = False  # only now is the final render in place

    def mark_interrupted(self) -> None:
        self.add_class("-interrupted")
