"""The conversation screen: transcript, prompt, status line and context ring; one turn at a time.

The screen composes the widgets and routes what happens on them; the work lives in collaborators
it owns: the turn runner (tui/turn_runner.py: warm-up, the turn and compaction workers, GC), the
commands (screens/chat_commands.py, driven by the command table), the dialog flows
(screens/chat_dialogs.py, undo_flow.py) and the edit queue (screens/chat_edit_queue.py). The
transcript windows the history itself (widgets/transcript.py).

The ring, the fork hint and the compaction panel are refreshed from the store when the context
changes (a model call starts, usage arrives, a turn ends, a compaction runs) — never per token.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import TextArea
from textual.worker import Worker

from myrm_tui.tui.chat_session import ChatSession
from myrm_tui.tui.constants import CTRL_C_QUIT_WINDOW_S, PANEL_BESIDE_MIN_WIDTH
from myrm_tui.tui.context_source import ContextState, ModelBudget
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.edit_retry import EditTarget
from myrm_tui.tui.formatting import pretty_key
from myrm_tui.tui.history import UserItem, build_history
from myrm_tui.tui.image_input import PendingImages
from myrm_tui.tui.message_queue import MessageQueue
from myrm_tui.tui.screens.chat_commands import ChatCommands
from myrm_tui.tui.screens.chat_context import ContextView
from myrm_tui.tui.screens.chat_edit_queue import EditQueue
from myrm_tui.tui.screens.chat_keys import ChatKeys
from myrm_tui.tui.screens.chat_popup import PopupFeed
from myrm_tui.tui.slash_commands import SlashCommand
from myrm_tui.tui.turn_runner import TurnRunner
from myrm_tui.tui.widgets.approval import FOCUS_BINDING_ID, FOCUS_KEY, ApprovalPrompt
from myrm_tui.tui.widgets.compaction_divider import CompactionDivider
from myrm_tui.tui.widgets.compaction_panel import CompactionPanel
from myrm_tui.tui.widgets.completion_popup import CompletionPopup
from myrm_tui.tui.widgets.context_ring import ContextRing, ForkHint
from myrm_tui.tui.widgets.edit_hint import EditHint
from myrm_tui.tui.widgets.note import Note
from myrm_tui.tui.widgets.prompt import PromptArea
from myrm_tui.tui.widgets.queued_messages import QueuedMessages
from myrm_tui.tui.widgets.status_bar import StatusBar, StatusInfo
from myrm_tui.tui.widgets.transcript import Transcript
from myrm_tui.tui.widgets.user_message import UserMessage
from myrm_tui.tui.widgets.welcome import Welcome

if TYPE_CHECKING:
    from myrm_tui.tui.app_host import ChatHost


class ChatScreen(Screen[None]):
    DEFAULT_CSS = sibling_css(__file__)
    AUTO_FOCUS = "#prompt"
    # Not ClassVar: Textual's own annotation (`ClassVar[...] | None`) reads as an instance attribute.
    HORIZONTAL_BREAKPOINTS: list[tuple[int, str]] | None = [(0, "-narrow"), (PANEL_BESIDE_MIN_WIDTH, "-wide")]
    # Keys that run a command name its handler in the command table (tui/command_table.py).
    BINDINGS: ClassVar[list[BindingType]] = [
        # Esc stops a running turn (or compaction) and, whatever runs, brings the keyboard back to
        # the message from anywhere on this screen (screens/chat_keys.py: the keyboard model).
        Binding("escape", "interrupt", "Interrupt the turn; back to the message", priority=True, id="chat.interrupt"),
        Binding("ctrl+c", "clear_or_quit", "Clear / quit (twice)", show=False, priority=True, id="chat.clear_or_quit"),
        Binding("ctrl+end", "jump_to_bottom", "Jump to bottom", show=False, id="chat.jump_to_bottom"),
        # The conversation scrolls from the message, as in every chat client: priority, or the
        # prompt's own PageUp/PageDown (cursor by a page) and Home/End would take the keys.
        # Home/End only on an empty message (check_action), where they have no line to move on.
        Binding(
            "pageup", "scroll_page(-1)", "Scroll the conversation up", show=False, priority=True, id="chat.page_up"
        ),
        Binding(
            "pagedown", "scroll_page(1)", "Scroll the conversation down", show=False, priority=True, id="chat.page_down"
        ),
        Binding("ctrl+home", "scroll_top", "Top of the conversation", show=False, priority=True, id="chat.top"),
        Binding(
            "home", "empty_home", "Top of the conversation (empty message)", show=False, priority=True, id="chat.home"
        ),
        Binding(
            "end", "empty_end", "Bottom of the conversation (empty message)", show=False, priority=True, id="chat.end"
        ),
        # Tab walks the conversation's blocks (tool calls, summaries, an approval being answered)
        # from the newest, then comes back to the message; it replaces Textual's focus_next,
        # which began at the oldest block and scrolled the view to the top on the way.
        Binding(
            "tab", "cycle_blocks(1)", "Next block, newest first, then the message", show=False, id="chat.next_block"
        ),
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
        Binding(
            FOCUS_KEY, "focus_approval", "Answer the waiting approval (and back)", priority=True, id=FOCUS_BINDING_ID
        ),
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

    def __init__(self, chat: ChatSession) -> None:
        super().__init__()
        self.chat = chat
        self.images = PendingImages()  # /image attachments for the next message
        self.context = ContextState()
        self._last_ctrl_c = 0.0
        self.runner = TurnRunner(self)
        self.edits = EditQueue(self)
        self.commands = ChatCommands(self, self.runner, self.edits)
        self.readouts = ContextView(self)
        self.popup_feed = PopupFeed(self, self.commands)
        self.keys = ChatKeys(self)

    @property
    def myrm(self) -> ChatHost:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        # The panel sits beside the transcript, above the prompt: on a narrow terminal it takes
        # the transcript's place while shown (chat.tcss), and the prompt stays in view either way.
        with Horizontal(id="body"):
            yield Transcript(id="transcript")
            yield CompactionPanel(id="panel")
        yield CompletionPopup(id="popup")
        yield QueuedMessages(id="queued")
        yield EditHint(id="edit-hint")
        yield PromptArea(id="prompt")
        with Horizontal(id="statusline"):
            yield StatusBar(
                StatusInfo(
                    model=self.chat.settings.model or None,
                    workspace=self.chat.workspace,
                    session_id=self.chat.session_id,
                ),
                id="status",
            )
            yield ForkHint(id="fork-hint")
            yield ContextRing(id="ring")

    # widgets and state (tests and the collaborators read these) ----------------------------

    @property
    def transcript(self) -> Transcript:
        return self.query_one("#transcript", Transcript)

    @property
    def prompt(self) -> PromptArea:
        return self.query_one("#prompt", PromptArea)

    @property
    def status(self) -> StatusBar:
        return self.query_one("#status", StatusBar)

    @property
    def ring(self) -> ContextRing:
        return self.query_one("#ring", ContextRing)

    @property
    def panel(self) -> CompactionPanel:
        return self.query_one("#panel", CompactionPanel)

    @property
    def popup(self) -> CompletionPopup:
        return self.query_one("#popup", CompletionPopup)

    @property
    def edit_hint(self) -> EditHint:
        return self.query_one("#edit-hint", EditHint)

    @property
    def queued(self) -> QueuedMessages:
        return self.query_one("#queued", QueuedMessages)

    @property
    def ready(self) -> asyncio.Event:
        """Set once the engine warm-up finished (either way)."""
        return self.runner.ready

    @property
    def turn_running(self) -> bool:
        return self.runner.turn_running

    @property
    def turns_ended(self) -> int:
        return self.runner.turns_ended

    @property
    def compacting(self) -> bool:
        return self.runner.compacting

    @property
    def queue(self) -> MessageQueue:
        return self.edits.queue

    @property
    def editing(self) -> EditTarget | None:
        return self.edits.editing

    @property
    def hidden_turns(self) -> int:
        return self.transcript.hidden_turns

    def mounted_turns(self) -> list[UserMessage]:
        return self.transcript.mounted_turns()

    def run_command(self, name: str, argument: str = "") -> None:
        """A slash command (also what the palette calls)."""
        self.commands.run(name, argument)

    def custom_slash(self) -> tuple[SlashCommand, ...]:
        return self.commands.slash()

    def help_markdown(self) -> str:
        return self.commands.help_markdown()

    def after_turn(self, worker_state: Any, failed: bool) -> None:
        self.edits.after_turn(worker_state, failed)

    # mount and unmount ----------------------------------------------------------------------

    async def on_unmount(self) -> None:
        await self.runner.shutdown()

    def on_mount(self) -> None:
        if not self.query("#prompt"):
            # The app began closing before this screen composed (a quit as the chat opened):
            # Textual then mounts no children, and a closing app has nothing to set up.
            return
        self.prompt.popup = self.popup
        self.panel.display = False
        if self.chat.open_error:
            self.transcript.mount(Note(self.chat.open_error, "error"))
        records = self.chat.history()
        self.prompt.prompt_history = type(self.prompt.prompt_history)(
            item.text for item in build_history(records).items if isinstance(item, UserItem)
        )
        self.prompt.add_workspace_history(self.chat.store, {r.id for r in records})
        self.transcript.page_source = self.readouts.history_page
        self.transcript.show_history(self.readouts.history_page(records))
        if not records and not self.chat.open_error:
            model = self.chat.settings.model or self.chat.resolve_session_model()
            self.transcript.mount(
                Welcome(
                    model, self.readouts.welcome_keys(), own_endpoint=self.readouts.own_endpoint(model), id="welcome"
                )
            )
        self.ring.compact_key = self.key_for("chat.compact")
        self.refresh_context(announce=False)
        self.commands.reload(announce=True)
        self.runner.prepare()
        self.edits.mounted()

    def cancel_workers(self, group: str) -> None:
        self.workers.cancel_group(self, group)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.runner.worker_changed(event.worker, event.state)

    def key_for(self, binding_id: str) -> str:
        """The key currently bound to `binding_id` (keymap applied), for hints."""
        for active in self.active_bindings.values():
            if active.binding.id == binding_id:
                return self.app.get_key_display(active.binding)
        return self.raw_key_for(binding_id)

    def raw_key_for(self, binding_id: str) -> str:
        """The key string bound to `binding_id` with the keymap applied ("ctrl+o")."""
        keymap: Mapping[str, str] = getattr(self.app, "_keymap", {}) or {}  # Textual's Keymap: binding id → keys
        if binding_id in keymap:
            return keymap[binding_id].split(",")[0]
        for binding in self.BINDINGS:
            if isinstance(binding, Binding) and binding.id == binding_id:
                return binding.key.split(",")[0]
        return ""

    def engine_prepared(self, problem: str | None, window_problem: str | None) -> None:
        self.readouts.engine_prepared(problem, window_problem)

    def drop_welcome(self) -> None:
        for welcome in self.transcript.query_children(Welcome):
            welcome.remove()

    # context: ring, fork hint, panel, dividers ----------------------------------------------

    def refresh_context(self, announce: bool = True) -> None:
        """Re-read the ring's figures from the store (a model call, usage or a compaction)."""
        self.readouts.refresh(self.ring, self.query_one("#fork-hint", ForkHint), self.panel, announce)

    @property
    def model_budget(self) -> ModelBudget | None:
        """The current model's prompt budget, once known (the ring and F3 measure against it)."""
        return self.readouts.current_budget()

    def set_model_budget(self, budget: ModelBudget | None) -> None:
        """The model changed (/model, settings) or the warm-up resolved it: the figures follow now,
        not at the next request."""
        self.readouts.budget = budget
        self.refresh_context(announce=False)

    @on(CompactionDivider.Opened)
    def _divider_opened(self, event: CompactionDivider.Opened) -> None:
        event.stop()
        self.set_panel(True)

    @on(ContextRing.CompactRequested)
    def _ring_clicked(self, event: ContextRing.CompactRequested) -> None:
        event.stop()
        self.commands.run_handler("compact")

    @on(ForkHint.ForkRequested)
    def _fork_clicked(self, event: ForkHint.ForkRequested) -> None:
        event.stop()
        self.commands.run_handler("fork")

    @property
    def panel_shown(self) -> bool:
        return bool(self.panel.display)

    def set_panel(self, shown: bool) -> None:
        self.panel.display = shown
        self.query_one("#body").set_class(shown, "-panel-shown")
        if shown:
            self.readouts.refresh_panel(self.panel)

    # sending --------------------------------------------------------------------------------

    @on(PromptArea.Submitted)
    def _submitted(self, event: PromptArea.Submitted) -> None:
        event.stop()
        text = event.text
        if not text.strip():
            return
        self.popup.close()
        self.commands.reload()
        # editing a sent message, queueing during a turn, or a slash command took it
        if self.edits.submit_hook(text) or self.commands.submitted(text):
            return
        self.send_message(text, draft=text)

    def send_message(self, text: str, *, draft: str | None, model: str | None = None, note: str = "") -> None:
        self.runner.send(text, draft=draft, model=model, note=note)

    def busy(self) -> bool:
        return self.runner.busy()

    # completion popup -----------------------------------------------------------------------

    @on(TextArea.Changed, "#prompt")
    def _prompt_changed(self, event: TextArea.Changed) -> None:
        self.popup_feed.update(self.popup)

    # approvals ------------------------------------------------------------------------------

    # An approval never takes the keyboard by itself (widgets/approval.py says why): the prompt
    # keeps it, and the user moves to the approval with approval.focus (Ctrl+Y) and back.

    @on(ApprovalPrompt.Shown)
    def _approval_shown(self, event: ApprovalPrompt.Shown) -> None:
        event.stop()
        key = pretty_key(self.raw_key_for(FOCUS_BINDING_ID) or FOCUS_KEY)
        self.status.set(state=f"waiting for approval ({key} to answer)")
        event.prompt.call_after_refresh(event.prompt.scroll_visible)  # once its height is known

    @on(ApprovalPrompt.Decided)
    def _decided(self, event: ApprovalPrompt.Decided) -> None:
        event.stop()
        view = self.runner.turn_view
        if view is not None and event.allowed is not None:
            view.approval_decided(event.prompt)
        self.focus_next_approval()

    def pending_approval(self) -> ApprovalPrompt | None:
        """The oldest approval still waiting for an answer."""
        return next((p for p in self.transcript.query(ApprovalPrompt) if p.pending), None)

    def action_focus_approval(self) -> None:
        """Move the keyboard to the waiting approval, or from it back to the message."""
        waiting = self.pending_approval()
        if waiting is None:
            return
        if waiting.has_focus_within:
            waiting.disarm()
            self.prompt.focus()
            return
        waiting.arm()

    def focus_next_approval(self) -> None:
        """Give the keyboard back to the prompt when it was on an approval that closed (never
        to a waiting approval: moving there is the user's deliberate key)."""
        focused = self.focused
        on_approval = focused is not None and any(isinstance(a, ApprovalPrompt) for a in (focused, *focused.ancestors))
        if on_approval or focused is None or not focused.can_focus:
            self.prompt.focus()

    # keys -----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        ours = self.edits.check_action(action)
        if ours is not None:
            return ours
        if action == "interrupt":
            # In an approval's reason box Esc goes back to the answers. Idle, it is ours only away
            # from the message (to come back to it): on the message, the popup's Esc is there.
            if self.compacting:
                return True
            if self.turn_running:
                waiting = self.pending_approval()
                return not (waiting is not None and waiting.reason_open)
            return self.keys.away_from_prompt()
        if action in ("scroll_page", "scroll_top", "empty_home", "empty_end"):
            return self.keys.scroll_key_enabled(action)
        if action == "focus_approval":
            return self.pending_approval() is not None  # otherwise Ctrl+Y is the prompt's redo
        return True

    def action_command(self, handler: str) -> None:
        """A key bound to a command table row (BINDINGS)."""
        self.commands.run_handler(handler)

    def action_interrupt(self) -> None:
        if self.editing is not None and not self.turn_running:
            self.edits.cancel_edit()
        else:
            self.runner.interrupt()
        self.prompt.focus()

    def action_scroll_page(self, direction: int) -> None:
        self.keys.scroll_page(direction)

    def action_scroll_top(self) -> None:
        self.keys.scroll_top()

    def action_empty_home(self) -> None:
        self.keys.scroll_top()

    def action_empty_end(self) -> None:
        self.action_jump_to_bottom()

    def action_cycle_blocks(self, step: int) -> None:
        self.keys.cycle_blocks(step)

    def on_key(self, event: events.Key) -> None:
        """A key no widget used, bubbling up from where the focus is (or none): a printable one
        goes to the message (screens/chat_keys.py)."""
        self.keys.redirect_typing(event)

    def action_edit_last(self) -> None:
        self.edits.edit_last()

    def action_edit_earlier(self) -> None:
        self.edits.edit_earlier()

    def action_edit_later(self) -> None:
        self.edits.edit_later()

    def action_cancel_queued(self) -> None:
        self.edits.cancel_queued()

    def action_clear_or_quit(self) -> None:
        """Copy a selection if there is one; else interrupt a running turn (like Esc); when idle,
        a second press within the window quits. The draft is never cleared: what the user typed
        is theirs (Ctrl+C in a shell habitually means "stop", not "delete my text")."""
        selected = self.get_selected_text() or self.prompt.selected_text
        if selected:
            self.app.copy_to_clipboard(selected)
            self.notify(f"Copied {len(selected):,} characters.", timeout=2)
            return
        if self.turn_running or self.compacting:
            self._last_ctrl_c = 0.0
            self.action_interrupt()
            return
        now = time.monotonic()
        if now - self._last_ctrl_c <= CTRL_C_QUIT_WINDOW_S:
            self.app.exit()
            return
        self._last_ctrl_c = now
        self.notify("Press Ctrl+C again to quit.", timeout=CTRL_C_QUIT_WINDOW_S)

    def action_jump_to_bottom(self) -> None:
        self.transcript.anchor()

    def action_external_editor(self) -> None:
        from myrm_tui.tui.external_editor import edit_text, editor_command

        command = editor_command()
        try:
            with self.app.suspend():
                edited = edit_text(self.prompt.expanded_text, command)  # paste chips expanded
        except SuspendNotSupported:
            self.notify("This terminal cannot hand over to an editor here.", severity="warning")
            return
        except (OSError, Exception) as exc:  # noqa: BLE001 - the draft stays as it was
            self.notify(f"The editor ({' '.join(command)}) failed: {exc}. Your draft is unchanged.", severity="error")
            return
        self.prompt.load_text(edited)
        self.prompt.move_cursor(self.prompt.document.end)
        self.prompt.focus()
