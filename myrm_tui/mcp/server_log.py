"""Each MCP server's stderr, in its own file under myrm's log folder.

Why a file per server: a server's stderr is the only place it explains a crash, and it must never
reach the terminal (it would be drawn over the TUI, and mixed into `myrm run`'s stderr lines).
The SDK hands the file descriptor to the child process, so the bytes are the server's own,
unredacted: the file is created owner-only, and the /mcp screen and doctor quote only its last line.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TextIO

from myrm_tui.fenced_files import open_root
from myrm_tui.log_files import log_dir, open_append
from myrm_tui.mcp.names import clean

# How much of the log's end is read for the "last error" line (a traceback's last line is short).
_TAIL_BYTES = 4096


def log_path(server: str) -> Path:
    return log_dir() / f"mcp-{clean(server)}.log"


def open_log(server: str) -> tuple[TextIO, Path]:
    """An append handle for the server's stderr (rotated once past MAX_LOG_BYTES, like every myrm
    log); /dev/null when the log folder is not writable (a log is never worth a failed start)."""
    path = log_path(server)
    try:
        fd, path = open_append(path.name)
        handle = os.fdopen(fd, "a", encoding="utf-8")
        handle.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} myrm pid {os.getpid()} starts {server}\n")
        handle.flush()
        return handle, path
    except OSError:
        return open(os.devnull, "w", encoding="utf-8"), path


def last_line(path: Path | None) -> str:
    """The last non-empty line the server wrote since its latest start ("" if none)."""
    if path is None:
        return ""
    try:  # through the folder's handle, never a link: a server can replace its own log with a
        # link (to the workspace store's -shm, say), and closing a plain open of that file here
        # would drop the store's SQLite locks (fenced_files.HeldFiles)
        with open_root(path.parent) as folder:
            fd = folder.open_regular(path.name)
        try:
            os.lseek(fd, max(0, os.fstat(fd).st_size - _TAIL_BYTES), os.SEEK_SET)
            tail = os.read(fd, _TAIL_BYTES).decode("utf-8", "replace")
        finally:
            os.close(fd)
    except OSError:
        return ""
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if lines and lines[-1].startswith("--- ") and " myrm pid " in lines[-1]:
        return ""
    return lines[-1] if lines else ""
