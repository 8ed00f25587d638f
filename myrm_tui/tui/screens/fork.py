"""The fork choice: continue in a new session that shares this one's history.

"Fork (full history)" shares every message up to now (the store's fork, by reference). "Fork
with summary" starts the child from a summary instead; it needs the summary engine, so it is
shown disabled with that reason until the agent offers it — never a fake version.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.screens.dialogs import Dialog

FULL = "full"
SUMMARY = "summary"


class ForkScreen(Dialog[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
    ]

    def __init__(self, session_title: str, *, summary_available: bool = False) -> None:
        super().__init__(classes="dialog")
        self.session_title = session_title
        self.summary_available = summary_available

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(Content(for_terminal(f"Fork “{self.session_title}”")), classes="title")
            yield OptionList(
                Option("fork (full history) — the new session shares every message so far", id=FULL),
                Option(
                    "fork with summary" + ("" if self.summary_available else " (needs the summary engine)"),
                    id=SUMMARY,
                    disabled=not self.summary_available,
                ),
                id="fork-choices",
            )
            yield Static(Content("Enter to fork · Esc to cancel"), classes="hint")

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        choices.highlighted = 0
        choices.focus()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
