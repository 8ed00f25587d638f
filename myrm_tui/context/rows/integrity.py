"""Make a message list valid for every provider: calls and results paired by id.

Why a separate pure function: it runs last on every assembled prompt, whatever earlier stages
did, so the provider never rejects a request for "tool message must follow tool_calls".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SYNTHETIC_INTERRUPTED = "[no result: this tool call did not complete (interrupted); run it again if still needed]"
# Some providers reject a conversation whose first turn is not the user's.
SYNTHETIC_FIRST_USER = "[conversation continues from an earlier session]"


@dataclass
class IntegrityReport:
    orphans_dropped: int = 0
    dangling_repaired: list[str] = field(default_factory=list)
    first_user_inserted: bool = False


def _call_ids(message: dict[str, Any]) -> list[str]:
    return [c.get("id", "") for c in message.get("tool_calls") or () if c.get("id")]


def repair_pairs(
    messages: list[dict[str, Any]], *, first_user: bool = True
) -> tuple[list[dict[str, Any]], IntegrityReport]:
    """Return a provider-valid copy: each assistant tool call immediately followed by exactly one
    result per call, orphan results dropped, dangling calls answered with a
    synthetic result, and a user message first. Pure and deterministic. `first_user=False`:
    `messages` continue a list already checked (`RenderedHistory.valid_history`), so no user
    message is put first."""
    report = IntegrityReport()
    # Results queued per call id in stored order: a reused id (some providers recycle them
    # across turns) pairs its n-th call with its n-th result.
    pending: dict[str, list[dict[str, Any]]] = {}
    for message in messages:
        if message.get("role") == "tool":
            pending.setdefault(message.get("tool_call_id", ""), []).append(message)

    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "tool":
            continue  # re-emitted right after the call that owns it
        out.append(message)
        if role != "assistant":
            continue
        for call in message.get("tool_calls") or ():
            call_id = call.get("id", "")
            queue = pending.get(call_id)
            if queue:
                out.append(queue.pop(0))
            else:
                report.dangling_repaired.append(call_id)
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "name": call.get("function", {}).get("name", ""),
                        "content": SYNTHETIC_INTERRUPTED,
                    }
                )
    report.orphans_dropped = sum(len(queue) for queue in pending.values())

    first_real = next((i for i, m in enumerate(out) if m.get("role") != "system"), None)
    if first_user and first_real is not None and out[first_real].get("role") != "user":
        out.insert(first_real, {"role": "user", "content": SYNTHETIC_FIRST_USER})
        report.first_user_inserted = True
    return out, report
