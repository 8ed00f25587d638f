"""What the user typed, read back from stored messages (pure; no Textual): the prompt history
across the workspace's sessions and the first message the session search matches.

Only messages the user wrote count: summaries stored as user-role rows and synthetic rows are
engine plumbing (the same rule as the transcript, tui/transcript/history.py).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from myrm_tui.store.records import MessageRecord
from myrm_tui.tui.constants import HISTORY_ENTRIES, HISTORY_SESSIONS
from myrm_tui.tui.formatting import message_text
from myrm_tui.tui.transcript.history import context_note

if TYPE_CHECKING:
    from myrm_tui.store.store import Store


def typed_prompts(records: Iterable[MessageRecord]) -> list[tuple[int, str]]:
    """(message id, text) of every message the user typed, oldest first."""
    out = []
    for record in records:
        message = record.message
        if message.get("role", record.role) != "user":
            continue
        if message.get("myrm_synthetic") or message.get("synthetic") or context_note(message) is not None:
            continue
        text = message_text(message.get("content"))
        if text.strip():
            out.append((record.id, text))
    return out


def first_prompt(records: Iterable[MessageRecord]) -> str:
    prompts = typed_prompts(records)
    return prompts[0][1] if prompts else ""


def workspace_prompts(
    store: Store, exclude: Collection[int] = (), sessions: int = HISTORY_SESSIONS, entries: int = HISTORY_ENTRIES
) -> list[str]:
    """Every prompt typed in the workspace's recent sessions, oldest first (message ids are
    global and increasing, so they order prompts across sessions; a fork shares its parent's
    rows, counted once). `exclude`: message ids already in the history (the open session's)."""
    seen: dict[int, str] = {}
    for session in store.list_sessions()[:sessions]:
        for message_id, text in typed_prompts(store.messages(session.id)):
            if message_id not in exclude:
                seen[message_id] = text
    return [seen[key] for key in sorted(seen)][-entries:]
