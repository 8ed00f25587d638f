"""Refuse a `sessions.db` that is not a myrm store before SQLite gets to "fix" it.

Why: SQLite happily turns a 0-byte file into a brand-new database and adds our tables to any
other application's database. Both would silently replace (or pollute) what the user had, so an
empty or foreign file is reported with what to do, and never written to.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from myrm_tui.fenced_files import FenceError, Folder, HeldFileError, open_root
from myrm_tui.store.database.db import connect_fenced
from myrm_tui.store.database.layout import store_refusal
from myrm_tui.store.errors import StoreError

# The first 16 bytes of every SQLite 3 database file (the file format's magic string).
SQLITE_MAGIC = b"SQLite format 3\x00"
# How many table names a "foreign database" message quotes.
_FOREIGN_NAMES_SHOWN = 5


def wal_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + "-wal")


def _size(folder: Folder, name: str) -> int:
    found = folder.lstat(name)
    return found.st_size if found is not None else 0


def file_problem(db_path: Path, folder: Folder | None = None) -> str | None:
    """Why `db_path` (which exists) cannot be a session database, or None if it may be one.
    `folder`: the handle of its folder (the store's, walked without following); without it the
    folder is opened by its path. The file itself is never read through a link, nor a FIFO."""
    if folder is None:
        try:
            with open_root(db_path.parent) as own:
                return file_problem(db_path, own)
        except OSError as exc:
            return f"{db_path} cannot be read ({exc.strerror or exc}); check its permissions."
    size = _size(folder, db_path.name)
    if size == 0:
        wal = _size(folder, wal_path(db_path).name)
        tail = (
            (
                f" Its write-ahead log {wal_path(db_path).name} still holds {wal:,} bytes: keep both "
                "files and restore the database from a backup."
            )
            if wal
            else ""
        )
        return (
            f"{db_path} is empty (0 bytes): it was truncated, or a first run was killed while "
            f"creating it. myrm will not start over on top of it.{tail} If it never held "
            "sessions, delete it and run myrm again."
        )
    try:
        fd = folder.open_regular(db_path.name)
    except HeldFileError:
        return None  # open as a database in this process already (a second store of the workspace)
    except FenceError as exc:
        return str(store_refusal(exc))
    except OSError as exc:
        return f"{db_path} cannot be read ({exc.strerror or exc}); check its permissions."
    try:
        head = os.pread(fd, len(SQLITE_MAGIC), 0)
    except OSError as exc:
        return f"{db_path} cannot be read ({exc.strerror or exc}); check its permissions."
    finally:
        os.close(fd)
    if head != SQLITE_MAGIC:
        shown = head[:8].hex(" ")
        return (
            f"{db_path} is not a readable myrm session database: it is not an SQLite file (it "
            f"starts with bytes {shown}); another "
            "program wrote it, or its first page is damaged. Move it aside (myrm will then start "
            "a new store) or restore it from a backup; `myrm sessions recover` can try to read "
            "what is left."
        )
    return None


def refuse_unusable_file(db_path: Path, folder: Folder | None = None) -> None:
    problem = file_problem(db_path, folder)
    if problem is not None:
        raise StoreError(problem)


def refuse_foreign_schema(conn: sqlite3.Connection, db_path: Path) -> None:
    """A version-0 database that already has tables belongs to another program."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version != 0:
        return
    names = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    if names:
        shown = ", ".join(names[:_FOREIGN_NAMES_SHOWN]) + (", …" if len(names) > _FOREIGN_NAMES_SHOWN else "")
        raise StoreError(
            f"{db_path} is an SQLite database of another program (tables: {shown}), not a myrm "
            "session store; myrm will not add its tables to it. Move it aside and run myrm again."
        )


def refuse_foreign_file(db_path: Path, folder: Folder) -> None:
    """`refuse_foreign_schema` through a read-only connection of its own: run before the
    read-write open, whose switch to WAL journaling would already change another program's file.
    Opened like every store connection, through the folder handle (db.connect_fenced)."""
    try:
        conn = connect_fenced(folder, db_path.name, db_path, read_only=True)
    except StoreError:
        return  # the read-write open reports why the file cannot be opened
    try:
        refuse_foreign_schema(conn, db_path)
    except sqlite3.DatabaseError:
        return  # damage: the read-write open reports it with the recovery hint
    finally:
        conn.close()
