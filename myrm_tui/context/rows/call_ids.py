"""Session-unique tool-call ids, given before a message is stored.

Why: some providers and local servers number calls per response ("call_0" every turn) or send
empty ids. Stored as is, the prompt then holds two calls with one id and a result that pairs
with either: strict providers reject it, others attach the output to the wrong call. Renaming
at the door (the agent before it runs the calls, `myrm replay` before it stores a line) keeps
every later prompt valid without any repair, and the pairing the model meant is kept: a result
takes the id of the nearest preceding call that had its original id.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

EMPTY_ID = "call"
SEPARATOR = "~"


def _fresh(old: str, taken: set[str]) -> str:
    base = old or EMPTY_ID
    n = 1
    while f"{base}{SEPARATOR}{n}" in taken:
        n += 1
    return f"{base}{SEPARATOR}{n}"


def unique_call_ids(message: dict[str, Any], taken: set[str]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """`message` with every reused or empty call id renamed, and (old, new) per call in order.
    New ids are added to `taken` (the caller's set of ids already used in the session)."""
    pairs: list[tuple[str, str]] = []
    calls = message.get("tool_calls") or ()
    renamed = False
    new_calls = []
    for call in calls:
        old = str(call.get("id") or "")
        new = old if old and old not in taken else _fresh(old, taken)
        taken.add(new)
        pairs.append((old, new))
        if new != old:
            renamed = True
            call = {**call, "id": new}
        new_calls.append(call)
    if not renamed:
        return message, pairs
    return {**message, "tool_calls": new_calls}, pairs


@dataclass
class CallIdMap:
    """Renames ids across a stream of messages in order (assistant calls, then their results)."""

    taken: set[str] = field(default_factory=set)
    _pending: dict[str, deque[str]] = field(default_factory=dict)

    def message(self, message: dict[str, Any]) -> dict[str, Any]:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            message, pairs = unique_call_ids(message, self.taken)
            self._pending = {}
            for old, new in pairs:
                self._pending.setdefault(old, deque()).append(new)
            return message
        if role == "tool":
            old = str(message.get("tool_call_id") or "")
            queue = self._pending.get(old)
            if queue:
                new = queue.popleft()
                if new != old:
                    return {**message, "tool_call_id": new}
        elif role == "user":
            self._pending = {}  # results after a user message pair with nothing before it
        return message
