"""History as units: a user message, or an assistant message with its tool results.

Why: a tool call and its results must stay or go together (providers reject either half
alone), so every decision that removes something is made per unit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from myrm_tui.store.records import MessageRecord


@dataclass(frozen=True)
class Unit:
    start: int  # index into rows
    end: int  # exclusive
    role: str  # role of the first row


def split_units(rows: Sequence[MessageRecord], start: int = 0) -> list[Unit]:
    units: list[Unit] = []
    i = start
    while i < len(rows):
        start = i
        role = rows[i].role
        i += 1
        if role == "assistant" and rows[start].message.get("tool_calls"):
            ids = {c.get("id") for c in rows[start].message["tool_calls"]}
            while i < len(rows) and rows[i].role == "tool" and rows[i].message.get("tool_call_id") in ids:
                i += 1
        units.append(Unit(start, i, role))
    return units


def last_user_index(rows: Sequence[MessageRecord]) -> int | None:
    for i in range(len(rows) - 1, -1, -1):
        if rows[i].role == "user":
            return i
    return None
