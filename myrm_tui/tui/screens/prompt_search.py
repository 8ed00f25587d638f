"""Search earlier prompts (this workspace's sessions) and put one back in the prompt: the
Ctrl+R of a shell, as a small list that narrows while you type.

Matching is PromptHistory.search (pure); this screen only shows the matches newest first, one
line each, and dismisses with the chosen prompt's full text (None on Esc: the draft is untouched).
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.constants import PROMPT_SEARCH_ROWS
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.prompt.prompt_history import PromptHistory
from myrm_tui.tui.screens.dialogs import Dialog

# A row shows the start of a prompt, newlines as " ⏎ " so a multi-line prompt reads as one line.
_ROW_CHARS = 300


def prompt_row(text: str) -> str:
    flat = " ⏎ ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return flat if len(flat) <= _ROW_CHARS else flat[: _ROW_CHARS - 1] + "…"


class PromptSearchScreen(Dialog[str | None]):
    DEFAULT_CSS = sibling_css(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
        Binding("down", "to_list", "List", show=False, id="prompt_search.to_list"),
    ]

    def __init__(self, history: PromptHistory, query: str = "") -> None:
        super().__init__(classes="dialog wide", id="prompt-search")
        self.history = history
        self.initial = query
        self.matches: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(Content("Search earlier prompts (all sessions of this workspace)"), classes="title")
            yield Input(self.initial, placeholder="words to find", id="prompt-search-query")
            yield OptionList(id="prompt-search-list")
            yield Static(Content("Enter put it in the prompt · ↓ to the list · Esc cancel"), classes="hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self._show(self.initial)

    @on(Input.Changed, "#prompt-search-query")
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self._show(event.value)

    def _show(self, query: str) -> None:
        self.matches = self.history.search(query, PROMPT_SEARCH_ROWS)
        listing = self.query_one(OptionList)
        if not self.matches:
            empty = "no earlier prompt matches" if query.strip() else "no earlier prompts yet"
            listing.set_options([Option(empty, disabled=True)])
            return
        listing.set_options([Option(Content(for_terminal(prompt_row(text)))) for text in self.matches])
        listing.highlighted = 0

    def _chosen(self) -> str | None:
        index = self.query_one(OptionList).highlighted
        if not self.matches or index is None or index >= len(self.matches):
            return None
        return self.matches[index]

    @on(Input.Submitted, "#prompt-search-query")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        chosen = self._chosen()
        if chosen is not None:
            self.dismiss(chosen)

    @on(OptionList.OptionSelected, "#prompt-search-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_index < len(self.matches):
            self.dismiss(self.matches[event.option_index])

    def action_to_list(self) -> None:
        listing = self.query_one(OptionList)
        if self.matches and not listing.has_focus:
            listing.focus()

    def action_cancel(self) -> None:
        self.dismiss(None)
