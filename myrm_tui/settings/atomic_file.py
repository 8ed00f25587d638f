"""Replace a small file atomically: the user config and the trust store both need it.

Why temp file + fsync + os.replace in the same folder: a crash or a full disk leaves either the
old file or the new one, whole; a half-written config would be read as broken, and a
half-written trust store as "nothing trusted".
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

# A new file holds the user's own settings or trust decisions: readable by the user only.
NEW_FILE_MODE = 0o600


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` (parents created); an existing file keeps its mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, path.stat().st_mode & 0o777 if path.exists() else NEW_FILE_MODE)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
