"""The session's objective restated at the end of the prompt, once history has been compacted.

Why: after a compaction the human anchor (the first user message, the session's objective) still
opens the prompt, but everything between it and the fresh tail is summaries, far from where the
model reads best (the end: "U-curve" recall). A short restatement right after the newest message
keeps the objective, and the newest summary's blockers and next steps, in the high-attention
zone (Comis's "objective reinforcement" layer; the Myrm seed's tail zone).

Why after the newest message, and never marked for the cache: each request's prompt must still
extend the previous one. A note placed before the latest user message (or inside it) moves with
every new user message, so the next request differs from the previous one at that point and the
whole last turn is billed again. After the newest message, the next request differs only where
the previous note stood: the note's own ~100 tokens. The cache markers and the cache-break
detector work on the prompt without it (the engine appends it after them), so the marked prefix
ends at the last real message, exactly as without the note.

Why byte-stable: the note is a pure function of the anchor row and the newest summary node, both
fixed between two compaction events, so consecutive requests send the same bytes (and the memo
builds it once per event, not per request).

Never a system message (the system prompt is the cached head); a user-role `context-note` like
every synthetic message, redacted on its way out (`sinks.OBJECTIVE_NOTE`): it copies the anchor's
text into every later prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from myrm_tui.context.compaction.dag import SUMMARY_KINDS, from_json_dict
from myrm_tui.context.history import RenderedHistory
from myrm_tui.context.rows.views import UNTRUSTED_CLOSE, UNTRUSTED_OPEN, msg_handle
from myrm_tui.context.window.tokens import count_message_tokens
from myrm_tui.messages import content_text
from myrm_tui.sinks import OBJECTIVE_NOTE, SCAN_CHARS, scrub

# The anchor's text kept in the note, characters: a task statement with its constraints fits
# (the bench's first messages put the constraint in the first ~200 characters); the rest is one
# ctx_expand away and already opens the prompt. About 150 tokens at ~4 characters per token.
MAX_OBJECTIVE_CHARS = 600
# Items of each summary field restated (the schema caps blocked at 3, next steps at 5) and their
# length: the note must stay a small fraction of one turn, and it is billed uncached every request.
MAX_FIELD_ITEMS = 3
MAX_ITEM_CHARS = 160

# The `restate_objective` setting's values as the engine takes them (`TurnInput.restate_objective`);
# "auto" is absent: the engine's default (`EngineConfig.restate_objective`).
RESTATE_OBJECTIVE: dict[str, bool] = {"on": True, "off": False}

HEADER = (
    "[reminder, not a new request: the session's objective, restated after older turns were summarized "
    "({handle}{cut}). Keep working on the latest request above.]"
)


@dataclass(frozen=True)
class ObjectiveNote:
    message: dict[str, Any]  # user role, the text in a context-note
    tokens: int


@dataclass(frozen=True)
class NoteSource:
    """What a note is built from; equal sources give byte-identical notes."""

    anchor_id: int
    anchor_text: str
    summary_handle: str
    blocked: tuple[str, ...]
    next_steps: tuple[str, ...]


def note_text(source: NoteSource) -> str:
    """The note's text, redacted whole (the anchor is scanned before it is clipped: a clipped
    secret is no longer recognised, yet its start would ride in every later prompt)."""
    anchor = " ".join(scrub(OBJECTIVE_NOTE, source.anchor_text[:SCAN_CHARS]).split())
    cut = len(anchor) > MAX_OBJECTIVE_CHARS
    lines = [
        UNTRUSTED_OPEN,
        HEADER.format(handle=msg_handle(source.anchor_id), cut=", shortened" if cut else ""),
        f"Objective: {anchor[:MAX_OBJECTIVE_CHARS]}{'…' if cut else ''}",
    ]
    for label, items in (("Blocked", source.blocked), ("Next steps", source.next_steps)):
        if items:
            lines.append(f"{label} (summary {source.summary_handle}): " + " | ".join(_clip(i) for i in items))
    lines.append(UNTRUSTED_CLOSE)
    return scrub(OBJECTIVE_NOTE, "\n".join(lines))


def note_source(history: RenderedHistory, summary_of: Callable[[str], dict[str, Any] | None]) -> NoteSource | None:
    """The note's source now, or None when no note belongs in the prompt: nothing compacted
    into summaries yet, no anchor, or the anchor is itself the latest user message (it is
    already at the end)."""
    first, last = history.first_user, history.last_user
    if first is None or first == last:
        return None
    summaries = [s for s in history.synthetic if s.kind in SUMMARY_KINDS]
    if not summaries:
        return None
    newest = max(summaries, key=lambda s: history.index_of_id(s.covers[-1] if s.covers else s.before_id))
    blocked: Sequence[str] = ()
    next_steps: Sequence[str] = ()
    node = summary_of(newest.handle) if newest.handle else None
    if node is not None and isinstance(node.get("content"), dict):
        summary = from_json_dict(node["content"])
        blocked, next_steps = summary.blocked_items, summary.next_steps
    row = history.rows[first]
    return NoteSource(
        row.id,
        content_text(row.message.get("content"), sep=" ", image="", keep_empty=True),
        newest.handle or "",
        tuple(blocked[:MAX_FIELD_ITEMS]),
        tuple(next_steps[:MAX_FIELD_ITEMS]),
    )


class ObjectiveNotes:
    """The note of one session's prompt, memoised per source (built once per compaction event)."""

    def __init__(self, history: RenderedHistory):
        self.history = history
        self._memo: tuple[NoteSource, str, ObjectiveNote] | None = None

    def note(self, model: str, room: int) -> ObjectiveNote | None:
        """The note for the prompt as rendered now, or None (none belongs, or it needs more
        than `room` tokens: it never costs the conversation room)."""
        source = note_source(self.history, self._summary_of)
        if source is None:
            return None
        if self._memo is None or self._memo[:2] != (source, model):
            message = {"role": "user", "content": note_text(source)}
            self._memo = (source, model, ObjectiveNote(message, count_message_tokens(message, model)))
        note = self._memo[2]
        return note if note.tokens <= room else None

    def _summary_of(self, handle: str) -> dict[str, Any] | None:
        return self.history.store.get_summary(self.history.session_id, handle)


def _clip(item: str) -> str:
    flat = " ".join(item.split())
    return flat if len(flat) <= MAX_ITEM_CHARS else flat[: MAX_ITEM_CHARS - 1] + "…"
