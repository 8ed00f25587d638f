"""Opening a workspace's `.myrm/sessions.db`: the checks and steps before a Store wraps it.

Kept apart from the Store because the order matters and is easy to break: refuse files that are
not ours before touching them, hold the shared store lock before creating or migrating (so
`sessions recover` cannot swap the file underneath), and release everything on any failure.
Every step goes through the `.myrm` handle of one no-follow walk (layout.py), and SQLite is
handed the database through it (db.connect_fenced): a link committed anywhere in `.myrm` is
refused with what to remove, and nothing outside the workspace is chmodded, created or truncated.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from myrm_tui.fenced_files import FenceError, Folder
from myrm_tui.store.constants import DB_NAME, DIR_NAME
from myrm_tui.store.database.db import connect_fenced
from myrm_tui.store.database.file_checks import refuse_foreign_file, refuse_foreign_schema, refuse_unusable_file
from myrm_tui.store.database.fresh import create_database
from myrm_tui.store.database.layout import (
    DB_SIDECARS,
    ensure_layout,
    open_store_dir,
    restrict_if_present,
    store_refusal,
)
from myrm_tui.store.database.schema import check_version_read_only, migrate
from myrm_tui.store.database.session_lock import StoreLock
from myrm_tui.store.errors import StoreError


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
    try:
        folder = open_store_dir(workspace_root)
    except FileNotFoundError:
        raise StoreError(f"no session database at {db_path}; run myrm in {workspace_root} first.") from None
    except NotADirectoryError:
        raise StoreError(f"{root} is a file, not a folder; move it aside and run myrm again.") from None
    with folder:
        found = folder.lstat(DB_NAME)
        if found is None:
            raise StoreError(f"no session database at {db_path}; run myrm in {workspace_root} first.")
        try:
            refuse_unusable_file(db_path, folder)
            conn = connect_fenced(folder, DB_NAME, db_path, read_only=True)
        except FenceError as exc:
            raise store_refusal(exc) from None
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
        folder = ensure_layout(workspace_root)  # StoreError for a link in it
    except OSError as exc:
        raise StoreError(
            f"cannot create the myrm folder in {workspace_root} ({exc}); check that the folder exists and is writable."
        ) from exc
    with folder:
        root = workspace_root / DIR_NAME
        try:
            return _open_database(folder, root)
        except FenceError as exc:
            raise store_refusal(exc) from None


def _open_database(folder: Folder, root: Path) -> Opened:
    db_path = root / DB_NAME
    store_lock = StoreLock(root)
    store_lock.acquire_shared()  # `sessions recover` must not swap the file under us
    try:
        if folder.lstat(DB_NAME) is not None:
            refuse_unusable_file(db_path, folder)
            refuse_foreign_file(db_path, folder)
        else:
            create_database(folder, db_path)
        conn = connect_fenced(folder, DB_NAME, db_path)
    except BaseException:
        store_lock.release()
        raise
    try:
        migrate(conn, db_path)
        # SQLite creates -wal/-shm with the database file's mode already; chmod anyway so a
        # file left by an older run with a wider mode is tightened too.
        for suffix in DB_SIDECARS:
            restrict_if_present(folder, DB_NAME + suffix)
    except BaseException:
        conn.close()
        store_lock.release()
        raise
    return Opened(root, conn, store_lock)
