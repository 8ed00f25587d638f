"""Finding tool calls that never got a result, over plain OpenAI-format message dicts.

Pure (no database) so the context engine's integrity stage can reuse it on assembled prompts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DanglingCall:
    call_id: str
    name: str


def tool_calls_of(message: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(id, function name) of each well-formed tool call of an assistant message."""
    if message.get("role") != "assistant":
        return []
    calls = message.get("tool_calls") or []
    found: list[tuple[str, str]] = []
    if not isinstance(calls, list):
        return found
    for call in calls:
        if not isinstance(call, Mapping):
            continue
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            continue
        function = call.get("function")
        name = function.get("name") if isinstance(function, Mapping) else None
        found.append((call_id, name if isinstance(name, str) else ""))
    return found


def find_dangling_calls(history: Iterable[Mapping[str, Any]]) -> list[DanglingCall]:
    """Calls with no *later* tool message carrying their id, in history order, each id once."""
    messages = list(history)
    answered_later: set[str] = set()
    dangling_reversed: list[DanglingCall] = []
    for message in reversed(messages):
        if message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if isinstance(call_id, str):
                answered_later.add(call_id)
            continue
        for call_id, name in reversed(tool_calls_of(message)):
            if call_id not in answered_later:
                dangling_reversed.append(DanglingCall(call_id, name))
    ordered: list[DanglingCall] = []
    seen: set[str] = set()
    for call in reversed(dangling_reversed):
        if call.call_id not in seen:
            seen.add(call.call_id)
            ordered.append(call)
    return ordered
