"""/rewind: pick an earlier message of yours and what to take back to just before it.

Files: every recorded change from that turn on is undone (through the undo preview).
Conversation: a fork of the session at the message before it (the store stays append-only; the
original session is kept in /sessions). Both: files first, then the fork.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.formatting import pretty_key
from myrm_tui.tui.screens.dialogs import Dialog

FILES = "files"
CONVERSATION = "conversation"
BOTH = "both"
# Characters of a message shown in the list: one row at the dialog's width.
LABEL_CHARS = 70


@dataclass(frozen=True)
class RewindTarget:
    message_id: int
    text: str
    changed_files: int  # recorded file changes from this turn on (0: only the conversation can go back)


@dataclass(frozen=True)
class RewindChoice:
    target: RewindTarget
    mode: str  # FILES, CONVERSATION or BOTH


def _label(target: RewindTarget) -> str:
    line = " ".join(target.text.split())
    line = line if len(line) <= LABEL_CHARS else line[: LABEL_CHARS - 1] + "…"
    files = f"  · {target.changed_files} file(s) changed since" if target.changed_files else ""
    return f"{line}{files}"


class RewindScreen(Dialog[RewindChoice | None]):
    DEFAULT_CSS = sibling_css(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="rewind.cancel"),
        Binding("f", "choose('files')", "Files only", id="rewind.files"),
        Binding("c", "choose('conversation')", "Conversation only", id="rewind.conversation"),
        Binding("b", "choose('both')", "Files and conversation", id="rewind.both"),
    ]

    def __init__(self, targets: list[RewindTarget]) -> None:
        super().__init__(classes="dialog wide", id="rewind-dialog")
        self.targets = targets

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(Content("Rewind to just before one of your messages"), classes="title")
            yield OptionList(
                *(Option(Content(for_terminal(_label(t))), id=str(i)) for i, t in enumerate(self.targets)),
                id="rewind-list",
            )
            yield Static(Content(self._hint()), classes="hint")

    def _hint(self) -> str:
        keymap = getattr(self.app, "_keymap", {}) or {}

        def key(binding_id: str, default: str) -> str:
            return pretty_key(keymap.get(binding_id, default))

        return (
            f"{key('rewind.files', 'f')} files · {key('rewind.conversation', 'c')} conversation (a fork) · "
            f"{key('rewind.both', 'b')} or Enter both · {key('rewind.cancel', 'escape')} cancels"
        )

    def on_mount(self) -> None:
        choices = self.query_one(OptionList)
        choices.highlighted = len(self.targets) - 1
        choices.focus()

    def _current(self) -> RewindTarget | None:
        index = self.query_one(OptionList).highlighted
        return None if index is None else self.targets[index]

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_choose(BOTH)

    def action_choose(self, mode: str) -> None:
        target = self._current()
        if target is not None:
            self.dismiss(RewindChoice(target, mode))

    def action_cancel(self) -> None:
        self.dismiss(None)
