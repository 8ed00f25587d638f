"""The scrolling conversation: sticky to the bottom unless the user scrolled up, and windowed.

Only the last TURN_WINDOW stored turns are mounted (a long session would otherwise mount thousands
of widgets); a live session is pruned back to the window past TURN_WINDOW_HIGH, and older turns come
back in batches on "load earlier". The transcript owns that window; what it mounts comes from a
`HistoryPage` the chat screen reads from the store (tui/history_page.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from textual import events, on
from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.message import Message
from textual.scrollbar import ScrollBar
from textual.widget import Widget
from textual.widgets import Static

from myrm_tui.agent.reply_figures import ReplyFigures
from myrm_tui.tui.constants import (
    LOAD_EARLIER_TURNS,
    REPLY_GUTTER_CELLS,
    RESUME_RENDERED_REPLIES,
    TURN_WINDOW,
    TURN_WINDOW_HIGH,
)
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.transcript.history import AssistantItem, ContextNoteItem, HistoryItem, ToolItem, UserItem
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.context_note_block import ContextNoteBlock
from myrm_tui.tui.widgets.blocks.stored_reply import ReplyPalette, StoredReply, palette_of
from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from myrm_tui.tui.widgets.one_pass_layout import OnePassLayout
from myrm_tui.tui.widgets.steady_scrollbar import SteadyScrollBar


@dataclass
class HistoryPage:
    """A session's stored turns, ready to mount in any window of them."""

    turns: list[list[HistoryItem]]
    dividers: dict[int, list[Widget]] = field(default_factory=dict)  # compaction dividers before turn i
    figures: dict[int, ReplyFigures] = field(default_factory=dict)  # reply figures by message id


def history_widgets(items: list[HistoryItem], figures: dict[int, ReplyFigures] | None = None) -> list[Widget]:
    widgets: list[Widget] = []
    for item in items:
        if isinstance(item, UserItem):
            widgets.append(UserMessage(item.text))
        elif isinstance(item, AssistantItem):
            found = (figures or {}).get(item.message_id) if item.message_id is not None else None
            widgets.append(AssistantMessage(item.text, item.reasoning, figures=found))
        elif isinstance(item, ToolItem):
            block = ToolBlock(item.call_id, item.name, item.arguments)
            if item.content is not None:
                block.finish(item.status, item.content, None)
            widgets.append(block)
        elif isinstance(item, ContextNoteItem):
            widgets.append(ContextNoteBlock(item.title, item.body))
    return widgets


def _page_widgets(page: HistoryPage, first: int, stop: int) -> list[Widget]:
    widgets: list[Widget] = []
    for index in range(first, stop):
        widgets += page.dividers.get(index, [])
        widgets += history_widgets(page.turns[index], page.figures)
    return widgets


@dataclass
class _Batch:
    """The next "load earlier" batch, built and rendered ahead so the page-up that reaches the top
    only mounts ready lines: turns `first` to `stop` of the page."""

    first: int
    stop: int
    widgets: list[Widget]


def _prerender(replies: list[StoredReply], width: int, palette: ReplyPalette) -> None:
    """Runs in a worker thread: each reply renders its lines for `width` (a wrong guess costs
    only a render on the UI thread later, as without this)."""
    for reply in replies:
        reply.prepare(width, palette)


class Transcript(OnePassLayout, VerticalScroll):
    """Holds message, tool, note and approval widgets in order.

    Follows new output through Textual's anchor (released when the user scrolls up, restored
    when they return to the bottom), so streaming never yanks the view away from what they read.
    Reaching the top posts `ReachedTop`, which loads earlier turns when some are not mounted.
    """

    DEFAULT_CSS = sibling_css(__file__)
    # Large scroll container with no border/content of its own: skip painting its background
    # cell by cell.
    BLANK = True

    class ReachedTop(Message):
        """The user scrolled to the very top."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hidden_turns = 0  # stored turns not mounted
        self.page_source: Callable[[], HistoryPage] | None = None  # re-reads the history for "load earlier"
        # The page `show_history` mounted from, kept for "load earlier": its hidden turns are the ones
        # not mounted yet, so loading them needs no store read (the whole history, on the UI thread).
        # Dropped by `prune`, whose turns and dividers were mounted once already.
        self._page: HistoryPage | None = None
        self._next: _Batch | None = None  # the next batch of hidden turns, built and rendered ahead
        self._arranged: DockArrangeResult | None = None  # the last arrangement (where each child was)
        # (the first turn shown, its top, scroll_y) before a batch mounted above it: the view follows
        # that turn, so growth below it (a reply rendered late) does not move what the user reads
        self._keep_place: tuple[Widget, int, float] | None = None
        self._batch_mounted = False  # the batch `_keep_place` waits for is mounted (its next arrangement ends it)

    def on_mount(self) -> None:
        self.anchor()

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """Textual's property, with a bar that repaints only when its thumb moves on screen
        (widgets/steady_scrollbar.py: why)."""
        if self._vertical_scrollbar is None:
            bar = SteadyScrollBar(vertical=True, name="vertical", thickness=self.scrollbar_size_vertical)
            bar.display = False
            self._vertical_scrollbar = bar
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar

    def show_history(self, page: HistoryPage) -> None:
        """Mount the last TURN_WINDOW turns of `page` (a "load earlier" bar above them if any are left)."""
        self._page = page
        self.hidden_turns = max(0, len(page.turns) - TURN_WINDOW)
        widgets: list[Widget] = [LoadEarlier(self.hidden_turns)] if self.hidden_turns else []
        widgets += _page_widgets(page, self.hidden_turns, len(page.turns))
        widgets += page.dividers.get(len(page.turns), [])
        replies = [w.markdown for w in widgets if isinstance(w, AssistantMessage)]
        # All but the newest replies are laid out at an estimated height and rendered in a thread
        # after the first paint (rendering the window's ~50 replies first cost ~0.7 s before it).
        later = [r for r in replies[:-RESUME_RENDERED_REPLIES] if isinstance(r, StoredReply)]
        for reply in later:
            reply.defer()
        if widgets:
            self.mount_all(widgets)
        self._next = None
        if later:
            self.call_after_refresh(self._render_deferred, later)
        if self.hidden_turns:
            self.call_after_refresh(self._prepare_next)

    def _render_deferred(self, replies: list[StoredReply]) -> None:
        width = self._reply_width()
        if width <= 0:
            return  # not laid out: each renders when painted
        self.run_worker(
            self._render_in_thread(replies, width, palette_of(self.app)), group="render-deferred", exclusive=True
        )

    async def _render_in_thread(self, replies: list[StoredReply], width: int, palette: ReplyPalette) -> None:
        await asyncio.to_thread(_prerender, replies, width, palette)
        with self.app.batch_update():  # their true heights, in one layout (anchored: the view stays)
            for reply in replies:
                reply.refresh(layout=True)

    def mounted_turns(self) -> list[UserMessage]:
        return [u for u in self.query_children(UserMessage) if not u.has_class("-pending")]

    def prune(self) -> None:
        """Past the high-water mark, unmount the oldest turns (they stay in the store)."""
        users = self.mounted_turns()
        if len(users) <= TURN_WINDOW_HIGH:
            return
        drop = len(users) - TURN_WINDOW
        self._page = None
        self._next = None
        keep_from = users[drop]
        doomed = []
        for child in self.children:
            if child is keep_from:
                break
            if not isinstance(child, LoadEarlier):
                doomed.append(child)
        self.hidden_turns += drop
        bar = self.query_children(LoadEarlier)
        if bar:
            bar.first().set_hidden(self.hidden_turns)
        else:
            self.mount(LoadEarlier(self.hidden_turns), before=0)
        self.remove_children(doomed)

    @on(ReachedTop)
    def _reached_top(self, event: ReachedTop) -> None:
        event.stop()
        self.load_earlier()

    def load_earlier(self) -> None:
        """Mount the batch of turns before the first one shown, keeping the view on what the user reads."""
        bars = self.query_children(LoadEarlier)
        if not self.hidden_turns or not bars or self.page_source is None:
            return
        bar = bars.first()
        page = self._page if self._page is not None else self.page_source()
        first = max(0, self.hidden_turns - LOAD_EARLIER_TURNS)
        stop = min(self.hidden_turns, len(page.turns))
        ready, self._next = self._next, None
        if ready is not None and (ready.first, ready.stop) == (first, stop):
            widgets = ready.widgets
        else:
            widgets = _page_widgets(page, first, stop)
        loaded = self.hidden_turns - first
        self.hidden_turns = first
        self.run_worker(self._mount_earlier(widgets, bar, loaded), group="load-earlier")

    async def _mount_earlier(self, widgets: list[Widget], bar: LoadEarlier, loaded: int) -> None:
        """Mount the batch as one layout change, the view kept on what the user reads in that same
        layout (`arrange`): a scroll after it would cost a second full layout and show one frame
        of the batch's top first."""
        anchor = _next_sibling(bar)
        top = _top_of(self._arranged, anchor) if anchor is not None else None
        self._keep_place = (anchor, top, self.scroll_y) if anchor is not None and top is not None else None
        self._batch_mounted = False
        with self.app.batch_update():
            if self.hidden_turns:
                bar.set_hidden(self.hidden_turns)
            if widgets:
                await self.mount_all(widgets, after=bar)
            if not self.hidden_turns:
                await bar.remove()
        self._batch_mounted = True
        self.refresh(layout=True)  # the arrangement that ends the keep-place (see `arrange`)
        # after the frame that shows the batch: a toast's own layout must not delay it
        self.call_after_refresh(self.notify, f"Loaded {loaded} earlier turns.", timeout=2)
        if self.hidden_turns:
            self.call_after_refresh(self._prepare_next)

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """Textual's arrangement, plus the scroll that keeps the view in place after "load earlier"
        grew the transcript above it (set before the compositor places the children, the way
        Textual's own anchor sets it)."""
        result = super().arrange(size, optimal)
        if self._keep_place is not None:
            # measured from before the mount each time: a batch may take more than one layout
            anchor, old_top, old_y = self._keep_place
            top = _top_of(result, anchor)
            if top is not None and top != old_top:
                new_y = max(0.0, old_y + top - old_top)
                self.set_reactive(VerticalScroll.scroll_y, new_y)
                self.set_reactive(VerticalScroll.scroll_target_y, new_y)
                self.vertical_scrollbar.set_reactive(ScrollBar.position, new_y)
        if self._batch_mounted:  # the whole batch is in this arrangement: later growth is not ours
            self._keep_place = None
        self._arranged = result
        return result

    def _prepare_next(self) -> None:
        """Build the next batch of hidden turns and render its replies in a thread, while the user
        reads: the page-up that reaches the top then mounts lines that are ready."""
        page = self._page
        if page is None or not self.hidden_turns or self._next is not None:
            return
        first = max(0, self.hidden_turns - LOAD_EARLIER_TURNS)
        stop = min(self.hidden_turns, len(page.turns))
        batch = _Batch(first, stop, _page_widgets(page, first, stop))
        self._next = batch
        replies = [w.markdown for w in batch.widgets if isinstance(w, AssistantMessage)]
        stored = [r for r in replies if isinstance(r, StoredReply)]
        width = self._reply_width()
        if stored and width > 0:  # 0: not laid out yet; the lines are rendered when they mount
            self.run_worker(
                partial(_prerender, stored, width, palette_of(self.app)),
                thread=True,
                group="prerender",
                exit_on_error=False,
            )

    def _reply_width(self) -> int:
        """The content width a stored reply gets here: a mounted one's, else the transcript's less
        the reply's gutter (assistant_message.tcss: padding 0 1)."""
        for reply in self.query(StoredReply):
            if reply.content_size.width:
                return reply.content_size.width
        return max(0, self.scrollable_content_region.width - REPLY_GUTTER_CELLS)

    @property
    def following(self) -> bool:
        """Whether new output will scroll into view (the user is at the bottom)."""
        return self.is_anchored and not self._anchor_released

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 < old and self.max_scroll_y > 0:
            self.post_message(self.ReachedTop())


def _next_sibling(widget: Widget) -> Widget | None:
    siblings = list(widget.parent.children) if widget.parent is not None else []
    index = siblings.index(widget) if widget in siblings else -1
    return siblings[index + 1] if 0 <= index < len(siblings) - 1 else None


def _top_of(arranged: DockArrangeResult | None, widget: Widget) -> int | None:
    """The widget's top in an arrangement of the transcript's children, None when it was not in it."""
    if arranged is None:
        return None
    for placement in arranged.placements:
        if placement.widget is widget:
            return placement.region.y
    return None


class LoadEarlier(Static, can_focus=True):
    """The first row of a windowed transcript: how many turns are not mounted; click to load."""

    DEFAULT_CSS = sibling_css(__file__)

    class Pressed(Message):
        """Load the previous batch of turns."""

    def __init__(self, hidden_turns: int) -> None:
        super().__init__("")
        self.hidden_turns = hidden_turns

    def on_mount(self) -> None:
        self.set_hidden(self.hidden_turns)

    def set_hidden(self, hidden_turns: int) -> None:
        self.hidden_turns = hidden_turns
        self.update(Content(f"▲ {hidden_turns} earlier turns — click, Enter or scroll up to load"))

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Pressed())

    def on_load_earlier_pressed(self, event: Pressed) -> None:
        """The bar's own message: the transcript it sits in loads the batch."""
        event.stop()
        if isinstance(self.parent, Transcript):
            self.parent.load_earlier()

    def on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            self.post_message(self.Pressed())
