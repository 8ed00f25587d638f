"""What the user sent, as typed (plain text: no markdown surprises in their own words)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css


class UserMessage(Static):
    DEFAULT_CSS = sibling_css(__file__)

    def __init__(self, text: str, *, stored: bool = True) -> None:
        super().__init__(Content(for_terminal(text)))  # pasted or piped text may hold escapes
        self.text = text
        self.set_class(not stored, "-pending")

    def mark_stored(self) -> None:
        self.remove_class("-pending")
