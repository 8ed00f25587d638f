"""The conversation screen: transcript, prompt, status line; runs one turn at a time.

A turn is an async worker iterating `agent.turn()`; Esc cancels it (the agent stores synthetic
results for unfinished tool calls). The engine is warmed up in a thread worker right after
mount so the first paint never waits for litellm.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from myrm_tui.tui.chat_session import ONBOARDING, ChatSession
from myrm_tui.tui.constants import CTRL_C_QUIT_WINDOW_S, HISTORY_TAIL_ITEMS, SHUTDOWN_TURN_WAIT_S
from myrm_tui.tui.css import sibling_css
from myrm_tui.tui.history import AssistantItem, ToolItem, UserItem, build_history
from myrm_tui.tui.turn_view import TurnView
from myrm_tui.tui.widgets.approval import ApprovalPrompt
from myrm_tui.tui.widgets.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.note import Note
from myrm_tui.tui.widgets.prompt import PromptArea
from myrm_tui.tui.widgets.status_bar import StatusBar, StatusInfo
from myrm_tui.tui.widgets.tool_block import ToolBlock
from myrm_tui.tui.widgets.transcript import Transcript
from myrm_tui.tui.widgets.user_message import UserMessage

BUSY_NOTICE = "A turn is running — Esc to interrupt."


class ChatScreen(Screen[None]):
    DEFAULT_CSS = sibling_css(__file__)
    AUTO_FOCUS = "#prompt"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "Interrupt", priority=True, id="chat.interrupt"),
        Binding("ctrl+c", "clear_or_quit", "Clear / quit", show=False, priority=True,
                id="chat.clear_or_quit"),
        Binding("ctrl+end", "jump_to_bottom", "Bottom", show=False, id="chat.jump_to_bottom"),
    ]

    def __init__(self, chat: ChatSession) -> None:
        super().__init__()
        self.chat = chat
        self.ready = asyncio.Event()  # set once the engine warm-up finished (either way)
        self.turn_worker: Worker[None] | None = None
        self.turn_view: TurnView | None = None
        self.turn_text = ""
        self._last_ctrl_c = 0.0

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")
        yield PromptArea(id="prompt")
        yield StatusBar(StatusInfo(model=self.chat.settings.model or None,
                                   workspace=self.chat.workspace,
                                   session_id=self.chat.session_id), id="status")

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
    def turn_running(self) -> bool:
        return self.turn_worker is not None

    async def on_unmount(self) -> None:
        """Quitting mid-turn: let the agent record the interrupt (synthetic results, killed
        processes) before the app closes the store."""
        worker, self.turn_worker = self.turn_worker, None  # no UI updates while closing
        if worker is not None:
            worker.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(worker.wait(), SHUTDOWN_TURN_WAIT_S)
        self.chat.shutdown()

    def on_mount(self) -> None:
        if self.chat.open_error:
            self.transcript.mount(Note(self.chat.open_error, "error"))
        self._render_history()
        self._prepare()

    # history --------------------------------------------------------------------------------

    def _render_history(self) -> None:
        history = build_history(self.chat.history(), tail=HISTORY_TAIL_ITEMS)
        widgets = []
        if history.hidden:
            widgets.append(Note(f"{history.hidden} earlier items are not shown."))
        for item in history.items:
            if isinstance(item, UserItem):
                widgets.append(UserMessage(item.text))
            elif isinstance(item, AssistantItem):
                widgets.append(AssistantMessage(item.text, item.reasoning))
            elif isinstance(item, ToolItem):
                block = ToolBlock(item.call_id, item.name, item.arguments)
                if item.content is not None:
                    block.finish(item.status, item.content, None)
                widgets.append(block)
        if widgets:
            self.transcript.mount_all(widgets)

    # engine warm-up -------------------------------------------------------------------------

    @work(thread=True, group="prepare", exit_on_error=False)
    def _prepare(self) -> str | None:
        model = self.chat.resolve_model()
        if model:
            self.chat.warm_up()
        return model

    def _prepared(self, worker: Worker) -> None:
        if worker.state == WorkerState.SUCCESS:
            self.chat.model = worker.result
        else:
            self.chat.model = self.chat.settings.model or None
            self.transcript.mount(Note(f"Could not resolve the model: {worker.error}", "error",
                                       "Run `myrm doctor` to check the installation."))
        self.status.set(model=self.chat.model)
        if self.chat.model is None:
            self.transcript.mount(Note(ONBOARDING[0], "warning", ONBOARDING[1]))
        self.ready.set()

    # sending --------------------------------------------------------------------------------

    @on(PromptArea.Submitted)
    def _submitted(self, event: PromptArea.Submitted) -> None:
        event.stop()
        text = event.text
        if not text.strip():
            return
        if self.turn_running:
            self.notify(BUSY_NOTICE, severity="warning", timeout=3)
            return
        if self.ready.is_set() and self.chat.model is None:
            self.transcript.mount(Note(ONBOARDING[0], "warning", ONBOARDING[1]))
            return
        self.prompt.clear()
        self.start_turn(text)

    def start_turn(self, text: str) -> None:
        user = UserMessage(text, stored=False)
        self.transcript.mount(user)
        self.transcript.anchor()  # sending is a request to follow the reply
        self.turn_text = text
        self.turn_view = TurnView(self.transcript, self.status, user)
        self.status.set(state="starting" if self.ready.is_set() else "loading the model library")
        self.turn_worker = self.run_worker(self._run_turn(text, self.turn_view), group="turn",
                                           exclusive=True, exit_on_error=False)

    async def _run_turn(self, text: str, view: TurnView) -> None:
        await self.ready.wait()
        if self.chat.model is None:
            raise RuntimeError(ONBOARDING[0])
        agent = self.chat.agent(text)
        self.status.set(session_id=self.chat.session_id, state="thinking")
        turn = agent.turn(text)
        try:
            async for event in turn:
                view.handle(event)
        finally:
            await turn.aclose()

    def _turn_ended(self, worker: Worker) -> None:
        view = self.turn_view
        self.turn_worker = None
        self.turn_view = None
        if view is None or not self.app.is_running or not self.transcript.is_mounted:
            return  # the app is closing; on_unmount waits for the agent instead
        if worker.state == WorkerState.CANCELLED:
            view.close("interrupted")
        elif worker.state == WorkerState.ERROR:
            error = worker.error
            view.note(str(error) or type(error).__name__, "error",
                      "Your message was kept in the input; send it again when fixed."
                      if not view.produced else "")
            view.close("error")
        else:
            view.close("error" if view.failed else "done")
        if (worker.state != WorkerState.SUCCESS or view.failed) and not view.produced:
            self.prompt.restore(self.turn_text)
        self._focus_next_approval()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        if worker.group == "prepare":
            self._prepared(worker)
        elif worker is self.turn_worker:
            self._turn_ended(worker)

    # approvals ------------------------------------------------------------------------------

    @on(ApprovalPrompt.Shown)
    def _approval_shown(self, event: ApprovalPrompt.Shown) -> None:
        event.stop()
        self._focus_next_approval()

    @on(ApprovalPrompt.Decided)
    def _decided(self, event: ApprovalPrompt.Decided) -> None:
        event.stop()
        if self.turn_view is not None and event.allowed is not None:
            self.turn_view.approval_decided(event.prompt)
        self._focus_next_approval()

    def _focus_next_approval(self) -> None:
        """Focus the oldest undecided approval, else give the keyboard back to the prompt."""
        for prompt in self.transcript.query(ApprovalPrompt):
            if prompt.pending:
                if self.focused is not prompt:
                    prompt.focus(scroll_visible=True)
                return
        if isinstance(self.focused, ApprovalPrompt) or self.focused is None or not self.focused.can_focus:
            self.prompt.focus()

    # keys -----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "interrupt":
            # Without a running turn Esc is not ours: let focused widgets use it.
            return self.turn_running
        return True

    def action_interrupt(self) -> None:
        worker = self.turn_worker
        if worker is not None and not worker.is_cancelled:
            self.status.set(state="interrupting")
            worker.cancel()

    def action_clear_or_quit(self) -> None:
        """Copy a selection if there is one; else clear the input; a second press quits."""
        selected = self.get_selected_text() or self.prompt.selected_text
        if selected:
            self.app.copy_to_clipboard(selected)
            self.notify(f"Copied {len(selected):,} characters.", timeout=2)
            return
        now = time.monotonic()
        if now - self._last_ctrl_c <= CTRL_C_QUIT_WINDOW_S:
            self.app.exit()
            return
        self._last_ctrl_c = now
        if self.prompt.text:
            self.prompt.clear()
        self.notify("Press Ctrl+C again to quit.", timeout=CTRL_C_QUIT_WINDOW_S)

    def action_jump_to_bottom(self) -> None:
        self.transcript.anchor()
