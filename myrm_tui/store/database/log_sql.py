"""The session log's reads and inserts on an open connection, inside a transaction the caller
(the Store) holds: no locking or claiming here, so several of them compose into one
transaction (a repair writes its messages and its event together)."""

from __future__ import annotations

import json
import secrets
import sqlite3
from typing import Any

from myrm_tui.store.constants import SESSION_ID_BYTES
from myrm_tui.store.database import search_index
from myrm_tui.store.database.db import inserted_id
from myrm_tui.store.database.rows import (
    EVENT_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    encode_json,
    event_of,
    message_index_fields,
    message_of,
    session_of,
)
from myrm_tui.store.errors import StoreError
from myrm_tui.store.records import EventRecord, MessageRecord, SessionRecord

# (owning session, last visible message id or None for all): one step of a fork ancestry.
Segment = tuple[str, int | None]

# Most recently updated first, but a session dated after `now + FUTURE_SLACK_S` ranks after every
# other: its date cannot be real, and `.myrm/sessions.db` may come with a clone (a session dated in
# 2099 would otherwise be what `--continue` resumes forever). The parameter is that bound.
RECENT_FIRST = "ORDER BY (updated_at > ?), updated_at DESC, created_at DESC, id"
# Ten minutes: well past the clock corrections NTP makes (a session written just before the clock
# stepped back stays "latest"), far below any date a file could be prepared with ahead of a clone.
FUTURE_SLACK_S = 600.0


def recent_first_bound(now: float) -> tuple[float]:
    """The parameter of RECENT_FIRST: the latest date believed."""
    return (now + FUTURE_SLACK_S,)


def session_row(conn: sqlite3.Connection, session_id: str) -> SessionRecord:
    row = conn.execute(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        raise StoreError(f"no session {session_id!r} in this workspace; list them with `myrm sessions list`.")
    return session_of(row)


def segments(conn: sqlite3.Connection, session_id: str) -> list[Segment]:
    """(owning session, last visible message id or None for all) for a session and each
    ancestor. History = rows matching any segment, by id: ids grow globally, and a
    session's own rows are always newer than the ancestor rows it shares."""
    found: list[Segment] = []
    limit: int | None = None
    current: str | None = session_id
    seen: set[str] = set()
    while current is not None:
        if current in seen:
            raise StoreError(f"session {session_id!r} has a fork cycle; the database is damaged.")
        seen.add(current)
        record = session_row(conn, current)
        found.append((current, limit))
        # The schema sets fork_message_id exactly when parent_id is set (a CHECK).
        if record.fork_message_id is not None:
            fork_at = record.fork_message_id
            limit = fork_at if limit is None else min(limit, fork_at)
        current = record.parent_id
    return found


def history(conn: sqlite3.Connection, session_id: str, after_id: int | None = None) -> list[MessageRecord]:
    parts: list[str] = []
    params: list[Any] = []
    for owner, limit in segments(conn, session_id):
        clause = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ?"
        params.append(owner)
        if limit is not None:
            clause += " AND id <= ?"
            params.append(limit)
        if after_id is not None:
            clause += " AND id > ?"
            params.append(after_id)
        parts.append(clause)
    sql = " UNION ALL ".join(parts) + " ORDER BY id"
    return [message_of(row) for row in conn.execute(sql, params)]


def insert_message(
    conn: sqlite3.Connection, session_id: str, message: dict[str, Any], tokens: int, now: float
) -> MessageRecord:
    role, tool_call_id, names = message_index_fields(message)
    text = encode_json(message, "message")
    names_json = json.dumps(list(names), ensure_ascii=False)
    touched = conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id)).rowcount
    if touched == 0:
        raise StoreError(f"no session {session_id!r} in this workspace; nothing was stored.")
    next_seq = "SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE session_id = ?"
    seq = conn.execute(next_seq, (session_id,)).fetchone()[0]
    cursor = conn.execute(
        "INSERT INTO messages (session_id, seq, role, message_json, tool_call_id, tool_names, "
        "tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (session_id, seq, role, text, tool_call_id, names_json, int(tokens), now),
    )
    record = MessageRecord(
        id=inserted_id(cursor),
        session_id=session_id,
        seq=seq,
        role=role,
        message=json.loads(text),
        tokens=int(tokens),
        created_at=now,
        tool_call_id=tool_call_id,
        tool_names=names,
    )
    # Same transaction as the insert: a kill leaves the message indexed or not stored.
    search_index.index_message(conn, record)
    return record


def insert_event(conn: sqlite3.Connection, session_id: str, kind: str, data: dict[str, Any], now: float) -> EventRecord:
    kind = str(kind)  # an EventKind is stored (and read back) as its plain string
    text = encode_json(data, f"{kind!r} event data")
    session_row(conn, session_id)
    cursor = conn.execute(
        "INSERT INTO events (session_id, kind, data_json, created_at) VALUES (?, ?, ?, ?)",
        (session_id, kind, text, now),
    )
    return EventRecord(id=inserted_id(cursor), session_id=session_id, kind=kind, data=json.loads(text), created_at=now)


def session_by_prefix(conn: sqlite3.Connection, session_id: str) -> SessionRecord:
    """The session whose id is, or uniquely starts with, `session_id`; StoreError otherwise."""
    prefix = (session_id or "").strip().lower()
    if not prefix:
        raise StoreError("no session id given; pass an id or a prefix from `myrm sessions list`.")
    exact = conn.execute(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (prefix,)).fetchone()
    if exact is not None:
        return session_of(exact)
    rows = conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 6",
        (len(prefix), prefix),
    ).fetchall()
    if not rows:
        raise StoreError(f"no session {session_id!r} in this workspace; list them with `myrm sessions list`.")
    if len(rows) > 1:
        shown = ", ".join(row[0] for row in rows[:5])
        raise StoreError(
            f"session id {session_id!r} is ambiguous (matches {shown}"
            f"{', …' if len(rows) > 5 else ''}); type more characters."
        )
    return session_of(rows[0])


def delete_session_rows(conn: sqlite3.Connection, session_id: str) -> None:
    """Everything the session owns but its vault artifacts; StoreError if it has forks."""
    session_row(conn, session_id)
    children = [
        row[0] for row in conn.execute("SELECT id FROM sessions WHERE parent_id = ? ORDER BY id", (session_id,))
    ]
    if children:
        raise StoreError(
            f"session {session_id} has forks ({', '.join(children)}) that share its messages; delete the forks first."
        )
    conn.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
    for table in ("context_views", "context_synthetic", "context_synthetic_sets", "summaries"):
        conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
    search_index.forget_session(conn, session_id)
    conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
    conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))


def select_events(
    conn: sqlite3.Connection, session_id: str, kind: str | None, limit: int | None, after_id: int | None
) -> list[EventRecord]:
    """The session's own events, oldest first; `limit` keeps the most recent ones."""
    sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE session_id = ?"
    params: list[Any] = [session_id]
    if kind is not None:
        sql += " AND kind = ?"
        params.append(str(kind))
    if after_id is not None:
        sql += " AND id > ?"
        params.append(int(after_id))
    sql += " ORDER BY id DESC"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(max(0, int(limit)))
    rows = conn.execute(sql, params).fetchall()
    return [event_of(row) for row in reversed(rows)]


def unused_session_id(conn: sqlite3.Connection) -> str:
    while True:
        new_id = secrets.token_hex(SESSION_ID_BYTES)
        if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (new_id,)).fetchone() is None:
            return new_id


def insert_session(
    conn: sqlite3.Connection,
    new_id: str,
    model: str,
    title: str,
    now: float,
    parent_id: str | None = None,
    fork_message_id: int | None = None,
) -> SessionRecord:
    conn.execute(
        f"INSERT INTO sessions ({SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (new_id, title, now, now, model, parent_id, fork_message_id),
    )
    return SessionRecord(
        id=new_id,
        title=title,
        created_at=now,
        updated_at=now,
        model=model,
        parent_id=parent_id,
        fork_message_id=fork_message_id,
    )
