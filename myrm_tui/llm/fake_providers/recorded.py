"""`replay/<feed>`: a model that answers with the assistant turns of a recorded session.

Why a provider behind litellm and not a stub of the agent: `myrm replay` must measure what a user
runs, so the recorded turns go through the same litellm call, chunk parsing, assembler, call-id
handling and agent loop as a live model's answer (like `scripted/`, which reads a script file).

A feed is the replay run's own object: `myrm_tui.replay` makes one, pushes the recorded assistant
message the next request should get, and hands it to each call as the `FEED_PARAM` keyword
(`call_with_feed`), which litellm passes to the handler among the optional params. Why not found
by model name: litellm's custom-provider map is process-global, so the handler registered there
is the same for every run in the process; it keeps no state and serves the feed the call carries,
so two replays in one process never read each other's answers. The provider answers each request
with the oldest pushed message; with none pushed it fails like a provider that has nothing to say
(`NotFoundError`), which ends the agent's turn with a TurnError (a history that ends in tool
results, or two user messages in a row, is what a failed turn leaves behind).

The answer's usage reports 0 prompt tokens: the provider cannot count the prompt the way the
engine does, and a made-up count would steer the engine's usage correction
(`ContextEngine.note_provider_call`); with 0 the engine keeps its own estimate, as the replay
always did.
"""

from __future__ import annotations

import itertools
import json
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from myrm_tui.llm.call_settings import CallSettings

PROVIDER = "replay"
# Characters per output token for the reported completion tokens (no tokenizer in llm/; the
# figure is only shown, never used for a decision).
CHARS_PER_TOKEN = 4
# The call keyword that carries the run's feed to the handler (litellm hands unknown keywords of a
# custom provider's call to it in `optional_params`).
FEED_PARAM = "recorded_feed"
# The feed's name: the model is `replay/session-1` in every replay, as it was when feeds were
# numbered per process and a replay was the process's first (the name reaches token counting).
FEED_NAME = "session-1"


@dataclass
class RecordedFeed:
    """The recorded assistant messages still to be served, oldest first."""

    name: str = FEED_NAME
    answers: deque[dict[str, Any]] = field(default_factory=deque)
    served: int = 0
    # Ids for recorded calls that carry none: the assembler would invent random ones, and a
    # replay must give the same bytes every time.
    _missing_ids: Iterator[int] = field(default_factory=itertools.count)

    @property
    def model(self) -> str:
        return f"{PROVIDER}/{self.name}"

    def push(self, message: dict[str, Any]) -> None:
        self.answers.append(message)

    def take(self) -> dict[str, Any] | None:
        if not self.answers:
            return None
        self.served += 1
        return self.answers.popleft()

    def call_id(self, given: Any) -> str:
        if isinstance(given, str) and given:
            return given
        return f"call_recorded_{next(self._missing_ids)}"


def call_with_feed(settings: CallSettings, feed: RecordedFeed) -> CallSettings:
    """`settings` for a call that `feed` answers."""
    return replace(settings, extra={**settings.extra, FEED_PARAM: feed})


def _feed_for(model: str, params: dict[str, Any] | None) -> RecordedFeed:
    from myrm_tui.llm.litellm_module import load_litellm

    feed = (params or {}).get(FEED_PARAM)
    if not isinstance(feed, RecordedFeed):
        full = f"{PROVIDER}/{model.removeprefix(PROVIDER + '/')}"  # litellm may pass the bare name
        raise load_litellm().NotFoundError(
            f"no recorded session is being replayed as {full}; `myrm replay` serves one",
            model=full,
            llm_provider=PROVIDER,
        )
    return feed


def _text(content: Any) -> str:
    """Assistant content as the text a model would stream (list content: its text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type", "text") == "text"
        )
    return ""


def _generic(
    text: str = "", *, tool_use: dict | None = None, finished: bool = False, reason: str = "", usage: dict | None = None
) -> dict[str, Any]:
    """A litellm GenericStreamingChunk (a TypedDict, so a plain dict)."""
    return {
        "text": text,
        "tool_use": tool_use,
        "is_finished": finished,
        "finish_reason": reason,
        "usage": usage,
        "index": 0,
    }


def answer_chunks(message: dict[str, Any], call_id: Any = None) -> list[Any]:
    """The stream that delivers `message`: reasoning, text, each tool call whole, then the
    finish with usage. `call_id(given)` names calls recorded without an id."""
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

    chunks: list[Any] = []
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        chunks.append(
            ModelResponseStream(choices=[StreamingChoices(index=0, delta=Delta(reasoning_content=reasoning))])
        )
    text = _text(message.get("content"))
    if text:
        chunks.append(_generic(text))
    arguments_chars = 0
    calls = [c for c in message.get("tool_calls") or () if isinstance(c, dict)]
    for index, call in enumerate(calls):
        function = call.get("function") or {}
        arguments = function.get("arguments", "")
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        arguments_chars += len(raw)
        given = call.get("id")
        chunks.append(
            _generic(
                tool_use={
                    "id": call_id(given) if call_id is not None else given,
                    "type": "function",
                    "index": index,
                    "function": {"name": str(function.get("name", "")), "arguments": raw},
                }
            )
        )
    completion = -(-(len(text) + len(reasoning or "") + arguments_chars) // CHARS_PER_TOKEN)
    usage = {"prompt_tokens": 0, "completion_tokens": completion, "total_tokens": completion}
    chunks.append(_generic(finished=True, reason="tool_calls" if calls else "stop", usage=usage))
    return chunks


def _no_answer(feed: RecordedFeed) -> Exception:
    from myrm_tui.llm.litellm_module import load_litellm

    error = load_litellm().NotFoundError(
        "the recording has no assistant message for this request", model=feed.model, llm_provider=PROVIDER
    )
    return cast(Exception, error)  # litellm is Any to mypy (loaded lazily); NotFoundError is an Exception


def _serve(model: str, params: dict[str, Any] | None) -> list[Any]:
    from myrm_tui.llm.fake_providers.switch import refuse_if_disabled

    refuse_if_disabled(PROVIDER, model)
    feed = _feed_for(model, params)
    message = feed.take()
    if message is None:
        raise _no_answer(feed)
    return answer_chunks(message, feed.call_id)


def make_handler() -> Any:
    """A litellm CustomLLM instance serving `replay/<feed>` from the feed each call carries
    (imports litellm; stateless, so one instance in litellm's global map serves every run)."""
    from litellm.llms.custom_llm import CustomLLM

    class RecordedLLM(CustomLLM):
        # litellm types astreaming as a coroutine, yet iterates what the call returns (main.py hands
        # it to CustomStreamWrapper unawaited): an async generator is what actually works.
        async def astreaming(  # type: ignore[override]
            self, model: str, messages: list, *args: Any, **kwargs: Any
        ) -> AsyncIterator[Any]:
            for chunk in _serve(model, kwargs.get("optional_params")):
                yield chunk

        def streaming(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Iterator[Any]:
            yield from _serve(model, kwargs.get("optional_params"))

    return RecordedLLM()
