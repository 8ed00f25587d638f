"""How one stored message is shown in the prompt, and the placeholder texts.

A view is decided once (at ingestion or at a compaction event), stored with its exact text, and
reused byte-for-byte afterwards. Every view that is not verbatim names a handle (`msg:<id>`
or `vault://…`) that gives the original back in one recall call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

VERBATIM = "verbatim"
FILTERED = "filtered"  # tool output → real excerpt + handle
MASKED = "masked"  # tool output → one-line placeholder + handle
DEDUP = "dedup"  # identical to a later output
SUPERSEDED = "superseded"  # an older read/run of what was read/run again later
REMOVED = "removed"  # left out; covered by an omission marker
SHRUNK = "shrunk"  # assistant/user text or tool-call arguments cut to an excerpt + handle
MEDIA_STRIPPED = "media_stripped"  # images replaced by a text placeholder + vault handle

# Placeholder sources remembered redacted (`_scrubbed_clip`): a session's older outputs, each a
# clip of at most SCAN_CHARS (4 KB), so at most ~8 MB; more than the outputs one window holds.
SCRUB_CACHE_SIZE = 1024

UNTRUSTED_OPEN = '<context-note trust="untrusted">'
UNTRUSTED_CLOSE = "</context-note>"


@dataclass(frozen=True)
class View:
    """The decided rendering of a message (or a synthetic message when message_id is None)."""

    kind: str
    message: dict[str, Any] | None  # None for REMOVED
    tokens: int
    reason: str = ""
    handle: str = ""
    event_id: int = 0


def msg_handle(message_id: int) -> str:
    return f"msg:{message_id}"


def tool_identity(name: str, arguments: dict[str, Any]) -> str:
    """The argument that says what a call was about (path, command, pattern…), for placeholders."""
    for key in ("path", "command", "pattern", "query", "url", "handle"):
        value = arguments.get(key)
        if value:
            text = _scrubbed(str(value)).replace("\n", " ")
            return f"{key}={text[:120]}{'…' if len(text) > 120 else ''}"
    return ""


def _scrubbed(text: str) -> str:
    """`text` redacted while whole, before a placeholder clips it (a clipped key is no longer
    recognised, yet its start would ride in every later prompt). Imported late: the redactor's
    package imports this module."""
    from myrm_tui.sinks import SCAN_CHARS

    return _scrubbed_clip(text[:SCAN_CHARS])


@lru_cache(maxsize=SCRUB_CACHE_SIZE)
def _scrubbed_clip(clip: str) -> str:
    """Memoised: every compaction event plans placeholders for the same older outputs again
    (and the dry run before it too), and the redactor's ~40 patterns were most of an event's
    time. Redaction is a pure function of the text (the sink's policy is fixed)."""
    from myrm_tui.sinks import VIEW_PLACEHOLDER, scrub

    return scrub(VIEW_PLACEHOLDER, clip)


def parse_arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def filtered_header(original_tokens: int, shown_tokens: int, handle: str, kind: str, noun: str = "output") -> str:
    return (
        f"[{noun} {original_tokens:,} tokens → {shown_tokens:,} shown ({kind} excerpt) · full: {handle} · "
        f'ctx_expand("{handle}", lines="1:200") or ctx_expand("{handle}", query="…")]'
    )


def masked_text(tool: str, identity: str, tokens: int, handle: str, first_line: str, why: str) -> str:
    preview = _scrubbed(first_line).strip()[:160]
    about = f" {identity}" if identity else ""
    return f'[{why}: {tool}{about} → {tokens:,} tokens hidden; first line: {preview!r} · ctx_expand("{handle}")]'


def pointer_text(what: str, handle: str, newer: str) -> str:
    return f'[{what}; see the newer {newer} · original: ctx_expand("{handle}")]'
