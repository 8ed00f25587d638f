"""Canonical request serialization and the longest common prefix between consecutive requests.

Why canonicalize: provider caches key on the request's content, not on bookkeeping. Cache
markers (`cache_control`) and private keys (`_…`) do not change what the provider caches, and a
content list holding one text part is the same request as that string. Keys are written in wire
order (role first), so a change of role is a change at the start of the message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

WIRE_ORDER = ("role", "name", "tool_call_id", "content", "tool_calls")


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if not k.startswith("_") and k != "cache_control"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def normalize_message(message: dict[str, Any]) -> dict[str, Any]:
    """The message as the provider caches it: no markers, no private keys, wire key order."""
    clean = _strip(message)
    content = clean.get("content")
    if (
        isinstance(content, list)
        and len(content) == 1
        and isinstance(content[0], dict)
        and content[0].get("type") == "text"
        and set(content[0]) <= {"type", "text"}
    ):
        clean["content"] = content[0].get("text", "")
    ordered = {k: clean[k] for k in WIRE_ORDER if k in clean}
    ordered.update((k, clean[k]) for k in sorted(clean) if k not in ordered)
    return ordered


def canonical(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def common_prefix_len(a: str, b: str) -> int:
    """Length of the common prefix; binary search on slices keeps it in C for megabyte strings."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


@dataclass(frozen=True)
class Overlap:
    """How much of the current request repeats the previous one."""

    same_messages: int  # leading messages identical to the previous request's
    boundary_tokens: int  # tokens of those messages: what an Anthropic-like cache (message boundaries) reuses
    lcp_tokens: int  # plus the common part of the first differing message: OpenAI-like (token prefix) reuse
    previous_is_prefix: bool  # False = a prefix break: something already sent was changed or dropped


def overlap(previous: list[str], current: list[str], current_tokens: list[int]) -> Overlap:
    """Compare canonical message strings; the partial message is prorated by characters."""
    same = 0
    for a, b in zip(previous, current, strict=False):
        if a != b:
            break
        same += 1
    boundary = sum(current_tokens[:same])
    partial = 0
    if same < len(previous) and same < len(current):
        a, b = previous[same], current[same]
        if b:
            partial = current_tokens[same] * common_prefix_len(a, b) // len(b)
    return Overlap(same, boundary, boundary + partial, same == len(previous))
