"""Build a planner input from plain messages, for tests of one compress rule at a time."""

from __future__ import annotations

import json
from typing import Any

from myrm_tui.context.observations.intent import Intent, build_intent
from myrm_tui.context.observations.relevance_policy import RECENCY
from myrm_tui.context.rows.units import last_user_index, split_units
from myrm_tui.context.stages.compress import PlanInput
from myrm_tui.store.records import MessageRecord


def count(message: dict[str, Any] | None) -> int:
    """A test's token count: one token per four characters of the message's JSON."""
    return len(json.dumps(message)) // 4 + 1 if message is not None else 0


def rows_of(messages: list[dict[str, Any]]) -> list[MessageRecord]:
    return [
        MessageRecord(
            id=i + 1,
            session_id="s",
            seq=i,
            role=m["role"],
            message=m,
            tokens=count(m),
            created_at=0.0,
            tool_call_id=m.get("tool_call_id"),
        )
        for i, m in enumerate(messages)
    ]


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def tool_unit(call_id: str, name: str, arguments: dict[str, Any], output: str) -> list[dict[str, Any]]:
    """An assistant message with one call and its result: one unit."""
    return [
        {"role": "assistant", "content": "", "tool_calls": [call(call_id, name, arguments)]},
        {"role": "tool", "tool_call_id": call_id, "name": name, "content": output},
    ]


def plan_input(
    messages: list[dict[str, Any]],
    *,
    tier: str,
    target: int,
    tail_units: int = 1,
    eviction: str = RECENCY,
    intent: Intent | None = None,
    blocks: dict[int, int] | None = None,
) -> PlanInput:
    """The anchors (first and last user message) protected, the newest `tail_units` units the
    fresh tail, no fence and no earlier views."""
    rows = rows_of(messages)
    units = split_units(rows)
    last_user = last_user_index(rows)
    first_user = next(i for i, r in enumerate(rows) if r.role == "user")
    calls = {
        c["id"]: (c["function"]["name"], json.loads(c["function"]["arguments"]))
        for r in rows
        for c in r.message.get("tool_calls") or ()
    }
    tokens = [r.tokens for r in rows]
    return PlanInput(
        rows=rows,
        units=units,
        views={},
        row_tokens=tokens,
        total=sum(tokens),
        target=target,
        tier=tier,
        protected=frozenset({first_user, last_user if last_user is not None else first_user}),
        tail_start=units[-tail_units].start if tail_units else len(rows),
        last_user=last_user if last_user is not None else -1,
        intent=intent if intent is not None else build_intent(rows, last_user),
        budget=sum(tokens) * 2,
        light_filter_tokens=200,
        count=count,
        calls=calls,
        eviction=eviction,
        blocks=blocks or {},
    )
