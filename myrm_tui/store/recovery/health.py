"""What state a workspace's store is in, read without writing anything (`myrm doctor`,
`myrm sessions recover`).

Why a separate, read-only inspection: the commands that diagnose a store must work on exactly
the stores that are broken, read-only, or not myrm's, and must never make them worse. It walks
`.myrm` and opens the database the way the store does (layout.py, db.connect_fenced), so a link
committed there is reported with what to remove, never followed.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field, replace
from pathlib import Path

from myrm_tui.fenced_files import FenceError
from myrm_tui.store.constants import DB_NAME, DIR_NAME
from myrm_tui.store.database.db import connect_fenced
from myrm_tui.store.database.file_checks import file_problem, refuse_foreign_schema
from myrm_tui.store.database.layout import open_store_dir, store_refusal
from myrm_tui.store.database.schema import latest_version, read_version
from myrm_tui.store.errors import StoreError

# quick_check lines kept for the report: the first few say where the damage is; a badly
# damaged file can produce thousands.
QUICK_CHECK_MAX_LINES = 8


@dataclass(frozen=True)
class StoreHealth:
    folder: Path  # `.myrm`
    db_path: Path
    folder_exists: bool
    writable: bool  # this process may create or change files in the folder
    problem: str | None = None  # why the database cannot be opened at all
    damage: tuple[str, ...] = ()  # PRAGMA quick_check findings (empty: healthy)
    version: int | None = None
    sessions: int | None = None
    size_bytes: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def exists(self) -> bool:
        return self.db_path.exists()

    @property
    def healthy(self) -> bool:
        return self.problem is None and not self.damage


def _writable(folder: Path) -> bool:
    target = folder if folder.exists() else folder.parent
    return os.access(target, os.W_OK)


def quick_check(conn: sqlite3.Connection) -> tuple[str, ...]:
    """PRAGMA quick_check's findings, () when it says "ok". A check that cannot even run
    (the damage stops it) is itself a finding."""
    lines: list[str] = []
    try:
        for row in conn.execute(f"PRAGMA quick_check({QUICK_CHECK_MAX_LINES})"):
            lines.append(str(row[0]))
    except sqlite3.DatabaseError as exc:
        lines.append(f"quick_check stopped: {exc}")
    return () if lines == ["ok"] else tuple(lines)


def inspect(workspace: Path) -> StoreHealth:
    """Open read-only, check, count; never creates, migrates or writes anything."""
    folder = Path(workspace) / DIR_NAME
    db_path = folder / DB_NAME
    base = StoreHealth(folder=folder, db_path=db_path, folder_exists=folder.is_dir(), writable=_writable(folder))
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        try:  # the same walk the store opens with: a link is reported, never followed
            open_store_dir(Path(workspace)).close()
        except StoreError as exc:
            return replace(base, problem=str(exc))
        except OSError:
            pass
        return replace(base, problem=f"{folder} is a file, not a folder; move it aside.")
    if not (db_path.exists() or db_path.is_symlink()):
        return base
    size = db_path.lstat().st_size
    with open_store_dir(Path(workspace)) as handle:
        problem = file_problem(db_path, handle)
        if problem is not None:
            return replace(base, problem=problem, size_bytes=size)
        try:
            conn = connect_fenced(handle, DB_NAME, db_path, read_only=True)
        except FenceError as exc:
            return replace(base, problem=str(store_refusal(exc)), size_bytes=size)
        except StoreError as exc:
            return replace(base, problem=str(exc), size_bytes=size)
    try:
        try:
            refuse_foreign_schema(conn, db_path)
        except StoreError as exc:
            return replace(base, problem=str(exc), size_bytes=size)
        damage = quick_check(conn)
        version = read_version(conn)
        notes: list[str] = []
        if version > latest_version():
            notes.append(f"schema version {version} is newer than this myrm ({latest_version()}); upgrade myrm")
        elif version < latest_version():
            notes.append(f"schema version {version}; the next read-write open migrates it to {latest_version()}")
        sessions = None
        try:
            sessions = int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            if not damage:
                damage = (f"the sessions table cannot be read: {exc}",)
        return replace(base, damage=damage, version=version, sessions=sessions, size_bytes=size, notes=tuple(notes))
    finally:
        conn.close()
