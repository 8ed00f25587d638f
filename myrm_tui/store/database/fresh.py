"""Create a new session database atomically: built aside, then linked into place.

Why: a `sessions.db` that myrm creates must never be seen half-made. Built under a temporary
name and published with `link` (which refuses to overwrite), a new store is either absent or
complete, so a 0-byte `sessions.db` is never myrm's own doing and can be reported as damage
(file_checks.py) instead of being silently treated as a new store. Every step goes through the
`.myrm` folder handle (layout.py): the temporary file is created exclusively, never through a
link, and SQLite reaches it through the handle (db.connect_fenced).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from myrm_tui.fenced_files import Folder
from myrm_tui.store.database.db import connect_fenced
from myrm_tui.store.database.layout import DB_SIDECARS, private_file
from myrm_tui.store.database.schema import migrate
from myrm_tui.store.errors import StoreError

# Random suffix bytes of the temporary file: two processes creating a store at once must not
# build into the same file.
_TEMP_TOKEN_BYTES = 4


def create_database(folder: Folder, db_path: Path) -> None:
    """Publish a fully migrated, empty database as `db_path.name` in `folder` (the `.myrm`
    handle) unless one appears there first."""
    name = db_path.name
    wal = folder.lstat(name + "-wal")
    if wal is not None and wal.st_size > 0:
        raise StoreError(
            f"{db_path}-wal exists without {name}: the database was deleted or moved without its "
            "write-ahead log, which may hold its newest messages. Put the database back, or move "
            f"{name}-wal aside to start a new store."
        )
    temp = f".{name}.{os.getpid()}.{secrets.token_hex(_TEMP_TOKEN_BYTES)}.new"
    private_file(folder, temp, exclusive=True)
    try:
        conn = connect_fenced(folder, temp, db_path.with_name(temp))
        try:
            migrate(conn, db_path.with_name(temp))
        finally:
            conn.close()  # the last connection checkpoints and removes the temp WAL
        fd = folder.open_regular(temp)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        # FileExistsError: another process published its store first; both now open that one.
        with contextlib.suppress(FileExistsError):
            folder.link(temp, name)
        folder.fsync()
    finally:
        for leftover in (temp, *(temp + suffix for suffix in DB_SIDECARS)):
            folder.remove_quietly(leftover)
