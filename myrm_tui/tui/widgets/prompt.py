"""The message editor: Enter sends, Shift+Enter / Ctrl+J / Alt+Enter insert a newline.

Ctrl+J is there because most terminals cannot report Shift+Enter (it needs the kitty keyboard
protocol) and VS Code's terminal sends Alt+Enter for it. Send and newline are priority
bindings of this widget so they win over TextArea's own Enter handling, and they carry ids so
the keymap setting can move them.

Up/Down browse earlier prompts only at the first/last line (elsewhere they move the cursor),
and drive the completion popup while it is open; Tab accepts a completion (else moves focus).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widgets import TextArea
from textual.worker import Worker, WorkerState

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.input_priority import InputPriority
from myrm_tui.tui.prompt.completion import apply_completion, completion_at
from myrm_tui.tui.prompt.paste_chips import PasteChips, is_big
from myrm_tui.tui.prompt.prompt_history import PromptHistory
from myrm_tui.tui.prompt.prompt_text import PLACEHOLDER
from myrm_tui.tui.prompt.user_prompts import workspace_prompts
from myrm_tui.tui.widgets.completion_popup import CompletionPopup

if TYPE_CHECKING:
    from myrm_tui.store.store import Store


class PromptArea(TextArea):
    DEFAULT_CSS = sibling_css(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Send", priority=True, id="prompt.submit"),
        Binding("shift+enter,ctrl+j,alt+enter", "newline", "Newline", priority=True, show=False, id="prompt.newline"),
        Binding("up", "history_previous", "Previous prompt", show=False, id="prompt.history_previous"),
        Binding("down", "history_next", "Next prompt", show=False, id="prompt.history_next"),
        # Ctrl+R is the sessions list here (chat.sessions), so the shell's *other* history-search
        # key: bash's forward-i-search. The terminal's XON/XOFF use of it is off while Textual runs.
        Binding("ctrl+s", "history_search", "Search earlier prompts", show=False, id="prompt.history_search"),
        Binding("ctrl+t", "expand_pastes", "Expand pasted text", show=False, id="prompt.expand_pastes"),
        Binding("tab", "complete", "Complete", show=False, priority=True, id="prompt.complete"),
        Binding("escape", "close_popup", "Close popup", show=False, id="prompt.close_popup"),
    ]

    class Submitted(Message):
        def __init__(self, prompt: PromptArea, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

        @property
        def control(self) -> PromptArea:
            return self.prompt

    class HistorySearch(Message):
        """Asks for the prompt-history search dialog; the app opens it (MyrmApp, since widgets sit
        below screens and do not import them). `chosen` gets the pick, or None."""

        def __init__(self, history: PromptHistory, query: str, chosen: Callable[[str | None], None]) -> None:
            super().__init__()
            self.history = history
            self.query = query
            self.chosen = chosen

    def __init__(self, *, id: str | None = None, input_priority: InputPriority | None = None) -> None:
        super().__init__(
            "",
            id=id,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder=PLACEHOLDER,
        )
        self.prompt_history = PromptHistory()
        self.chips = PasteChips()  # big pastes shown as `[pasted N lines]` (tui/prompt/paste_chips.py)
        self.popup: CompletionPopup | None = None
        # the chat screen's, shared with its streaming replies; a prompt on its own keeps its own
        self.input_priority = input_priority or InputPriority()

    # A key the prompt takes holds a streaming reply's next frame back until the key is painted
    # (tui/input_priority.py): its screen update is then this widget's rows, not a layout of the
    # transcript with a render thread holding the GIL. `_on_key` is TextArea's documented hook
    # for a subclass's keys; `render_lines` runs when the screen paints this widget.

    async def _on_key(self, event: events.Key) -> None:
        self.input_priority.key_arrived()
        await super()._on_key(event)

    def render_lines(self, crop: Region) -> list[Strip]:
        lines = super().render_lines(crop)
        self.input_priority.key_painted()
        return lines

    @property
    def popup_open(self) -> bool:
        return self.popup is not None and self.popup.open

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "complete":
            return self.popup_open  # otherwise Tab keeps its focus-next meaning
        if action == "close_popup":
            return self.popup_open  # otherwise Esc is not ours
        return True

    # Priority bindings run in the app's task as soon as the key is read, while the characters
    # typed just before it may still sit in this widget's queue (fast typing, tmux send-keys,
    # a paste without bracketed-paste). Queueing the action behind them keeps the order.

    def action_submit(self) -> None:
        """Post the text; the screen decides whether to send, and clears the editor if it does."""
        self.call_later(self._submit_now)

    def _submit_now(self) -> None:
        if self.popup_open and self._accept_completion(only_if_changes=True):
            return
        self.post_message(self.Submitted(self, self.expanded_text))

    @property
    def expanded_text(self) -> str:
        """The draft with every paste chip replaced by its text: what is sent or edited."""
        return self.chips.expand(self.text)

    def action_expand_pastes(self) -> None:
        if not self.chips:
            self.notify("No collapsed paste in the message.", timeout=2)
            return
        self.load_text(self.expanded_text)
        self.chips.retain(self.text)
        self.move_cursor(self.document.end)

    # Text that enters the editor from outside the keyboard (a paste, a recalled prompt, a
    # completion, $EDITOR) may carry terminal control sequences; the TextArea draws its document
    # raw, so they are made visible escapes on the way in (the same rule as every other sink).

    def load_text(self, text: str) -> None:
        super().load_text(for_terminal(text))

    async def _on_paste(self, event: events.Paste) -> None:
        if self.read_only:
            return
        event.prevent_default()
        event.stop()
        self.type_ahead(event.text)
        self.focus()

    def type_ahead(self, text: str) -> None:
        """`text` typed or pasted, here or while a dialog was up (`ConfirmScreen`), so the message
        keeps what the user typed on: as the keyboard writes it (over a selection, undoable; a
        large paste as a chip), made visible if it carries terminal control sequences."""
        text = for_terminal(text)
        if is_big(text):
            text = self.chips.add(text)
        if result := self._replace_via_keyboard(text, *self.selection):
            self.move_cursor(result.end_location)

    def take_submitted(self, text: str) -> None:
        """Remove `text` (what was just sent) from the editor, keeping whatever the user typed
        after pressing Enter: those keys were queued behind the submit and are already in."""
        current = self.expanded_text
        if current.startswith(text):
            rest = current[len(text) :]
            self.load_text(rest)
            self.move_cursor(self.document.end)
        else:
            self.clear()
        self.chips.retain(self.text)

    def action_newline(self) -> None:
        self.call_later(self.insert, "\n")

    def action_complete(self) -> None:
        self.call_later(self._accept_completion)

    def action_close_popup(self) -> None:
        if self.popup is not None:
            self.popup.close()

    def _accept_completion(self, only_if_changes: bool = False) -> bool:
        popup = self.popup
        if popup is None or popup.request is None or popup.current is None:
            return False
        # The choices were computed for the token as it was when the popup last filtered; keys
        # typed since (fast typing, a paste, tmux send-keys) may have changed it. Completing a
        # stale token would splice the old choice into the new text ("/mcp" → "/mcp cp").
        fresh = completion_at(self.text, *self.cursor_location)
        if fresh is None or fresh != popup.request:
            popup.close()
            return False
        new_text, cursor = apply_completion(self.text, popup.request, popup.current.value)
        if only_if_changes and new_text.rstrip() == self.text.rstrip():
            return False
        popup.close()
        self.load_text(new_text)
        self.move_cursor(cursor)
        return True

    def action_history_previous(self) -> None:
        if self.popup_open:
            assert self.popup is not None
            self.popup.move(-1)
            return
        if self.cursor_location[0] > 0:
            self.action_cursor_up()
            return
        entry = self.prompt_history.previous(self.text)
        if entry is not None:
            self.load_text(entry)
            self.move_cursor((0, len(entry.split("\n", 1)[0])))

    def action_history_next(self) -> None:
        if self.popup_open:
            assert self.popup is not None
            self.popup.move(1)
            return
        if self.cursor_location[0] < self.document.line_count - 1:
            self.action_cursor_down()
            return
        entry = self.prompt_history.next()
        if entry is not None:
            self.load_text(entry)
            self.move_cursor(self.document.end)

    def add_workspace_history(self, store: Store, exclude: Collection[int]) -> None:
        """Read the prompts of the workspace's other sessions off the UI thread and put them
        before this session's in the history (Up and the search reach them)."""
        self.run_worker(
            partial(workspace_prompts, store, exclude),
            thread=True,
            group="workspace-history",
            exclusive=True,
            exit_on_error=False,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "workspace-history" and event.state == WorkerState.SUCCESS:
            self.prompt_history.add_older(event.worker.result or [])

    def action_history_search(self) -> None:
        """Search every earlier prompt of the workspace; the pick replaces the draft, which Down
        brings back (PromptHistory.jump_to). A one-line draft is the starting query."""
        draft = self.text
        query = draft.strip() if "\n" not in draft.strip() else ""

        def chosen(entry: str | None) -> None:
            if entry is None:
                return
            self.prompt_history.jump_to(entry, draft)
            self.load_text(entry)
            self.move_cursor(self.document.end)
            self.focus()

        self.post_message(self.HistorySearch(self.prompt_history, query, chosen))

    def restore(self, text: str) -> None:
        """Put an unsent message back, keeping anything typed since (nothing is lost)."""
        if not text:
            return
        current = self.text
        self.load_text(text if not current.strip() else f"{text}\n{current}")
        self.move_cursor(self.document.end)
