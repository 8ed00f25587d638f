"""`myrm sessions list|show|export`: read the workspace's stored sessions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from myrm_tui.cli_commands import output
from myrm_tui.cli_commands.common import (
    EXIT_OK,
    EXIT_TURN_ERROR,
    EXIT_USAGE,
    bootstrap,
    err,
    format_table,
    one_line,
)
from myrm_tui.terminal_text import for_terminal
from myrm_tui.transcripts.transcript import render_text, stamp

if TYPE_CHECKING:
    from myrm_tui.store.records import MessageRecord, SessionRecord
    from myrm_tui.store.store import Store

TITLE_COLUMN_CHARS = 50
ID_COLUMN_CHARS = 12  # ids are long; a 12-char prefix is unique in practice and accepted back


def open_read_only(workspace: Path) -> Store | None:
    """The workspace's store opened read-only (these commands never write, and must work on a
    read-only or damaged `.myrm/`); None after printing why it cannot be read."""
    from myrm_tui.store.store import Store, StoreError

    try:
        return Store.open(workspace, read_only=True)
    except (StoreError, OSError) as exc:
        err(f"error: cannot read the session store in {workspace / '.myrm'}: {exc}")
        return None


def list_command(json_out: bool) -> int:
    from myrm_tui.store.constants import DB_NAME, DIR_NAME
    from myrm_tui.store.store import StoreError

    context = bootstrap()
    if context is None:
        return EXIT_USAGE
    if not (context.workspace / DIR_NAME / DB_NAME).exists():
        sessions, counts = [], {}
    else:
        store = open_read_only(context.workspace)
        if store is None:
            return EXIT_TURN_ERROR
        try:
            sessions = store.list_sessions()
            counts = {s.id: len(store.messages(s.id)) for s in sessions}
        except StoreError as exc:
            err(f"error: the session store cannot be read: {exc}")
            return EXIT_TURN_ERROR
        finally:
            store.close()
    if json_out:
        rows = [
            {
                "id": s.id,
                "title": s.title,
                "model": s.model,
                "created_at": s.created_at,
                "updated_at": s.updated_at,
                "messages": counts[s.id],
                "parent_id": s.parent_id,
            }
            for s in sessions
        ]
        output.json_out(rows)
        return EXIT_OK
    if not sessions:
        err("no sessions in this workspace yet; start one with `myrm` or `myrm run PROMPT`.")
        return EXIT_OK
    table = [
        [
            s.id[:ID_COLUMN_CHARS],
            stamp(s.updated_at),
            for_terminal(s.model),
            str(counts[s.id]),
            one_line(for_terminal(s.title), TITLE_COLUMN_CHARS),
        ]  # titles come from prompts: data
        for s in sessions
    ]
    output.say(format_table(["ID", "UPDATED", "MODEL", "MSGS", "TITLE"], table, right={3}))
    return EXIT_OK


def _load(session_ref: str) -> tuple[SessionRecord, list[MessageRecord]] | None:
    """(session, messages) for an id or unique prefix, or None after printing why not."""
    from myrm_tui.store.store import StoreError

    context = bootstrap()
    if context is None:
        return None
    store = open_read_only(context.workspace)
    if store is None:
        return None
    try:
        session = store.get_session(session_ref)
        return session, store.messages(session.id)
    except StoreError as exc:
        err(f"error: {exc}")
        return None
    finally:
        store.close()


def show_command(session_ref: str) -> int:
    loaded = _load(session_ref)
    if loaded is None:
        return EXIT_USAGE
    output.say(render_text(*loaded), end="")
    return EXIT_OK


def export_command(session_ref: str, fmt: str, out: Path | None) -> int:
    loaded = _load(session_ref)
    if loaded is None:
        return EXIT_USAGE
    from myrm_tui.transcripts.export import export_session, write_atomic

    # Exports leave the private .myrm folder: credentials and PII are replaced by typed
    # placeholders (the stored session keeps the originals).
    exported = export_session(*loaded, fmt=fmt)
    if exported.counts:
        err(exported.summary())
    if out is None:
        output.say(exported.text, end="")  # already redacted and inert: unchanged by the door
        return EXIT_OK
    try:
        write_atomic(out, exported.text)
    except OSError as exc:
        err(f"error: cannot write {out}: {exc}. Pick another --out path.")
        return EXIT_USAGE
    err(f"wrote {out}")
    return EXIT_OK
