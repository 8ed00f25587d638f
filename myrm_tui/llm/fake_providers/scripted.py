"""`scripted/<path>`: a deterministic fake model, reached through litellm like any other.

Why through litellm and not a stub of `stream()`: the agent, the CLI and the tests then exercise
the exact chunk parsing, usage handling, error mapping and retry code that real providers hit.

Script file (JSON)::

    {"context_window": 128000,            # optional, read by the registry
     "supports_vision": false,            # optional, read by the registry
     "record": "requests.jsonl",          # optional: each request's messages, one JSON line
     "turns": [{"text": "...", "reasoning": "...",
                "tool_calls": [{"id": "opt", "name": "bash", "arguments": {...} or "raw"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                          "cached_read_tokens": 0, "cached_write_tokens": 0},
                "chunk_size": 7, "delay_ms": 0, "finish_reason": "stop",
                "error": "rate_limit|server|auth|not_found|context_window|content_policy|timeout|drop_mid_stream",
                "error_times": 1, "retry_after": 0}]}

The turn answered is the number of assistant messages already in the request, so the provider is
stateless: it works across processes and for resumed sessions. Past the last turn it answers
"[script exhausted]". `error_times` (default: always) counts failed attempts per process.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

PROVIDER = "scripted"
EXHAUSTED_TEXT = "[script exhausted]"
DEFAULT_CONTEXT_WINDOW = 128_000
# Default streaming granularity: small enough that every reply arrives as several deltas, like a
# real provider, so consumers are tested against fragmentation.
DEFAULT_CHUNK_SIZE = 7
# The rough chars-per-token ratio of English text for BPE tokenizers; only used when a script
# gives no usage, so usage events always exist.
CHARS_PER_TOKEN = 4

ERROR_KINDS = (
    "rate_limit",
    "server",
    "auth",
    "not_found",
    "context_window",
    "content_policy",
    "timeout",
    "drop_mid_stream",
)


class ScriptError(ValueError):
    """The script file is missing or malformed."""


@dataclass(frozen=True)
class ScriptedCall:
    name: str
    arguments: str  # raw JSON text, exactly as the "model" sends it
    id: str | None = None


@dataclass(frozen=True)
class ScriptedTurn:
    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ScriptedCall, ...] = ()
    usage: dict[str, int] | None = None
    chunk_size: int = DEFAULT_CHUNK_SIZE
    delay_ms: int = 0
    finish_reason: str | None = None
    error: str | None = None
    error_times: int | None = None
    retry_after: float | None = None


@dataclass(frozen=True)
class Script:
    path: Path
    turns: tuple[ScriptedTurn, ...]
    context_window: int = DEFAULT_CONTEXT_WINDOW
    supports_vision: bool = False  # the registry reports it: tests of both image paths
    record: Path | None = None  # each request's messages are appended here as a JSON line


@dataclass
class _Failures:
    lock: threading.Lock = field(default_factory=threading.Lock)
    counts: dict[tuple[str, int], int] = field(default_factory=dict)


_FAILURES = _Failures()


def _turn_from(raw: Any, where: str) -> ScriptedTurn:
    if not isinstance(raw, dict):
        raise ScriptError(f"{where} must be an object")
    calls = []
    for i, call in enumerate(raw.get("tool_calls") or []):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ScriptError(f"{where}.tool_calls[{i}] needs a string 'name'")
        args = call.get("arguments", {})
        raw_args = args if isinstance(args, str) else json.dumps(args)
        calls.append(ScriptedCall(name=call["name"], arguments=raw_args, id=call.get("id")))
    error = raw.get("error")
    if error is not None and error not in ERROR_KINDS:
        raise ScriptError(f"{where}.error must be one of {', '.join(ERROR_KINDS)}")
    chunk_size = int(raw.get("chunk_size", DEFAULT_CHUNK_SIZE))
    return ScriptedTurn(
        text=str(raw.get("text", "")),
        reasoning=str(raw.get("reasoning", "")),
        tool_calls=tuple(calls),
        usage=raw.get("usage"),
        chunk_size=max(chunk_size, 1),
        delay_ms=int(raw.get("delay_ms", 0)),
        finish_reason=raw.get("finish_reason"),
        error=error,
        error_times=raw.get("error_times"),
        retry_after=raw.get("retry_after"),
    )


def load_script(path: str | Path) -> Script:
    """Parse a script file; ScriptError with the reason when it cannot be used."""
    p = Path(path).expanduser()
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScriptError(f"script file {p} does not exist") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise ScriptError(f"script file {p} is not readable JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
        raise ScriptError(f"script file {p} needs a top-level 'turns' list")
    turns = tuple(_turn_from(t, f"turns[{i}]") for i, t in enumerate(data["turns"]))
    window = int(data.get("context_window", DEFAULT_CONTEXT_WINDOW))
    record = data.get("record")
    return Script(
        path=p.resolve(),
        turns=turns,
        context_window=window,
        supports_vision=bool(data.get("supports_vision", False)),
        record=(p.parent / record).resolve() if isinstance(record, str) and record else None,
    )


def record_request(script: Script, messages: list[dict]) -> None:
    """Append what the provider received (after litellm) to the script's `record` file: how a
    test sees that an image reached the request as an image part, or as a placeholder."""
    if script.record is None:
        return
    # The file itself never through a link (a test fake, enabled only by ENABLE_MYRM_TEST_PROVIDERS).
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    with os.fdopen(os.open(script.record, flags, 0o600), "a", encoding="utf-8") as handle:
        handle.write(json.dumps(messages, default=str) + "\n")


def turn_index(messages: list[dict]) -> int:
    """Which scripted turn answers this request: one per assistant message already sent."""
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


def pick_turn(script: Script, messages: list[dict]) -> tuple[int, ScriptedTurn]:
    index = turn_index(messages)
    if index >= len(script.turns):
        return index, ScriptedTurn(text=EXHAUSTED_TEXT)
    return index, script.turns[index]


def should_fail(script: Script, index: int, turn: ScriptedTurn) -> bool:
    """Count this attempt; True while the turn still has failures to serve."""
    if turn.error is None:
        return False
    if turn.error_times is None:
        return True
    key = (str(script.path), index)
    with _FAILURES.lock:
        done = _FAILURES.counts.get(key, 0)
        if done >= turn.error_times:
            return False
        _FAILURES.counts[key] = done + 1
        return True


def _estimate(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def usage_block(turn: ScriptedTurn, messages: list[dict]) -> dict[str, Any]:
    """The usage the fake reports: the script's numbers, else a chars/4 estimate."""
    given = turn.usage or {}
    prompt = given.get("prompt_tokens")
    if prompt is None:
        prompt = _estimate(json.dumps(messages, sort_keys=True, default=str))
    completion = given.get("completion_tokens")
    if completion is None:
        completion = _estimate(turn.text + turn.reasoning + "".join(c.arguments for c in turn.tool_calls))
    block: dict[str, Any] = {
        "prompt_tokens": int(prompt),
        "completion_tokens": int(completion),
        "total_tokens": int(prompt) + int(completion),
    }
    if given.get("cached_read_tokens"):
        block["prompt_tokens_details"] = {"cached_tokens": int(given["cached_read_tokens"])}
    if given.get("cached_write_tokens"):
        block["cache_creation_input_tokens"] = int(given["cached_write_tokens"])
    return block


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


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


@dataclass(frozen=True)
class Plan:
    """What one attempt sends: chunks in order, then optionally an error to raise."""

    chunks: list[Any]
    error: str | None
    delay_s: float


def plan(script: Script, messages: list[dict], model: str) -> Plan:
    """Chunks for this request (reasoning, text, tool-call fragments, final usage) and the failure."""
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

    index, turn = pick_turn(script, messages)
    failing = should_fail(script, index, turn)
    delay = turn.delay_ms / 1000.0
    if failing and turn.error != "drop_mid_stream":
        return Plan(chunks=[], error=turn.error, delay_s=delay)
    chunks: list[Any] = []
    for piece in _pieces(turn.reasoning, turn.chunk_size):
        # Reasoning travels on delta.reasoning_content, as litellm delivers it for real providers;
        # the generic chunk format has no field for it.
        chunks.append(ModelResponseStream(choices=[StreamingChoices(index=0, delta=Delta(reasoning_content=piece))]))
    text_pieces = _pieces(turn.text, turn.chunk_size)
    if failing:  # drop_mid_stream: half the text, then the connection "dies"
        half = text_pieces[: max(1, len(text_pieces) // 2)] if text_pieces else ["…"]
        chunks.extend(_generic(p) for p in half)
        return Plan(chunks=chunks, error=turn.error, delay_s=delay)
    chunks.extend(_generic(p) for p in text_pieces)
    for call_index, call in enumerate(turn.tool_calls):
        arg_pieces = _pieces(call.arguments, turn.chunk_size) or [""]
        for n, piece in enumerate(arg_pieces):
            first = n == 0
            chunks.append(
                _generic(
                    tool_use={
                        "id": call.id if first else None,
                        "type": "function",
                        "index": call_index,
                        "function": {"name": call.name if first else None, "arguments": piece},
                    }
                )
            )
    reason = turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")
    chunks.append(_generic(finished=True, reason=reason, usage=usage_block(turn, messages)))
    return Plan(chunks=chunks, error=None, delay_s=delay)


def make_error(kind: str, model: str, retry_after: float | None = None) -> Exception:
    """The litellm exception a real provider stack would raise for this failure kind."""
    from myrm_tui.llm.litellm_module import load_litellm

    litellm = load_litellm()  # Any to mypy; each return is cast to what every branch builds

    full = f"{PROVIDER}/{model}"
    msg = f"scripted failure '{kind}'"
    if kind == "rate_limit":
        headers = {"retry-after": str(retry_after)} if retry_after is not None else None
        return cast(Exception, litellm.RateLimitError(msg, llm_provider=PROVIDER, model=full, headers=headers))
    if kind == "server":
        return cast(Exception, litellm.InternalServerError(msg, llm_provider=PROVIDER, model=full))
    if kind == "auth":
        return cast(Exception, litellm.AuthenticationError(msg, llm_provider=PROVIDER, model=full))
    if kind == "not_found":
        return cast(Exception, litellm.NotFoundError(msg, model=full, llm_provider=PROVIDER))
    if kind == "context_window":
        return cast(Exception, litellm.ContextWindowExceededError(msg, model=full, llm_provider=PROVIDER))
    if kind == "content_policy":
        return cast(Exception, litellm.ContentPolicyViolationError(msg, model=full, llm_provider=PROVIDER))
    if kind == "timeout":
        return cast(Exception, litellm.Timeout(msg, model=full, llm_provider=PROVIDER))
    return cast(
        Exception, litellm.APIConnectionError(f"{msg}: connection reset mid-stream", llm_provider=PROVIDER, model=full)
    )


def _load_or_raise(model: str) -> Script:
    from myrm_tui.llm.fake_providers.switch import refuse_if_disabled
    from myrm_tui.llm.litellm_module import load_litellm

    refuse_if_disabled(PROVIDER, model)  # before the script file is read
    litellm = load_litellm()

    try:
        return load_script(model)
    except ScriptError as exc:
        raise litellm.NotFoundError(str(exc), model=f"{PROVIDER}/{model}", llm_provider=PROVIDER) from None


def _retry_after(script: Script, messages: list[dict]) -> float | None:
    return pick_turn(script, messages)[1].retry_after


def make_handler() -> Any:
    """A litellm CustomLLM instance serving `scripted/<path>` (imports litellm)."""
    from litellm.llms.custom_llm import CustomLLM

    class ScriptedLLM(CustomLLM):
        # litellm types astreaming as a coroutine, yet iterates what the call returns (main.py hands
        # it to CustomStreamWrapper unawaited): an async generator is what actually works.
        async def astreaming(  # type: ignore[override]
            self, model: str, messages: list, *args: Any, **kwargs: Any
        ) -> AsyncIterator[Any]:
            script = _load_or_raise(model)
            record_request(script, messages)
            p = plan(script, messages, model)
            due = time.monotonic()
            for chunk in p.chunks:
                if p.delay_s:
                    # On a schedule, like a server that sends whether the reader keeps up or not: a
                    # slow reader finds the chunks waiting, it does not slow the model down.
                    due += p.delay_s
                    await asyncio.sleep(max(0.0, due - time.monotonic()))
                yield chunk
            if p.error:
                raise make_error(p.error, model, _retry_after(script, messages))

        def streaming(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Iterator[Any]:
            script = _load_or_raise(model)
            record_request(script, messages)
            p = plan(script, messages, model)
            for chunk in p.chunks:
                if p.delay_s:
                    time.sleep(p.delay_s)
                yield chunk
            if p.error:
                raise make_error(p.error, model, _retry_after(script, messages))

        def completion(
            self,
            model: str,
            messages: list,
            api_base: str,
            custom_prompt_dict: dict,
            model_response: Any,
            *args: Any,
            **kwargs: Any,
        ) -> Any:
            return _complete(model, messages, model_response)

        async def acompletion(
            self,
            model: str,
            messages: list,
            api_base: str,
            custom_prompt_dict: dict,
            model_response: Any,
            *args: Any,
            **kwargs: Any,
        ) -> Any:
            return _complete(model, messages, model_response)

    return ScriptedLLM()


def _complete(model: str, messages: list[dict], model_response: Any) -> Any:
    """Non-streaming answer (e.g. a summarizer call): the same turn, in one ModelResponse."""
    from myrm_tui.llm.litellm_module import load_litellm

    litellm = load_litellm()
    from litellm.types.utils import ChatCompletionMessageToolCall, Function, Message

    script = _load_or_raise(model)
    record_request(script, messages)
    index, turn = pick_turn(script, messages)
    if should_fail(script, index, turn):
        raise make_error(turn.error or "server", model, turn.retry_after)
    calls = [
        ChatCompletionMessageToolCall(
            id=c.id or f"call_scripted_{index}_{i}",
            type="function",
            function=Function(name=c.name, arguments=c.arguments),
        )
        for i, c in enumerate(turn.tool_calls)
    ] or None
    model_response.choices[0].message = Message(content=turn.text or None, role="assistant", tool_calls=calls)
    model_response.choices[0].finish_reason = turn.finish_reason or ("tool_calls" if calls else "stop")
    model_response.model = f"{PROVIDER}/{model}"
    usage = usage_block(turn, messages)
    model_response.usage = litellm.Usage(**usage)
    return model_response
