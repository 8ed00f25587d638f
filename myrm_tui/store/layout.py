"""Creates the owner-only `.myrm/` folder tree and its files.

Permissions are set with an explicit chmod after creation because `mkdir(mode=)` and
`open(mode=)` are filtered by the process umask, which may be wider or narrower than we want.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from myrm_tui.atomic_write import atomic_write
from myrm_tui.store.constants import (
    ARTIFACTS_DIR,
    DB_NAME,
    DIR_MODE,
    DIR_NAME,
    FILE_MODE,
    GITIGNORE_NAME,
    GITIGNORE_TEXT,
    LOCKS_DIR,
)


def private_dir(path: Path) -> Path:
    """Create `path` if needed and make it owner-only."""
    path.mkdir(mode=DIR_MODE, parents=False, exist_ok=True)
    os.chmod(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create `path` empty if missing (never truncating) and make it owner-only.

    Creating the database file ourselves matters: SQLite gives the -wal and -shm files it
    creates later the same mode as the database file.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return path


def restrict_if_present(path: Path) -> None:
    """chmod an optional file (e.g. `sessions.db-wal`) to owner-only if it exists."""
    with contextlib.suppress(FileNotFoundError):
        os.chmod(path, FILE_MODE)


def ensure_layout(workspace_root: Path) -> Path:
    """Create `<root>/.myrm/{artifacts/, locks/, .gitignore}`; return the `.myrm` path.

    The database itself is created by `fresh.create_database` (atomically), not here: an
    existing `sessions.db` only gets its mode tightened.
    """
    if not workspace_root.is_dir():
        raise FileNotFoundError(f"workspace folder {workspace_root} does not exist")
    folder = private_dir(workspace_root / DIR_NAME)
    private_dir(folder / ARTIFACTS_DIR)
    private_dir(folder / LOCKS_DIR)
    gitignore = folder / GITIGNORE_NAME
    if not gitignore.exists() or gitignore.stat().st_size == 0:
        # Written once (temp + rename, so a kill cannot leave it empty); a user who edits it
        # afterwards keeps their version.
        atomic_write(gitignore, GITIGNORE_TEXT, mode=FILE_MODE)
    os.chmod(gitignore, FILE_MODE)
    restrict_if_present(folder / DB_NAME)
    return folder
