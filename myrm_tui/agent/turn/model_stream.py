"""One model call, streamed: text and thinking go out as they arrive, tool calls and the finish
are collected in the turn state, usage is priced and stored, and the call is timed for the
figures shown under the reply."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from myrm_tui.agent.events import AgentEvent
from myrm_tui.agent.reply_figures import ReplyFigures, priced
from myrm_tui.agent.turn.record import TurnRecord
from myrm_tui.agent.turn.state import TurnState
from myrm_tui.llm.call_settings import CallSettings
from myrm_tui.llm.events import (
    FinishEvent,
    LLMEvent,
    ReasoningDelta,
    RetryEvent,
    TextDelta,
    ToolCallEvent,
    UsageEvent,
    WaitPhase,
)
from myrm_tui.llm.ports import StreamFn as StreamFn  # the agent's name for the port (agent.py re-exports it)
from myrm_tui.store import event_kinds

if TYPE_CHECKING:
    from myrm_tui.context.prompt import AssembledPrompt
    from myrm_tui.llm.models.info import ModelInfo


def _default_stream() -> StreamFn:
    from myrm_tui.llm.stream import stream

    return stream


@asynccontextmanager
async def _closing(iterator: AsyncIterator[LLMEvent]) -> AsyncIterator[AsyncIterator[LLMEvent]]:
    """Like contextlib.aclosing, for any async iterator (an injected stream_fn may return one
    without aclose)."""
    try:
        yield iterator
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()


class ModelStream:
    def __init__(self, stream_fn: StreamFn | None, record: TurnRecord, clock: Callable[[], float]):
        self.stream_fn = stream_fn  # None: the llm layer's own (imported on first use: litellm is slow)
        self.record = record
        self.clock = clock  # monotonic; the agent's, read at each call so a test can swap it

    async def run(
        self,
        prompt: AssembledPrompt,
        state: TurnState,
        *,
        model_name: str,
        model: ModelInfo,
        call_settings: CallSettings,
    ) -> AsyncGenerator[AgentEvent, None]:
        stream_fn = self.stream_fn or _default_stream()
        tools = prompt.tools or None
        stream = stream_fn(model_name, prompt.messages, tools, call_settings)
        state.call_started, state.first_token_at, state.call_ended, state.call_usage = self.clock(), None, None, None
        async with _closing(stream) as llm_events:
            async for event in llm_events:
                if isinstance(event, (TextDelta, ReasoningDelta, ToolCallEvent)) and state.first_token_at is None:
                    state.first_token_at = self.clock()
                if isinstance(event, TextDelta):
                    state.partial_text += event.text
                    yield event
                elif isinstance(event, ReasoningDelta):
                    yield event
                elif isinstance(event, ToolCallEvent):
                    state.calls.append(event)
                elif isinstance(event, UsageEvent):
                    event = priced(event, model)  # the provider sent no price: litellm's map, when it knows one
                    state.call_usage = event
                    self.record.event(event_kinds.USAGE, {"model": model_name, **dataclasses.asdict(event)})
                    yield event
                elif isinstance(event, RetryEvent):
                    # the failed attempt's time is not this answer's: time the retry from here
                    state.call_started, state.first_token_at = self.clock(), None
                    yield event
                elif isinstance(event, FinishEvent):
                    state.finish = event
                elif isinstance(event, WaitPhase):
                    yield event
        state.call_ended = self.clock()

    def reply_figures(self, message_id: int, state: TurnState, model_name: str) -> ReplyFigures:
        """The call's figures, stored beside the reply so a reopened session shows the same line."""
        usage = state.call_usage or UsageEvent()
        ended = state.call_ended if state.call_ended is not None else self.clock()
        figures = ReplyFigures(
            message_id=message_id,
            model=model_name,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_read_tokens=usage.cached_read_tokens,
            cached_write_tokens=usage.cached_write_tokens,
            cost=usage.cost,
            elapsed_s=round(ended - state.call_started, 3),
            first_token_s=None if state.first_token_at is None else round(state.first_token_at - state.call_started, 3),
        )
        self.record.event(event_kinds.REPLY_FIGURES, figures.as_data())
        return figures
