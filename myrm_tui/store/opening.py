"""Opening a workspace's `.myrm/sessions.db`: the checks and steps before a Store wraps it.

Kept apart from the Store because the order matters and is easy to break: refuse files that are
not ours before touching them, hold the shared store lock before creating or migrating (so
`sessions recover` cannot swap the file underneath), and release everything on any failure.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.store.constants import DB_NAME, DIR_NAME
from myrm_tui.store.db import connect
from myrm_tui.store.errors import StoreError
from myrm_tui.store.file_checks import refuse_foreign_file, refuse_foreign_schema, refuse_unusable_file
from myrm_tui.store.fresh import create_database
from myrm_tui.store.layout import ensure_layout, restrict_if_present
from myrm_tui.store.schema import check_version_read_only, migrate
from myrm_tui.store.session_lock import StoreLock


@dataclass(frozen=True)
class Opened:
    """What a Store is made of: the `.myrm` folder, a ready connection, and (read-write only)
    the shared store lock it must release on close."""

    root: Path
    conn: sqlite3.Connection
    store_lock: StoreLock | None


def open_read_only(workspace_root: Path) -> Opened:
    """Creates nothing and never writes: for a second process looking at a workspace."""
    root = workspace_root / DIR_NAME
    db_path = root / DB_NAME
    if not db_path.is_file():
        raise StoreError(f"no session database at {db_path}; run myrm in {workspace_root} first.")
    refuse_unusable_file(db_path)
    conn = connect(db_path, read_only=True)
    try:
        refuse_foreign_schema(conn, db_path)
        check_version_read_only(conn, db_path)
    except BaseException:
        conn.close()
        raise
    return Opened(root, conn, None)


def open_read_write(workspace_root: Path) -> Opened:
    """Creates the folder and database if needed and migrates it to the current schema."""
    try:
        root = ensure_layout(workspace_root)
    except OSError as exc:
        raise StoreError(
            f"cannot create the myrm folder in {workspace_root} ({exc}); check that the folder exists and is writable."
        ) from exc
    db_path = root / DB_NAME
    store_lock = StoreLock(root)
    store_lock.acquire_shared()  # `sessions recover` must not swap the file under us
    try:
        if db_path.exists():
            refuse_unusable_file(db_path)
            refuse_foreign_file(db_path)
        else:
            create_database(db_path)
        conn = connect(db_path)
    except BaseException:
        store_lock.release()
        raise
    try:
        migrate(conn, db_path)
    except BaseException:
        conn.close()
        store_lock.release()
        raise
    # SQLite creates -wal/-shm with the database file's mode already; chmod anyway so a
    # file left by an older run with a wider mode is tightened too.
    restrict_if_present(db_path.with_name(DB_NAME + "-wal"))
    restrict_if_present(db_path.with_name(DB_NAME + "-shm"))
    return Opened(root, conn, store_lock)
