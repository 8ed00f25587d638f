"""The line above the prompt while a sent message is being edited (a fork on Enter).

Editing looks like ordinary typing, so without this line the user could not tell that Enter
will fork the session instead of adding a message to it.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css


class EditHint(Static):
    DEFAULT_CSS = sibling_css(__file__)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.display = False
        self.text = ""

    def show(self, text: str) -> None:
        self.text = text
        self.update(Content(for_terminal(text)))
        self.display = True

    def hide(self) -> None:
        self.text = ""
        self.update("")
        self.display = False
