"""Small pieces the re-implemented `-policy` contenders share (none of the peers' code is used).

The policies are written from the peers' documented behaviour (summarised in docs/benchmarks.md,
"Contenders"), a few dozen lines each: they show what a documented strategy does on our workloads, not
what the product does in every detail.
"""

from __future__ import annotations

from typing import Any

CLEARED = "[Old tool result content cleared]"


def head_tail(text: str, max_chars: int, *, note: str = "truncated") -> str:
    """Keep the start and end of a long text with a marker in the middle."""
    if len(text) <= max_chars:
        return text
    half = max_chars // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} chars {note} ...]\n{text[-half:]}"


def is_tool_result(message: dict[str, Any]) -> bool:
    return message.get("role") == "tool"


def user_messages(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in history if m.get("role") == "user"]


def cleared(message: dict[str, Any], text: str = CLEARED) -> dict[str, Any]:
    """A copy of a tool result with its output replaced (the call pairing is kept)."""
    return {**message, "content": text}
