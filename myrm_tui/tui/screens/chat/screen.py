"""The conversation screen: transcript, prompt, status line and context ring; one turn at a time.

The screen composes the widgets and routes what happens on them; the work lives in collaborators
it owns: the turn runner (tui/session/turn_runner.py: warm-up, the turn and compaction workers, GC; it
reports what happens as messages, tui/session/messages.py, that the handlers here show), the
commands (screens/chat_commands.py, driven by the command table), the dialog flows
(screens/chat_dialogs.py, undo_flow.py) and the edit queue (screens/chat_edit_queue.py). The
transcript windows the history itself (widgets/transcript.py).

The ring, the fork hint and the compaction panel are refreshed from the store when the context
changes (a model call starts, usage arrives, a turn ends, a compaction runs) — never per token.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.widgets import TextArea
from textual.worker import Worker, WorkerState

from myrm_tui.agent.events import StepStarted
from myrm_tui.llm.events import UsageEvent
from myrm_tui.tui.constants import CTRL_C_QUIT_WINDOW_S, PANEL_BESIDE_MIN_WIDTH
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.figures.context_source import ContextState, ModelBudget
from myrm_tui.tui.formatting import pretty_key
from myrm_tui.tui.input_priority import InputPriority
from myrm_tui.tui.prompt.image_input import PendingImages
from myrm_tui.tui.prompt.message_queue import MessageQueue
from myrm_tui.tui.prompt.slash_commands import SlashCommand
from myrm_tui.tui.screens.chat.commands import ChatCommands
from myrm_tui.tui.screens.chat.context import ContextView
from myrm_tui.tui.screens.chat.edit_queue import EditQueue
from myrm_tui.tui.screens.chat.keys import CHAT_BINDINGS, ChatKeys
from myrm_tui.tui.screens.chat.parts import ChatParts
from myrm_tui.tui.screens.chat.popup import PopupFeed
from myrm_tui.tui.session.chat_session import ChatSession
from myrm_tui.tui.session.messages import (
    ChatNote,
    CompactEnded,
    CompactProgress,
    EnginePrepared,
    IdleWorkDone,
    StatusChanged,
    TurnEnded,
    TurnEvent,
    TurnStarted,
)
from myrm_tui.tui.session.turn_runner import TurnRunner, compacted_text
from myrm_tui.tui.transcript.edit_retry import EditTarget
from myrm_tui.tui.transcript.history import UserItem, build_history
from myrm_tui.tui.widgets.approval import FOCUS_BINDING_ID, FOCUS_KEY, ApprovalPrompt
from myrm_tui.tui.widgets.blocks.compaction_divider import CompactionDivider
from myrm_tui.tui.widgets.blocks.note import Note
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from myrm_tui.tui.widgets.compaction_panel import CompactionPanel
from myrm_tui.tui.widgets.completion_popup import CompletionPopup
from myrm_tui.tui.widgets.context_ring import ContextRing, ForkHint
from myrm_tui.tui.widgets.edit_hint import EditHint
from myrm_tui.tui.widgets.prompt import PromptArea
from myrm_tui.tui.widgets.queued_messages import QueuedMessages
from myrm_tui.tui.widgets.status_bar import StatusBar, StatusInfo
from myrm_tui.tui.widgets.transcript import Transcript
from myrm_tui.tui.widgets.welcome import Welcome

if TYPE_CHECKING:
    from myrm_tui.tui.turn_view import TurnView  # imported on the first turn (tool blocks, approvals)


class ChatScreen(ChatParts):
    DEFAULT_CSS = sibling_css(__file__)
    AUTO_FOCUS = "#prompt"
    # Not ClassVar: Textual's own annotation (`ClassVar[...] | None`) reads as an instance attribute.
    HORIZONTAL_BREAKPOINTS: list[tuple[int, str]] | None = [(0, "-narrow"), (PANEL_BESIDE_MIN_WIDTH, "-wide")]
    BINDINGS: ClassVar[list[BindingType]] = CHAT_BINDINGS  # screens/chat_keys.py

    def __init__(self, chat: ChatSession) -> None:
        super().__init__()
        self.chat = chat
        self.images = PendingImages()  # /image attachments for the next message
        self.context = ContextState()
        self._last_ctrl_c = 0.0
        # keys before the stream (tui/input_priority.py): the prompt reports, the replies wait
        self.input_priority = InputPriority()
        self.runner = TurnRunner(self, chat, self.images, self.input_priority)
        self.turn_view: TurnView | None = None  # the running turn's widgets
        self.turns_ended = 0  # finished turns this screen showed (tests and the palette wait on it)
        self.edits = EditQueue(self)
        self.commands = ChatCommands(self, self.runner, self.edits)
        self.readouts = ContextView(self)
        self.popup_feed = PopupFeed(self, self.commands)
        self.keys = ChatKeys(self)

    def compose(self) -> ComposeResult:
        # The panel sits beside the transcript, above the prompt: on a narrow terminal it takes
        # the transcript's place while shown (chat.tcss), and the prompt stays in view either way.
        with Horizontal(id="body"):
            yield Transcript(id="transcript")
            yield CompactionPanel(id="panel")
        yield CompletionPopup(id="popup")
        yield QueuedMessages(id="queued")
        yield EditHint(id="edit-hint")
        yield PromptArea(id="prompt", input_priority=self.input_priority)
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

    # state (tests and the collaborators read these) -----------------------------------------

    @property
    def ready(self) -> asyncio.Event:
        """Set once the engine warm-up finished (either way)."""
        return self.runner.ready

    @property
    def turn_running(self) -> bool:
        return self.runner.turn_running

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
        if self.runner.send(text, draft=draft, model=model, note=note) and draft is not None:
            self.prompt.prompt_history.add(draft)
            self.prompt.take_submitted(draft)

    # what the turn runner reports (tui/session/messages.py) ------------------------------------------

    @on(TurnStarted)
    def _turn_started(self, message: TurnStarted) -> None:
        self.drop_welcome()
        user = UserMessage(message.shown, stored=False)
        self.transcript.mount(user)
        self.transcript.anchor()  # sending is a request to follow the reply
        from myrm_tui.tui.turn_view import TurnView

        self.turn_view = TurnView(self.transcript, self.status, user, self.input_priority)
        self.status.set(state=message.state)

    @on(TurnEvent)
    def _turn_event(self, message: TurnEvent) -> None:
        if self.turn_view is not None:
            self.turn_view.handle(message.event)
            if isinstance(message.event, (StepStarted, UsageEvent)):
                self.refresh_context()

    @on(TurnEnded)
    def _turn_ended(self, message: TurnEnded) -> None:
        view, self.turn_view = self.turn_view, None
        try:
            if view is not None and self.app.is_running and self.transcript.is_mounted:
                self._show_turn_end(view, message)
        finally:
            self.turns_ended += 1

    def _show_turn_end(self, view: TurnView, message: TurnEnded) -> None:
        state = message.state
        if state == WorkerState.CANCELLED:
            view.close("interrupted")
        elif state == WorkerState.ERROR:
            error = message.error
            hint = "Your message was kept in the input; send it again when fixed."
            view.note(str(error) or type(error).__name__, "error", hint)
            view.close("error")
        else:
            view.close("error" if view.failed else "done")
        # After any failure the draft comes back, even when part of a reply had streamed (a
        # dropped stream): sending it again is the retry, and the agent reuses the stored ask
        # when nothing answered it (agent/turn/resend.py). An interrupt is the user's own stop: the
        # draft comes back only if nothing was produced.
        failed = state == WorkerState.ERROR or (state == WorkerState.SUCCESS and view.failed)
        if failed or (state == WorkerState.CANCELLED and not view.produced):
            self.prompt.restore(message.draft)
            self.images.give_back()
        self.refresh_context()
        self.transcript.prune()
        self.focus_next_approval()
        self.runner.upkeep_after_turn(state == WorkerState.SUCCESS and not view.failed)
        self.edits.after_turn(state, view.failed)  # queued messages: sent, or back in the prompt

    @on(StatusChanged)
    def _status_changed(self, message: StatusChanged) -> None:
        if message.session_id is not None:
            self.status.set(state=message.state, session_id=message.session_id)
        else:
            self.status.set(state=message.state)

    @on(ChatNote)
    def _chat_note(self, message: ChatNote) -> None:
        self.transcript.mount(Note(message.text, message.level, message.hint))

    @on(EnginePrepared)
    def _engine_prepared(self, message: EnginePrepared) -> None:
        self.readouts.engine_prepared(message.problem, message.window_problem)

    @on(IdleWorkDone)
    def _idle_work_done(self, _message: IdleWorkDone) -> None:
        if self.turn_view is None:  # a turn that started meanwhile refreshes them itself
            self.refresh_context()

    @on(CompactProgress)
    def _compact_progress(self, message: CompactProgress) -> None:
        self.status.set(state=f"{message.state} · {self.key_for('chat.interrupt')} cancels")

    @on(CompactEnded)
    def _compact_ended(self, message: CompactEnded) -> None:
        self.status.set(state="")
        if message.problem is not None:
            self.notify(message.problem, severity=message.severity)
        elif not message.result:
            self.notify("Nothing to compact: only the latest exchange is left.")
        else:
            self.notify(compacted_text(message.result))
        self.refresh_context()

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
        view = self.turn_view
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
        from myrm_tui.tui.external_editor import edit_draft

        edit_draft(self, self.prompt)
