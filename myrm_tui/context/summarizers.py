"""The summarize slot: a summarizer turns removed messages into a short text for their marker.

Here only the deterministic fakes of BENCHMARKS.md, shared by every contender so the bench
measures what the engine keeps and passes on, not a model's writing. LLM summaries (the DAG)
plug into the same slot later.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from myrm_tui.context.intent import _text_of

Summarizer = Callable[[Sequence[dict[str, Any]]], str]

NULL_TEXT = "Earlier messages were compacted."
HEAD_CHARS = 160  # per block, as the benchmark defines it
HEAD_CAP = 8_000
_NEEDLE = re.compile(r"NEEDLE-[0-9a-fA-F]+(?:\s+\w+=\S+)?")


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


SUMMARIZERS: dict[str, Summarizer] = {"null": null_summarizer, "head": head_summarizer,
                                      "oracle": oracle_summarizer}
