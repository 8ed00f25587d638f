"""Stage 12, prompt-cache optimise: provider cache markers and a cache-break detector.

Anthropic caches up to 4 marked prefixes; we mark the system prompt (system + tools + workspace
rules, the stable prefix), the last message of the previous request (the stable history block)
and the newest message. Qwen on DashScope reads the same `cache_control` markers (its explicit
cache; litellm passes them through for the `dashscope/` provider), so it gets the same three.
OpenAI caches automatically; the agent sends `prompt_cache_key` = the session id. The detector
compares consecutive requests message by message and records the first position that changed
and a reason, so every break is explained.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import eq
from typing import Any

from myrm_tui.context.rows.family import ANTHROPIC, family_of
from myrm_tui.context.rows.json_fields import int_or_none

MAX_BREAKPOINTS = 4


def message_digest(message: dict[str, Any]) -> str:
    raw = json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _mark(message: dict[str, Any]) -> dict[str, Any]:
    out = dict(message)
    content = out.get("content")
    if isinstance(content, str):
        out["content"] = [{"type": "text", "text": content, "cache_control": {"type": "ephemeral"}}]
    elif isinstance(content, list) and content:
        parts = [dict(p) if isinstance(p, dict) else p for p in content]
        if isinstance(parts[-1], dict):
            parts[-1]["cache_control"] = {"type": "ephemeral"}
        out["content"] = parts
    else:
        return message  # an assistant turn with only tool calls: nothing to hang a marker on
    return out


def breakpoints_for(n_messages: int, previous_len: int) -> tuple[int, ...]:
    points = [0]
    if 0 < previous_len - 1 < n_messages - 1:
        points.append(previous_len - 1)
    if n_messages > 1:
        points.append(n_messages - 1)
    return tuple(sorted(set(points)))[:MAX_BREAKPOINTS]


# Providers that cache only what the request marks (litellm keeps `cache_control` for them).
MARKED_CACHE_PROVIDERS = ("dashscope/",)


def takes_cache_markers(model: str) -> bool:
    """Whether requests to `model` should carry `cache_control` markers: Anthropic models, and
    providers with an explicit, marker-driven cache. Everyone else caches on its own (OpenAI,
    DeepSeek, Gemini's implicit cache) or not at all, and a marker would be noise or a 400."""
    return family_of(model) == ANTHROPIC or model.lower().startswith(MARKED_CACHE_PROVIDERS)


def apply_markers(messages: list[dict[str, Any]], points: Sequence[int], model: str) -> list[dict[str, Any]]:
    if not takes_cache_markers(model):
        return messages
    out = list(messages)
    for i in points:
        if 0 <= i < len(out):
            out[i] = _mark(out[i])
    return out


@dataclass(frozen=True)
class CacheBreak:
    """Where the prompt stopped extending the previous request's, and why (the report's
    `cache_break`; stored as JSON, so read back with `from_dict`)."""

    position: int | None  # index of the first message that differs from the previous request
    previous_len: int | None
    reason: str
    kept_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "previous_len": self.previous_len,
            "reason": self.reason,
            "kept_tokens": self.kept_tokens,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CacheBreak:
        return cls(
            int_or_none(data.get("position")),
            int_or_none(data.get("previous_len")),
            str(data.get("reason") or "unknown"),
            int_or_none(data.get("kept_tokens")) or 0,
        )


def first_difference(previous: Sequence[str], current: Sequence[str]) -> int | None:
    """Index of the first differing digest, or None if `current` extends `previous`. The usual
    answer (an extension) is found by one list comparison in C: a Python loop over every
    digest was a per-request cost growing with the session."""
    shared = min(len(previous), len(current))
    if list(previous[:shared]) != list(current[:shared]):
        return list(map(eq, previous, current)).index(False)
    if len(current) < len(previous):
        return len(current)
    return None
