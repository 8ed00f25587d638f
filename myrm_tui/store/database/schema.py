"""The session database schema, as a list of forward migrations keyed by `PRAGMA user_version`.

`MIGRATIONS[n]` takes a database at version n to version n+1. Migrations only ever append to
this list (never edit a shipped one), so any older file can be brought forward step by step.
All pending steps run in one transaction at open: a kill mid-migration leaves the old version.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from myrm_tui.store.database import context_views, search_index, summaries
from myrm_tui.store.database.db import transaction
from myrm_tui.store.errors import StoreError

Migration = Callable[[sqlite3.Connection], None]


def _v1_initial(conn: sqlite3.Connection) -> None:
    """Sessions, the append-only message log, and engine/agent events."""
    conn.execute(
        """
        CREATE TABLE sessions (
            id              TEXT PRIMARY KEY,
            title           TEXT NOT NULL DEFAULT '',
            created_at      REAL NOT NULL,
            updated_at      REAL NOT NULL,
            model           TEXT NOT NULL,
            parent_id       TEXT REFERENCES sessions(id),
            fork_message_id INTEGER REFERENCES messages(id),
            CHECK ((parent_id IS NULL) = (fork_message_id IS NULL))
        )
        """
    )
    # AUTOINCREMENT: ids are never reused, even after delete_session, so `msg:<id>` handles
    # shown in old prompts can never point at a different message later.
    conn.execute(
        """
        CREATE TABLE messages (
            id           INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id   TEXT NOT NULL REFERENCES sessions(id),
            seq          INTEGER NOT NULL,
            role         TEXT NOT NULL,
            message_json TEXT NOT NULL,
            tool_call_id TEXT,
            tool_names   TEXT NOT NULL DEFAULT '[]',
            tokens       INTEGER NOT NULL,
            created_at   REAL NOT NULL,
            UNIQUE (session_id, seq)
        )
        """
    )
    conn.execute(
        """
        CREATE TABLE events (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            kind       TEXT NOT NULL,
            data_json  TEXT NOT NULL,
            created_at REAL NOT NULL
        )
        """
    )
    # UNIQUE (session_id, seq) above is the session+seq index; this one serves id ranges
    # (fork prefixes, messages_after) without scanning a session's rows.
    conn.execute("CREATE INDEX messages_session_id ON messages (session_id, id)")
    conn.execute("CREATE INDEX events_session_kind ON events (session_id, kind, id)")
    conn.execute("CREATE INDEX sessions_parent ON sessions (parent_id)")
    conn.execute("CREATE INDEX sessions_updated ON sessions (updated_at)")
    # The log is append-only: an UPDATE is always a bug, so the database itself refuses it.
    conn.execute(
        """
        CREATE TRIGGER messages_append_only BEFORE UPDATE ON messages
        BEGIN
            SELECT RAISE(ABORT, 'messages are append-only');
        END
        """
    )


def _v2_search(conn: sqlite3.Connection) -> None:
    """Full-text search over messages and vault artifacts; indexes the existing messages.

    The back-fill uses today's text extraction; messages stored later are indexed by
    `append_message` itself, in the same transaction as their insert.
    """
    search_index.create_search_tables(conn)
    search_index.backfill_messages(conn)


def _v3_context_views(conn: sqlite3.Connection) -> None:
    """The context engine's decided views and synthetic messages (markers, rereads)."""
    context_views.create_tables(conn)


def _v4_summaries(conn: sqlite3.Connection) -> None:
    """The summary DAG: leaf and condensed summaries with links to what they cover."""
    summaries.create_tables(conn)


MIGRATIONS: list[Migration] = [_v1_initial, _v2_search, _v3_context_views, _v4_summaries]


def latest_version() -> int:
    return len(MIGRATIONS)


def read_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def too_new_error(found: int, path: object) -> StoreError:
    return StoreError(
        f"the session database {path} has schema version {found}, newer than this myrm "
        f"understands ({latest_version()}); upgrade myrm to open it."
    )


def migrate(conn: sqlite3.Connection, path: object = "") -> int:
    """Bring the database to the latest version in one transaction; return the version."""
    with transaction(conn, write=True):
        current = read_version(conn)
        target = latest_version()
        if current > target:
            raise too_new_error(current, path)
        for step in range(current, target):
            MIGRATIONS[step](conn)
        if current != target:
            # user_version is part of the database header, so it commits (or rolls back)
            # together with the DDL above.
            conn.execute(f"PRAGMA user_version = {target}")
        # Not a numbered migration: whether trigram tables can exist depends on the SQLite
        # build that opens the file, so a capable build adds them whenever they are missing.
        search_index.ensure_trigram(conn)
    return target


def check_version_read_only(conn: sqlite3.Connection, path: object = "") -> None:
    """A read-only open cannot migrate: require the exact current version."""
    found = read_version(conn)
    if found > latest_version():
        raise too_new_error(found, path)
    if found < latest_version():
        raise StoreError(
            f"the session database {path} is at schema version {found} and needs migrating to "
            f"{latest_version()}; open it once read-write (run myrm in that workspace)."
        )
