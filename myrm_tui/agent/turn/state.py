"""What one turn knows while it runs, and the assistant message and calls built from it.

The state is what an interrupt needs to leave the store consistent (the text streamed but not
stored, the calls without a result, the running tool), plus what the stream and tool phases
hand each other.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from myrm_tui.agent.tools.base import ToolResult
from myrm_tui.llm.events import FinishEvent, ToolCallEvent, UsageEvent

if TYPE_CHECKING:
    from myrm_tui.context.compaction.event import CompactionEvent

# The content stored for a call an interrupt stopped: the model must know it did not finish.
INTERRUPTED_RESULT = "interrupted by user: the call was stopped before it finished; run it again if still needed"
# Appended to assistant text that was cut off, so the model (and a reader) knows it is partial.
CUT_OFF_NOTE = "\n\n[answer cut off: {why}]"


@dataclass
class TurnState:
    """What an interrupt needs to know to leave the store consistent."""

    steps: int = 0
    partial_text: str = ""  # streamed but not yet stored as an assistant message
    open_calls: list[tuple[str, str]] = field(default_factory=list)  # (id, name) without result
    tool_task: asyncio.Task | None = None
    tool_output: list[str] = field(default_factory=list)  # live output of the running call
    # filled by the stream phase
    calls: list[ToolCallEvent] = field(default_factory=list)
    finish: FinishEvent | None = None
    call_started: float = 0.0  # monotonic: the request of the current model call was sent
    first_token_at: float | None = None  # monotonic: its first text, thinking or tool call arrived
    call_ended: float | None = None
    call_usage: UsageEvent | None = None
    # The compaction the current request went out without, running in a worker thread while the
    # model answers (`Agent._pay_owed_while_answering`); awaited before the engine is touched again.
    owed: asyncio.Future[CompactionEvent | None] | None = None
    # filled by the tool phase
    result: ToolResult | None = None
    approval_wait_s: float = 0.0  # time the current call waited for a person (not its duration)
    changed_files: tuple[str, ...] = ()  # what the git snapshot saw the current bash call change
    user_record: Any = None  # the stored user message of this turn


def assistant_message(state: TurnState) -> dict[str, Any]:
    if state.finish is not None and state.finish.message:
        return dict(state.finish.message)
    # A provider that ended without a finish event: rebuild the message from what streamed.
    message: dict[str, Any] = {"role": "assistant", "content": state.partial_text or None}
    if state.calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw_arguments or "{}"}}
            for c in state.calls
        ]
    return message


def calls_of(state: TurnState, message: dict[str, Any], renamed: Sequence[tuple[str, str]] = ()) -> list[ToolCallEvent]:
    """The calls to run, in the stored message's order (the parsed events carry the args),
    under their session-unique ids (`renamed`: (id the model sent, id stored) per call)."""
    by_id: dict[str, list[ToolCallEvent]] = {}
    for c in state.calls:
        by_id.setdefault(c.id, []).append(c)
    sent = [old for old, _ in renamed] if renamed else [raw.get("id", "") for raw in message.get("tool_calls") or ()]
    ordered = []
    for raw, sent_id in zip(message.get("tool_calls") or (), sent, strict=True):
        call_id = raw.get("id", "")
        if by_id.get(sent_id):
            ordered.append(dataclasses.replace(by_id[sent_id].pop(0), id=call_id))
        else:
            function = raw.get("function", {})
            ordered.append(
                ToolCallEvent(
                    call_id,
                    function.get("name", ""),
                    {},
                    function.get("arguments", ""),
                    parse_error="the call's arguments were not received",
                )
            )
    return ordered
