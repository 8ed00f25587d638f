"""The chat's work against the engine: warm-up, sending one turn at a time, the compact command, idle
upkeep.

A turn is an async worker iterating `agent.turn()`; Esc cancels it (the agent stores synthetic
results for unfinished tool calls). The engine is warmed up in a thread worker right after mount so
the first paint never waits for litellm. The garbage collector is held to its young generations
while a reply streams and runs its full pass after the turn, while the user reads.

The runner owns the workers and their state and touches no widget: it posts what happens as
messages (tui/session/messages.py) that the chat screen handles; the screen forwards its worker events here.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from textual.message import Message
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from myrm_tui.agent.gc_policy import chat_collected, freeze_startup_heap, hold_until_chat_collects
from myrm_tui.agent.user_input.attachments import (
    AttachmentError,
    FileAttachment,
    ImageAttachment,
    attachment_chips,
    file_refs,
    load_attachments,
    message_content,
)
from myrm_tui.context.prompt import NothingWorthCompacting
from myrm_tui.tui.constants import (
    COLLECT_KEY_QUIET_S,
    IDLE_COLLECT_DELAY_S,
    SHUTDOWN_TURN_WAIT_S,
)
from myrm_tui.tui.formatting import token_change
from myrm_tui.tui.input_priority import InputPriority
from myrm_tui.tui.prompt.image_input import PendingImages
from myrm_tui.tui.session.chat_session import ONBOARDING, ChatSession
from myrm_tui.tui.session.messages import (
    ChatNote,
    CompactEnded,
    CompactProgress,
    EnginePrepared,
    IdleWorkDone,
    Severity,
    StatusChanged,
    TurnEnded,
    TurnEvent,
    TurnStarted,
)

if TYPE_CHECKING:
    from textual.screen import Screen

BUSY_NOTICE = "A turn is running — Esc to interrupt."
COMPACT_CANCELLED = (
    "Compaction cancelled: the prompt is unchanged; summaries already written are kept for the next compaction."
)


def compacted_text(event: dict[str, Any]) -> str:
    """The toast after the compact command: tokens freed and who wrote the summaries."""
    saved = event.get("saved")
    summaries = event.get("summaries") or {}
    made = sum(int(n) for n in (summaries.get("created_by_depth") or {}).values())
    extractive = int(summaries.get("fallback") or 0)
    text = f"Compacted{f': {token_change(saved)}' if isinstance(saved, int) else ''}"
    if made:
        written = made - extractive
        text += f"; {made} summar{'y' if made == 1 else 'ies'}"
        text += f" ({written} written by the model)" if written else " (extractive: no model wrote them)"
    return text + "."


class TurnRunner:
    """`screen`: where the workers run and the messages go (the chat screen); `images`: the
    screen's pending /image attachments, read when a message goes."""

    def __init__(
        self, screen: Screen[Any], chat: ChatSession, images: PendingImages, input_priority: InputPriority
    ) -> None:
        self.screen = screen
        self.chat = chat
        self.images = images
        self.input_priority = input_priority  # the screen's: when the user last typed
        self.ready = asyncio.Event()  # set once the engine warm-up finished (either way)
        self.window_problem: str | None = None  # the model window cannot hold a conversation
        self.turn_worker: Worker[None] | None = None
        self.turn_text = ""
        self.turn_model: str | None = None  # a custom command's model, for the turn it starts
        self.compacting = False
        self.compact_worker: Worker[None] | None = None
        self._idle_collect: Timer | None = None  # the full collection after a turn, not run yet

    def _post(self, message: Message) -> None:
        self.screen.post_message(message)

    @property
    def turn_running(self) -> bool:
        return self.turn_worker is not None

    def busy(self) -> bool:
        """True (and says why) when a turn or a compaction runs."""
        if self.turn_running or self.compacting:
            self.screen.notify(
                BUSY_NOTICE if self.turn_running else "A compaction is running.", severity="warning", timeout=3
            )
            return True
        return False

    # warm-up --------------------------------------------------------------------------------

    def prepare(self) -> None:
        self.screen.run_worker(self._prepare, thread=True, group="prepare", exit_on_error=False)

    def _prepare(self) -> str | None:
        from myrm_tui.agent.sandbox import sandbox_status

        sandbox_status(self.chat.settings.sandbox)  # the one bwrap probe, off the UI thread
        model = self.chat.resolve_model()
        if model:
            self.chat.warm_up(model)
            from myrm_tui.agent.setup.window_check import window_problem

            settings = self.chat.settings
            self.window_problem = window_problem(
                settings if settings.model == model else settings.with_values(model=model), self.chat.workspace
            )
        return model

    def _prepared(self, worker: Worker[Any]) -> None:
        if worker.state == WorkerState.SUCCESS:
            self.chat.model = worker.result
            problem = None
            if self.chat.model_notice:  # a resumed session's stored model was set aside: say so
                self._post(ChatNote(self.chat.model_notice, "warning"))
        else:
            self.chat.model = self.chat.settings.model or None
            problem = f"Could not resolve the model: {worker.error}"
        self._post(EnginePrepared(problem, self.window_problem))
        freeze_startup_heap()
        self.ready.set()
        from myrm_tui.tui.session.session_preheat import start_session_preheat  # opt-in; a no-op unless on

        start_session_preheat(self.screen.app)

    # a turn ---------------------------------------------------------------------------------

    def send(self, text: str, *, draft: str | None, model: str | None = None, note: str = "") -> bool:
        """Send `text` as the next message (attachments read now); False when it did not go (the
        user was told why). `draft`: what the prompt holds (given back if the turn fails); None
        when the message did not come from the prompt (the palette). `model`: a custom command's
        model for this turn."""
        if self.turn_running:
            self.screen.notify(BUSY_NOTICE, severity="warning", timeout=3)
            return False
        if self.compacting:
            self.screen.notify("Compacting — your message can go as soon as it ends.", severity="warning")
            return False
        if self.ready.is_set() and self.chat.model is None:
            self._post(ChatNote(ONBOARDING[0], "warning", ONBOARDING[1]))
            return False
        try:  # a refused image or file stops the send; the draft stays in the prompt
            allow = bool(self.chat.settings.allow_outside_workspace)  # fenced like file_read
            images = self.images.for_message(text, self.chat.workspace, allow_outside=allow)
            files = load_attachments(
                file_refs(text, self.chat.workspace), self.chat.workspace, self.chat.workspace, self.chat.settings
            )
        except AttachmentError as exc:
            self.screen.notify(str(exc), title="Not attached", severity="error", timeout=8)
            return False
        self.images.commit()
        self.start(text, images, files, note=note, draft=draft, model=model)
        return True

    def start(
        self,
        text: str,
        images: Sequence[ImageAttachment] = (),
        files: Sequence[FileAttachment] = (),
        *,
        note: str = "",
        draft: str | None = None,
        model: str | None = None,
    ) -> None:
        chips = attachment_chips(files, int(self.chat.settings.tool_output_cap), self.chat.model or "")
        shown = (
            text
            + "".join(f"\n[{chip}]" for chip in chips)
            + "".join(f"\n[image: {image.name}]" for image in images)
            + (f"\n[{note}]" if note else "")
        )
        self._post(TurnStarted(shown, "starting" if self.ready.is_set() else "loading the model library"))
        self.turn_text = text if draft is None else draft
        self.turn_model = model
        self.screen.workers.cancel_group(self.screen, "maintain")  # background summary work yields to the user
        if self._idle_collect is not None:  # the last turn's full pass waits for this one's end
            self._idle_collect.stop()
            self._idle_collect = None
        # The reply streams without full passes; the one held back runs once the user stops typing.
        hold_until_chat_collects()
        self.turn_worker = self.screen.run_worker(
            self._run_turn(text, images, files), group="turn", exclusive=True, exit_on_error=False
        )

    async def _run_turn(
        self, text: str, images: Sequence[ImageAttachment] = (), files: Sequence[FileAttachment] = ()
    ) -> None:
        await self.ready.wait()
        if self.chat.model is None:
            raise RuntimeError(ONBOARDING[0])
        model, self.turn_model = self.turn_model, None
        agent = self.chat.agent(text, model=model)  # built (or rebuilt) for this message's settings
        agent.report_waits = True  # the status line names a long wait (widgets/status_bar.py)
        switch = self.chat.take_switch()
        if switch is not None:
            self._post(ChatNote(switch.describe()))
        self._post(StatusChanged("thinking", session_id=self.chat.session_id))
        runtime = self.chat.runtime
        assert runtime is not None  # chat.agent() opened it
        turn = runtime.send(message_content(text, images, files) if (images or files) else text)
        try:
            async for event in turn:
                self._post(TurnEvent(event))
        finally:
            await turn.aclose()

    def _turn_ended(self, worker: Worker[Any]) -> None:
        self.turn_worker = None
        self._post(TurnEnded(worker.state, worker.error, self.turn_text))

    def upkeep_after_turn(self, succeeded: bool) -> None:
        """After the screen showed the turn's end: the held-back full collection while the user
        reads and, after a good turn, the engine's idle work."""
        self._idle_collect = self.screen.set_timer(IDLE_COLLECT_DELAY_S, self._collect_after_turn)
        if succeeded:
            self.screen.run_worker(self._maintain(), group="maintain", exclusive=True, exit_on_error=False)

    def _collect_after_turn(self) -> None:
        """The full pass the turn held back, while the user reads (not while they type: a key
        would wait for the pass); only then the default thresholds again. Restoring them at the
        turn's end instead let the middle-generation passes counted during the turn trigger a
        full pass at once, and this one ran a second right after it."""
        self._idle_collect = None
        if self.turn_running:
            return
        quiet = self.input_priority.quiet_for()
        if quiet < COLLECT_KEY_QUIET_S:  # the user is typing: the pass waits for a pause
            self._idle_collect = self.screen.set_timer(COLLECT_KEY_QUIET_S - quiet, self._collect_after_turn)
            return
        gc.collect()
        chat_collected()

    async def _maintain(self) -> None:
        """Idle-time engine work after a turn (a summary prepared in the background); it never
        blocks input, and the next turn simply waits for nothing: a new turn cancels it."""
        agent = self.chat.current_agent
        maintain = getattr(agent, "maintain", None)
        if maintain is None:
            return
        try:
            await maintain()
        except Exception:  # noqa: BLE001 - background work: failures are recorded as events
            return
        self._post(IdleWorkDone())

    def worker_changed(self, worker: Worker[Any], state: WorkerState) -> None:
        """The screen's Worker.StateChanged, forwarded: a warm-up or a turn finished."""
        if state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        if worker.group == "prepare":
            if state == WorkerState.CANCELLED:
                return  # only a closing screen or a quitting app cancels the warm-up: nothing to show
            self._prepared(worker)
        elif worker is self.turn_worker:
            self._turn_ended(worker)

    def interrupt(self) -> None:
        """Esc: cancel the compaction, else the turn (each stops cleanly: see the module doc)."""
        compacting = self.compact_worker
        if compacting is not None and not compacting.is_cancelled:
            self._post(StatusChanged("cancelling the compaction"))
            compacting.cancel()
            return
        worker = self.turn_worker
        if worker is not None and not worker.is_cancelled:
            self._post(StatusChanged("interrupting"))
            worker.cancel()

    async def shutdown(self) -> None:
        """Quitting mid-turn: let the agent record the interrupt (synthetic results, killed
        processes) before the app closes the store."""
        worker, self.turn_worker = self.turn_worker, None  # no UI updates while closing
        if worker is not None:
            worker.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(worker.wait(), SHUTDOWN_TURN_WAIT_S)
        self.chat.shutdown()

    # the compact command --------------------------------------------------------------------

    def compact(self, focus: str | None) -> None:
        self.compacting = True
        self._post(StatusChanged("compacting"))
        self.compact_worker = self.screen.run_worker(
            self._run_compact(focus), group="compact", exclusive=True, exit_on_error=False
        )

    async def _run_compact(self, focus: str | None) -> None:
        """The compact command on the app's loop: the summarizer's calls are awaited, the
        progress line follows them, and Esc cancels the worker (nothing in the prompt changes
        until every summary is written)."""
        try:
            agent = self.chat.agent("")
            result = await agent.compact_now(focus, progress=self._compact_progress)
        except asyncio.CancelledError:
            self._compacted(None, COMPACT_CANCELLED, "warning")
            raise
        except NothingWorthCompacting as exc:  # not a failure: said as it is, nothing changed
            self._compacted(None, str(exc), "information")
            return
        except Exception as exc:  # noqa: BLE001 - shown to the user; the session is untouched
            self._compacted(None, f"Compaction failed: {exc}")
            return
        self._compacted(result, None)

    def _compact_progress(self, progress: Any) -> None:
        """The progress line while the summarizer writes (status bar)."""
        if progress.what == "done":
            state = "compacting"
        else:
            what = "summary" if progress.what == "leaf" else "fold"
            state = f"compacting: {what} {progress.done + 1} of {max(progress.total, progress.done + 1)}"
        self._post(CompactProgress(state))

    def _compacted(self, result: dict[str, Any] | None, problem: str | None, severity: Severity = "error") -> None:
        self.compacting = False
        self.compact_worker = None
        self._post(CompactEnded(result, problem, severity))
