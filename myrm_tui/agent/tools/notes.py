"""session_note: a fact the model wants to keep in view however much of the history is omitted.

Why a tool whose result says almost nothing: the note itself lives in the call's arguments,
which the store keeps in the assistant message. The context engine lifts notes from there into
its omission markers, so a note survives compaction without any LLM summarising it. The tool
only checks the note is worth keeping and small enough to repeat on every call.

Notes are stored verbatim; redaction of obvious secrets arrives with the summary work, which
needs the same filter.
"""

from __future__ import annotations

from typing import Any

from myrm_tui.agent.tools.base import ApprovalPreview, Tool, ToolContext, ToolError, ToolResult

# A note rides along in the prompt for the rest of the session, so it has to stay small:
# 1,000 chars is ~250 tokens, room for a decision with its reason or a path plus a value, and
# a dozen notes still cost less than one file read. Longer material belongs in a file.
SESSION_NOTE_MAX_CHARS = 1_000
# Characters of the note echoed back: enough to confirm which note was kept, on one line.
SESSION_NOTE_ECHO_CHARS = 80


def note_text(args: dict[str, Any]) -> str:
    """The note a call carries, validated: stripped, non-empty, within the limit."""
    raw = args.get("text")
    text = raw.strip() if isinstance(raw, str) else ""
    if not text:
        raise ToolError(
            'session_note needs a non-empty text; pass the fact to keep, e.g. "tests run with: make check".'
        )
    if len(text) > SESSION_NOTE_MAX_CHARS:
        raise ToolError(
            f"the note is {len(text):,} chars; the limit is {SESSION_NOTE_MAX_CHARS:,}. Keep only the "
            "essential fact (a decision, a path, a value) and call session_note again."
        )
    return text


def echo(text: str) -> str:
    """One line: the note's start, with newlines flattened so the confirmation stays short."""
    flat = " ".join(text.split())
    if len(flat) <= SESSION_NOTE_ECHO_CHARS:
        return flat
    return flat[:SESSION_NOTE_ECHO_CHARS] + "…"


class SessionNote(Tool):
    name = "session_note"
    description = (
        "Keep a short note in view for the rest of this session, even after older messages are "
        "left out of your context. Use it for facts you must not lose: the user's decisions and "
        "constraints, key paths, commands that work, what is done and what is left. One fact per "
        f"note, at most {SESSION_NOTE_MAX_CHARS:,} characters. Costs nothing to keep."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "description": f"The note itself, self-contained (≤ {SESSION_NOTE_MAX_CHARS:,} characters).",
            },
        },
        "required": ["text"],
    }

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ApprovalPreview:
        return ApprovalPreview(summary=f"note: {echo(note_text(args))}")

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(f"noted: {echo(note_text(args))}")
