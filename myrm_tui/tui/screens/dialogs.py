"""Small modal dialogs shared by the screens: confirm, one-line input, read-only text.

Titles, messages and texts often quote stored data (a session title, model notes), so
they are drawn through terminal_text.for_terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, ScreenResultType
from textual.widgets import Button, Input, Markdown, Static

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css


class Dialog(ModalScreen[ScreenResultType]):
    """Base of the modal dialogs: one stylesheet keyed on the `.dialog` class (unscoped, so
    every dialog screen, here or in other modules, shares it)."""

    DEFAULT_CSS = sibling_css(__file__)
    SCOPED_CSS = False


class ConfirmScreen(Dialog[bool]):
    """A yes/no question; Esc or "Cancel" answers no.

    `type_ahead`: where printable keys (and pastes) typed while the question is up go (the
    message being written, when the question answers something slow the user asked for and
    they typed on meanwhile). Without it those keys would reach two buttons that ignore them:
    lost. An Enter right after such typing is the typing's own (meant to send the message), so
    it answers nothing: the user Tabs to a button or clicks it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
    ]

    def __init__(
        self,
        title: str,
        message: str,
        yes: str = "Yes",
        *,
        danger: bool = False,
        type_ahead: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(classes="dialog")
        self.title_text = title
        self.message = message
        self.yes = yes
        self.danger = danger
        self.type_ahead = type_ahead
        self._typing = False  # the last key went to the message: an Enter now is not an answer

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(Content(for_terminal(self.title_text)), classes="title")
            yield Static(Content(for_terminal(self.message)), classes="message")
            with Horizontal(classes="buttons"):
                yield Button(self.yes, variant="error" if self.danger else "primary", id="yes")
                yield Button("Cancel", id="no")
            yield Static("", id="focus-hint", classes="hint")

    def on_mount(self) -> None:
        self.query_one("#no" if self.danger else "#yes", Button).focus()

    def on_descendant_focus(self) -> None:
        # Said in words: the focus style alone is a colour change some themes make hard to see,
        # and Enter on a dangerous dialog must never surprise.
        if isinstance(self.focused, Button):
            self._hint()

    def _hint(self) -> None:
        if self._typing:
            text = f"Typing went to your message; Tab to {self.yes} or Cancel and press Enter · Esc: Cancel"
        else:
            focused = self.focused
            label = self.yes if isinstance(focused, Button) and focused.id == "yes" else "Cancel"
            text = f"Enter: {label} (focused) · Tab: the other button · Esc: Cancel"
            if self.type_ahead is not None:
                text += " · typing goes to your message"
        self.query_one("#focus-hint", Static).update(Content(for_terminal(text)))

    def on_key(self, event: events.Key) -> None:
        """A printable key nothing here binds goes to the message (the buttons answer Enter; Tab,
        Esc and any keymap entry are bindings); an Enter right after it is swallowed."""
        if self.type_ahead is None:
            return
        if event.key == "enter" and self._typing:
            event.stop()
            event.prevent_default()
            return
        character = event.character if event.is_printable and event.key not in self.active_bindings else None
        if character is not None:
            event.stop()
            event.prevent_default()
            self.type_ahead(character)
        if (character is not None) != self._typing:
            self._typing = character is not None
            self._hint()

    def on_paste(self, event: events.Paste) -> None:
        if self.type_ahead is not None:
            event.stop()
            event.prevent_default()
            self.type_ahead(event.text)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_cancel(self) -> None:
        self.dismiss(False)


class InputScreen(Dialog[str | None]):
    """One line of text (rename, export path); Esc cancels with None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
    ]

    def __init__(self, title: str, value: str = "", placeholder: str = "") -> None:
        super().__init__(classes="dialog")
        self.title_text = title
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(Content(for_terminal(self.title_text)), classes="title")
            yield Input(self.value, placeholder=self.placeholder, id="value")
            yield Static(Content("Enter to accept · Esc to cancel"), classes="hint")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class TextScreen(Dialog[None]):
    """Read-only Markdown (help, notes); Esc or q closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="dialog.close"),
    ]

    def __init__(self, title: str, markdown: str, *, id: str | None = None) -> None:
        super().__init__(classes="dialog wide", id=id)
        self.title_text = title
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        with Vertical(classes="box"):
            yield Static(Content(for_terminal(self.title_text)), classes="title")
            with VerticalScroll(classes="scroll"):
                yield Markdown(for_terminal(self.markdown))  # session notes are model text
            yield Static(Content("Esc to close"), classes="hint")

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)
