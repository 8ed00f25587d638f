"""The reply while it streams: rows of Markdown rendered in a worker thread, at a fixed frame rate.

Why: the event loop must never wait on rendering to take the next chunk or the next key. A delta
only joins a list here (`append`); one frame every STREAM_FLUSH_INTERVAL_S hands what arrived to
`LiveMarkdown` (widgets/live_markdown.py) in a thread, which parses and renders only the block still
growing, and the loop then takes the changed rows. One frame is in flight at a time, so text
that arrives while a frame renders simply goes into the next one: a slow frame (a long table)
delays the rows, never the chunks or the keys, and the next one waits a whole interval, so the UI's
own frames get the GIL back between two slow renders. A key typed into the prompt goes first: a
frame neither starts its render nor hands over its rows until the key is on screen
(tui/input_priority.py).

What the loop does per frame does not depend on the reply's length: swap in the changed rows,
and ask for a layout only when the row count changed. Rows become strips when first painted.
The finished rows are handed on (`close`): the reply's end renders nothing twice.
"""

from __future__ import annotations

import asyncio
import time

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget
from textual.worker import Worker

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.constants import STREAM_FLUSH_INTERVAL_S
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.input_priority import InputPriority
from myrm_tui.tui.widgets.blocks.live_markdown import Frame, LiveMarkdown
from myrm_tui.tui.widgets.blocks.stored_reply import ReplyPalette, palette_of
from myrm_tui.tui.widgets.one_pass_layout import OnePassLayout


class LiveReply(OnePassLayout, Widget):
    """A streaming reply's text as rows (see the module docstring)."""

    DEFAULT_CSS = sibling_css(__file__)

    def __init__(self, *, classes: str | None = None, input_priority: InputPriority | None = None) -> None:
        super().__init__(classes=classes)
        self._incoming: list[str] = []  # deltas not handed to a frame yet
        self._held = ""  # a trailing "\r" kept for the next frame: it may be half of "\r\n"
        self._shown: list[str] = []  # the text the frames rendered (made safe for the terminal)
        self._rows: list[list[Segment]] = []
        self._width = 0  # the width `_rows` were rendered for
        self._strips: list[Strip | None] = []  # `_rows` as drawn for `_strips_key` (width, base style)
        self._strips_key: tuple[int, Style] | None = None
        self._blank = Strip.blank(0)
        # The rows as the compositor gets them (padding, background, filters applied), for
        # `_drawn_key`: Textual styles a widget's every row again whenever its height changes,
        # which a growing reply does every frame (see `render_lines`).
        self._drawn: list[Strip | None] = []
        self._drawn_key: tuple[object, ...] | None = None
        self._markdown: LiveMarkdown | None = None
        self._restyle = False  # the theme changed: render everything again with its colours
        self._wake = asyncio.Event()  # something to render (text, the end, a theme)
        self._ending = False
        self._replacement: str | None = None  # the text to show instead (the stored reply differed)
        self._ended = asyncio.Event()
        self._worker: Worker[None] | None = None
        # the chat screen's, shared with its prompt (keys before the stream); alone, its own
        self.input_priority = input_priority or InputPriority()
        self.frames = 0  # frames rendered: tests count them

    @property
    def source(self) -> str:
        """The text shown so far (as drawn: made safe for the terminal)."""
        return "".join(self._shown)

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._theme_changed, init=False)
        self._worker = self.run_worker(self._render_loop(), group="live-reply")
        if self._incoming:
            self._wake.set()

    def append(self, delta: str) -> None:
        """Take a delta of the reply (the loop's whole cost per chunk)."""
        self._incoming.append(delta)
        self._wake.set()

    def on_resize(self, event: events.Resize) -> None:
        """A new width renders the rows for it now, not when the next text arrives (the model may
        pause): until then they are cut off or padded rows of the old width."""
        if self._rows and self._content_width() != self._width:
            self._wake.set()

    def _theme_changed(self) -> None:
        self._restyle = True
        self._strips_key = None
        self._wake.set()

    async def close(self, replacement: str | None = None) -> tuple[int, list[list[Segment]]] | None:
        """The reply ended: render what is left as finished, and return (width, rows) for the
        widget that shows the finished reply (None when nothing was laid out yet). `replacement`:
        the stored reply, when it differs from what streamed."""
        self._ending = True
        if replacement is not None:
            self._replacement = for_terminal(replacement)
        worker = self._worker
        if worker is None or worker.is_finished:
            return None
        self._wake.set()
        await self._ended.wait()
        rows, width = self._rows, self._width
        self._release()
        return (width, rows) if width > 0 else None

    def _release(self) -> None:
        """Let go of the renderer and the styled rows now: the reply is leaving, and as garbage of a
        widget (which Textual's references make a cycle) they would wait for the next full
        collection and lengthen it (tens of thousands of objects for a long reply)."""
        self._markdown = None
        self._rows, self._strips, self._drawn = [], [], []
        self._strips_key = self._drawn_key = None

    async def _render_loop(self) -> None:
        try:
            while True:
                await self._wake.wait()
                woke = time.monotonic()
                # a key typed just before is painted first (tui/input_priority.py): the render
                # thread would slow its handling, the rows' layout would join its screen update
                await self.input_priority.yield_to_input()
                self._wake.clear()
                begun = time.monotonic()
                ending = self._ending
                width = self._content_width()
                if width <= 0:  # not laid out yet: the first frame waits for the first layout
                    if ending:
                        return
                    await asyncio.sleep(STREAM_FLUSH_INTERVAL_S)
                    self._wake.set()
                    continue
                frame = await self._next_frame(width, ending)
                rendered = time.monotonic() - begun
                await self.input_priority.yield_to_input()  # a key typed while the thread rendered
                self._apply(frame)
                if ending:
                    return
                # After a slow frame (a long table) a whole interval's pause, not what is left of it:
                # the UI's own frames need the GIL the thread held, and get at least that long with
                # it free. Not longer: a frame's work grows with the text waiting for it, so a pause
                # that grew with the work would fall further and further behind a fast model. A wait
                # for a key counts as part of the interval: the frame rate stays, keys or not.
                took = time.monotonic() - woke
                await asyncio.sleep(max(STREAM_FLUSH_INTERVAL_S - took, min(rendered, STREAM_FLUSH_INTERVAL_S)))
        finally:
            self._ended.set()

    async def _next_frame(self, width: int, ending: bool) -> Frame:
        """Hand what arrived to the renderer thread; everything it needs is read here, on the loop."""
        text = self._held + "".join(self._incoming)
        self._incoming.clear()
        self._held = ""
        if text.endswith("\r") and not ending:
            text, self._held = text[:-1], "\r"
        text = for_terminal(text)
        if self._markdown is None or self._restyle or self._replacement is not None:
            # a fresh renderer: the first frame, a theme change, or the stored text instead
            shown = self._replacement if self._replacement is not None else self.source + text
            self._markdown, self._restyle, self._replacement = LiveMarkdown(self._palette()), False, None
            self._shown, text = [], shown
        self._shown.append(text)
        self.frames += 1
        return await asyncio.to_thread(self._markdown.advance, text, width, final=ending)

    def _content_width(self) -> int:
        """The width rows are rendered for: this widget's, or its container's less the gutter
        while it has no rows (a widget of no height may not be placed yet)."""
        width = self.content_size.width
        if width <= 0 and isinstance(self.parent, Widget):
            width = self.parent.content_size.width - self.styles.gutter.width
        return width

    def _palette(self) -> ReplyPalette:
        return palette_of(self.app)

    def _apply(self, frame: Frame) -> None:
        before = len(self._rows)
        del self._rows[frame.keep :]
        self._rows.extend(frame.rows)
        del self._strips[frame.keep :]
        self._strips.extend([None] * len(frame.rows))
        del self._drawn[frame.keep :]
        self._width = frame.width
        if len(self._rows) != before:
            self.refresh(layout=True)
        elif frame.rows:  # same height: repaint only the rows that changed
            self.refresh(Region(0, frame.keep, max(1, self.content_size.width), len(frame.rows)))

    # drawing --------------------------------------------------------------------------------

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._rows)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The visible rows, styled by Textual only when new.

        Why: when a widget's height changes Textual drops its styled rows and styles every visible
        one again (padding, background, filters), and a streaming reply grows every frame: that
        was most of a frame's work. A row's styling does not depend on the height here (no top or
        bottom padding, border or outline: the rows are the same whatever the height), so the
        styled rows are kept until the row, the width or a style changes, and Textual styles
        only the rows that are new. Width and base style are read once per pass (both walk the
        DOM; see StoredReply.render_lines)."""
        styles = self.styles
        key = (max(0, self._size.width - styles.gutter.width), self.rich_style)
        if self._strips_key != key:
            self._strips = [None] * len(self._rows)
            self._strips_key = key
            self._blank = Strip.blank(key[0], key[1])
        padding, outline = styles.padding, styles.outline
        if padding.top or padding.bottom or styles.border_top[0] or styles.border_bottom[0]:
            return super().render_lines(crop)
        if outline[0][0] or outline[2][0]:
            return super().render_lines(crop)
        drawn_key = (
            self._size.width,
            key[1],
            self.background_colors,
            padding,
            styles.border,
            styles.tint,
            self.opacity,
            tuple(self.get_line_filters()),
        )
        if drawn_key != self._drawn_key:
            self._drawn_key, self._drawn = drawn_key, []
        drawn = self._drawn
        top, bottom = crop.y, crop.bottom
        if len(drawn) < bottom:
            drawn.extend([None] * (bottom - len(drawn)))
        y = top
        while y < bottom:  # style each run of rows not styled yet, in one call
            if drawn[y] is not None:
                y += 1
                continue
            end = y
            while end < bottom and drawn[end] is None:
                end += 1
            drawn[y:end] = super().render_lines(Region(0, y, self._size.width, end - y))
            y = end
        strips = [strip for strip in drawn[top:bottom] if strip is not None]
        if crop.x or crop.width != self._size.width:
            strips = [strip.crop(crop.x, crop.right) for strip in strips]
        return strips

    def render_line(self, y: int) -> Strip:
        if y >= len(self._rows) or self._strips_key is None:
            return self._blank
        strip = self._strips[y]
        if strip is None:
            width, style = self._strips_key
            strip = Strip(self._rows[y]).apply_style(style)
            # rows of the width before a resize, until the next frame renders them anew
            strip = strip.crop(0, width) if strip.cell_length > width else strip.extend_cell_length(width, style)
            self._strips[y] = strip
        return strip
