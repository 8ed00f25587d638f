"""The line printed to the terminal after the app exits: how to come back to this session.

Pure (no Textual): the app decides which session is worth resuming before it closes the store,
and the command line prints the hint once the terminal is back in its normal mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from myrm_tui.terminal_text import for_terminal
from myrm_tui.tui.formatting import short_id

if TYPE_CHECKING:
    from myrm_tui.store.store import Store


def resumable_session(store: Store, session_id: str | None) -> str | None:
    """`session_id` when it holds at least one message: an empty session is nothing to resume
    (and `myrm -c` would skip past nothing)."""
    if session_id is None:
        return None
    try:
        return session_id if store.messages(session_id) else None
    except Exception:  # noqa: BLE001 - a hint is a courtesy; a store problem must not spoil the exit
        return None


def resume_hint(session_id: str | None) -> str | None:
    """ "Resume this session: myrm --session 1a2b3c4d (or myrm -c)", or None. The short id is
    the one the sessions screen and `myrm sessions list` show; `--session` takes a prefix."""
    if not session_id:
        return None
    return for_terminal(f"Resume this session: myrm --session {short_id(session_id)} (or myrm -c)")
