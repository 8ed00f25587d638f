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

from textual import events
from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import Input, TextArea

from myrm_tui.tui.screens.chat.parts import ChatParts
from myrm_tui.tui.widgets.approval import FOCUS_BINDING_ID, FOCUS_KEY, ApprovalPrompt

# The chat screen's keys. Keys that run a command name its handler in the command table
# (tui/prompt/command_table.py); the rest are the keyboard model below or the screen's own actions.
CHAT_BINDINGS: list[BindingType] = [
    # Esc stops a running turn (or compaction) and, whatever runs, brings the keyboard back to
    # the message from anywhere on this screen (the keyboard model below).
    Binding("escape", "interrupt", "Interrupt the turn; back to the message", priority=True, id="chat.interrupt"),
    # Never "clear": Ctrl+C copies a selection, else interrupts, else quits on a second press.
    Binding(
        "ctrl+c",
        "clear_or_quit",
        "Copy / interrupt / quit (twice)",
        show=False,
        priority=True,
        id="chat.clear_or_quit",
    ),
    Binding("ctrl+end", "jump_to_bottom", "Jump to bottom", show=False, id="chat.jump_to_bottom"),
    # The conversation scrolls from the message, as in every chat client: priority, or the
    # prompt's own PageUp/PageDown (cursor by a page) and Home/End would take the keys.
    # Home/End only on an empty message (check_action), where they have no line to move on.
    Binding("pageup", "scroll_page(-1)", "Scroll the conversation up", show=False, priority=True, id="chat.page_up"),
    Binding(
        "pagedown", "scroll_page(1)", "Scroll the conversation down", show=False, priority=True, id="chat.page_down"
    ),
    Binding("ctrl+home", "scroll_top", "Top of the conversation", show=False, priority=True, id="chat.top"),
    Binding("home", "empty_home", "Top of the conversation (empty message)", show=False, priority=True, id="chat.home"),
    Binding("end", "empty_end", "Bottom of the conversation (empty message)", show=False, priority=True, id="chat.end"),
    # Tab walks the conversation's blocks (tool calls, summaries, an approval being answered)
    # from the newest, then comes back to the message; it replaces Textual's focus_next,
    # which began at the oldest block and scrolled the view to the top on the way.
    Binding("tab", "cycle_blocks(1)", "Next block, newest first, then the message", show=False, id="chat.next_block"),
    Binding(
        "shift+tab",
        "cycle_blocks(-1)",
        "Previous block (back towards the newest)",
        show=False,
        id="chat.previous_block",
    ),
    Binding("ctrl+l", "command('compact')", "Compact now", id="chat.compact"),
    Binding("ctrl+n", "command('fork')", "Fork session", id="chat.fork"),
    Binding("f2", "command('settings')", "Settings", id="chat.settings"),
    Binding("ctrl+o", "command('model')", "Switch model", id="chat.model"),
    Binding("ctrl+r", "command('sessions')", "Sessions", id="chat.sessions"),
    Binding("ctrl+b", "command('toggle_panel')", "Compaction panel", id="chat.panel"),
    Binding("f3", "command('health')", "Context health", id="chat.health"),
    Binding("f1", "command('help')", "Keys and commands", id="chat.help"),
    Binding("ctrl+g", "external_editor", "Edit draft in $EDITOR", id="chat.editor"),
    # Priority: the prompt's own Ctrl+Y (redo) would take it otherwise; only while an approval
    # waits (check_action), so redo works the rest of the time.
    Binding(FOCUS_KEY, "focus_approval", "Answer the waiting approval (and back)", priority=True, id=FOCUS_BINDING_ID),
    # Edit, retry and queue (screens/chat_edit_queue.py): Up/Delete are ours only on an empty
    # prompt or while editing (check_action); everywhere else they keep their meaning. Esc
    # (chat.interrupt) also cancels an edit: a second Esc binding would be lost to a keymap.
    Binding(
        "up",
        "edit_last",
        "Edit your last message (empty prompt) / the last queued one",
        show=False,
        priority=True,
        id="chat.edit_last",
    ),
    Binding(
        "alt+up",
        "edit_earlier",
        "While editing: the message before",
        show=False,
        priority=True,
        id="chat.edit_earlier",
    ),
    Binding(
        "alt+down",
        "edit_later",
        "While editing: the message after",
        show=False,
        priority=True,
        id="chat.edit_later",
    ),
    Binding(
        "delete",
        "cancel_queued",
        "Remove the last queued message (empty prompt)",
        show=False,
        priority=True,
        id="chat.cancel_queued",
    ),
    Binding("f5", "command('retry')", "Retry: regenerate the last answer in a fork", id="chat.retry"),
]


def _within(widget: Widget, kind: type[Widget]) -> bool:
    return any(isinstance(node, kind) for node in (widget, *widget.ancestors))


class ChatKeys:
    def __init__(self, screen: ChatParts) -> None:
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
