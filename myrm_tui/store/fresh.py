"""Create a new session database atomically: built aside, then linked into place.

Why: a `sessions.db` that myrm creates must never be seen half-made. Built under a temporary
name and published with `link` (which refuses to overwrite), a new store is either absent or
complete, so a 0-byte `sessions.db` is never myrm's own doing and can be reported as damage
(file_checks.py) instead of being silently treated as a new store.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from myrm_tui.atomic_write import fsync_path
from myrm_tui.store.db import connect
from myrm_tui.store.errors import StoreError
from myrm_tui.store.file_checks import wal_path
from myrm_tui.store.layout import private_file
from myrm_tui.store.schema import migrate

# Random suffix bytes of the temporary file: two processes creating a store at once must not
# build into the same file.
_TEMP_TOKEN_BYTES = 4


def create_database(db_path: Path) -> None:
    """Publish a fully migrated, empty database at `db_path` unless one appears there first."""
    wal = wal_path(db_path)
    if wal.exists() and wal.stat().st_size > 0:
        raise StoreError(
            f"{wal} exists without {db_path.name}: the database was deleted or moved without its "
            "write-ahead log, which may hold its newest messages. Put the database back, or move "
            f"{wal.name} aside to start a new store."
        )
    temp = db_path.with_name(f".{db_path.name}.{os.getpid()}.{secrets.token_hex(_TEMP_TOKEN_BYTES)}.new")
    private_file(temp)
    try:
        conn = connect(temp)
        try:
            migrate(conn, temp)
        finally:
            conn.close()  # the last connection checkpoints and removes the temp WAL
        fsync_path(temp)
        # FileExistsError: another process published its store first; both now open that one.
        with contextlib.suppress(FileExistsError):
            os.link(temp, db_path)
        fsync_path(db_path.parent)
    finally:
        for leftover in (temp, wal_path(temp), temp.with_name(temp.name + "-shm")):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)
