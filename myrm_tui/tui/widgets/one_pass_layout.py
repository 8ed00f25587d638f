"""A widget whose new size is settled by the layout pass that gave it: no second pass after it.

Why: after a layout pass Textual hands each widget whose size changed its new virtual size through
a reactive that asks for another layout. The pass that just ran already arranged every widget at
those sizes (the transcript's anchor too: the compositor scrolls an anchored container to its end
while it arranges it), so the second pass arranges the same thing again. A streaming reply grows
every frame, so each of its frames cost two full layouts of the screen, the second one for
nothing (bench/tui_stream.py at 200 tok/s: 4-6 ms CPU each on a 2-core box; the second is now a
repaint of the scroll bar, ~1.5 ms). Scroll bars still follow: their size and position
are set by the same size update, and showing or hiding one asks for its own layout. Textual's own
scroll-only pass updates sizes the same way (`layout=False`).

Only for the widgets a stream resizes: the live reply, the message holding it, the transcript.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Size

if TYPE_CHECKING:
    from textual.widget import Widget

    _Base = Widget
else:
    # Not a Widget at run time: Textual takes a class's default CSS from the chain of each class's
    # first DOM base, so a Widget mixed in first would hide the CSS of the class after it
    # (a VerticalScroll would lose its `overflow-y: auto`).
    _Base = object


class OnePassLayout(_Base):
    """Mixed in before the Textual class: `class Reply(OnePassLayout, Vertical)`."""

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        return super()._size_updated(size, virtual_size, container_size, layout=False)
