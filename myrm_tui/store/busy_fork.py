"""The one policy for a session another process is writing: continue in a fork, or refuse.

`myrm run --continue` and the TUI fork (the user asked for "the latest conversation", and a
fork of it is that conversation without the risk of interleaving); `myrm run --session ID`
refuses unless `--fork` is given (the user named one session and should know it is busy).
A busy session is forked at its last finished turn, so the fork never starts inside a turn the
other process is still running (its open tool calls would otherwise be answered twice).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from myrm_tui.store.database.session_lock import SessionBusyError
from myrm_tui.store.records import MessageRecord, SessionRecord
from myrm_tui.store.store import Store


@dataclass(frozen=True)
class WritableSession:
    """Where the caller may write: `session_id`, or a new session when it is None."""

    session_id: str | None
    forked_from: str | None = None
    busy_pid: int | None = None  # the other writer of `forked_from`, when that caused the fork

    def notice(self) -> str | None:
        """One line for the user when the session is not the one they asked for."""
        if self.busy_pid is None:
            return None
        who = f"pid {self.busy_pid}" if self.busy_pid else "another process"
        if self.session_id is None:
            return (
                f"session {self.forked_from} is in use by {who} (another myrm) and has no "
                "finished turn to fork from; starting a new session."
            )
        return (
            f"session {self.forked_from} is in use by {who} (another myrm); continuing in a "
            f"fork of it, {self.session_id} (its history up to the last finished turn; the "
            "original is untouched)."
        )


def last_finished_turn(history: Sequence[MessageRecord]) -> int | None:
    """Id of the newest assistant message that ends a turn (no tool calls), else None."""
    for record in reversed(history):
        if record.role == "assistant" and not record.message.get("tool_calls"):
            return record.id
    return None


def open_for_writing(store: Store, session: SessionRecord, *, fork: bool, fork_if_busy: bool) -> WritableSession:
    """Claim `session` for this process, or fork it (asked for, or busy and allowed).

    Raises SessionBusyError when the session is busy and forking was not allowed, StoreError
    when a fork was asked for but the session has nothing to fork.
    """
    busy_pid: int | None = None
    if not fork:
        try:
            store.claim_session(session.id)
            return WritableSession(session.id)
        except SessionBusyError as busy:
            if not fork_if_busy:
                raise
            busy_pid = busy.pid if busy.pid is not None else 0
    else:
        busy_pid = store.session_writer(session.id)
    title = f"{session.title} (fork)".strip()
    if busy_pid is None:
        return WritableSession(store.fork(session.id, title=title).id, session.id)
    at = last_finished_turn(store.messages(session.id))
    if at is None:
        return WritableSession(None, session.id, busy_pid)
    child = store.fork(session.id, at_message=at, title=title)
    return WritableSession(child.id, session.id, busy_pid)
