"""Plain-text formatting shared by widgets (pure functions, no Textual, unit-testable)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from myrm_tui.messages import content_text
from myrm_tui.tui.constants import ARG_SUMMARY_CHARS

# Arguments that best describe a call of each tool in one line, in order of preference.
_SUMMARY_KEYS = ("command", "path", "file_path", "pattern", "query", "handle", "id", "url")


def one_line(text: str, limit: int) -> str:
    """Collapse whitespace and cut at `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)] + "…"


def summarize_arguments(arguments: dict[str, Any] | str | None, limit: int = ARG_SUMMARY_CHARS) -> str:
    """The argument a reader looks for first (the command, the path…), else compact JSON."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        raw = arguments
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            return one_line(raw, limit)
    if not isinstance(arguments, dict):
        return one_line(str(arguments), limit)
    for key in _SUMMARY_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return one_line(value, limit)
    if not arguments:
        return ""
    return one_line(json.dumps(arguments, ensure_ascii=False, sort_keys=True), limit)


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def cap_text(text: str, limit: int) -> str:
    """Head of `text` up to `limit` characters plus a note of how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… {len(text) - limit:,} more characters"


def tail_lines(text: str, count: int) -> str:
    lines = text.splitlines()
    return "\n".join(lines[-count:])


def message_text(content: Any) -> str:
    """Text of an OpenAI-format `content` for the transcript view: `content_text`, except that an
    attached file or folder (`@path`) shows as one line, not its content."""
    if isinstance(content, list):
        content = [_attachment_as_label(part) for part in content]
    return content_text(content)


def _attachment_as_label(part: Any) -> Any:
    if not (isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)):
        return part
    from myrm_tui.agent.user_input.attachments import attachment_label

    label = attachment_label(part["text"])
    return {**part, "text": f"[{label}]"} if label else part


def short_id(session_id: str | None) -> str:
    return session_id[:8] if session_id else "new"


def format_tokens(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.2f}M"


def token_change(saved: int, tokens: Callable[[int], str] = "{:,}".format, *, short: bool = False) -> str:
    """What a compaction did to the prompt, with its real sign: "−5,000 tokens" when it freed
    some, "+146 tokens (the prompt grew)" when the summaries came out longer than the messages
    they replaced (a short session: nothing worth compacting), "no tokens saved" for neither;
    `short` (the panel's timeline): "−5.0k", "+146, grew", "±0".
    Why: a negative saving printed as "−-146" read as a typo and hid that the prompt grew."""
    if saved > 0:
        return f"−{tokens(saved)}" if short else f"−{tokens(saved)} tokens"
    if saved < 0:
        return f"+{tokens(-saved)}, grew" if short else f"+{tokens(-saved)} tokens (the prompt grew)"
    return "±0" if short else "no tokens saved"


# Names shown to people for keys whose binding names are terse.
_KEY_WORDS = {
    "escape": "Esc",
    "pageup": "PgUp",
    "pagedown": "PgDn",
    "enter": "Enter",
    "tab": "Tab",
    "space": "Space",
    "backspace": "Backspace",
    "delete": "Del",
    "up": "Up",
    "down": "Down",
    "end": "End",
    "home": "Home",
    "left": "Left",
    "right": "Right",
}


def pretty_key(key: str) -> str:
    """ "ctrl+o" → "Ctrl+O", "f1" → "F1": the notation the README and the welcome use."""
    parts = key.split(",")[0].strip().split("+")
    *mods, last = parts
    label = _KEY_WORDS.get(last, last.upper() if len(last) <= 3 else last.title())
    return "+".join([*(m.title() for m in mods), label])
