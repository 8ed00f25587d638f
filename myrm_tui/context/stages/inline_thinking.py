"""Inline reasoning in an assistant's text: `<think>…</think>` (or `<thinking>…</thinking>`).

Why stripped before a reply is sent back: some local and open models put their reasoning in the
content itself instead of a reasoning field. Re-sent, it costs tokens every turn and no API needs
it (the reasoning an API does need back travels in `reasoning_content` / `thinking_blocks`,
`thinking_cleanup.py`). So it goes from every assistant message, the current turn's too: keeping
it on the current tool-call round would only make the same message render differently once the
next user message arrives, which breaks the provider's prompt cache for nothing.

Only leading blocks: reasoning models emit theirs before the answer, while a tag further on is
more likely the answer talking about such tags (code, docs), which must reach the model as written.
A `<think>` that opens the message and never closes (a stream cut off while reasoning) drops to the
end of the message. User and tool text never pass through here (`clean_thinking` only calls it for
assistant messages).
"""

from __future__ import annotations

import re
from typing import Any

# One leading block, with the whitespace around it (the answer starts where the block ended).
_LEADING_BLOCK = re.compile(r"\A\s*<(think|thinking)>.*?</\1>\s*", re.DOTALL | re.IGNORECASE)
# A leading block that never closed: everything from it on is reasoning.
_LEADING_UNCLOSED = re.compile(r"\A\s*<(?:think|thinking)>", re.IGNORECASE)


def strip_leading_thinking(text: str) -> str:
    """`text` without its leading inline reasoning blocks (the same object when it has none)."""
    if not _LEADING_UNCLOSED.match(text):
        return text
    while True:
        found = _LEADING_BLOCK.match(text)
        if found is None:
            break
        text = text[found.end() :]
    return "" if _LEADING_UNCLOSED.match(text) else text


def strip_inline_thinking(message: dict[str, Any]) -> dict[str, Any]:
    """The assistant `message` without inline reasoning in its text (string content, or the first
    text part of list content); the same object when there was none."""
    content = message.get("content")
    if isinstance(content, str):
        stripped = strip_leading_thinking(content)
        if stripped is content:
            return message
        return {**message, "content": stripped}
    if isinstance(content, list) and content:
        first = content[0]
        if isinstance(first, dict) and first.get("type") == "text" and isinstance(first.get("text"), str):
            stripped = strip_leading_thinking(first["text"])
            if stripped is not first["text"]:
                parts = ([{**first, "text": stripped}] if stripped else []) + content[1:]
                return {**message, "content": parts}
    return message
