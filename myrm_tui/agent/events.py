"""What a turn tells its consumer (TUI, headless CLI, tests), as typed events.

The agent never prints or draws; it yields these. Stream deltas come straight from the LLM
layer; the rest describe stored facts (each is emitted after the matching row is committed).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.agent.reply_figures import ReplyFigures
from myrm_tui.llm.events import ReasoningDelta, RetryEvent, TextDelta, UsageEvent, WaitPhase


@dataclass(frozen=True)
class UserMessageStored:
    message_id: int
    text: str
    reused: bool = False  # a resend after a failed turn: the stored ask is reused (agent/turn/resend.py)


@dataclass(frozen=True)
class StepStarted:
    """A model call is about to start (step counts from 1 within the turn)."""

    step: int
    model: str
    prompt_tokens: int


@dataclass(frozen=True)
class AssistantMessageStored:
    message_id: int
    text: str
    tool_calls: tuple[dict[str, Any], ...] = ()
    figures: ReplyFigures | None = None  # the model call's tokens, cost and time (also stored)


@dataclass(frozen=True)
class ToolStarted:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolOutputChunk:
    """Live output of a running tool (bash), for display only; the stored result is final."""

    call_id: str
    text: str


@dataclass(frozen=True)
class ToolFinished:
    call_id: str
    name: str
    ok: bool
    content: str  # exactly what was stored as the tool result
    duration_s: float
    message_id: int
    vault_handle: str | None = None  # set when the full output was spilled to the vault
    status: str = "ok"  # ok, error, denied, timeout, interrupted


@dataclass(frozen=True)
class ApprovalAnswer:
    """A person's answer to an ApprovalRequest, richer than yes/no.

    `remember`: rules to store as "always allow in this workspace" (only rules the request
    offered are honoured). `reason`: why a no, sent to the model with the denial."""

    allow: bool
    remember: tuple[str, ...] = ()
    reason: str = ""


def as_answer(value: bool | ApprovalAnswer) -> ApprovalAnswer:
    """A consumer may resolve the future with a plain bool (headless, tests) or an ApprovalAnswer."""
    return value if isinstance(value, ApprovalAnswer) else ApprovalAnswer(bool(value))


@dataclass
class ApprovalRequest:
    """A tool call waiting for a person. The consumer resolves `decision` with True / False or an
    ApprovalAnswer (always allow, deny with a reason)."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    summary: str  # one line: the command, or "write path (N lines)"
    diff: str | None = None  # unified diff for edits and writes
    destructive: bool = False
    decision: asyncio.Future[bool | ApprovalAnswer] | None = field(default=None, repr=False)
    network_requested: bool = False  # a yes also lets the command reach the network
    cwd: str = ""  # where it runs (bash) or what paths are relative to
    sandbox: str = ""  # bash: what the sandbox lets the command do, in a few words
    offered_rules: tuple[str, ...] = ()  # what "Always allow" would store; () = not offered
    why: str = ""  # why it asks (the policy, "destructive: …", "asks for network access")


@dataclass(frozen=True)
class Notice:
    """A one-line note for the user (e.g. the model has no tool calling, a retry)."""

    text: str
    level: str = "info"  # info, warning, error


@dataclass(frozen=True)
class TurnError:
    """The turn failed; `message` is one readable sentence and `hint` what to do."""

    error_class: str
    message: str
    hint: str


@dataclass(frozen=True)
class TurnFinished:
    reason: str  # stop, tool_limit, interrupted, error, length
    steps: int


# The WaitPhase the agent itself yields (only when `Agent.report_waits`): summaries are being
# written before the next model call, so the first token waits on them.
COMPACTING = "compacting"

AgentEvent = (
    UserMessageStored
    | StepStarted
    | TextDelta
    | ReasoningDelta
    | AssistantMessageStored
    | ToolStarted
    | ToolOutputChunk
    | ToolFinished
    | ApprovalRequest
    | UsageEvent
    | RetryEvent
    | Notice
    | TurnError
    | TurnFinished
    | WaitPhase
)
