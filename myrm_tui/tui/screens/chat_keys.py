"""The chat's keyboard model: whatever has the focus, typing reaches the message.

Why: the prompt is where a chat is typed, but the focus can be elsewhere (Tab to a tool block,
`o` to open its output and Esc back, a click on a summary). Before, the keys typed there were
lost, Enter toggled the block instead of sending, and getting back took several Tabs that went
through the panel and the oldest blocks first, scrolling the view to the top. The rules:

- A printable key that nothing where the focus is uses (no binding there, not a text box, not an
  approval being answered) goes to the message, which takes the focus: nothing typed is lost.
- Esc comes back to the message from anywhere (and still stops a running turn).
- Tab walks the conversation's blocks from the newest, then back to the message (Shift+Tab the
  other way); only the block focused scrolls into view, never the top of the conversation.
- PageUp/PageDown scroll the conversation from the message; Home/End (Top/Bottom) too when the
  message is empty, and Ctrl+Home/Ctrl+End always.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from textual import events
from textual.binding import ActiveBinding
from textual.widget import Widget
from textual.widgets import Input, TextArea

from myrm_tui.tui.widgets.approval import ApprovalPrompt
from myrm_tui.tui.widgets.prompt import PromptArea
from myrm_tui.tui.widgets.transcript import Transcript


class KeyScreen(Protocol):
    """What the keyboard model reads of the chat screen (ChatScreen has it)."""

    @property
    def focused(self) -> Widget | None: ...

    @property
    def focus_chain(self) -> list[Widget]: ...

    @property
    def active_bindings(self) -> Mapping[str, ActiveBinding]: ...

    @property
    def prompt(self) -> PromptArea: ...

    @property
    def transcript(self) -> Transcript: ...


def _within(widget: Widget, kind: type[Widget]) -> bool:
    return any(isinstance(node, kind) for node in (widget, *widget.ancestors))


class ChatKeys:
    def __init__(self, screen: KeyScreen) -> None:
        self.screen = screen

    def away_from_prompt(self) -> bool:
        focused = self.screen.focused
        return focused is not self.screen.prompt

    # typing ---------------------------------------------------------------------------------

    def redirect_typing(self, event: events.Key) -> None:
        """A printable key that reached the screen unused goes to the message (focused first, so
        the keys after it go there directly)."""
        if not event.is_printable or event.character is None:
            return
        screen = self.screen
        focused = screen.focused
        if focused is not None:
            if focused is screen.prompt or isinstance(focused, (Input, TextArea)):
                return
            if _within(focused, ApprovalPrompt):
                return  # an approval being answered: its keys are y/a/n/r, a stray key stays there
        active = screen.active_bindings.get(event.key)
        if active is not None and active.enabled:
            return  # the focused block's own key (`o`, Space), run by the bindings after this
        event.stop()
        event.prevent_default()
        prompt = screen.prompt
        prompt.focus()
        prompt.post_message(events.Key(event.key, event.character))

    # Tab ------------------------------------------------------------------------------------

    def blocks(self) -> list[Widget]:
        """The focusable blocks in the conversation, newest first."""
        transcript = self.screen.transcript
        return [w for w in reversed(self.screen.focus_chain) if w is not transcript and transcript in w.ancestors]

    def cycle_blocks(self, step: int) -> None:
        """Focus the next block (`step` 1: older; -1: newer); past the last one, the message."""
        prompt = self.screen.prompt
        ring: list[Widget] = [prompt, *self.blocks()]
        focused = self.screen.focused
        current = 0
        if focused is not None:
            for index, stop in enumerate(ring):
                if focused is stop or stop in focused.ancestors:
                    current = index
                    break
        target = ring[(current + step) % len(ring)]
        if target is prompt:
            prompt.focus()
            return
        target.focus(scroll_visible=False)
        self.screen.transcript.scroll_to_widget(target, animate=False)  # the least scroll that shows it

    # scrolling ------------------------------------------------------------------------------

    def scroll_key_enabled(self, action: str) -> bool:
        """PageUp/PageDown and Ctrl+Home: from the message, a block or nothing (a scrolling panel
        keeps its own); Home/End only when the message is empty as well."""
        screen = self.screen
        focused = screen.focused
        here = focused is None or focused is screen.prompt or screen.transcript in focused.ancestors
        if not here:
            return False
        if action in ("empty_home", "empty_end"):
            return focused is not screen.prompt or not screen.prompt.text
        return True

    def scroll_page(self, direction: int) -> None:
        transcript = self.screen.transcript
        if direction < 0:
            transcript.scroll_page_up(animate=False)
        else:
            transcript.scroll_page_down(animate=False)

    def scroll_top(self) -> None:
        self.screen.transcript.scroll_home(animate=False)
