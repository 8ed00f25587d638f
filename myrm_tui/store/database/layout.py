"""Creates and opens the owner-only `.myrm/` folder tree, never through a link.

Why no-follow: `.myrm/` arrives with `git clone` like any folder of the repository, so `.myrm`
itself, `sessions.db` and its -wal/-shm/-journal, `locks/` and a lock file, `artifacts/` and
`.gitignore` may all be symlinks committed to point at the user's files. A plain `myrm run` that
chmods, creates, truncates or writes through one of them changes a file outside the workspace.
So each is reached by a no-follow walk from the workspace handle (myrm_tui/fenced_files.py), and
a link (or a FIFO, a device, a file where a folder belongs) is refused with a StoreError naming
what to remove; nothing outside is ever touched.

Permissions are set with fchmod on the handle after creation because `mkdir(mode=)` and
`open(mode=)` are filtered by the process umask, which may be wider or narrower than we want.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from myrm_tui.fenced_files import FenceError, Folder, open_root
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
from myrm_tui.store.errors import StoreError

# The files SQLite keeps beside a database: its write-ahead log, the log's shared-memory index and
# the rollback journal. SQLite opens (and creates, writes, truncates) them by name, following
# links, so each must be a regular file or absent before it is handed the database.
DB_SIDECARS = ("-wal", "-shm", "-journal")


def store_refusal(exc: FenceError) -> StoreError:
    """The StoreError for a link or special file in the store: what is there, and what to remove."""
    where = exc.path if exc.path is not None else "it"
    return StoreError(
        f"{exc.fact}. myrm keeps its store only in real files and folders inside the workspace and "
        f"will not use, change or follow this one: remove {where} (it came with the repository or "
        "another program put it there) and run myrm again."
    )


def private_dir(parent: Folder, name: str) -> Folder:
    """The folder `name` in `parent`, created if needed, made owner-only; never through a link."""
    return parent.child(name, create=True, mode=DIR_MODE, chmod=True)


def private_file(folder: Folder, name: str, *, exclusive: bool = False) -> None:
    """Create `name` empty if missing (never truncating) and make it owner-only; never through a
    link. `exclusive`: it must not exist yet (a scratch file of ours).

    Creating the database file ourselves matters: SQLite gives the -wal and -shm files it
    creates later the same mode as the database file.
    """
    flags = os.O_RDWR | os.O_CREAT | (os.O_EXCL if exclusive else 0)
    fd = folder.open_regular(name, flags, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)


def restrict_if_present(folder: Folder, name: str) -> None:
    """chmod an optional file (e.g. `sessions.db-wal`) to owner-only if it exists."""
    folder.restrict(name, FILE_MODE)


def refuse_linked_database(folder: Folder, name: str = DB_NAME) -> None:
    """FenceError unless the database and its sidecars are regular files or absent."""
    for entry in (name, *(name + suffix for suffix in DB_SIDECARS)):
        found = folder.lstat(entry)
        if found is not None and not stat.S_ISREG(found.st_mode):
            folder.open_regular(entry)  # raises the FenceError that says what is there


def open_store_dir(workspace_root: Path, *, create: bool = False) -> Folder:
    """`<workspace>/.myrm` as a handle: the workspace followed (the user's own folder), `.myrm`
    never. `create`: made (owner-only) when missing and tightened when present. StoreError for a
    link; FileNotFoundError when absent and not `create`."""
    try:
        with open_root(workspace_root) as root:
            if create:
                return private_dir(root, DIR_NAME)
            return root.child(DIR_NAME)
    except FenceError as exc:
        raise store_refusal(exc) from None


def open_in_store(myrm_dir: Path, name: str, *, create: bool = False) -> Folder:
    """A folder directly in `.myrm` (`locks`, `artifacts`, `checkpoints`), walked without
    following from the workspace; `create`: made owner-only when missing. StoreError for a link."""
    with open_store_dir(myrm_dir.parent, create=create) as folder:
        try:
            return private_dir(folder, name) if create else folder.child(name)
        except FenceError as exc:
            raise store_refusal(exc) from None


def ensure_layout(workspace_root: Path) -> Folder:
    """Create `<root>/.myrm/{artifacts/, locks/, .gitignore}`; return the `.myrm` handle (the
    caller closes it). StoreError for a link or special file anywhere in it.

    The database itself is created by `fresh.create_database` (atomically), not here: an
    existing `sessions.db` only gets its mode tightened.
    """
    if not workspace_root.is_dir():
        raise FileNotFoundError(f"workspace folder {workspace_root} does not exist")
    folder = open_store_dir(workspace_root, create=True)
    try:
        private_dir(folder, ARTIFACTS_DIR).close()
        private_dir(folder, LOCKS_DIR).close()
        found = folder.lstat(GITIGNORE_NAME)
        if found is None or (stat.S_ISREG(found.st_mode) and found.st_size == 0):
            # Written once (temp + rename, so a kill cannot leave it empty); a user who edits it
            # afterwards keeps their version.
            folder.replace(GITIGNORE_NAME, GITIGNORE_TEXT, mode=FILE_MODE)
        restrict_if_present(folder, GITIGNORE_NAME)
        refuse_linked_database(folder)
        restrict_if_present(folder, DB_NAME)
    except FenceError as exc:
        folder.close()
        raise store_refusal(exc) from None
    except BaseException:
        folder.close()
        raise
    return folder
