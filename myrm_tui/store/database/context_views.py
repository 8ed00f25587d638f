"""Tables for the context engine's decided views (what replaced a message in the prompt).

Why in the store: a view is decided once and must come back byte-for-byte in every later
process, or the provider prompt cache breaks. Views are additive rows (the latest event per
message wins); the stored messages themselves are never touched.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any


def create_tables(conn: sqlite3.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE context_views (
            session_id   TEXT NOT NULL REFERENCES sessions(id),
            message_id   INTEGER NOT NULL,
            event_id     INTEGER NOT NULL,
            kind         TEXT NOT NULL,
            message_json TEXT,
            tokens       INTEGER NOT NULL,
            reason       TEXT NOT NULL DEFAULT '',
            handle       TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (session_id, message_id, event_id)
        )
        """
    )
    conn.execute(
        """
        CREATE TABLE context_synthetic (
            session_id   TEXT NOT NULL REFERENCES sessions(id),
            event_id     INTEGER NOT NULL,
            position     INTEGER NOT NULL,
            before_id    INTEGER NOT NULL,
            kind         TEXT NOT NULL,
            message_json TEXT NOT NULL,
            tokens       INTEGER NOT NULL,
            covers_first INTEGER,
            covers_last  INTEGER,
            handle       TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (session_id, event_id, position)
        )
        """
    )
    # The current synthetic set is the one of the newest event that wrote one.
    conn.execute(
        """
        CREATE TABLE context_synthetic_sets (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            event_id   INTEGER NOT NULL,
            PRIMARY KEY (session_id, event_id)
        )
        """
    )


def load(conn: sqlite3.Connection, session_id: str) -> tuple[list[tuple], list[tuple]]:
    views = conn.execute(
        """
        SELECT v.message_id, v.event_id, v.kind, v.message_json, v.tokens, v.reason, v.handle
        FROM context_views v
        JOIN (SELECT message_id, MAX(event_id) AS event_id FROM context_views
              WHERE session_id = ? GROUP BY message_id) latest
          ON latest.message_id = v.message_id AND latest.event_id = v.event_id
        WHERE v.session_id = ?
        ORDER BY v.message_id
        """,
        (session_id, session_id),
    ).fetchall()
    row = conn.execute(
        "SELECT MAX(event_id) FROM context_synthetic_sets WHERE session_id = ?", (session_id,)
    ).fetchone()
    synthetic: list[tuple] = []
    if row and row[0] is not None:
        synthetic = conn.execute(
            """
            SELECT before_id, kind, message_json, tokens, event_id, covers_first, covers_last, handle
            FROM context_synthetic WHERE session_id = ? AND event_id = ? ORDER BY position
            """,
            (session_id, row[0]),
        ).fetchall()
    return views, synthetic


def save(
    conn: sqlite3.Connection,
    session_id: str,
    event_id: int,
    views: list[tuple[Any, ...]],
    synthetic: list[tuple[Any, ...]] | None,
) -> None:
    conn.executemany(
        """
        INSERT OR REPLACE INTO context_views
            (session_id, message_id, event_id, kind, message_json, tokens, reason, handle)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """,
        [(session_id, *v) for v in views],
    )
    if synthetic is None:
        return
    conn.execute(
        "INSERT OR REPLACE INTO context_synthetic_sets (session_id, event_id) VALUES (?, ?)", (session_id, event_id)
    )
    conn.execute("DELETE FROM context_synthetic WHERE session_id = ? AND event_id = ?", (session_id, event_id))
    conn.executemany(
        """
        INSERT INTO context_synthetic
            (session_id, event_id, position, before_id, kind, message_json, tokens, covers_first, covers_last,
             handle)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """,
        [(session_id, event_id, i, *s) for i, s in enumerate(synthetic)],
    )


def dumps(message: dict[str, Any] | None) -> str | None:
    return None if message is None else json.dumps(message, ensure_ascii=False, separators=(",", ":"))
