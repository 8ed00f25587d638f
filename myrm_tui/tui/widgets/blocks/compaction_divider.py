"""The inline transcript marker where a compaction happened; Enter or a click opens the panel."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css


class CompactionDivider(Static, can_focus=True):
    DEFAULT_CSS = sibling_css(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "open", "Open compaction panel", show=False, id="divider.open"),
    ]

    class Opened(Message):
        """Show the compaction panel."""

    def __init__(self, summary: str, key: str = "") -> None:
        super().__init__(Content(for_terminal(f"── {summary} ──")))
        self.summary = summary
        self.key = key
        self.tooltip = "Open the compaction panel"

    def action_open(self) -> None:
        self.post_message(self.Opened())

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_open()
