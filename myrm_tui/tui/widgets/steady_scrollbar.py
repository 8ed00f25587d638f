"""A scroll bar that repaints only when what it draws changes.

Why: a streaming reply grows the transcript every frame, and Textual repaints the transcript's
scroll bar on every change of its virtual height or scroll position (~1.5 ms of each frame's CPU,
bench/tui_stream.py), though the thumb is drawn in eighths of a cell: on a long reply it is one cell
at the bottom, the same picture frame after frame. A repaint is skipped when the picture would be
the same: size, thumb (in eighths), hover, grab and colours all unchanged. A partial, layout or
recompose refresh is Textual's, unchanged.
"""

from __future__ import annotations

from math import ceil
from typing import Self

from textual.color import Color
from textual.geometry import Region
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.widget import Widget

# Eighths of a cell: ScrollBarRender draws the thumb's ends with one of these many glyphs.
THUMB_STEPS = len(ScrollBarRender.VERTICAL_BARS)


def thumb_cells(size: int, virtual_size: int, window_size: int, position: float) -> tuple[int, int] | None:
    """The thumb's (start, end) in eighths of a cell, as ScrollBarRender.render_bar places it (None:
    no thumb); two states with the same answer draw the same bar."""
    if window_size >= virtual_size:  # ScrollBar._render_bar: the window holds it all, no thumb
        window_size = 0
    virtual_size = ceil(virtual_size)
    if not (window_size and size and virtual_size and size != virtual_size) or virtual_size == window_size:
        return None
    thumb_size = max(1, window_size / (virtual_size / size))
    offset = (size - thumb_size) * (position / (virtual_size - window_size))
    start = int(offset * THUMB_STEPS)
    return start, start + ceil(thumb_size * THUMB_STEPS)


class SteadyScrollBar(ScrollBar):
    """Textual's ScrollBar; a whole repaint happens only when `_picture` changed."""

    def __init__(self, vertical: bool = True, name: str | None = None, *, thickness: int = 1) -> None:
        super().__init__(vertical, name, thickness=thickness)
        self._drawn: tuple[object, ...] | None = None
        self.repaints = 0  # whole repaints done (not skipped): tests count them

    def _picture(self, parent: Widget) -> tuple[object, ...]:
        """Everything ScrollBar.render reads."""
        size = self.size.height if self.vertical else self.size.width
        styles = parent.styles
        colours: tuple[Color, ...] = (
            styles.scrollbar_background,
            styles.scrollbar_color,
            styles.scrollbar_background_hover,
            styles.scrollbar_color_hover,
            styles.scrollbar_background_active,
            styles.scrollbar_color_active,
            parent.background_colors[0],
            self.screen.styles.scrollbar_color,
        )
        thumb = thumb_cells(size, self.window_virtual_size, self.window_size, self.position)
        return (size, self.thickness, thumb, self.mouse_over, self.grabbed, colours, self.renderer)

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Self:
        parent = self.parent
        if regions or layout or recompose or not repaint or not isinstance(parent, Widget) or not self.is_mounted:
            self._drawn = None
            return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
        picture = self._picture(parent)
        if picture == self._drawn:
            return self
        self._drawn = picture
        self.repaints += 1
        return super().refresh()
