"""Turns the agent's event stream into transcript widgets, one TurnView per turn.

Every handler is synchronous on purpose: the worker that iterates `agent.turn()` must only
ever be suspended inside the agent's generator, so that an interrupt (task cancellation) lands
there and the agent can store its synthetic "interrupted" results. Widgets are mounted
without awaiting (Textual registers them in order immediately) and the one slow step, the
final Markdown render of a reply, runs on the reply widget's own message queue.
"""

from __future__ import annotations

import time
from typing import Any

from textual.widget import Widget

from myrm_tui.agent.events import (
    ApprovalRequest,
    AssistantMessageStored,
    Notice,
    StepStarted,
    ToolFinished,
    ToolOutputChunk,
    ToolStarted,
    TurnError,
    TurnFinished,
    UserMessageStored,
)
from myrm_tui.agent.tools.task import TASK_TOOL
from myrm_tui.llm.events import ReasoningDelta, RetryEvent, TextDelta, UsageEvent, WaitPhase
from myrm_tui.tui.figures.reply_figures_text import StreamMeter
from myrm_tui.tui.input_priority import InputPriority
from myrm_tui.tui.widgets.approval import ApprovalPrompt
from myrm_tui.tui.widgets.blocks.assistant_message import AssistantMessage
from myrm_tui.tui.widgets.blocks.note import Note
from myrm_tui.tui.widgets.blocks.subagent_block import SubagentBlock
from myrm_tui.tui.widgets.blocks.tool_block import ToolBlock
from myrm_tui.tui.widgets.blocks.user_message import UserMessage
from myrm_tui.tui.widgets.status_bar import StatusBar
from myrm_tui.tui.widgets.transcript import Transcript

# The agent announces a max_steps stop itself (a Notice); only a cut reply needs a note here.
_STOP_NOTES = {
    "length": ("The reply hit the output token limit (max_output_tokens) and was cut.", "warning"),
}


class TurnView:
    """Widgets and state of one turn in the transcript."""

    def __init__(
        self, transcript: Transcript, status: StatusBar, user: UserMessage, input_priority: InputPriority
    ) -> None:
        self.transcript = transcript
        self.input_priority = input_priority  # the screen's: the reply waits for keys the prompt took
        self.status = status
        self.user = user
        self.assistant: AssistantMessage | None = None
        self.blocks: dict[str, ToolBlock] = {}
        self.approvals: list[ApprovalPrompt] = []
        self.produced = False  # the assistant said or did anything this turn
        self.error: TurnError | None = None
        self.finish_reason: str | None = None
        self.closed = False
        self.meter: StreamMeter | None = None  # the model call streaming now (status line figures)
        status.wait_began()  # the first token is awaited from the moment the message went

    # helpers --------------------------------------------------------------------------------

    def mount(self, widget: Widget, after: Widget | None = None) -> None:
        if after is not None and after.parent is self.transcript:
            self.transcript.mount(widget, after=after)
        else:
            self.transcript.mount(widget)

    def note(self, text: str, level: str = "info", hint: str = "") -> Note:
        note = Note(text, level, hint)
        self.mount(note)
        return note

    def _reply(self) -> AssistantMessage:
        if self.assistant is None:
            self.assistant = AssistantMessage(streaming=True, input_priority=self.input_priority)
            self.mount(self.assistant)
        return self.assistant

    def _end_reply(self, final_text: str | None = None) -> None:
        reply, self.assistant = self.assistant, None
        if reply is not None:
            reply.call_later(reply.finish, final_text)

    def block(self, call_id: str, name: str, arguments: dict[str, Any] | str | None) -> ToolBlock:
        block = self.blocks.get(call_id)
        if block is None:
            # A task call nests its child agent's work (widgets/subagent_block.py).
            block = (SubagentBlock if name == TASK_TOOL else ToolBlock)(call_id, name, arguments)
            self.blocks[call_id] = block
            self.mount(block)
        return block

    # events ---------------------------------------------------------------------------------

    def handle(self, event: object) -> None:
        if isinstance(event, TextDelta):
            if event.text:
                self.produced = True
                self._reply().append_text(event.text)
                self._metered(event.text)
        elif isinstance(event, ReasoningDelta):
            if event.text:
                self._reply().append_reasoning(event.text)
                self._metered(event.text)
        elif isinstance(event, WaitPhase):
            self.status.wait_for(event.text)
        elif isinstance(event, UserMessageStored):
            if event.reused:
                # A resend after a failed turn: the store reuses the earlier copy (its bubble is
                # still above, before the error), so showing a second one would say it was sent twice.
                self.user.remove()
            else:
                self.user.mark_stored()
        elif isinstance(event, StepStarted):
            self.meter = StreamMeter(time.monotonic())
            self.status.follow(self.meter, "" if event.step <= 1 else f" (step {event.step})")
        elif isinstance(event, AssistantMessageStored):
            self._stop_meter()
            self._assistant_stored(event)
        elif isinstance(event, ApprovalRequest):
            block = self.block(event.call_id, event.tool, event.arguments)
            block.status = "pending"  # not running until the user says yes
            prompt = ApprovalPrompt(event)
            self.approvals.append(prompt)
            self.status.wait_over()
            self.mount(prompt, after=block)
            self.status.set(state="waiting for approval")  # the chat screen adds the key
        elif isinstance(event, ToolStarted):
            self.produced = True
            self.block(event.call_id, event.name, event.arguments).start(event.arguments)
            self.status.set(state=f"running {event.name}")
        elif isinstance(event, ToolOutputChunk):
            live = self.blocks.get(event.call_id)
            if live is not None:
                live.append_live(event.text)
        elif isinstance(event, ToolFinished):
            self.produced = True
            block = self.block(event.call_id, event.name, None)
            block.finish(event.status, event.content, event.duration_s, event.vault_handle)
            self.status.set(state="thinking")
            self.status.wait_began()  # the next model call's first token
        elif isinstance(event, UsageEvent):
            if event.prompt_tokens:
                self.status.set(prompt_tokens=event.prompt_tokens)
        elif isinstance(event, RetryEvent):
            self.note(
                f"Retrying ({event.attempt}/{event.max_attempts}) in {event.delay_s:.1f} s: {event.reason}", "warning"
            )
        elif isinstance(event, Notice):
            self.note(event.text, event.level)
        elif isinstance(event, TurnError):
            self._stop_meter()
            self.error = event
            self._end_reply()
            self.note(event.message, "error", event.hint)
        elif isinstance(event, TurnFinished):
            self.finish_reason = event.reason
            stop_note = _STOP_NOTES.get(event.reason)
            if stop_note is not None:
                self.note(stop_note[0].format(steps=event.steps), stop_note[1])

    def _metered(self, text: str) -> None:
        if self.meter is not None:
            if self.meter.first_output_at is None:
                self.status.wait_over()
            self.meter.add(text)

    def _stop_meter(self) -> None:
        self.meter = None
        self.status.follow(None)
        self.status.wait_over()

    def _assistant_stored(self, event: AssistantMessageStored) -> None:
        if event.text or event.tool_calls:
            self.produced = True
        if self.assistant is not None:
            if event.figures is not None:
                self.assistant.set_figures(event.figures)
            self._end_reply(event.text)
        elif event.text:  # the provider did not stream: show the stored reply whole
            self.mount(AssistantMessage(event.text, figures=event.figures))
        for call in event.tool_calls:
            function = call.get("function") or {}
            self.block(str(call.get("id", "")), str(function.get("name", "?")), function.get("arguments", ""))

    def approval_decided(self, prompt: ApprovalPrompt) -> None:
        block = self.blocks.get(prompt.request.call_id)
        if prompt.decision and block is not None and block.status == "pending":
            block.status = "running"
        self.status.set(state=f"running {prompt.request.tool}" if prompt.decision else "thinking")

    # end of turn ----------------------------------------------------------------------------

    def close(self, outcome: str) -> None:
        """The turn is over: `outcome` is done, interrupted or error."""
        if self.closed:
            return
        self.closed = True
        self._stop_meter()
        if self.assistant is not None and outcome == "interrupted":
            self.assistant.mark_interrupted()
        self._end_reply()
        for block in self.blocks.values():
            if outcome != "done" and block.status in ("pending", "running"):
                block.finish(
                    "interrupted" if outcome == "interrupted" else "error", block.live_text or "(no result)", None
                )
        for prompt in self.approvals:
            prompt.expire("interrupted" if outcome == "interrupted" else "cancelled")
        if outcome == "interrupted":
            self.note("interrupted", "warning")
        self.status.set(state="")

    @property
    def failed(self) -> bool:
        return self.error is not None or self.finish_reason == "error"
