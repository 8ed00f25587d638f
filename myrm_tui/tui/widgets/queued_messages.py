"""Messages typed while a turn runs, shown above the prompt until they are sent.

Hidden when nothing waits, so the layout of an ordinary chat does not change. The keys in the
footer line are the chat screen's (keymap applied), passed in by the screen.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import Static

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.formatting import one_line

# One queued message per row, cut to this many characters: the list is a reminder of what
# waits, the whole text comes back with the recall key.
QUEUED_PREVIEW_CHARS = 100


class QueuedMessages(Static):
    DEFAULT_CSS = sibling_css(__file__)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.display = False
        self.shown: tuple[str, ...] = ()

    def show(self, items: Sequence[str], recall_key: str, cancel_key: str) -> None:
        self.shown = tuple(items)
        self.display = bool(items)
        if not items:
            self.update("")
            return
        rows = [f"⏳ queued: {one_line(text, QUEUED_PREVIEW_CHARS)}" for text in items]
        rows.append(
            f"   sent as one message when the turn ends · {recall_key} edits the last · {cancel_key} removes it"
        )
        self.update(Content(for_terminal("\n".join(rows))))  # the user's own text may hold escapes
