"""One-line notes in the transcript: notices, retries, interruptions and errors (+ hint)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css

_PREFIX = {"info": "ℹ ", "warning": "⚠ ", "error": "✗ "}


class Note(Static):
    """`level` is info, warning or error and becomes the CSS class `-<level>`."""

    DEFAULT_CSS = sibling_css(__file__)

    def __init__(self, text: str, level: str = "info", hint: str = "") -> None:
        level = level if level in _PREFIX else "info"
        body = _PREFIX[level] + text
        if hint:
            body += f"\n  {hint}"
        super().__init__(Content(for_terminal(body)), classes=f"-{level}")  # notes quote tools, providers
        self.text = text
        self.hint = hint
        self.level = level
