"""`myrm sessions recover`: rebuild a damaged `sessions.db` from what is still readable.

The new store is built aside with the current schema, filled with every row that reads back
valid (salvage.py), re-indexed, checked with `PRAGMA integrity_check`, and only then put in
place. The damaged file is never changed or deleted: it is renamed next to it
(`sessions.db.damaged-<time>`, with its -wal), so nothing that recovery missed is lost.
Recovery holds the store lock exclusively, so no myrm can write the file while it is swapped.
Every file step goes through the `.myrm` handle of one no-follow walk (layout.py): a link in the
store is refused before anything is read, built or renamed.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from myrm_tui.fenced_files import FenceError, Folder
from myrm_tui.store.constants import ARTIFACT_INDEX_MAX_CHARS, ARTIFACTS_DIR, DB_NAME, DIR_NAME
from myrm_tui.store.database import search_index
from myrm_tui.store.database.db import connect_fenced, transaction
from myrm_tui.store.database.layout import (
    DB_SIDECARS,
    open_store_dir,
    private_file,
    refuse_linked_database,
    store_refusal,
)
from myrm_tui.store.database.schema import MIGRATIONS, migrate
from myrm_tui.store.database.session_lock import StoreLock
from myrm_tui.store.errors import StoreError, VaultError
from myrm_tui.store.recovery import salvage
from myrm_tui.store.vault import Vault

# Title of a session row re-created because its messages survived but the row did not.
PLACEHOLDER_TITLE = "(recovered: the session row was lost)"
PLACEHOLDER_MODEL = "unknown"
# The tables filled before the search migration runs (it indexes the messages already there).
_LOG_TABLES = ("sessions", "messages", "events")
_LATER_TABLES = (
    "context_views",
    "context_synthetic",
    "context_synthetic_sets",
    "summaries",
    "artifacts",
    "artifact_links",
)


@dataclass
class RecoveryReport:
    method: str
    kept_as: Path
    restored: Counter[str] = field(default_factory=Counter)  # table -> rows copied
    lost: Counter[str] = field(default_factory=Counter)  # table -> rows unreadable or invalid
    placeholders: int = 0
    unplaced: int = 0  # rows `.recover` found but could not attribute to a table
    dangling_references: int = 0  # foreign-key problems left (e.g. a fork point that was lost)


def _stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def _insert(conn: sqlite3.Connection, table: str, rows: list[tuple], report: RecoveryReport) -> None:
    columns = salvage.TABLE_COLUMNS[table]
    sql = f"INSERT OR IGNORE INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
    for row in rows:
        if not salvage.valid_row(table, row):
            report.lost[table] += 1
            continue
        try:
            added = conn.execute(sql, row).rowcount
        except sqlite3.Error:
            added = 0
        if added:
            report.restored[table] += 1
        else:
            report.lost[table] += 1


def _placeholders(conn: sqlite3.Connection) -> int:
    """Session rows for sessions whose messages, events or forks survived without them."""
    missing = conn.execute(
        "SELECT sid, MIN(t), MAX(t) FROM ("
        " SELECT session_id AS sid, created_at AS t FROM messages"
        " UNION ALL SELECT session_id, created_at FROM events"
        " UNION ALL SELECT parent_id, created_at FROM sessions WHERE parent_id IS NOT NULL)"
        " WHERE sid NOT IN (SELECT id FROM sessions) GROUP BY sid"
    ).fetchall()
    for session_id, first, last in missing:
        conn.execute(
            "INSERT INTO sessions (id, title, created_at, updated_at, model) VALUES (?, ?, ?, ?, ?)",
            (session_id, PLACEHOLDER_TITLE, first, last, PLACEHOLDER_MODEL),
        )
    return len(missing)


def _index_artifacts(conn: sqlite3.Connection, source: sqlite3.Connection, vault: Vault) -> None:
    """Artifact search text: from the old index where it reads, else from the (verified) vault."""
    old_text = dict(salvage.artifact_texts(source))
    trigram = search_index.trigram_usable(conn)
    for artifact_id, digest, binary in conn.execute("SELECT id, digest, binary FROM artifacts").fetchall():
        if binary:
            continue
        handle = Vault.HANDLE_PREFIX + digest[:12]
        text = old_text.get(artifact_id)
        if not isinstance(text, str):
            try:
                text = vault.read_text(handle)[:ARTIFACT_INDEX_MAX_CHARS]
            except (VaultError, OSError):
                continue  # catalogued, not searchable: ctx_expand still reads it if it is intact
        text = search_index.storable(text)
        conn.execute("INSERT INTO artifacts_fts (rowid, text, handle) VALUES (?, ?, ?)", (artifact_id, text, handle))
        if trigram:
            conn.execute(
                f"INSERT INTO {search_index.ARTIFACTS_TRIGRAM} (rowid, text) VALUES (?, ?)", (artifact_id, text)
            )


def _build(folder: Folder, new_path: Path, source: sqlite3.Connection, vault: Vault, report: RecoveryReport) -> None:
    private_file(folder, new_path.name, exclusive=True)
    conn = connect_fenced(folder, new_path.name, new_path)
    try:
        conn.execute("PRAGMA foreign_keys = OFF")  # lost parents must not cost their children
        with transaction(conn, write=True):
            MIGRATIONS[0](conn)
            conn.execute("PRAGMA user_version = 1")
            for table in _LOG_TABLES:
                read = salvage.read_table(source, table)
                report.lost[table] += read.unreadable
                _insert(conn, table, read.rows, report)
            report.placeholders = _placeholders(conn)
        migrate(conn, new_path)  # search tables, indexing every recovered message
        with transaction(conn, write=True):
            for table in _LATER_TABLES:
                read = salvage.read_table(source, table)
                report.lost[table] += read.unreadable
                _insert(conn, table, read.rows, report)
            _index_artifacts(conn, source, vault)
            for name, seq in salvage.high_water(source).items():
                conn.execute("UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = ?", (seq, name))
        report.dangling_references = len(conn.execute("PRAGMA foreign_key_check").fetchall())
        verdict = conn.execute("PRAGMA integrity_check").fetchall()
        if verdict != [("ok",)]:
            raise StoreError(f"the rebuilt store failed its integrity check ({verdict[:3]}); nothing was replaced.")
    finally:
        conn.close()


def _move_aside(folder: Folder, kept: Path) -> None:
    """Rename the damaged file and its WAL/shm together (SQLite pairs them by name)."""
    folder.rename(DB_NAME, kept.name)
    for suffix in ("-wal", "-shm"):
        if folder.lstat(DB_NAME + suffix) is not None:
            folder.rename(DB_NAME + suffix, kept.name + suffix)


def recover(workspace: Path, *, use_cli: bool | None = None) -> RecoveryReport:
    """Rebuild `.myrm/sessions.db`; the damaged file is kept as `sessions.db.damaged-<time>`.

    `use_cli`: None picks `sqlite3 .recover` when that tool is installed, else the row copy.
    Raises StoreError (nothing changed) when the store is missing or in use.
    """
    folder_path = Path(workspace) / DIR_NAME
    db_path = folder_path / DB_NAME
    try:
        folder = open_store_dir(Path(workspace))
    except (FileNotFoundError, NotADirectoryError):
        raise StoreError(f"there is no session database at {db_path}; nothing to recover.") from None
    with folder:
        try:
            refuse_linked_database(folder)
        except FenceError as exc:
            raise store_refusal(exc) from None
        if folder.lstat(DB_NAME) is None:
            raise StoreError(f"there is no session database at {db_path}; nothing to recover.")
        return _recover(folder, folder_path, db_path, use_cli)


def _recover(folder: Folder, folder_path: Path, db_path: Path, use_cli: bool | None) -> RecoveryReport:
    lock = StoreLock(folder_path)
    lock.acquire_exclusive()
    token = secrets.token_hex(4)
    new_path = folder_path / f".{DB_NAME}.recovered-{token}"
    scratch = folder_path / f".{DB_NAME}.recover-scratch-{token}"
    # The paths handed to the sqlite3 tool and to SQLite: where the checked handle really is.
    real = folder.real_path()
    cli = salvage.sqlite_cli() is not None if use_cli is None else use_cli
    kept_as = db_path.with_name(f"{DB_NAME}.damaged-{_stamp()}")
    if folder.lstat(kept_as.name) is not None:  # a second recovery within the same second never overwrites the first
        kept_as = kept_as.with_name(f"{kept_as.name}-{token}")
    report = RecoveryReport(method="sqlite3 .recover" if cli else "row-by-row copy", kept_as=kept_as)
    try:
        source = None
        if cli:
            try:
                report.unplaced = salvage.recover_with_cli(real / DB_NAME, real / scratch.name)
                source = sqlite3.connect(f"file:{quote(str(real / scratch.name))}?mode=ro", uri=True)
            except salvage.CliRecoverError as exc:
                report.method = f"row-by-row copy ({exc})"
        if source is None:
            source = salvage.open_damaged(real / DB_NAME)
        try:
            _build(folder, new_path, source, Vault(folder_path / ARTIFACTS_DIR, anchor=folder_path.parent), report)
        finally:
            source.close()
        if not (report.restored["sessions"] or report.restored["messages"]):
            raise StoreError(
                f"nothing in {db_path} could be read (its first page, which holds the schema, may be "
                "gone); the file was left as it was. Restore it from a backup."
            )
        _move_aside(folder, report.kept_as)
        folder.rename(new_path.name, DB_NAME)
        folder.fsync()
        return report
    except (sqlite3.Error, OSError, RuntimeError) as exc:
        raise StoreError(f"recovery failed ({exc}); {db_path} was left as it was.") from exc
    finally:
        for leftover in (new_path.name, scratch.name):
            for name in (leftover, *(leftover + suffix for suffix in DB_SIDECARS)):
                folder.remove_quietly(name)
        lock.release()
