"""Last stage, encode-safe: lone UTF-16 surrogates in the outgoing prompt become U+FFFD.

Why: a tool output decoded with `surrogateescape` (an undecodable byte from a file or a command)
carries lone surrogates; Python strings hold them, JSON and the store keep them losslessly, but
encoding the provider request as UTF-8 fails, and with it the whole turn, again on every retry.
Only the prompt sent is cleaned (any role, any string in it: text parts, tool-call arguments,
reasoning), after the cache digests were taken; the stored rows keep the original bytes.
"""

from __future__ import annotations

import re
from typing import Any

# The UTF-16 surrogate range: never valid on its own in UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def encode_safe_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (the same object when it has none)."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(REPLACEMENT, text)


def encode_safe(value: Any) -> Any:
    """`value` (a message, or any JSON-like part of one) with every string encode-safe; the same
    object wherever nothing changed, so a clean prompt costs one scan and no copy."""
    if isinstance(value, str):
        return encode_safe_text(value)
    if isinstance(value, dict):
        # Keys are the message format's own names (tool arguments travel as one JSON string).
        changed = {k: c for k, v in value.items() if (c := encode_safe(v)) is not v}
        return {k: changed.get(k, v) for k, v in value.items()} if changed else value
    if isinstance(value, list):
        items = [encode_safe(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def encode_safe_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The prompt's messages encode-safe, and how many of them changed."""
    out = [encode_safe(m) for m in messages]
    return out, sum(1 for a, b in zip(out, messages, strict=True) if a is not b)
