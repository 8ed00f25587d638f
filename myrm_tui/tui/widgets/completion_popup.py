"""The popup above the prompt offering slash commands or @file paths while one is typed."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.prompt.completion import CompletionRequest


@dataclass(frozen=True)
class Choice:
    value: str  # what replaces the token
    label: str  # what the row shows


class CompletionPopup(OptionList, can_focus=False):
    """Never focused: the prompt keeps the keyboard and drives the highlight."""

    DEFAULT_CSS = sibling_css(__file__)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.request: CompletionRequest | None = None
        self.choices: list[Choice] = []
        self.display = False

    @property
    def open(self) -> bool:
        return self.display and bool(self.choices)

    def offer(self, request: CompletionRequest, choices: list[Choice]) -> None:
        self.request = request
        self.choices = choices
        # Labels are workspace file names, which a cloned repository chooses: shown as data.
        self.set_options([Option(Content(for_terminal(c.label)), id=str(i)) for i, c in enumerate(choices)])
        self.display = bool(choices)
        if choices:
            self.highlighted = 0

    def close(self) -> None:
        self.request = None
        self.choices = []
        self.display = False

    def move(self, step: int) -> None:
        if self.choices:
            current = self.highlighted or 0
            self.highlighted = (current + step) % len(self.choices)

    @property
    def current(self) -> Choice | None:
        if not self.open or self.highlighted is None:
            return None
        return self.choices[self.highlighted]
