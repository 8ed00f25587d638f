"""The message editor: Enter sends, Shift+Enter / Ctrl+J / Alt+Enter insert a newline.

Ctrl+J is there because most terminals cannot report Shift+Enter (it needs the kitty keyboard
protocol) and VS Code's terminal sends Alt+Enter for it. Send and newline are priority
bindings of this widget so they win over TextArea's own Enter handling, and they carry ids so
the keymap setting can move them.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

from myrm_tui.tui.css import sibling_css

PLACEHOLDER = "Message myrm…  (Enter send · Ctrl+J newline · Esc interrupt · Ctrl+Q quit)"


class PromptArea(TextArea):
    DEFAULT_CSS = sibling_css(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Send", priority=True, id="prompt.submit"),
        Binding("shift+enter,ctrl+j,alt+enter", "newline", "Newline", priority=True,
                show=False, id="prompt.newline"),
    ]

    class Submitted(Message):
        def __init__(self, prompt: PromptArea, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

        @property
        def control(self) -> PromptArea:
            return self.prompt

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            "",
            id=id,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder=PLACEHOLDER,
        )

    # Priority bindings run in the app's task as soon as the key is read, while the characters
    # typed just before it may still sit in this widget's queue (fast typing, tmux send-keys,
    # a paste without bracketed-paste). Queueing the action behind them keeps the order.

    def action_submit(self) -> None:
        """Post the text; the screen decides whether to send, and clears the editor if it does."""
        self.call_later(self._submit_now)

    def _submit_now(self) -> None:
        self.post_message(self.Submitted(self, self.text))

    def action_newline(self) -> None:
        self.call_later(self.insert, "\n")

    def restore(self, text: str) -> None:
        """Put an unsent message back, keeping anything typed since (nothing is lost)."""
        if not text:
            return
        current = self.text
        self.load_text(text if not current.strip() else f"{text}\n{current}")
        self.move_cursor(self.document.end)
