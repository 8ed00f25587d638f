"""Fenced file operations for a caller that holds a path: which links on the way are followed.

Why apart from fenced_files.py (the handles and their walk): the rule for a path depends on who
chose it. Under the workspace a link is followed only to learn that it stays inside (a repository
keeps links within itself; one to ~/.ssh leads out and is refused); in a folder of the user's own
(their config folder, an export target they typed) the folder is followed as they named it and
the file itself never. Every operation then runs on fenced_files' handles.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from myrm_tui.fenced_files import NEW_FILE_MODE, FenceError, Target, open_root, open_target


def read_inside(root: Path, path: Path, *, limit: int | None = None) -> bytes | None:
    """The bytes of the regular file `path` found under `root` (the workspace), at most
    `limit + 1` with `limit`; None when it does not exist. FenceError when it is, or passes
    through, a link that leads out of `root`, or is not a regular file.

    Why this rule: it is the file tools' (agent/tools/files/paths.py): a repository keeps links inside
    itself (`CLAUDE.md -> AGENTS.md`), so a link is followed once, only to learn where it leads;
    a committed link to ~/.ssh/id_rsa or /proc/self/environ leads out and is refused. The read
    itself then walks from the root's handle without following anything, so a folder swapped for
    a link after that look is refused, never read through."""
    base = Path(root).resolve()
    try:
        where = Path(path).resolve()
    except (OSError, RuntimeError):  # a symlink loop leads nowhere readable
        raise FenceError(f"{path} is a symbolic link loop", path) from None
    if where == base or not where.is_relative_to(base):
        raise FenceError(
            f"{path} leads to {where}, outside {base}",
            path,
            "myrm follows a link in the workspace only while it stays inside it",
        )
    try:
        with open_target(root, where.relative_to(base).parts) as target:
            return target.read_bytes(limit=limit)
    except FileNotFoundError:
        return None


def read_users_own(path: Path, *, limit: int | None = None) -> bytes | None:
    """The bytes of the user's own regular file `path` (their config folder: links there are
    their choice and are followed), at most `limit + 1`; None when missing. FenceError for a
    FIFO, device or folder: looking at one never blocks or reads a device."""
    try:
        where = Path(path).resolve()
    except (OSError, RuntimeError):
        raise FenceError(f"{path} is a symbolic link loop", path) from None
    try:
        with user_file(where) as target:
            return target.read_bytes(limit=limit)
    except (FileNotFoundError, NotADirectoryError):
        return None


@contextlib.contextmanager
def user_file(path: Path, *, create_folder: bool = False) -> Iterator[Target]:
    """A file whose folder is the caller's own choice (the user's config folder, an export target
    they typed): that folder is followed as they named it, the file itself never (a link there
    is refused rather than replaced or written through)."""
    path = Path(path)
    folder = open_root(path.parent, create=create_folder)
    with Target(folder, path.name) as target:
        yield target


def replace_file(path: Path, data: str | bytes, *, mode: int | None = None, new_file_mode: int = NEW_FILE_MODE) -> None:
    """`Folder.replace` for a file in a folder of the caller's own (see `user_file`); missing
    folders are created."""
    with user_file(path, create_folder=True) as target:
        target.replace(data, mode=mode, new_file_mode=new_file_mode)
