"""Stage 10, normalize: only the fields a provider accepts, in a stable shape.

Why: stored rows may carry fields from another provider (a hot model switch) or our own
bookkeeping; strict providers reject unknown keys, and a stable key order keeps the serialised
request byte-identical between turns.
"""

from __future__ import annotations

from typing import Any

ALLOWED = {
    "system": ("role", "content"),
    "user": ("role", "content", "name"),
    "assistant": ("role", "content", "tool_calls", "reasoning_content", "thinking_blocks", "name"),
    "tool": ("role", "tool_call_id", "name", "content"),
}


def normalize(message: dict[str, Any]) -> dict[str, Any]:
    role = message.get("role", "user")
    keys = ALLOWED.get(role, ("role", "content"))
    out = {k: message[k] for k in keys if k in message}
    if role == "tool":
        content = out.get("content")
        if not isinstance(content, str):
            out["content"] = "" if content is None else str(content)
    if role == "assistant" and out.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c.get("id", ""),
                "type": "function",
                "function": {
                    "name": c.get("function", {}).get("name", ""),
                    "arguments": c.get("function", {}).get("arguments", "") or "{}",
                },
            }
            for c in out["tool_calls"]
        ]
    return out
