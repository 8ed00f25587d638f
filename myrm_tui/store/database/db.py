"""SQLite connection setup and transaction helpers for the session database.

One job: turn a path into a connection configured for crash safety (WAL, fsync policy, busy
timeout, foreign keys), and give the store explicit transactions. Connections run in autocommit
mode (`isolation_level=None`) so that every transaction boundary is the one written in the code,
never one the `sqlite3` module opens implicitly.

The store's own database is opened with `connect_fenced`: SQLite only takes paths and follows
links, so it is handed the file through the `.myrm` folder handle and what it opened is checked
afterwards (its docstring says how, and what is left).
"""

from __future__ import annotations

import os
import sqlite3
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from myrm_tui.fenced_files import HELD_BY_DATABASES, Folder
from myrm_tui.store.constants import BUSY_TIMEOUT_MS, JOURNAL_SIZE_LIMIT_BYTES, SYNCHRONOUS
from myrm_tui.store.database.layout import DB_SIDECARS, refuse_linked_database
from myrm_tui.store.errors import StoreDamagedError, StoreError


class StoreConnection(sqlite3.Connection):
    """A connection that, while open, has its files recorded as held by this process
    (`fenced_files.HeldFiles`: no other descriptor of them may be opened and closed here, or
    SQLite's locks on them are gone). `connect_fenced` records them; `close` gives them back."""

    _released: weakref.finalize | None = None

    def hold(self, files: tuple[tuple[int, int], ...]) -> None:
        HELD_BY_DATABASES.hold(files)
        # Given back once: on close, or when a connection nobody closed is collected (SQLite
        # closes it then, and its locks go with it).
        self._released = weakref.finalize(self, HELD_BY_DATABASES.release, files)

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self._released is not None:
                self._released()


def _open(path: Path, *, read_only: bool, immutable: bool = False, shown: Path | None = None) -> sqlite3.Connection:
    try:
        if read_only:
            flags = "mode=ro&immutable=1" if immutable else "mode=ro"
            uri = f"file:{quote(str(path))}?{flags}"
            return sqlite3.connect(
                uri, uri=True, isolation_level=None, check_same_thread=False, factory=StoreConnection
            )
        return sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, factory=StoreConnection)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the session database {shown or path}: {exc}.") from exc


def _cannot_share_wal(exc: sqlite3.Error) -> bool:
    """A read-only connection that cannot create or write the -shm/-wal files (a read-only
    folder) fails its first read with one of these."""
    text = str(exc).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text


def connect(path: Path, *, read_only: bool = False, shown: Path | None = None) -> sqlite3.Connection:
    """Open `path`. Read-write connections switch the file to WAL; read-only ones never write.

    A read-only open first uses `mode=ro`, which still takes SQLite's shared-memory read locks
    (so a concurrent writer is seen consistently). In a folder this process cannot write, that
    index cannot be created; then, if no write-ahead log holds data, the file is read as
    `immutable` (no locks: nobody can be writing a database whose folder is read-only).

    `check_same_thread=False` because tools may run in worker threads; the store serialises
    access to the connection with its own lock. `shown`: the path messages name, when `path` is
    a /proc/self/fd path (`connect_fenced`).
    """
    named = shown or path
    conn = _open(path, read_only=read_only, shown=named)
    try:
        _configure(conn, named, read_only=read_only)
    except sqlite3.OperationalError as exc:
        conn.close()
        if not (read_only and _cannot_share_wal(exc)):
            raise _unreadable(named, exc) from exc
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise StoreError(
                f"{named} cannot be read from this read-only folder: its write-ahead log {wal.name} "
                "holds changes that only a process allowed to write the folder can apply. Run myrm "
                "once where the folder is writable, or as its owner."
            ) from exc
        conn = _open(path, read_only=True, immutable=True, shown=named)
        try:
            _configure(conn, named, read_only=True)
        except sqlite3.DatabaseError as again:
            conn.close()
            raise _unreadable(named, again) from again
        except BaseException:
            conn.close()
            raise
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise _unreadable(named, exc) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def connect_fenced(folder: Folder, name: str, shown: Path, *, read_only: bool = False) -> sqlite3.Connection:
    """`connect` to the database `name` in the folder handle `folder`, so that SQLite cannot be
    led out of the workspace by a link (layout.py says why that matters).

    SQLite only opens by path and follows every link in it, the -wal/-shm/-journal it opens
    later by name included, and Python cannot pass it SQLITE_OPEN_NOFOLLOW. So, in this order:
    the file and its sidecars are checked on the folder handle without following (regular files
    or absent, else FenceError); the file is opened no-follow and held (an O_PATH descriptor,
    whose close keeps SQLite's locks: `Folder.pin_regular`), which pins the inode that was
    checked; SQLite gets `/proc/self/fd/<folder>/<name>`, which reaches this very folder
    through the handle (no name above it is looked up again); and once open, the file SQLite
    reports (`PRAGMA database_list`, with every link resolved) must be the folder's real path
    plus `name`, and the inode held. Anything else is refused and the connection closed.

    What is left: a process that can write inside `.myrm` could plant a sidecar link in the
    moment between the check and SQLite's open. The bash sandbox mounts `.myrm` read-only, so
    only an unsandboxed command could, and that one can write the user's files directly anyway.
    """
    refuse_linked_database(folder, name)
    fd = folder.pin_regular(name)  # not a readable descriptor: its close would drop SQLite's locks
    try:
        held = os.fstat(fd)
        conn = connect(Path(folder.proc_path(name)), read_only=read_only, shown=shown)
        try:
            opened = Path(str(conn.execute("PRAGMA database_list").fetchone()[2]))
            expected = folder.real_path() / name
            try:
                now = os.stat(opened, follow_symlinks=False)
            except OSError:
                now = None
            if opened != expected or now is None or (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
                raise StoreError(
                    f"{shown} was swapped while myrm opened it (SQLite opened {opened}); myrm closed it "
                    "without using it. Check what else writes in the workspace's .myrm folder, then run again."
                )
            if isinstance(conn, StoreConnection):
                sidecars = (folder.lstat(name + suffix) for suffix in DB_SIDECARS)
                conn.hold(((held.st_dev, held.st_ino), *((f.st_dev, f.st_ino) for f in sidecars if f is not None)))
        except BaseException:
            conn.close()
            raise
    finally:
        os.close(fd)
    return conn


def _unreadable(path: Path, exc: sqlite3.Error) -> StoreError:
    return StoreError(
        f"{path} is not a readable myrm session database ({exc}); `myrm doctor` says what is "
        "wrong and `myrm sessions recover` copies what is readable into a new store."
    )


def _configure(conn: sqlite3.Connection, path: Path, *, read_only: bool) -> None:
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


# SQLite's primary result codes for a damaged file: SQLITE_CORRUPT and SQLITE_NOTADB.
_CORRUPTION_CODES = (11, 26)


def is_corruption(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.DatabaseError) and code is not None and code & 0xFF in _CORRUPTION_CODES


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
        if is_corruption(exc):
            raise StoreDamagedError(
                f"the session database is damaged ({exc}); `myrm doctor` says what is wrong and "
                "`myrm sessions recover` copies what is readable into a new store."
            ) from exc
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"session database operation failed: {exc}.") from exc
        raise


def inserted_id(cursor: sqlite3.Cursor) -> int:
    """The rowid an INSERT just made. sqlite3 types `lastrowid` as optional (it is None before
    any INSERT); after one it is always set, so None here is a store bug, not a user error."""
    rowid = cursor.lastrowid
    if rowid is None:
        raise StoreError("an INSERT returned no row id; this is a bug in myrm's store.")
    return rowid
