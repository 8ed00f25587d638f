"""The whole output of one tool call, scrollable: the block shows a preview, this shows it all.

Why a read-only TextArea: it lays out only the lines on screen, so a 50,000-line log scrolls
as fast as a short one. The text is read from the vault (or the stored result when nothing was
spilled) in a thread, sanitised for the terminal there, and capped at TOOL_VIEWER_MAX_CHARS with
a note naming what is left out; the screen opens at once and says "loading" until it arrives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static, TextArea

from myrm_tui.store.errors import VaultError
from myrm_tui.store.vault import Vault
from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.constants import TOOL_VIEWER_MAX_CHARS
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.screens.dialogs import Dialog


@dataclass(frozen=True)
class LoadedOutput:
    text: str  # sanitised, at most TOOL_VIEWER_MAX_CHARS of the original
    total_chars: int
    note: str  # what the viewer says under the text (source, cap, read failure)


def load_output(
    vault: Vault | None, handle: str | None, stored: str, limit: int = TOOL_VIEWER_MAX_CHARS
) -> LoadedOutput:
    """The whole output by handle (else the stored result), sanitised and capped at `limit`."""
    text, source = stored, "the stored result"
    if handle and vault is not None:
        try:
            text, source = vault.read_text(handle), f"{handle} ({vault.path_of(handle)})"
        except (VaultError, OSError) as exc:
            note = f"could not read {handle}: {exc}; showing the stored excerpt"
            return LoadedOutput(for_terminal(stored[:limit]), len(stored), note)
    total = len(text)
    if total > limit:
        note = f"showing the first {limit:,} of {total:,} characters of {source}"
        return LoadedOutput(for_terminal(text[:limit]), total, for_terminal(note))
    return LoadedOutput(for_terminal(text), total, for_terminal(f"{total:,} characters · {source}"))


class ToolOutputScreen(Dialog[None]):
    """One tool call's full output; Esc or q closes."""

    DEFAULT_CSS = sibling_css(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="tool_output.close"),
    ]

    def __init__(self, title: str, vault: Vault | None, handle: str | None, stored: str) -> None:
        super().__init__(classes="dialog wide tool-output")
        self.title_text = title
        self.vault = vault
        self.handle = handle
        self.stored = stored
        self.loaded: LoadedOutput | None = None
        self._area = TextArea("", read_only=True, soft_wrap=False, show_line_numbers=True, classes="output")
        self._note = Static(Content("loading…"), classes="hint")

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(Content(for_terminal(self.title_text)), classes="title")
            yield self._area
            yield self._note

    def on_mount(self) -> None:
        self._area.focus()
        self._load()

    @work(thread=True, exclusive=True)
    def _load(self) -> None:
        loaded = load_output(self.vault, self.handle, self.stored)
        self.app.call_from_thread(self._show, loaded)

    def _show(self, loaded: LoadedOutput) -> None:
        self.loaded = loaded
        self._area.load_text(loaded.text)
        self._note.update(Content(f"{loaded.note} · Esc to close"))

    def action_close(self) -> None:
        self.dismiss(None)
