"""The scrolling conversation: sticky to the bottom unless the user scrolled up."""

from __future__ import annotations

from textual import events
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from myrm_tui.tui.css import sibling_css


class Transcript(VerticalScroll):
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

    def on_mount(self) -> None:
        self.anchor()

    @property
    def following(self) -> bool:
        """Whether new output will scroll into view (the user is at the bottom)."""
        return self.is_anchored and not self._anchor_released

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 < old and self.max_scroll_y > 0:
            self.post_message(self.ReachedTop())


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

    def on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            self.post_message(self.Pressed())
