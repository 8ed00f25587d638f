"""Keeps the full-text indexes of the session database in step with the log (writes only).

Two FTS5 indexes over the same text:
- `messages_fts` / `artifacts_fts` (porter words, BM25) own the indexed text;
- `messages_tri` / `artifacts_tri` (trigrams, substring search) are external-content tables
  that read their text from the word tables, so the text is stored once and `integrity-check`
  can prove the trigram index matches it.

Every write here runs inside the caller's transaction (the message insert, the session delete),
so a kill can never leave a message stored but unindexed, nor indexed twice.

The trigram tables are optional: they need SQLite >= 3.34. A database created without them
(older SQLite) gets them, back-filled, the first time a capable SQLite opens it read-write;
until then search falls back to a LIKE scan.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass

from myrm_tui.store.constants import (
    MESSAGE_INDEX_MAX_CHARS,
    TRIGRAM_MIN_SQLITE,
    WORD_TOKENIZER,
)
from myrm_tui.store.database.db import inserted_id
from myrm_tui.store.database.search_text import message_search_text, message_tool_label
from myrm_tui.store.errors import StoreError
from myrm_tui.store.records import MessageRecord

MESSAGES_TRIGRAM = "messages_tri"
ARTIFACTS_TRIGRAM = "artifacts_tri"


def trigram_supported() -> bool:
    """Whether this process's SQLite has the trigram tokenizer (a module attribute lookup, so
    tests can force the degraded path)."""
    return sqlite3.sqlite_version_info >= TRIGRAM_MIN_SQLITE


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
    return row is not None


def trigram_usable(conn: sqlite3.Connection) -> bool:
    """Trigram tables exist and this SQLite can read them."""
    return trigram_supported() and has_table(conn, MESSAGES_TRIGRAM)


def storable(text: str) -> str:
    """`text` as SQLite can bind it: lone surrogates (undecodable tool output) become U+FFFD.

    The index only needs to find text; the exact bytes stay in the message log / vault.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


# --- schema ----------------------------------------------------------------------------------


def create_search_tables(conn: sqlite3.Connection) -> None:
    """Migration 2's tables: the word indexes and the artifact catalogue (no trigrams here;
    `ensure_trigram` adds those when the SQLite build can)."""
    try:
        conn.execute(
            "CREATE VIRTUAL TABLE messages_fts USING fts5("
            "text, session_id UNINDEXED, role UNINDEXED, tool UNINDEXED, "
            f"tokenize = '{WORD_TOKENIZER}')"
        )
    except sqlite3.OperationalError as exc:
        if "no such module" in str(exc):
            raise StoreError(
                f"this Python's SQLite ({sqlite3.sqlite_version}) was built without FTS5, which "
                "session search needs; use a Python whose sqlite3 has FTS5 (python.org, uv and "
                "distro builds all do)."
            ) from exc
        raise
    # One row per distinct artifact content (digest); the session links below say who may see it.
    conn.execute(
        """
        CREATE TABLE artifacts (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            digest        TEXT NOT NULL UNIQUE,
            size_bytes    INTEGER NOT NULL,
            binary        INTEGER NOT NULL,
            indexed_chars INTEGER NOT NULL,
            truncated     INTEGER NOT NULL,
            created_at    REAL NOT NULL
        )
        """
    )
    # `after_message_id` = the highest message id ever assigned when the link was made: the
    # artifact belongs after that point of the log, so a fork taken at or before that message
    # does not see it (spills happen before the tool result that names them is stored).
    conn.execute(
        """
        CREATE TABLE artifact_links (
            artifact_id      INTEGER NOT NULL REFERENCES artifacts(id),
            session_id       TEXT NOT NULL REFERENCES sessions(id),
            after_message_id INTEGER NOT NULL,
            created_at       REAL NOT NULL,
            PRIMARY KEY (artifact_id, session_id)
        )
        """
    )
    conn.execute("CREATE INDEX artifact_links_session ON artifact_links (session_id, artifact_id)")
    conn.execute(
        f"CREATE VIRTUAL TABLE artifacts_fts USING fts5(text, handle UNINDEXED, tokenize = '{WORD_TOKENIZER}')"
    )


def backfill_messages(conn: sqlite3.Connection) -> int:
    """Index every stored message (migration 2 on an existing database); returns the count."""
    count = 0
    for row in conn.execute("SELECT id, session_id, role, message_json FROM messages ORDER BY id"):
        _insert_word_row(conn, row[0], row[1], row[2], json.loads(row[3]))
        count += 1
    return count


def ensure_trigram(conn: sqlite3.Connection) -> bool:
    """Create and back-fill the trigram tables if missing and supported; True if present."""
    if not has_table(conn, "messages_fts"):
        return False
    if has_table(conn, MESSAGES_TRIGRAM):
        return True
    if not trigram_supported():
        return False
    conn.execute(
        f"CREATE VIRTUAL TABLE {MESSAGES_TRIGRAM} USING fts5("
        "text, session_id UNINDEXED, content = 'messages_fts', tokenize = 'trigram')"
    )
    conn.execute(
        f"CREATE VIRTUAL TABLE {ARTIFACTS_TRIGRAM} USING fts5(text, content = 'artifacts_fts', tokenize = 'trigram')"
    )
    # Back-fill from the word tables. (FTS5's 'rebuild' command cannot read another FTS5
    # table as its content, so the rows are inserted explicitly.)
    conn.execute(
        f"INSERT INTO {MESSAGES_TRIGRAM} (rowid, text, session_id) SELECT rowid, text, session_id FROM messages_fts"
    )
    conn.execute(f"INSERT INTO {ARTIFACTS_TRIGRAM} (rowid, text) SELECT rowid, text FROM artifacts_fts")
    return True


# --- messages --------------------------------------------------------------------------------


def _insert_word_row(conn: sqlite3.Connection, message_id: int, session_id: str, role: str, message: dict) -> str:
    text = storable(message_search_text(message)[:MESSAGE_INDEX_MAX_CHARS])
    conn.execute(
        "INSERT INTO messages_fts (rowid, text, session_id, role, tool) VALUES (?, ?, ?, ?, ?)",
        (message_id, text, session_id, role, message_tool_label(message)),
    )
    return text


def index_message(conn: sqlite3.Connection, record: MessageRecord) -> None:
    """Index one just-inserted message, in the insert's transaction."""
    text = _insert_word_row(conn, record.id, record.session_id, record.role, record.message)
    if trigram_usable(conn):
        conn.execute(
            f"INSERT INTO {MESSAGES_TRIGRAM} (rowid, text, session_id) VALUES (?, ?, ?)",
            (record.id, text, record.session_id),
        )


def forget_session(conn: sqlite3.Connection, session_id: str) -> None:
    """Drop a session's index rows and artifact links (before its messages are deleted).

    External-content trigram rows are removed with FTS5's 'delete' command, which needs the
    exact indexed text: it is read from the word table before that row goes.
    """
    own = "SELECT id FROM messages WHERE session_id = ?"
    if trigram_usable(conn):
        conn.execute(
            f"INSERT INTO {MESSAGES_TRIGRAM} ({MESSAGES_TRIGRAM}, rowid, text, session_id) "
            f"SELECT 'delete', rowid, text, session_id FROM messages_fts WHERE rowid IN ({own})",
            (session_id,),
        )
    conn.execute(f"DELETE FROM messages_fts WHERE rowid IN ({own})", (session_id,))
    conn.execute("DELETE FROM artifact_links WHERE session_id = ?", (session_id,))


# --- artifacts -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArtifactText:
    """What `Store.index_artifact` read (outside any transaction) and now records."""

    digest: str
    handle: str
    size_bytes: int
    text: str | None  # None: binary, catalogued but not indexed
    truncated: bool


def link_artifact(conn: sqlite3.Connection, session_id: str, artifact: ArtifactText, now: float | None = None) -> int:
    """Catalogue (and index, once per digest) an artifact and link it to a session; returns
    the artifact row id. Idempotent: re-linking keeps the first link (earliest visibility)."""
    row = conn.execute("SELECT id FROM artifacts WHERE digest = ?", (artifact.digest,)).fetchone()
    now = time.time() if now is None else now
    if row is None:
        text = storable(artifact.text) if artifact.text is not None else None
        cursor = conn.execute(
            "INSERT INTO artifacts (digest, size_bytes, binary, indexed_chars, truncated, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                artifact.digest,
                artifact.size_bytes,
                int(text is None),
                len(text or ""),
                int(artifact.truncated),
                now,
            ),
        )
        artifact_id = inserted_id(cursor)
        if text is not None:
            conn.execute(
                "INSERT INTO artifacts_fts (rowid, text, handle) VALUES (?, ?, ?)",
                (artifact_id, text, artifact.handle),
            )
            if trigram_usable(conn):
                conn.execute(f"INSERT INTO {ARTIFACTS_TRIGRAM} (rowid, text) VALUES (?, ?)", (artifact_id, text))
    else:
        artifact_id = int(row[0])
    high_water = conn.execute(
        "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0)"
    ).fetchone()[0]
    conn.execute(
        "INSERT OR IGNORE INTO artifact_links (artifact_id, session_id, after_message_id, created_at) "
        "VALUES (?, ?, ?, ?)",
        (artifact_id, session_id, int(high_water), now),
    )
    return artifact_id
