"""Stage 1, thinking cleanup: keep only the reasoning a provider needs or accepts.

Why per family: Anthropic wants `thinking_blocks` (signed) and never `reasoning_content`;
DeepSeek/Kimi/Qwen-style APIs need `reasoning_content` back on tool-call turns and reject or
waste it on old text turns; other providers accept neither. Pure and idempotent, so it is
safe at any position without a cache fence (fencing such a transform would break signed
blocks).

Signed blocks are replayed only to the provider family that signed them: a signature is checked
by the provider receiving it, and one made elsewhere (another family's model answered this turn
before a model switch) is rejected, failing the whole request. Inline `<think>` text in the
content goes from every assistant message, whatever the family (`inline_thinking.py`).
"""

from __future__ import annotations

from typing import Any

from myrm_tui.context.rows.family import ANTHROPIC, REASONING_TOOLS
from myrm_tui.context.stages.inline_thinking import strip_inline_thinking

REASONING_KEYS = ("reasoning_content", "thinking_blocks")
# What an assistant message emptied of its reasoning says instead (providers reject empty turns).
REASONING_OMITTED = "[assistant reasoning omitted]"


def clean_thinking(
    message: dict[str, Any], family: str, before_last_user: bool, signer_family: str | None = None
) -> dict[str, Any]:
    """The message as `family` should receive it. `before_last_user`: it belongs to an earlier
    turn than the current one. `signer_family`: the family of the model that wrote the message
    (None: unknown, a row stored before the agent recorded which model answered; its blocks are
    taken to be the receiving family's, as they were before this was recorded)."""
    if message.get("role") != "assistant":
        return message
    stripped = strip_inline_thinking(message)
    emptied = stripped is not message and not stripped.get("content")  # it was all inline reasoning
    # A tool turn with no reasoning still goes on to the back-fill below when the receiving family
    # needs it (a model that wrote none answered it before a switch to a thinking model).
    backfill = family == REASONING_TOOLS and bool(stripped.get("tool_calls"))
    if not backfill and not any(k in stripped for k in REASONING_KEYS):
        return _filled(stripped) if emptied else stripped
    out = dict(stripped)
    if family == ANTHROPIC:
        out.pop("reasoning_content", None)
        blocks = [b for b in out.get("thinking_blocks") or () if _replayable(b)]
        # Anthropic needs the signed blocks back on the turn whose tool calls are being answered
        # (the current one); from earlier turns it drops them itself, so they are not sent.
        if before_last_user or not blocks or not same_signer(signer_family, family):
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
        out["content"] = REASONING_OMITTED
    return _filled(out) if emptied and not out.get("thinking_blocks") else out


def _filled(message: dict[str, Any]) -> dict[str, Any]:
    """An assistant message emptied by the inline strip, made acceptable again: providers reject
    an assistant turn with neither text nor tool calls (nor, for Anthropic, thinking blocks)."""
    if message.get("content") or message.get("tool_calls"):
        return message
    return {**message, "content": REASONING_OMITTED}


def same_signer(signer_family: str | None, receiving_family: str) -> bool:
    """The replay rule for signed reasoning: only blocks signed by the receiving model's provider
    family go back (unknown signer: the receiving family, see `clean_thinking`)."""
    return signer_family is None or signer_family == receiving_family


def _replayable(block: Any) -> bool:
    """A block Anthropic accepts back: a thinking block with its signature (one cut off before the
    signature arrived, by an interrupt or a dropped stream, is refused by the API), or a redacted
    block with its data."""
    if not isinstance(block, dict):
        return False
    if block.get("type") == "thinking":
        return bool(block.get("signature"))
    return block.get("type") == "redacted_thinking" and bool(block.get("data"))
