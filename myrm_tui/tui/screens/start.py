"""What `myrm` paints first, while the chat screen and the session load behind it.

Why a screen of its own: the chat screen imports ~270 ms of modules (transcript, widgets, turn
runner, store) and composes ~20 stylesheets, so a terminal launch that waited for it painted at
~3.5× a bare Textual app. This screen imports nothing beyond Textual: it shows the prompt where the
chat's prompt will be, focused, so the user can start typing at once; the app moves the text over
when the chat screen replaces it (MyrmApp.paint_first).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Static, TextArea

from myrm_tui.tui.prompt.prompt_text import PLACEHOLDER

# Said in the status line until the chat screen takes over (usually well under a second).
LOADING_TEXT = " Loading the session…"


class StartPrompt(TextArea):
    """A plain editor that looks like the chat's prompt. Enter cannot send yet (sending needs the
    agent), so where it was pressed is remembered: the app sends each message so marked as soon as
    the chat's prompt has the text, and what was typed after the last Enter stays as the draft,
    as the chat does with keys typed behind a send. A person who types a message and presses
    Enter in the first second must not have to press it again, or wonder whether it went."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent_marks: list[int] = []  # offsets in `text` where Enter ended a message

    DEFAULT_CSS = """
    StartPrompt {
        height: auto;
        min-height: 3;
        max-height: 12;
        padding: 0 1;
        border: tall $primary;
        background: $surface;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "wait", show=False, priority=True)]

    def action_wait(self) -> None:
        """Enter before the chat is ready: mark the message; it is sent once the chat has it.
        Queued behind the keys typed just before it (the binding runs in the app, the keys are
        inserted here, later), so the mark falls after the last of them."""
        self.call_later(self._mark_message)

    def _mark_message(self) -> None:
        start = self.sent_marks[-1] if self.sent_marks else 0
        if self.text[start:].strip():
            self.sent_marks.append(len(self.text))

    async def settled(self) -> None:
        """Return once every key already queued for this editor (and an Enter's mark) is in."""
        done = asyncio.Event()
        self.call_later(done.set)
        await done.wait()


class StartScreen(Screen[None]):
    DEFAULT_CSS = """
    StartScreen {
        layout: vertical;
        background: $background;
    }
    StartScreen #start-body {
        height: 1fr;
    }
    StartScreen #start-status {
        dock: bottom;
        height: 1;
        background: $panel;
        color: $text-muted;
    }
    """

    def compose(self) -> ComposeResult:
        yield Vertical(id="start-body")
        yield StartPrompt(
            id="start-prompt",
            placeholder=PLACEHOLDER,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
        )
        yield Static(LOADING_TEXT, id="start-status")

    def on_mount(self) -> None:
        self.query_one(StartPrompt).focus()

    @property
    def prompt(self) -> StartPrompt:
        return self.query_one(StartPrompt)

    def typed(self) -> tuple[str, tuple[int, int], list[str]]:
        """What the user typed so far, where the cursor is, and the messages Enter ended."""
        return typed_in(self.prompt)


def typed_in(prompt: StartPrompt) -> tuple[str, tuple[int, int], list[str]]:
    """What `prompt` holds: its text, cursor, and the messages Enter ended in it."""
    marks = [0, *prompt.sent_marks]
    messages = [prompt.text[a:b] for a, b in zip(marks, marks[1:], strict=False)]
    return prompt.text, prompt.cursor_location, messages
