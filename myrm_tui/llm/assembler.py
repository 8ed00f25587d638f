"""Fold litellm stream chunks into typed events and the assistant message to store.

Why a separate object: tool calls arrive as fragments keyed by `index` (id and name in the first
fragment, the JSON arguments spread over many), text and reasoning arrive as deltas, usage comes
last. Keeping that bookkeeping out of the retry loop lets one attempt be thrown away whole.

Anthropic's extended thinking arrives as `thinking_blocks` fragments on the deltas (litellm's
anthropic handler): the thinking text of a block in pieces, then its signature, each tagged with
the block's index; a redacted block arrives whole. They are put back together here and stored on
the assistant message as `thinking_blocks` (type, thinking, signature / type, data), exactly what
litellm sends back to Anthropic, which requires the signed blocks on the assistant turn that made
the tool calls it is answering (context/stages/thinking_cleanup.py keeps them there).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from myrm_tui.llm.events import FinishEvent, LLMEvent, ReasoningDelta, TextDelta, ToolCallEvent, UsageEvent


@dataclass
class _PartialCall:
    index: int
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def _get(obj: Any, key: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# Random per process, mixed into every generated call id. The caller's salt (model and
# conversation length) is the same in two processes that answer the same session state, and
# identical ids from two writers made results pair with the wrong call; 64 random
# bits make a cross-process clash practically impossible, while ids stay reproducible within
# one process (the same stream assembled twice gives the same id).
_PROCESS_NONCE = secrets.token_hex(8)


def generated_call_id(salt: str, index: int, name: str, arguments: str) -> str:
    """An id for a call the provider sent without one: unique across processes (the process
    nonce), and across turns (the caller salts with the conversation length)."""
    text = f"{_PROCESS_NONCE}\x00{salt}\x00{index}\x00{name}\x00{arguments}"
    return f"call_{hashlib.sha256(text.encode()).hexdigest()[:24]}"


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Arguments as a dict, or ({}, reason) when the model produced something else."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"arguments are not valid JSON ({exc.msg} at char {exc.pos})"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def usage_event(usage: Any) -> UsageEvent | None:
    """Read prompt/completion/cache counts from an OpenAI- or Anthropic-shaped usage block."""
    if usage is None:
        return None
    details = _get(usage, "prompt_tokens_details")
    cached_read = _int(_get(details, "cached_tokens")) or _int(_get(usage, "cache_read_input_tokens"))
    cached_write = _int(_get(usage, "cache_creation_input_tokens")) or _int(_get(details, "cache_write_tokens"))
    return UsageEvent(
        prompt_tokens=_int(_get(usage, "prompt_tokens")),
        completion_tokens=_int(_get(usage, "completion_tokens")),
        cached_read_tokens=cached_read,
        cached_write_tokens=cached_write,
    )


class StreamAssembler:
    """Consumes the chunks of ONE attempt; `feed` returns events to yield now, `finish` the rest."""

    def __init__(self, id_salt: str) -> None:
        self._id_salt = id_salt
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._thinking: dict[int, dict[str, Any]] = {}  # block index -> the block so far
        self._finish_reason: str | None = None
        self._usage: UsageEvent | None = None

    @property
    def finish_reason(self) -> str | None:
        return self._finish_reason

    def is_empty(self) -> bool:
        """Nothing at all arrived: not even usage. A real (even empty) answer carries usage;
        a server that died after sending its headers does not."""
        return not (self._text or self._reasoning or self._calls or self._usage or self._thinking)

    def feed(self, chunk: Any) -> list[LLMEvent]:
        out: list[LLMEvent] = []
        usage = usage_event(_get(chunk, "usage"))
        if usage is not None:
            self._usage = usage
        for choice in _get(chunk, "choices") or []:
            delta = _get(choice, "delta")
            self._add_thinking(delta)
            reasoning = self._reasoning_of(delta)
            if reasoning:
                self._reasoning.append(reasoning)
                out.append(ReasoningDelta(reasoning))
            content = _get(delta, "content")
            if isinstance(content, str) and content:
                self._text.append(content)
                out.append(TextDelta(content))
            for fragment in _get(delta, "tool_calls") or []:
                self._add_fragment(fragment)
            reason = _get(choice, "finish_reason")
            if reason:
                self._finish_reason = str(reason)
        return out

    @staticmethod
    def _reasoning_of(delta: Any) -> str:
        for key in ("reasoning_content", "thinking"):
            value = _get(delta, key)
            if isinstance(value, str) and value:
                return value
        extra = _get(delta, "provider_specific_fields") or {}
        value = extra.get("reasoning_content") if isinstance(extra, dict) else None
        return value if isinstance(value, str) else ""

    def _add_thinking(self, delta: Any) -> None:
        """Anthropic thinking-block fragments: text pieces and the signature of one block share
        its index; a fragment without an index continues the last block (a new block starts after
        a signed one)."""
        blocks = _get(delta, "thinking_blocks")
        if not blocks:
            extra = _get(delta, "provider_specific_fields") or {}
            blocks = extra.get("thinking_blocks") if isinstance(extra, dict) else None
        for fragment in blocks or ():
            kind = _get(fragment, "type")
            index = _get(fragment, "index")
            if not isinstance(index, int):
                last = max(self._thinking) if self._thinking else -1
                signed = last >= 0 and bool(self._thinking[last].get("signature"))
                index = last + 1 if (last < 0 or signed or kind == "redacted_thinking") else last
            if kind == "redacted_thinking":
                self._thinking[index] = {"type": "redacted_thinking", "data": str(_get(fragment, "data") or "")}
                continue
            if kind != "thinking":
                continue
            block = self._thinking.setdefault(index, {"type": "thinking", "thinking": "", "signature": ""})
            text = _get(fragment, "thinking")
            if isinstance(text, str):
                block["thinking"] += text
            signature = _get(fragment, "signature")
            if isinstance(signature, str) and signature:
                block["signature"] = signature

    def _add_fragment(self, fragment: Any) -> None:
        index = _get(fragment, "index")
        if not isinstance(index, int):
            index = max(self._calls) if self._calls else 0
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _PartialCall(index=index)
        frag_id = _get(fragment, "id")
        if frag_id and not call.id:
            call.id = str(frag_id)
        function = _get(fragment, "function")
        name = _get(function, "name")
        if name and not call.name:
            call.name = str(name)
        args = _get(function, "arguments")
        if isinstance(args, str) and args:
            call.arguments.append(args)
        elif isinstance(args, dict):
            call.arguments.append(json.dumps(args))

    def finish(self) -> list[LLMEvent]:
        """Tool calls, usage (when the provider sent it) and the FinishEvent with the stored message."""
        out: list[LLMEvent] = []
        stored_calls: list[dict[str, Any]] = []
        for index in sorted(self._calls):
            call = self._calls[index]
            raw = "".join(call.arguments)
            call_id = call.id or generated_call_id(self._id_salt, index, call.name, raw)
            arguments, error = parse_arguments(raw)
            out.append(
                ToolCallEvent(id=call_id, name=call.name, arguments=arguments, raw_arguments=raw, parse_error=error)
            )
            stored_calls.append({"id": call_id, "type": "function", "function": {"name": call.name, "arguments": raw}})
        if self._usage is not None:
            out.append(self._usage)
        text = "".join(self._text)
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if stored_calls:
            message["tool_calls"] = stored_calls
        if self._reasoning:
            message["reasoning_content"] = "".join(self._reasoning)
        if self._thinking:
            message["thinking_blocks"] = [self._thinking[index] for index in sorted(self._thinking)]
        reason = self._finish_reason or "stop"
        if stored_calls and reason == "stop":
            reason = "tool_calls"
        out.append(FinishEvent(reason=reason, message=message))
        return out
