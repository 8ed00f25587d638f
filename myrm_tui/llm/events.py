"""Typed events of one model call, the only thing the rest of the app sees of a provider.

Why a closed set of small frozen dataclasses: the agent, the headless CLI, the TUI and the
tests all consume the same stream, and pattern-matching on types is cheaper to keep right than
parsing provider chunks in four places.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """Thinking/reasoning text, streamed separately so the UI can collapse it."""

    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    """A complete tool call: emitted once its arguments finished streaming."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    # Set when the model produced arguments that are not a JSON object; the agent answers the
    # call with an error result instead of running the tool.
    parse_error: str | None = None


@dataclass(frozen=True)
class UsageEvent:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_read_tokens: int = 0
    cached_write_tokens: int = 0
    cost: float | None = None


@dataclass(frozen=True)
class FinishEvent:
    """Last event of a call. reason: stop, tool_calls, length, content_filter, …"""

    reason: str
    # The assistant message exactly as it must be stored and replayed to the provider.
    message: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RetryEvent:
    """A transient failure that the retry loop is handling; shown to the user as a note."""

    attempt: int
    max_attempts: int
    delay_s: float
    reason: str


@dataclass(frozen=True)
class WaitPhase:
    """What a call waits for before its first token ("connecting to api.openai.com", "waiting for
    the first token", "loading the model"), so the chat's status line can say it when the wait is
    long. Only when the caller asked (`CallSettings.report_waits`): most callers want the answer."""

    text: str


LLMEvent = TextDelta | ReasoningDelta | ToolCallEvent | UsageEvent | FinishEvent | RetryEvent | WaitPhase
