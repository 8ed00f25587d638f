"""The scrolling conversation: sticky to the bottom unless the user scrolled up."""

from __future__ import annotations

from textual.containers import VerticalScroll

from myrm_tui.tui.css import sibling_css


class Transcript(VerticalScroll):
    """Holds message, tool, note and approval widgets in order.

    Follows new output through Textual's anchor (released when the user scrolls up, restored
    when they return to the bottom), so streaming never yanks the view away from what they read.
    """

    DEFAULT_CSS = sibling_css(__file__)
    # Large scroll container with no border/content of its own: skip painting its background
    # cell by cell.
    BLANK = True

    def on_mount(self) -> None:
        self.anchor()

    @property
    def following(self) -> bool:
        """Whether new output will scroll into view (the user is at the bottom)."""
        return self.is_anchored and not self._anchor_released
