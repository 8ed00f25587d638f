"""Stage 1, thinking cleanup: keep only the reasoning a provider needs or accepts.

Why per family: Anthropic wants `thinking_blocks` (signed) and never `reasoning_content`;
DeepSeek/Kimi/Qwen-style APIs need `reasoning_content` back on tool-call turns and reject or
waste it on old text turns; other providers accept neither. Pure and idempotent, so it is
safe at any position without a cache fence (fencing such a transform would break signed
blocks).
"""

from __future__ import annotations

from typing import Any

from myrm_tui.context.family import ANTHROPIC, REASONING_TOOLS

REASONING_KEYS = ("reasoning_content", "thinking_blocks")


def clean_thinking(message: dict[str, Any], family: str, before_last_user: bool) -> dict[str, Any]:
    """The message as `family` should receive it. `before_last_user`: it belongs to an earlier
    turn than the current one."""
    if message.get("role") != "assistant" or not any(k in message for k in REASONING_KEYS):
        return message
    out = dict(message)
    if family == ANTHROPIC:
        out.pop("reasoning_content", None)
        blocks = [b for b in out.get("thinking_blocks") or () if _replayable(b)]
        # Anthropic needs the signed blocks back on the turn whose tool calls are being answered
        # (the current one); from earlier turns it drops them itself, so they are not sent.
        if before_last_user or not blocks:
            out.pop("thinking_blocks", None)
        else:
            out["thinking_blocks"] = blocks
    elif family == REASONING_TOOLS:
        out.pop("thinking_blocks", None)
        if before_last_user and not out.get("tool_calls"):
            out.pop("reasoning_content", None)
        elif out.get("tool_calls") and "reasoning_content" not in out:
            # Switched from a model that produced none: these APIs reject a tool turn without it.
            out["reasoning_content"] = ""
    else:
        for key in REASONING_KEYS:
            out.pop(key, None)
    if out.get("content") in (None, "") and not out.get("tool_calls") and family != ANTHROPIC:
        out["content"] = "[assistant reasoning omitted]"
    return out


def _replayable(block: Any) -> bool:
    """A block Anthropic accepts back: a thinking block with its signature (one cut off before the
    signature arrived, by an interrupt or a dropped stream, is refused by the API), or a redacted
    block with its data."""
    if not isinstance(block, dict):
        return False
    if block.get("type") == "thinking":
        return bool(block.get("signature"))
    return block.get("type") == "redacted_thinking" and bool(block.get("data"))
