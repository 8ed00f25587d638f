"""Where an edit or a retry forks the session (pure; no Textual).

The store is append-only: an edited message never replaces the stored one. Editing a message
forks the session just before it (the fork shares everything earlier by reference) and sends
the new text there, so the original session stays exactly as it was and both remain in
/sessions. A retry is an edit that keeps the text.

Which rows count: the user messages the transcript shows as bubbles (a summary stored with the
user role, or a synthetic row, is engine plumbing and cannot be edited).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from myrm_tui.agent.user_input.user_content import text_of_parts
from myrm_tui.store.records import MessageRecord
from myrm_tui.tui.transcript.history import context_note


@dataclass(frozen=True)
class EditTarget:
    """One user message chosen for editing, and where its fork starts."""

    message_id: int  # the stored user message the edit replaces (in the fork only)
    # The last message the fork keeps (the one just before the edited message); None when the
    # edited message opened the session: nothing comes before it, so the edit starts a new one.
    fork_at: int | None
    text: str  # what the user typed then (attached files are re-read from their `@path` on send)
    position: int  # 1-based, among the session's user messages
    count: int  # how many user messages the session has
    plain: bool  # the stored content is the typed text alone (no attachment, no image)


def user_messages(records: Sequence[MessageRecord]) -> list[MessageRecord]:
    """The stored user messages a person typed, oldest first."""
    return [
        r
        for r in records
        if r.message.get("role", r.role) == "user"
        and not (r.message.get("myrm_synthetic") or r.message.get("synthetic"))
        and context_note(r.message) is None
    ]


def edit_target(records: Sequence[MessageRecord], from_end: int = 0) -> EditTarget | None:
    """The user message `from_end` places before the newest (0: the newest), or None."""
    users = user_messages(records)
    if not users or not 0 <= from_end < len(users):
        return None
    chosen = users[len(users) - 1 - from_end]
    ids = [r.id for r in records]
    index = ids.index(chosen.id)
    content = chosen.message.get("content")
    return EditTarget(
        message_id=chosen.id,
        fork_at=ids[index - 1] if index > 0 else None,
        text=text_of_parts(content) if isinstance(content, (str, list)) else "",
        position=len(users) - from_end,
        count=len(users),
        plain=isinstance(content, str),
    )


@dataclass(frozen=True)
class RetryPlan:
    """How /retry regenerates the last answer: fork at `fork_at` and send `text` there."""

    fork_at: int | None  # None: a new session (the retried message opened the session)
    text: str
    reuses_ask: bool  # the fork ends with the same ask, which the agent reuses (agent/turn/resend.py)


def retry_plan(records: Sequence[MessageRecord]) -> RetryPlan | None:
    """A plain-text ask: fork right after it, so the fork shares the stored ask and the agent
    answers it again without storing it twice. An ask with attachments: fork before it and
    send its text again (its `@files` are read again; an image sent with /image is not)."""
    target = edit_target(records)
    if target is None:
        return None
    if target.plain:
        return RetryPlan(target.message_id, target.text, reuses_ask=True)
    return RetryPlan(target.fork_at, target.text, reuses_ask=False)
