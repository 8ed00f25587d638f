"""A summary or context note in the transcript: its own block, never a user bubble.

Why: a fork starts from a summary stored as a user-role message (that is how the model must
read it), but the user did not type it. Shown as a bubble it read as the user's own words, with
the raw `<context-note trust="untrusted">` wrapper. Here the wrapper is gone, the header becomes
a title that says what the block is, and the body (what the model reads) opens on Enter or a
click; it is model-facing text from the store, so it is shown as data (`for_terminal`).
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css


class ContextNoteTitle(Static, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_summary", "Show or hide the summary", show=False, id="context_note.toggle"),
    ]

    # Not `action_toggle`: that is DOMNode's `toggle(attribute)` action (see ToolHeader).
    def action_toggle_summary(self) -> None:
        block = self.parent
        if isinstance(block, ContextNoteBlock):
            block.expanded = not block.expanded

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_toggle_summary()


class ContextNoteBlock(Vertical):
    DEFAULT_CSS = sibling_css(__file__)

    expanded: reactive[bool] = reactive(False, toggle_class="-expanded")

    def __init__(self, title: str, body: str, *, expanded: bool = False) -> None:
        super().__init__()
        self.title_text = title
        self.body_text = body
        self._title = ContextNoteTitle(classes="title")
        self._body = Static(Content(for_terminal(body)), classes="body")
        self.set_reactive(ContextNoteBlock.expanded, expanded)
        self.set_class(expanded, "-expanded")

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._body

    def on_mount(self) -> None:
        self._render_title()

    def watch_expanded(self, _: bool) -> None:
        if self.is_mounted:
            self._render_title()

    def _render_title(self) -> None:
        arrow = "▾" if self.expanded else "▸"
        hint = "" if self.expanded else "  (Enter to read)"
        self._title.update(
            Content.assemble((f"{arrow} ◆ ", "$text-accent"), for_terminal(self.title_text), (hint, "$text-muted"))
        )

    def plain(self) -> str:
        """Title and, when open, the body as plain text (tests, screen readers)."""
        title = str(self._title.render()) if self.is_mounted else self.title_text
        return f"{title}\n{self.body_text}" if self.expanded else title
