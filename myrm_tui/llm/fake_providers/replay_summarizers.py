"""`replay-summarizer/<name>`: the benchmark's fake summarizers, as a model behind litellm.

The fakes (`null`, `head`, `oracle`; the replay spec in docs/replay-format.md) are pure
functions shared by every benchmark contender: they measure what an engine keeps and passes on,
not a model's writing. Peers call them directly. myrm reaches them the way it reaches any
summarizer model: the agent's background `maintain` → the summary client (prompt, audit,
escalation, extractive fallback) → `llm.stream` → litellm → this provider. So nothing about
them lives in the context engine, and a replay's summaries are made by the code a user runs.

The provider reads the transcript blocks of the summarizer's request (one per message, as
`context/summary/prompts.transcript` writes them), applies the fake to them, and answers in the
JSON shape the summary client asks for, with the fake's text as the narrative. Whether that
answer is accepted is the client's business (its auditor checks what it kept), as for a model.

`SUMMARIZERS` is a registry: the bench adds hostile fakes (one that raises, one that inflates)
by name at run time.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from functools import lru_cache
from typing import Any

from myrm_tui.messages import content_text

PROVIDER = "replay-summarizer"
# The window the fake summarizer model declares: a lite model's, so the summary client's
# routing (pick_summarizer_model) accepts it and chunking has room.
CONTEXT_WINDOW = 128_000

Summarizer = Callable[[Sequence[dict[str, Any]]], str]

NULL_TEXT = "Earlier messages were compacted."
HEAD_CHARS = 160  # per block, as the benchmark defines it
HEAD_CAP = 8_000
_NEEDLE = re.compile(r"NEEDLE-[0-9a-fA-F]+(?:\s+\w+=\S+)?")
# A transcript block's label line: `[msg:12 tool result of call_3]`, `[#4 user]`.
_BLOCK_LABEL = re.compile(r"^\[(?:msg:\d+|#\d+) (\w+)(?: result of [^\]\n]*)?\]$", re.MULTILINE)
CHARS_PER_TOKEN = 4  # fallback count when tiktoken is unavailable


def _text_of(message: dict[str, Any]) -> str:
    # " "-joined with images as nothing: the fakes' answers (head's excerpts, oracle's needles)
    # stay what the recorded benchmark figures were measured with.
    return content_text(message.get("content"), sep=" ", image="", keep_empty=True)


def null_summarizer(messages: Sequence[dict[str, Any]]) -> str:
    return NULL_TEXT


def head_summarizer(messages: Sequence[dict[str, Any]]) -> str:
    blocks = [_text_of(m).strip()[:HEAD_CHARS] for m in messages if _text_of(m).strip()]
    return " | ".join(blocks)[:HEAD_CAP]


def oracle_summarizer(messages: Sequence[dict[str, Any]]) -> str:
    found: list[str] = []
    for message in messages:
        texts = [_text_of(message)]
        texts += [c.get("function", {}).get("arguments", "") for c in message.get("tool_calls") or ()]
        for text in texts:
            found.extend(m.group(0) for m in _NEEDLE.finditer(str(text)))
    return " ".join(dict.fromkeys(found))


SUMMARIZERS: dict[str, Summarizer] = {"null": null_summarizer, "head": head_summarizer, "oracle": oracle_summarizer}
# Fakes that answer the whole summarizer request themselves (JSON, as a model would), by name:
# `myrm_tui.replay.use_capable_oracle` puts the capable-model stand-in here as `oracle` (it
# lives above this layer, in the context engine's summary package).
ANSWERS: dict[str, Callable[[Sequence[dict[str, Any]]], str]] = {}


def model_name(summarizer: str) -> str:
    return f"{PROVIDER}/{summarizer}"


def source_messages(request: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages a summarizer request asks to summarize, rebuilt from its transcript (the
    first user message): one per labelled block, with the block's text. A request without
    labelled blocks is one message holding the whole first user text."""
    first = next((m for m in request if isinstance(m, dict) and m.get("role") == "user"), None)
    text = _text_of(first) if first is not None else ""
    labels = list(_BLOCK_LABEL.finditer(text))
    if not labels:
        return [{"role": "user", "content": text}]
    out = []
    for i, label in enumerate(labels):
        end = labels[i + 1].start() if i + 1 < len(labels) else len(text)
        out.append({"role": label.group(1), "content": text[label.end() : end].strip("\n")})
    return out


def answer_text(summarizer: str, request: Sequence[dict[str, Any]]) -> str:
    """What the fake model answers: the fake's own answer (`ANSWERS`), or its text as the
    narrative of a summary object."""
    if summarizer in ANSWERS:
        return ANSWERS[summarizer](request)
    fake = SUMMARIZERS[summarizer]
    return json.dumps({"narrative": fake(source_messages(request))}, ensure_ascii=False)


@lru_cache(maxsize=1)
def _encoder() -> Any:
    try:
        import tiktoken

        return tiktoken.get_encoding("o200k_base")
    except Exception:  # noqa: BLE001 - counting is a report, not a decision
        return None


def count_tokens(text: str) -> int:
    """o200k tokens (the bench's shared counter), or chars/4 without tiktoken."""
    encoder = _encoder()
    if encoder is None:
        return -(-len(text) // CHARS_PER_TOKEN)
    return len(encoder.encode(text, disallowed_special=()))


def _usage(request: Sequence[dict[str, Any]], answer: str) -> dict[str, int]:
    # 4 per message: role markers and separators, as context/tokens counts them.
    prompt = sum(count_tokens(_text_of(m)) + 4 for m in request if isinstance(m, dict))
    completion = count_tokens(answer)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _name_of(model: str) -> str:
    from myrm_tui.llm.litellm_module import load_litellm

    name = model.split("/", 1)[1] if model.startswith(PROVIDER + "/") else model
    if name not in SUMMARIZERS:
        raise load_litellm().NotFoundError(
            f"no fake summarizer {name!r}; known: {', '.join(SUMMARIZERS)}",
            model=model_name(name),
            llm_provider=PROVIDER,
        )
    return name


def _chunks(model: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from myrm_tui.llm.fake_providers.switch import refuse_if_disabled

    refuse_if_disabled(PROVIDER, model)
    answer = answer_text(_name_of(model), messages)
    usage = _usage(messages, answer)
    return [
        {"text": answer, "tool_use": None, "is_finished": False, "finish_reason": "", "usage": None, "index": 0},
        {"text": "", "tool_use": None, "is_finished": True, "finish_reason": "stop", "usage": usage, "index": 0},
    ]


def make_handler() -> Any:
    """A litellm CustomLLM instance serving `replay-summarizer/<name>` (imports litellm)."""
    from litellm.llms.custom_llm import CustomLLM

    class FakeSummarizerLLM(CustomLLM):
        # litellm types astreaming as a coroutine, yet iterates what the call returns (main.py hands
        # it to CustomStreamWrapper unawaited): an async generator is what actually works.
        async def astreaming(  # type: ignore[override]
            self, model: str, messages: list, *args: Any, **kwargs: Any
        ) -> AsyncIterator[Any]:
            for chunk in _chunks(model, messages):
                yield chunk

        def streaming(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Iterator[Any]:
            yield from _chunks(model, messages)

    return FakeSummarizerLLM()
