"""Where myrm writes diagnostic logs (child process stderr, crash reports).

Why files and not stderr: while the TUI owns the terminal, anything printed to stderr lands in
the middle of the screen; and `myrm run` keeps stderr for lines meant for the user. Crash details
(the native stack of a model worker, say) go to a file that error messages and `myrm doctor` name.

Why it follows `MYRM_CONFIG_DIR`: tests and throwaway runs set that variable to isolate the user's
files, and logs must be isolated the same way. A package-root module because every layer that
starts a child process (llm, agent) needs it and none of them should import another's settings.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

LOG_DIR_ENV = "MYRM_LOG_DIR"
# A log that only grows would fill a disk over months of crashes; past this size it is rotated
# once (the previous file is kept as `.1`), which keeps the latest crash and the one before.
MAX_LOG_BYTES = 1_000_000
# Owner-only: logs carry paths, model names and native stacks (redacted, but still the user's).
LOG_DIR_MODE = 0o700
LOG_FILE_MODE = 0o600


def log_dir() -> Path:
    explicit = os.environ.get(LOG_DIR_ENV, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    config = os.environ.get("MYRM_CONFIG_DIR", "").strip()
    if config:
        return Path(config).expanduser() / "logs"
    import platformdirs

    return Path(platformdirs.user_log_dir("myrm"))


def open_append(name: str) -> tuple[int, Path]:
    """An append descriptor of `<log dir>/<name>` (rotated once past MAX_LOG_BYTES), opened
    through the folder's handle and never through a link: a child process that can write the
    log folder cannot turn a log line into a write elsewhere. OSError when it cannot be opened."""
    from myrm_tui.fenced_files import open_root

    with open_root(log_dir(), create=True, mode=LOG_DIR_MODE) as folder:
        found = folder.lstat(name)
        if found is not None and found.st_size > MAX_LOG_BYTES:
            folder.rename(name, name + ".1")
        fd = folder.open_regular(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, LOG_FILE_MODE)
        return fd, folder.path / name


def append_log(name: str, text: str) -> Path | None:
    """Append a timestamped block to `<log dir>/<name>`; None when the folder is not writable
    (a log is never worth failing the caller for)."""
    from myrm_tui.sinks import LOG, scrub  # a log outlives the session and gets attached to reports

    text = scrub(LOG, text)
    try:
        fd, path = open_append(name)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} pid {os.getpid()}\n{text.rstrip()}\n")
    except OSError:
        return None
    return path
