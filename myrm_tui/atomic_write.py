"""Replace a file atomically and durably: the one way myrm rewrites a file in place.

Why temp file + fsync + os.replace in the same folder + fsync of the folder: a crash, a kill or
a full disk leaves either the old file or the new one, whole, and once this returns the new
one survives a power loss. A half-written config reads as broken, a half-written trust store
as "nothing trusted", a half-restored user file as silent damage.

The lowest layer (stdlib only), so settings, the store and the agent's tools share it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from pathlib import Path

# A file myrm creates holds the user's settings, trust decisions, session data or (tools) work
# in their workspace: readable by the user only, the mode `tempfile.mkstemp` gives it anyway.
NEW_FILE_MODE = 0o600
# The permission bits kept from a file being replaced: read/write/execute for user, group and
# others. Not setuid/setgid/sticky: the replacement is a new file owned by this process, and
# copying a stray setuid bit onto it would grant what the user never gave (editors drop them too).
_MODE_BITS = 0o777
# Temporary files are named after their target and end with this, so a leftover one (the process
# was killed between create and rename) says whose it was and that it may be deleted.
TEMP_SUFFIX = ".myrm-tmp"


def fsync_path(path: Path) -> None:
    """Best-effort fsync of a file or folder by path. A folder's fsync makes a rename or link in
    it durable; some filesystems refuse fsync on a folder, and then nothing more can be done."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def user_file_mode() -> int:
    """The mode the user's own editor would give a new file: 0o666 less their umask.

    Why: a file the agent creates in the workspace (a script, a source file) is the user's work,
    not myrm's private data; 0o600 there surprises anyone sharing the tree or serving it. The
    umask is read from /proc (no process-wide change); elsewhere it is read once, the only way
    there is (set and put back), so a thread creating a file meanwhile cannot be hit twice."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o666 & ~_umask_once()


@functools.cache
def _umask_once() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: Path, data: str | bytes, *, mode: int | None = None, new_file_mode: int = NEW_FILE_MODE) -> None:
    """Replace `path` with `data` (text is written as UTF-8, newlines untranslated); parent
    folders are created. `mode` None: an existing file keeps its mode, a new one gets
    `new_file_mode` (myrm's private files: NEW_FILE_MODE; the user's work: `user_file_mode()`);
    otherwise the file gets `mode` either way.

    If anything fails, `path` is left as it was and the temporary file is removed."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = path.stat().st_mode & _MODE_BITS
        except FileNotFoundError:
            mode = new_file_mode
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    fsync_path(path.parent)
