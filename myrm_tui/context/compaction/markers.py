"""The bare omission marker: what stands for left-out messages when the summary stage itself
is unavailable (its breaker is open). Everything in it is computed from the stored rows: the
handles of the range, the user asks, the session notes, and the summary footer (files,
commands, errors), so the model still knows what it would get back, and from where.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from myrm_tui.context.observations.intent import compaction_text
from myrm_tui.context.rows.views import UNTRUSTED_CLOSE, UNTRUSTED_OPEN, msg_handle, parse_arguments
from myrm_tui.context.summary.footer import footer_from_records
from myrm_tui.sinks import OMISSION_MARKER, SCAN_CHARS, SESSION_NOTE, scrub
from myrm_tui.store.records import MessageRecord

# Caps keep a marker small whatever it covers: it must save far more than it costs.
MAX_ASKS = 3
MAX_NOTES = 10
NOTE_TOOL = "session_note"
MAX_NOTE_CHARS = 300  # one note in a footer or marker
MAX_ASK_CHARS = 100  # one user ask in a marker


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ts))


def session_notes(rows: Sequence[MessageRecord]) -> list[str]:
    """The notes written in `rows`, redacted (the stored call keeps the model's own words)."""
    notes = []
    for row in rows:
        for call in row.message.get("tool_calls") or ():
            if call.get("function", {}).get("name") == NOTE_TOOL:
                note = str(parse_arguments(call["function"].get("arguments")).get("text") or "").strip()
                if note:
                    notes.append(scrub(SESSION_NOTE, note)[:MAX_NOTE_CHARS])
    return notes


def omission_marker(rows: Sequence[MessageRecord]) -> str:
    asks = []
    for row in rows:
        if row.role == "user":
            text = scrub(OMISSION_MARKER, compaction_text(row.message)[:SCAN_CHARS]).strip().replace("\n", " ")
            if text:
                cut = "…" if len(text) > MAX_ASK_CHARS else ""
                asks.append(f"{text[:MAX_ASK_CHARS]}{cut} ({msg_handle(row.id)})")
    first, last = rows[0], rows[-1]
    lines = [
        UNTRUSTED_OPEN,
        (
            f"[{len(rows)} earlier messages are omitted from this prompt ({msg_handle(first.id)} … "
            f"{msg_handle(last.id)}, {_when(first.created_at)} → {_when(last.created_at)} UTC). They are stored: "
            f'ctx_search("words") finds them, ctx_expand("msg:ID") returns one.]'
        ),
    ]
    if asks:
        lines.append("User asks: " + " | ".join(asks[-MAX_ASKS:]))
    footer = footer_from_records(rows).render()
    if footer:
        lines.append(footer)
    notes = session_notes(rows)
    if notes:
        lines.append("Session notes: " + " | ".join(notes[-MAX_NOTES:]))
    lines.append(UNTRUSTED_CLOSE)
    return scrub(OMISSION_MARKER, "\n".join(lines))
