"""A full disk, told apart from a bug or a corrupt database.

Why its own type: SQLite reports a full disk as "database or disk is full" (SQLITE_FULL) while
writing, but as "disk I/O error" when it cannot even create its shared-memory index at open;
the OS reports ENOSPC (or EDQUOT, a quota) for files. Each of those reached the user as "This
is a bug in myrm" or "not a readable database … recover", which sends them the wrong way. The
true sentence is the same for all of them: which disk, and that freeing space and resending
works (every committed row is intact: SQLite rolls the failed transaction back).
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from myrm_tui.store.errors import StoreError

# Below this many free bytes an I/O failure of the store is put down to the disk: SQLite needs
# at least its 32 KiB shared-memory index plus a few 4 KiB pages of write-ahead log to commit
# one message, so with less than 64 KiB free nothing can be stored whatever the error says.
MIN_FREE_BYTES = 64 * 1024
_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
# Links of a cause chain looked at (store error → sqlite3 error, wrapped by the agent or a tool).
MAX_CHAIN = 8


class DiskFullError(StoreError):
    """No room left on the disk that holds `path`."""

    def __init__(self, path: Path | str):
        self.path = str(path)
        super().__init__(f"disk full at {self.path}, free space and resend.")


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in out and len(out) < MAX_CHAIN:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def free_bytes(path: Path | str) -> int | None:
    """Bytes an unprivileged writer may still use on the filesystem of `path` (or of its nearest
    existing parent), None when it cannot be asked."""
    probe = Path(path)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        stats = os.statvfs(probe)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


def disk_full(exc: BaseException, where: Path | str | None = None) -> DiskFullError | None:
    """The DiskFullError that `exc` (or what caused it) means, else None. `where` is the folder
    of the store, named when the error itself carries no path."""
    links = _chain(exc)
    for link in links:
        if isinstance(link, DiskFullError):
            return link
        if isinstance(link, OSError) and link.errno in _FULL_ERRNOS:
            return DiskFullError(link.filename or where or "the workspace")
        if isinstance(link, sqlite3.Error) and (
            getattr(link, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "database or disk is full" in str(link)
        ):
            return DiskFullError(where or "the workspace")
    # An I/O error while the disk has (almost) no room left: the room is the cause.
    if where is not None and any(isinstance(link, (sqlite3.Error, OSError)) for link in links):
        free = free_bytes(where)
        if free is not None and free < MIN_FREE_BYTES:
            return DiskFullError(where)
    return None
