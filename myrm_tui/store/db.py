"""SQLite connection setup and transaction helpers for the session database.

One job: turn a path into a connection configured for crash safety (WAL, fsync policy, busy
timeout, foreign keys), and give the store explicit transactions. Connections run in autocommit
mode (`isolation_level=None`) so that every transaction boundary is the one written in the code,
never one the `sqlite3` module opens implicitly.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from myrm_tui.store.constants import BUSY_TIMEOUT_MS, JOURNAL_SIZE_LIMIT_BYTES, SYNCHRONOUS
from myrm_tui.store.errors import StoreError


def connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    """Open `path`. Read-write connections switch the file to WAL; read-only ones never write.

    `check_same_thread=False` because tools may run in worker threads; the store serialises
    access to the connection with its own lock.
    """
    try:
        if read_only:
            uri = f"file:{quote(str(path))}?mode=ro"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        else:
            conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the session database {path}: {exc}.") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        if read_only:
            conn.execute("PRAGMA query_only = ON")
        else:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(
                    f"the session database {path} cannot use WAL journaling (got {mode!r}); "
                    "keep the workspace on a local filesystem."
                )
            conn.execute(f"PRAGMA synchronous = {SYNCHRONOUS}")
            conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT_BYTES}")
        # Touch the schema so "file is not a database" surfaces here, with the path.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(
            f"{path} is not a readable myrm session database ({exc}); move it aside and retry."
        ) from exc
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection, *, write: bool) -> Iterator[sqlite3.Connection]:
    """One explicit transaction; rolled back on any exception (cancellation included).

    Writes use BEGIN IMMEDIATE: the write lock is taken up front, so a read-then-write (next
    seq, dangling-call scan) cannot race another process and fail halfway with SQLITE_BUSY.
    Reads use a deferred transaction so multi-query reads see one consistent snapshot.
    Inside an enclosing transaction (`Store.batch`) this joins it: the outer one commits.
    """
    if conn.in_transaction:
        yield conn
        return
    try:
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    except sqlite3.OperationalError as exc:
        raise StoreError(
            f"the session database is busy ({exc}); another myrm process holds it, retry shortly."
        ) from exc
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"session database operation failed: {exc}.") from exc
        raise
